/**
 * An executable model of how sudo itself reads its options (sudo 1.9
 * `src/parse_args.c`: glibc `getopt_long` with the short options
 * `+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv` and the long option table),
 * including sudo's own quirks: `VAR=value` words between options are taken as
 * environment assignments and option parsing resumes after them; a bare `-h`
 * consumes a following non-option word as the remote host; and long options
 * may be abbreviated to any unambiguous prefix.
 *
 * Used as the oracle for the scanner in `askpass/sudo_args.ts`: when sudo
 * accepts the arguments, the scanner must not add `-A` where sudo sees `-S`,
 * and must add it where sudo sees neither `-A` nor `-S`.
 *
 * @module
 */

type HasArg = "none" | "required" | "optional";

const SHORT: ReadonlyMap<string, HasArg> = (() => {
  const spec = "Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv";
  const map = new Map<string, HasArg>();
  for (let i = 0; i < spec.length; i++) {
    const c = spec[i];
    if (spec[i + 1] === ":" && spec[i + 2] === ":") {
      map.set(c, "optional");
      i += 2;
    } else if (spec[i + 1] === ":") {
      map.set(c, "required");
      i += 1;
    } else {
      map.set(c, "none");
    }
  }
  return map;
})();

/** sudo_long_opts: name → [has_arg, the short option (or "host") it stands for]. */
const LONG: ReadonlyArray<readonly [string, HasArg, string]> = [
  ["background", "none", "b"],
  ["preserve-env", "optional", "E"],
  ["edit", "none", "e"],
  ["set-home", "none", "H"],
  ["login", "none", "i"],
  ["remove-timestamp", "none", "K"],
  ["list", "none", "l"],
  ["preserve-groups", "none", "P"],
  ["shell", "none", "s"],
  ["other-user", "required", "U"],
  ["validate", "none", "v"],
  ["askpass", "none", "A"],
  ["auth-type", "required", "a"],
  ["bell", "none", "B"],
  ["close-from", "required", "C"],
  ["login-class", "required", "c"],
  ["chdir", "required", "D"],
  ["group", "required", "g"],
  ["help", "none", "h"],
  ["host", "required", "host"],
  ["reset-timestamp", "none", "k"],
  ["no-update", "none", "N"],
  ["non-interactive", "none", "n"],
  ["prompt", "required", "p"],
  ["chroot", "required", "R"],
  ["role", "required", "r"],
  ["stdin", "none", "S"],
  ["command-timeout", "required", "T"],
  ["type", "required", "t"],
  ["user", "required", "u"],
  ["version", "none", "V"],
];

/** The full names of sudo's long options. */
export const SUDO_LONG_OPTION_NAMES: readonly string[] = LONG.map(([name]) => name);

/** What sudo makes of an argument list (everything after `sudo`). */
export interface SudoOptions {
  /** sudo refuses these arguments whatever is added (usage error): the scanner may do anything. */
  readonly refused: boolean;
  /** `-A`/`--askpass` was among the options sudo parsed. */
  readonly askpass: boolean;
  /** `-S`/`--stdin` was among the options sudo parsed. */
  readonly stdin: boolean;
  /** sudo's `ignore_ticket` after parsing: set by `-k`, cleared by a later `-K`. */
  readonly ignoreTicket: boolean;
  /** Index of the first word of the command (args.length if none). */
  readonly commandIndex: number;
  /** Why `refused`, for reports. */
  readonly why?: string;
}

/** sudo's `is_envar`: a word with `=` that does not start with `/` or `=`. */
function isEnvAssignment(word: string | undefined): boolean {
  return word !== undefined && !word.startsWith("/") && !word.startsWith("=") &&
    word.includes("=");
}

/** Parses `args` the way sudo does (see the module comment). */
export function sudoOptionModel(args: readonly string[]): SudoOptions {
  const argv = ["sudo", ...args];
  let optind = 1;
  let askpass = false;
  let stdin = false;
  let ignoreTicket = false;
  let remoteHost = false;
  let listMode = false;
  const refuse = (why: string): SudoOptions => ({
    refused: true,
    askpass,
    stdin,
    ignoreTicket,
    commandIndex: Math.min(optind, argv.length) - 1,
    why,
  });
  const option = (name: string) => {
    if (name === "A") askpass = true;
    if (name === "S") stdin = true;
    if (name === "k") ignoreTicket = true;
    if (name === "K") ignoreTicket = false;
    if (name === "l") listMode = true;
    if (name === "host" || name === "h-with-value") remoteHost = true;
  };

  while (optind < argv.length) {
    const word = argv[optind];
    if (word === "--") {
      optind++;
      break;
    }
    if (!word.startsWith("-") || word === "-") {
      // getopt returns -1 here; sudo takes VAR=value and resumes, unless
      // the word before was a literal "--" (got_end_of_args).
      if (argv[optind - 1] !== "--" && isEnvAssignment(word)) {
        optind++;
        continue;
      }
      break;
    }
    if (word.startsWith("--")) {
      const eq = word.indexOf("=");
      const name = word.slice(2, eq < 0 ? undefined : eq);
      const exact = LONG.filter(([n]) => n === name);
      const matches = exact.length > 0 ? exact : LONG.filter(([n]) => n.startsWith(name));
      if (matches.length === 0) return refuse(`unrecognized option ${word}`);
      if (matches.length > 1) return refuse(`ambiguous option ${word}`);
      const [, hasArg, short] = matches[0];
      optind++;
      if (eq >= 0 && hasArg === "none") return refuse(`${word} takes no argument`);
      if (eq < 0 && hasArg === "required") {
        if (optind >= argv.length) return refuse(`${word} requires an argument`);
        optind++;
      }
      option(short);
      continue;
    }
    // A cluster of short options.
    optind++;
    for (let j = 1; j < word.length; j++) {
      const c = word[j];
      const hasArg = SHORT.get(c);
      if (hasArg === undefined) return refuse(`invalid option -${c}`);
      if (hasArg === "none") {
        option(c);
        continue;
      }
      const attached = j < word.length - 1;
      if (hasArg === "required") {
        if (!attached) {
          if (optind >= argv.length) return refuse(`-${c} requires an argument`);
          optind++;
        }
        option(c);
        break;
      }
      // -h: optional attached host; a bare "-h" word takes a following
      // non-option, non-assignment word as the host (sudo's got_host_flag).
      if (attached) {
        option("h-with-value");
      } else if (
        word === "-h" && optind < argv.length && !argv[optind].startsWith("-") &&
        !isEnvAssignment(argv[optind])
      ) {
        option("h-with-value");
        optind++;
      }
      break;
    }
  }
  if (remoteHost && !listMode) {
    return refuse("a remote host may only be specified when listing privileges");
  }
  return { refused: false, askpass, stdin, ignoreTicket, commandIndex: optind - 1 };
}
