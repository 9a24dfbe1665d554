/**
 * Properties of the sudo argument scanner: the TypeScript reference
 * (`askpass/sudo_args.ts`) and the POSIX-sh scanner that really runs
 * (`sudoScannerFunction()` in `extension/channel/shell_injection.ts`, under dash)
 * agree; the reference answers correctly on argument lists built with a
 * known answer; "leave alone" is only said when a password source is among
 * the options; and the reference matches sudo's own parser (`sudo_model.ts`).
 *
 * @module
 */
import fc from "fast-check";
import { spawnSync } from "node:child_process";
import { resolveLongOption, scanSudoOptions } from "../../askpass/sudo_args.ts";
import { sudoScannerFunction } from "../../extension/channel/shell_injection.ts";
import { SUDO_LONG_OPTION_NAMES, sudoOptionModel } from "./sudo_model.ts";
import { checkSync, expect, type FuzzOptions, type FuzzProperty } from "./common.ts";

/** Words sudo users (and attackers) write, plus quirks of sh and of sudo's parser. */
const WORDS = [
  ...["-A", "-S", "-k", "-n", "-u", "root", "--user=x", "--user", "x", "-p", "PROMPT", "--prompt"],
  ...["--", "-h", "-hhost", "-E", "-i", "-s", "-nS", "-Su", "-uA", "-pS", "-hS", "-kA", "-AS"],
  ...["--askpass", "--stdin", "--stdin=1", "--askpass=", "--preserve-env", "--preserve-env=PATH"],
  ...["--login", "--non-interactive", "--reset-timestamp", "--host", "--host=h", "--chdir=/"],
  ...["-C", "3", "-D", "/", "-g", "wheel", "-U", "-T", "-t", "-r", "-R", "-a", "-c", "-l", "-V"],
  ...["-v", "-K", "-e", "-B", "-b", "-H", "-N", "-P", "-", "", "---", "--=", "-@", "-X"],
  // Abbreviated long options (getopt_long accepts unambiguous prefixes).
  ...["--std", "--st", "--ask", "--as", "--us", "--pro", "--ho", "--s", "--pre", "--a"],
  // Environment assignments (sudo takes them between options), and near misses.
  ...["FOO=1", "A=", "=x", "/x=y", "LANG=C"],
  ...["id", "grep", "sh", "-c", "true", "a b", "*", "$1", "'", '"', "\\", "-\\", "-'", "-*"],
  ...[
    "-?",
    "-[",
    "-]",
    "-[AS]",
    "-\n",
    "\n",
    "-$(x)",
    "-`x`",
    " -S",
    "-S ",
    "--user\n",
    "-\u00e9S",
  ],
  ...["-\u0081S", "-\u0088", "\u0082", "-\u00c1", "-\uff33", "-\u{1d412}"],
];
const SHORT_LETTERS = "AaBbCcDEegHhiKklNnPpRrSsTtUuVv";
/**
 * Long options that take a separate value, as the reference documents them
 * (written out here, not imported, so a slip in the module's list is caught).
 */
const LONG_WITH_VALUE = [
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

/** One argument word: mostly vocabulary, sometimes random (never NUL: argv cannot hold it). */
const wordArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...WORDS) },
  {
    weight: 2,
    arbitrary: fc.string({ unit: fc.constantFrom(...SHORT_LETTERS), minLength: 1, maxLength: 4 })
      .map((s) => `-${s}`),
  },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 5 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }).map((s) => `-${s}`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
).map((s) => s.replaceAll("\0", ""));

/** The arguments after `sudo`. */
export const sudoArgsArb: fc.Arbitrary<string[]> = fc.array(wordArb, { maxLength: 8 });

/**
 * Runs the sh scanner on every case in ONE `/bin/sh` process: the cases go
 * in as argv (count, then words), exactly as the wrapper receives them, and
 * the function's exit status (0 = add `-A`), its `__pi_k` (1 = sudo
 * ignores cached credentials) and its `__pi_cmd` (1-based position of the
 * command, 0: none) come back per line.
 */
export function shellScannerStatuses(
  cases: readonly (readonly string[])[],
): { status: number; k: number; cmd: number }[] {
  const script = [
    sudoScannerFunction(),
    'while [ "$#" -gt 0 ]; do',
    "  __n=$1; shift",
    "  __i=1; __l=",
    '  while [ "$__i" -le "$__n" ]; do __l="$__l \\"\\${$__i}\\""; __i=$((__i + 1)); done',
    '  eval "__pi_sudo_needs_askpass$__l"',
    '  echo "$? $__pi_k $__pi_cmd"',
    '  shift "$__n"',
    "done",
  ].join("\n");
  const argv = cases.flatMap((c) => [String(c.length), ...c]);
  const run = spawnSync("/bin/sh", ["-c", script, "sh", ...argv], {
    encoding: "utf8",
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`sh batch exited ${run.status}: ${run.stderr}`);
  const statuses = run.stdout.split("\n").filter((l) => l !== "").map((l) => {
    const [status, k, cmd] = l.split(" ").map(Number);
    return { status, k, cmd };
  });
  if (statuses.length !== cases.length) {
    throw new Error(`sh batch answered ${statuses.length} of ${cases.length} cases: ${run.stderr}`);
  }
  return statuses;
}

/** The reference and the dash scanner give the same answer on every generated list. */
export function shellAgreesWithReference(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(fc.array(anyArgsArb(), { minLength: 1, maxLength: 60, size: "max" }), (cases) => {
      const statuses = shellScannerStatuses(cases);
      cases.forEach((args, i) => {
        const reference = !scanSudoOptions(args).passwordSource;
        expect(
          statuses[i].status === (reference ? 0 : 1),
          "sh scanner disagrees with the TS reference",
          { args, reference: reference ? "add -A" : "leave alone", shStatus: statuses[i].status },
        );
        const resets = scanSudoOptions(args).resetTimestamp;
        expect(
          statuses[i].k === (resets ? 1 : 0),
          "sh scanner disagrees with the TS reference about -k",
          { args, reference: resets ? "resets" : "may cache", shK: statuses[i].k },
        );
        const command = scanSudoOptions(args).commandIndex + 1;
        expect(
          statuses[i].cmd === command,
          "sh scanner disagrees with the TS reference about where the command starts",
          { args, reference: command, shCmd: statuses[i].cmd },
        );
      });
    }),
    options,
  );
}

/** True when `word` (an option word) leaves its value to the next word. */
function expectsSeparateValue(word: string): boolean {
  if (word.startsWith("--")) {
    return !word.includes("=") && resolveLongOption(word.slice(2))?.[1] === "r";
  }
  if (!word.startsWith("-") || word.length < 2) return false;
  const letters = word.slice(1);
  const cut = letters.search(/[aCcDgpRrTtUuh]/);
  return cut === letters.length - 1 && letters[cut] !== "h";
}

/** `word` as written names a password source: `--askpass`, `--stdin`, or A/S in a cluster. */
function namesPasswordSource(word: string): boolean {
  if (word.startsWith("--")) {
    // Full names and unambiguous abbreviations, as sudo's getopt_long reads them.
    const name = resolveLongOption(word.slice(2).split("=", 1)[0])?.[0];
    return name === "askpass" || name === "stdin";
  }
  if (!word.startsWith("-")) return false;
  const letters = word.slice(1);
  const cut = letters.search(/[aCcDgpRrTtUuh]/);
  return /[AS]/.test(cut < 0 ? letters : letters.slice(0, cut));
}

/**
 * Whenever the reference says "leave alone", the list really has
 * `-A`/`-S`/`--askpass`/`--stdin` among its options: some word names a
 * source, no `--` comes before it, and every word before it is an option or
 * the separate value of the word before.
 */
export function leaveAloneImpliesSource(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(anyArgsArb(), (args) => {
      if (!scanSudoOptions(args).passwordSource) return;
      // A word is a value when the word before is an option that leaves its value to it.
      const isValue: boolean[] = [];
      args.forEach((_, j) =>
        isValue.push(j > 0 && !isValue[j - 1] && expectsSeparateValue(args[j - 1]))
      );
      const isOption = (w: string) => w.startsWith("-") && w !== "-" && w !== "--";
      // sudo reads VAR=value words between options as settings and goes on.
      const isSetting = (w: string) => w.includes("=") && !/^[/=]/.test(w);
      const found = args.some((word, k) =>
        namesPasswordSource(word) && !isValue[k] &&
        args.slice(0, k).every((w, j) => isValue[j] || isOption(w) || isSetting(w))
      );
      expect(found, "said 'leave alone' without -A/-S among the options", args);
    }),
    options,
  );
}

interface Built {
  readonly args: string[];
  /** The options include -A/-S/--askpass/--stdin. */
  readonly source: boolean;
}

const NO_VALUE = "BbEeHiKklNnPsVv";
const WITH_VALUE = "aCcDgpRrTtUu";
const valueArb = fc.oneof(fc.constantFrom("root", "-S", "-A", "--stdin", "", "x=y", "--"), wordArb);

/** One option (with its value) as the reference documents them, and whether it is a source. */
const optionArb: fc.Arbitrary<Built> = fc.oneof(
  fc.record({
    flags: fc.array(fc.constantFrom(...NO_VALUE, "A", "S"), { maxLength: 4 }),
    tail: fc.oneof(
      fc.constant({ attached: "", next: [] as string[] }),
      fc.string({ maxLength: 5 }).map((v) => ({ attached: `h${v}`, next: [] as string[] })),
      fc.tuple(fc.constantFrom(...WITH_VALUE), valueArb.filter((v) => v !== "")).map((
        [c, v],
      ) => ({ attached: `${c}${v}`, next: [] as string[] })),
      fc.tuple(fc.constantFrom(...WITH_VALUE), valueArb).map(([c, v]) => ({
        attached: c,
        next: [v],
      })),
    ),
  }).map(({ flags, tail }) => {
    const cluster = `-${flags.join("")}${tail.attached}`;
    return {
      args: [cluster === "-" ? "-k" : cluster, ...tail.next],
      source: flags.includes("A") || flags.includes("S"),
    };
  }),
  fc.constantFrom("--askpass", "--stdin").map((w) => ({ args: [w], source: true })),
  fc.constantFrom(
    "--login",
    "--preserve-env",
    "--preserve-env=PATH",
    "--non-interactive",
    "--reset-timestamp",
    "--shell",
    "--bell",
    "--set-home",
    "--edit",
  ).map((w) => ({ args: [w], source: false })),
  fc.tuple(fc.constantFrom(...LONG_WITH_VALUE), valueArb, fc.boolean()).map((
    [name, v, attached],
  ) => ({ args: attached ? [`--${name}=${v}`] : [`--${name}`, v], source: false })),
);

/** Options, maybe `--`, then a command (which may itself carry -S, -A…). */
const builtArb: fc.Arbitrary<Built> = fc.tuple(
  fc.array(optionArb, { maxLength: 5 }),
  fc.boolean(),
  fc.oneof(fc.constantFrom("id", "grep", "sh", "", "x=y", "/bin/true"), wordArb),
  fc.array(wordArb, { maxLength: 4 }),
).map(([opts, dashDash, first, rest]) => {
  // A first word that sudo would read as an option or a VAR=value setting is
  // not a command start: make it one.
  const readsAsCommand = !first.startsWith("-") && !(first.includes("=") && !/^[/=]/.test(first));
  const command = dashDash || readsAsCommand ? [first, ...rest] : [`/${first}`, ...rest];
  return {
    args: [...opts.flatMap((o) => o.args), ...(dashDash ? ["--"] : []), ...command],
    source: opts.some((o) => o.source),
  };
});

/** Vocabulary lists and built lists (options, maybe `--`, a command). */
function anyArgsArb(): fc.Arbitrary<string[]> {
  return fc.oneof(sudoArgsArb, builtArb.map((b) => b.args));
}

/** On lists built with a known answer, the reference adds -A exactly when no source was given. */
export function referenceOnBuiltLists(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(builtArb, (b) => {
      expect(
        !scanSudoOptions(b.args).passwordSource === !b.source,
        "wrong answer on a built list",
        { args: b.args, expected: b.source ? "leave alone" : "add -A" },
      );
    }),
    options,
  );
}

/**
 * Against sudo's own option parser (`sudo_model.ts`), whenever sudo would
 * accept the arguments: "add -A" only when sudo sees no -S (else sudo fails
 * with "the -A and -S options may not be used together"), and "leave alone"
 * only when sudo sees -A or -S (else it prompts on a terminal that is not
 * there). Adding -A when sudo already has -A is harmless and allowed.
 */
function checkAgainstSudo(args: readonly string[]): void {
  const sudo = sudoOptionModel(args);
  if (sudo.refused) return;
  const addsA = !scanSudoOptions(args).passwordSource;
  const ok = addsA ? !sudo.stdin : sudo.askpass || sudo.stdin;
  expect(ok, "the scanner and sudo read the options differently", {
    args,
    reference: addsA ? "add -A" : "leave alone",
    sudoSees: { askpass: sudo.askpass, stdin: sudo.stdin },
  });
}

/**
 * Against sudo's own option parser, whenever sudo would accept the
 * arguments: the reference says "resets" exactly when sudo ends its option
 * parsing with `ignore_ticket` set. Saying "resets" when sudo would cache is
 * the dangerous direction (the server would let a ticket be created).
 */
function checkResetAgainstSudo(args: readonly string[]): void {
  const sudo = sudoOptionModel(args);
  if (sudo.refused) return;
  expect(
    scanSudoOptions(args).resetTimestamp === sudo.ignoreTicket,
    "-k read differently from sudo",
    {
      args,
      reference: scanSudoOptions(args).resetTimestamp,
      sudoIgnoresTicket: sudo.ignoreTicket,
    },
  );
}

/** Lists that carry -k / -K / --reset-timestamp in option and value positions. */
function resetArgsArb(): fc.Arbitrary<string[]> {
  const words = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom("-k", "-K", "-kA", "-Ak", "-uk", "-hk", "-kK") },
    { weight: 2, arbitrary: fc.constantFrom("--reset", "--reset-timestamp", "--remove", "--re") },
    { weight: 5, arbitrary: wordArb },
  );
  return fc.oneof(anyArgsArb(), fc.array(words, { maxLength: 8 }));
}

/** -k as sudo reads it, abbreviations and option values included. */
export function resetMatchesSudoParser(options: FuzzOptions): Promise<void> {
  return checkSync(fc.property(resetArgsArb(), checkResetAgainstSudo), options);
}

/** Long options written in full (`--stdin`, `--user=x`; `--` itself). */
function fullLongNames(args: readonly string[]): boolean {
  return args.every((w) =>
    !w.startsWith("--") || w === "--" ||
    SUDO_LONG_OPTION_NAMES.includes(w.slice(2).split("=", 1)[0])
  );
}

/** As sudo reads them, with every long option written in full. */
export function referenceMatchesSudoParser(options: FuzzOptions): Promise<void> {
  return checkSync(fc.property(anyArgsArb().filter(fullLongNames), checkAgainstSudo), options);
}

/** As sudo reads them, abbreviated long options included (getopt_long takes `--std` for `--stdin`). */
export function referenceMatchesSudoAbbreviations(options: FuzzOptions): Promise<void> {
  return checkSync(fc.property(anyArgsArb(), checkAgainstSudo), options);
}

/** The sudo-argument suite, in registry form. */
export const SUDO_PROPERTIES: readonly FuzzProperty[] = [
  {
    name: "sudo args: dash scanner agrees with the TS reference",
    ciRuns: 80,
    longRuns: 2000,
    run: shellAgreesWithReference,
  },
  {
    name: "sudo args: 'leave alone' only with -A/-S among the options",
    ciRuns: 2000,
    longRuns: 100000,
    run: leaveAloneImpliesSource,
  },
  {
    name: "sudo args: reference right on lists built with a known answer",
    ciRuns: 2000,
    longRuns: 100000,
    run: referenceOnBuiltLists,
  },
  {
    name: "sudo args: reference reads options as sudo's parser does",
    ciRuns: 2000,
    longRuns: 100000,
    run: referenceMatchesSudoParser,
  },
  {
    name: "sudo args: -k (ignore_ticket) read as sudo's parser does",
    ciRuns: 2000,
    longRuns: 100000,
    run: resetMatchesSudoParser,
  },
  {
    name: "sudo args: reference reads abbreviated long options as sudo does",
    ciRuns: 2000,
    longRuns: 100000,
    run: referenceMatchesSudoAbbreviations,
  },
];
