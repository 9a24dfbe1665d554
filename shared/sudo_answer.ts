/**
 * What `sudo -n` answers when a rule needs a password, for the root checks through the broker's
 * NOPASSWD rule (pairing, terminal holders).
 * @module
 */

/** True when `sudo -n` refused for want of a password: the broker's rule is not this user's. */
export function sudoWantsPassword(code: number | null, stdout: string, stderr: string): boolean {
  return code === 1 && stdout === "" && /^sudo: a password is required$/m.test(stderr);
}
