/**
 * The root-confirmed pairing of hardened mode (ADR 0005): asks root, through
 * the broker's NOPASSWD sudoers rule, whether the helper's stdout pipe is
 * open for reading in the helper's parent sudo and in no other process.
 * Root can read every `/proc/<pid>/fd`; the user cannot read sudo's.
 *
 * `sudo -n /usr/local/libexec/pi-sudo-prompt/pi-secret-broker
 * --verify-pairing HELPER SUDO INODE` runs `broker/pairing_check.sh` as
 * root, which prints one verdict line. The call is asynchronous with a
 * deadline (the event loop never waits on it) and costs about one `sudo -n`.
 *
 * @module
 */
import { BROKER_LAUNCHER, BROKER_ROOT } from "../../broker/paths.ts";
import { isProtectedPath } from "../../broker/protected_path.ts";
import { parseRootPairingVerdict, type RootPairingVerdict } from "./sudo_pairing.ts";
import { runRootCheck } from "./root_check.ts";

/** The installed root-owned pairing check (`broker/pairing_check.sh`). */
export const PAIRING_CHECK = `${BROKER_ROOT}/pairing-check`;

/**
 * True when the broker is installed with the pairing check: both the
 * launcher and the check are root-protected files. Then the root check is
 * required for every sudo request (a failure to run it refuses).
 */
export async function rootPairingInstalled(): Promise<boolean> {
  return await isProtectedPath(BROKER_LAUNCHER) && await isProtectedPath(PAIRING_CHECK);
}

/** Runs the root check for one helper; never throws. */
export async function runRootPairing(
  sudoPath: string,
  args: { helperPid: number; sudoPid: number; pipeInode: number },
): Promise<RootPairingVerdict> {
  const ids = [args.helperPid, args.sudoPid, args.pipeInode].map(String);
  const run = await runRootCheck(sudoPath, ["--verify-pairing", ...ids]);
  if (run.failure) return parseRootPairingVerdict(null, `pi-pairing: ${run.failure}`);
  return parseRootPairingVerdict(run.code, run.stdout, run.stderr);
}
