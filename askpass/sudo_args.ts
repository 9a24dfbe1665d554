/**
 * Whether a sudo invocation needs `-A` added so that sudo asks the askpass helper: the reference
 * for the shell scanner in `shell_injection.ts`, kept in step by tests (property-based ones
 * against a model of sudo's parser). Options are read as sudo 1.9 does (`parse_args.c`, glibc
 * `getopt_long`): short options `+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv`; long options by
 * full name or unambiguous prefix (`--std` is `--stdin`); `VAR=value` words between options do
 * not end them; a bare `-h` takes a following plain word as the host. Scanning stops at `--` or
 * at the command's first word (whose own `-S` is not sudo's).
 *
 * @module
 */

/** Short options that take a value (attached, or as the next argument). */
export const SUDO_SHORT_WITH_VALUE = "aCcDgpRrTtUu";

/** sudo's long options and their value: `r` required, `o` optional, `n` none. */
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
  /**
   * `-A`/`--askpass` or `-S`/`--stdin` is given (also as `-nS` or a prefix): sudo already has a
   * password source, so the wrapper adds no `-A` (sudo refuses `-A` with `-S`).
   */
  readonly passwordSource: boolean;
  /**
   * sudo's `ignore_ticket` after parsing: set by `-k`, cleared by a later `-K` (`parse_args.c`).
   * When set, sudo neither uses nor creates a cached credential for this call.
   */
  readonly resetTimestamp: boolean;
  /** `-s`/`--shell`: root runs `$SHELL` from the command's environment. */
  readonly shell: boolean;
  /** `-E`/`--preserve-env` (`true`: everything) or `--preserve-env=LIST` (the names). */
  readonly preserveEnv: true | readonly string[] | undefined;
  /** `VAR=value` words among the options: set in root's environment. */
  readonly assignments: readonly string[];
  /** `-e`/`--edit`, `-l`/`--list`, `-v`/`--validate`: no command runs as given. */
  readonly noCommand: boolean;
  /** Index in `args` of the command's first word, or -1 when there is none. */
  readonly commandIndex: number;
}

/**
 * Reads the options as sudo does. Option values (`-u -k`, `-p -A`, `-hk`) never count as flags;
 * arguments sudo itself would reject may get any answer: such a sudo never prompts.
 */
export function scanSudoOptions(args: readonly string[]): SudoOptionScan {
  let passwordSource = false;
  let resetTimestamp = false;
  let shell = false;
  let preserveEnv: true | string[] | undefined;
  const assignments: string[] = [];
  let noCommand = false;
  let commandIndex = -1;
  const keep = (names: string) => {
    if (preserveEnv !== true) preserveEnv = [...(preserveEnv ?? []), ...names.split(",")];
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      if (i + 1 < args.length) commandIndex = i + 1;
      break;
    }
    if (arg.startsWith("--")) {
      const [option, takes] = resolveLongOption(arg.slice(2).split("=", 1)[0]) ?? [];
      if (option === "askpass" || option === "stdin") passwordSource = true;
      // `--reset-timestamp=x` is a usage error in sudo: never counted (fail closed).
      if (option === "reset-timestamp" && !arg.includes("=")) resetTimestamp = true;
      if (option === "remove-timestamp") resetTimestamp = false;
      if (option === "shell") shell = true;
      if (option === "preserve-env") {
        if (arg.includes("=")) keep(arg.slice(arg.indexOf("=") + 1));
        else preserveEnv = true;
      }
      if (option === "edit" || option === "list" || option === "validate") noCommand = true;
      if (takes === "r" && !arg.includes("=")) i++;
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      for (let j = 1; j < arg.length; j++) {
        const c = arg[j];
        if (c === "A" || c === "S") passwordSource = true;
        if (c === "k") resetTimestamp = true;
        if (c === "K") resetTimestamp = false;
        if (c === "s") shell = true;
        if (c === "E") preserveEnv = true;
        if (c === "e" || c === "l" || c === "v") noCommand = true;
        if (SUDO_SHORT_WITH_VALUE.includes(c)) {
          if (j === arg.length - 1) i++;
          break;
        }
        if (c === "h") {
          const next = args[i + 1];
          if (
            arg === "-h" && next !== undefined && !next.startsWith("-") && !isEnvAssignment(next)
          ) i++;
          break;
        }
      }
      continue;
    }
    if (isEnvAssignment(arg)) {
      assignments.push(arg); // VAR=value: sudo keeps reading options
      continue;
    }
    commandIndex = i;
    break;
  }
  return {
    passwordSource,
    resetTimestamp,
    shell,
    preserveEnv,
    assignments,
    noCommand,
    commandIndex,
  };
}
