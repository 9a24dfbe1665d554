/**
 * Decides whether a sudo invocation needs `-A` added so that sudo asks the
 * askpass helper. This is the reference implementation; the shell scanner in
 * `shell_injection.ts` is what runs inside tool calls, and tests compare the
 * two on the same cases.
 *
 * sudo's short options (`sudo.c`/`parse_args.c`):
 * `+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv`. Scanning stops at `--` or
 * at the first non-option argument, which is the command (its own `-S` is not
 * sudo's).
 *
 * @module
 */

/** Short options that take a value (attached, or as the next argument). */
export const SUDO_SHORT_WITH_VALUE = "aCcDgpRrTtUu";
/** Long options that take a value (`--user=x` or `--user x`). */
export const SUDO_LONG_WITH_VALUE: readonly string[] = [
  "auth-type",
  "login-class",
  "chdir",
  "chroot",
  "close-from",
  "group",
  "prompt",
  "role",
  "type",
  "command-timeout",
  "other-user",
  "user",
];

/**
 * True unless the options already choose a password source: `-A`/`--askpass`
 * (already askpass) or `-S`/`--stdin` (sudo refuses `-A` with `-S`),
 * including inside combined short flags such as `-nS`.
 */
export function sudoNeedsAskpass(args: readonly string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") return true;
    if (arg.startsWith("--")) {
      const name = arg.slice(2).split("=", 1)[0];
      if (name === "askpass" || name === "stdin") return false;
      if (SUDO_LONG_WITH_VALUE.includes(name) && !arg.includes("=")) i++;
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      for (let j = 1; j < arg.length; j++) {
        const c = arg[j];
        if (c === "A" || c === "S") return false;
        if (SUDO_SHORT_WITH_VALUE.includes(c)) {
          if (j === arg.length - 1) i++;
          break;
        }
        if (c === "h") break; // -h takes an optional attached value
      }
      continue;
    }
    return true; // the command starts here
  }
  return true;
}
