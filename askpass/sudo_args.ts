/**
 * Decides whether a sudo invocation needs `-A` added so that sudo asks the
 * askpass helper. This is the reference implementation; the shell scanner in
 * `shell_injection.ts` is what runs inside tool calls, and tests (including
 * property-based ones against a model of sudo's own parser) keep the two in
 * step.
 *
 * It reads the options the way sudo 1.9 does (`parse_args.c`, glibc
 * `getopt_long`): short options `+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv`;
 * long options by full name or any unambiguous prefix (`--std` is
 * `--stdin`); `VAR=value` words between options are environment settings and
 * option parsing goes on after them; a bare `-h` takes a following plain word
 * as the remote host. Scanning stops at `--` or at the first word of the
 * command (whose own `-S` is not sudo's).
 *
 * @module
 */

/** Short options that take a value (attached, or as the next argument). */
export const SUDO_SHORT_WITH_VALUE = "aCcDgpRrTtUu";

/** sudo's long options: name and whether it takes a value (`r` required, `o` optional, `n` none). */
export const SUDO_LONG_OPTIONS: readonly (readonly [string, "n" | "r" | "o"])[] = [
  ["askpass", "n"],
  ["auth-type", "r"],
  ["background", "n"],
  ["bell", "n"],
  ["chdir", "r"],
  ["chroot", "r"],
  ["close-from", "r"],
  ["command-timeout", "r"],
  ["edit", "n"],
  ["group", "r"],
  ["help", "n"],
  ["host", "r"],
  ["list", "n"],
  ["login", "n"],
  ["login-class", "r"],
  ["no-update", "n"],
  ["non-interactive", "n"],
  ["other-user", "r"],
  ["preserve-env", "o"],
  ["preserve-groups", "n"],
  ["prompt", "r"],
  ["remove-timestamp", "n"],
  ["reset-timestamp", "n"],
  ["role", "r"],
  ["set-home", "n"],
  ["shell", "n"],
  ["stdin", "n"],
  ["type", "r"],
  ["user", "r"],
  ["validate", "n"],
  ["version", "n"],
];

/** The long option `name` (full or an unambiguous prefix) stands for, if any. */
export function resolveLongOption(name: string): readonly [string, "n" | "r" | "o"] | undefined {
  const exact = SUDO_LONG_OPTIONS.find(([n]) => n === name);
  if (exact) return exact;
  const matches = SUDO_LONG_OPTIONS.filter(([n]) => n.startsWith(name));
  return matches.length === 1 ? matches[0] : undefined;
}

/** sudo's `is_envar`: a word with `=` that does not start with `/` or `=`. */
function isEnvAssignment(word: string): boolean {
  return word.includes("=") && !word.startsWith("/") && !word.startsWith("=");
}

/** What sudo makes of the options in front of its command (see the module comment). */
export interface SudoOptionScan {
  /** `-A`/`--askpass` or `-S`/`--stdin` is among the options. */
  readonly passwordSource: boolean;
  /**
   * sudo's `ignore_ticket` at the end of option parsing: `-k` /
   * `--reset-timestamp` set it, a later `-K` / `--remove-timestamp` clears
   * it again (`parse_args.c`). Set means sudo neither uses nor creates a
   * cached credential for this call.
   */
  readonly resetTimestamp: boolean;
}

/**
 * Reads the options the way sudo does and reports the ones this product
 * cares about. Scanning stops at `--` or at the first word of the command;
 * the values of options (`-u -k`, `-p -A`, `-hk`) are skipped, so they never
 * count as flags. Arguments sudo itself would reject may get any answer:
 * such a sudo never prompts.
 */
export function scanSudoOptions(args: readonly string[]): SudoOptionScan {
  let passwordSource = false;
  let resetTimestamp = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") break;
    if (arg.startsWith("--")) {
      const name = arg.slice(2).split("=", 1)[0];
      const option = resolveLongOption(name);
      if (option?.[0] === "askpass" || option?.[0] === "stdin") passwordSource = true;
      // `--reset-timestamp=x` is a usage error in sudo: never counted (fail closed).
      if (option?.[0] === "reset-timestamp" && !arg.includes("=")) resetTimestamp = true;
      if (option?.[0] === "remove-timestamp") resetTimestamp = false;
      if (option?.[1] === "r" && !arg.includes("=")) i++;
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      for (let j = 1; j < arg.length; j++) {
        const c = arg[j];
        if (c === "A" || c === "S") passwordSource = true;
        if (c === "k") resetTimestamp = true;
        if (c === "K") resetTimestamp = false;
        if (SUDO_SHORT_WITH_VALUE.includes(c)) {
          if (j === arg.length - 1) i++;
          break;
        }
        if (c === "h") {
          // A bare -h takes the next plain word as the host.
          const next = args[i + 1];
          if (
            arg === "-h" && next !== undefined && !next.startsWith("-") && !isEnvAssignment(next)
          ) i++;
          break;
        }
      }
      continue;
    }
    if (isEnvAssignment(arg)) continue; // VAR=value: sudo keeps reading options
    break; // the command starts here
  }
  return { passwordSource, resetTimestamp };
}

/**
 * True unless the options already choose a password source: `-A`/`--askpass`
 * (already askpass) or `-S`/`--stdin` (sudo refuses `-A` with `-S`),
 * including inside combined short flags such as `-nS` and abbreviated long
 * options. Arguments sudo itself would reject may get either answer.
 */
export function sudoNeedsAskpass(args: readonly string[]): boolean {
  return !scanSudoOptions(args).passwordSource;
}

/**
 * True when sudo will ignore cached credentials and create none for this
 * call (`-k`/`--reset-timestamp`, not undone by a later `-K`), read as sudo
 * reads its options: `-kA`, `--reset` and `--res` count; `-u -k`, `-uk`,
 * `-p -k` and a `-k` after the command do not.
 */
export function sudoResetsTimestamp(args: readonly string[]): boolean {
  return scanSudoOptions(args).resetTimestamp;
}
