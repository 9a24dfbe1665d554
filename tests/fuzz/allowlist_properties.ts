/**
 * Property-based fuzzing (fast-check) of the allowlist parser and matcher
 * (docs/design.md §9). Each exported property takes `{ numRuns, seed }` and throws
 * (through `fc.assert`) with a shrunk counterexample when it fails.
 *
 * Run alone: `node_modules/.bin/node tests/fuzz/allowlist_properties.ts [numRuns] [seed]`.
 *
 * @module
 */
import fc from "fast-check";
import process from "node:process";
import { pathToFileURL } from "node:url";
import {
  ALLOWLIST_SYNTAX_ERRORS,
  type AllowlistEntry,
  checkShape,
  formatEntry,
  matchArgv,
  parseAllowlist,
  type ShapeToken,
  suggestShape,
} from "../../broker/allowlist.ts";

/** How many runs, and the seed that replays them. */
export interface PropertyOptions {
  readonly numRuns: number;
  readonly seed: number;
}

/** Characters a literal word may not contain (independent of the module's own check). */
const NOT_IN_WORD = /[\p{Cc}\p{Cf}\p{Cs}\p{Z}<>]/u;

/** A literal word the grammar accepts: non-empty, printable, no `<`/`>`, not starting with `#`. */
const literalWord: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({
      unit: fc.constantFrom("a", "Z", "0", "-", "#", "=", "/", ".", ":", "é", "_"),
      minLength: 1,
      maxLength: 12,
    }),
    fc.string({ unit: "binary", minLength: 1, maxLength: 12 }),
  )
  .filter((w) => !NOT_IN_WORD.test(w) && !w.startsWith("#"));

/** A valid marker name. */
const markerName: fc.Arbitrary<string> = fc.stringMatching(/^[a-z][a-z0-9_-]{0,11}$/);

/** A real absolute path: `/seg/seg…`, no empty, `.` or `..` component. */
const programPath: fc.Arbitrary<string> = fc
  .array(
    fc.string({ unit: "binary-ascii", minLength: 1, maxLength: 10 }).filter((s) =>
      !s.includes("/") && s !== "." && s !== ".." && !NOT_IN_WORD.test(s)
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map((parts) => `/${parts.join("/")}`);

/** One shape token. */
const token: fc.Arbitrary<ShapeToken> = fc.oneof(
  literalWord.map((value): ShapeToken => ({ kind: "literal", value })),
  markerName.map((name): ShapeToken => ({ kind: "marker", name })),
);

/** A valid entry. */
const entry: fc.Arbitrary<AllowlistEntry> = fc.record({
  program: programPath,
  args: fc.array(token, { maxLength: 8 }),
});

/** An argument a marker must accept: non-empty, not starting with `-` (spaces, controls allowed). */
const markerValue: fc.Arbitrary<string> = fc
  .string({ unit: "binary", minLength: 1, maxLength: 20 })
  .filter((s) => !s.startsWith("-"));

/** An entry with an argv built to match it. */
const entryWithArgv: fc.Arbitrary<{ entry: AllowlistEntry; argv: string[] }> = entry.chain((e) =>
  fc
    .tuple(...e.args.map((t) => t.kind === "literal" ? fc.constant(t.value) : markerValue))
    .map((args) => ({ entry: e, argv: [e.program, ...args] }))
);

/** Text made of the grammar's own characters, so it reaches the interesting branches. */
const grammarishText: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom("/", "<", ">", "#", " ", "\t", "\n", "\r", "-", ".", "..", "//", "<>", "a"),
      fc.constantFrom("<db>", "<entry>", "/usr/bin/x", "show", "\u00a0", "\u202e", "\0", "é"),
      fc.string({ unit: "binary", maxLength: 4 }),
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(""));

/** The grammar's invariants for an accepted entry, written independently of the parser. */
function wellFormed(e: AllowlistEntry): boolean {
  const parts = e.program.split("/");
  const pathOk = parts[0] === "" && parts.length >= 2 &&
    parts.slice(1).every((p) => p !== "" && p !== "." && p !== ".." && !NOT_IN_WORD.test(p));
  return pathOk &&
    e.args.every((t) =>
      t.kind === "marker"
        ? /^[a-z][a-z0-9_-]*$/.test(t.name)
        : t.value !== "" && !NOT_IN_WORD.test(t.value) && !t.value.startsWith("#")
    );
}

const SYNTAX_REASONS = new Set<string>(Object.values(ALLOWLIST_SYNTAX_ERRORS));

/** A marker never matches an argument that is empty or starts with `-`. */
export function markerRefusesOptionsAndEmpty({ numRuns, seed }: PropertyOptions): void {
  fc.assert(
    fc.property(
      programPath,
      markerName,
      fc.oneof(fc.constant(""), fc.string({ unit: "binary" }).map((s) => `-${s}`)),
      (program, name, arg) => {
        const list: AllowlistEntry[] = [{ program, args: [{ kind: "marker", name }] }];
        return matchArgv(list, [program, arg]) === false;
      },
    ),
    { numRuns, seed },
  );
}

/** Valid generated lines round-trip: parse(format(e)) is [e], and format is stable. */
export function validLinesRoundTrip({ numRuns, seed }: PropertyOptions): void {
  fc.assert(
    fc.property(entry, (e) => {
      const line = formatEntry(e);
      const r = parseAllowlist(`# c\n${line}\n`);
      if (!r.ok || r.entries.length !== 1) return false;
      return formatEntry(r.entries[0]) === line &&
        JSON.stringify(r.entries[0]) === JSON.stringify(e);
    }),
    { numRuns, seed },
  );
}

/** Random text never throws; a failure names a known reason and an existing line. */
export function randomTextNeverThrows({ numRuns, seed }: PropertyOptions): void {
  fc.assert(
    fc.property(fc.oneof(fc.string({ unit: "binary" }), grammarishText), (text) => {
      const r = parseAllowlist(text);
      if (!r.ok) {
        return SYNTAX_REASONS.has(r.reason) && r.line >= 1 &&
          r.line <= text.split("\n").length;
      }
      // Whatever was accepted obeys the grammar (checked independently) and
      // formats back to a line that parses to the same entry.
      return r.entries.every((e) => {
        const again = parseAllowlist(formatEntry(e));
        return wellFormed(e) && again.ok &&
          JSON.stringify(again.entries) === JSON.stringify([e]);
      });
    }),
    { numRuns, seed },
  );
}

/** matchArgv on random entries and random argv never throws and returns a boolean. */
export function matchNeverThrows({ numRuns, seed }: PropertyOptions): void {
  fc.assert(
    fc.property(
      fc.array(entry, { maxLength: 4 }),
      fc.array(fc.string({ unit: "binary" }), { maxLength: 10 }),
      (entries, argv) => typeof matchArgv(entries, argv) === "boolean",
    ),
    { numRuns, seed },
  );
}

/** A generated matching argv matches; adding any extra argument anywhere after argv[0] does not. */
export function extraArgumentNeverMatches({ numRuns, seed }: PropertyOptions): void {
  fc.assert(
    fc.property(
      entryWithArgv,
      fc.string({ unit: "binary" }),
      fc.nat(),
      ({ entry: e, argv }, extra, at) => {
        if (!matchArgv([e], argv)) return false;
        const pos = 1 + (at % argv.length);
        const longer = [...argv.slice(0, pos), extra, ...argv.slice(pos)];
        return matchArgv([e], longer) === false;
      },
    ),
    { numRuns, seed },
  );
}

/** Whenever suggestShape succeeds, its line passes checkShape for that same argv. */
export function suggestionsMatchTheirArgv({ numRuns, seed }: PropertyOptions): void {
  fc.assert(
    fc.property(
      programPath,
      fc.array(fc.oneof(literalWord, markerValue, fc.string({ unit: "binary" })), {
        maxLength: 8,
      }),
      (program, args) => {
        const argv = [program, ...args];
        const s = suggestShape(argv);
        return !s.ok || checkShape(s.line, argv).ok;
      },
    ),
    { numRuns, seed },
  );
}

/** Every allowlist property, by name, for a runner. */
export const ALLOWLIST_PROPERTIES: Readonly<Record<string, (o: PropertyOptions) => void>> = {
  markerRefusesOptionsAndEmpty,
  validLinesRoundTrip,
  randomTextNeverThrows,
  matchNeverThrows,
  extraArgumentNeverMatches,
  suggestionsMatchTheirArgv,
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const numRuns = Number(process.argv[2] ?? 1000);
  const seed = Number(process.argv[3] ?? Date.now() % 2 ** 31);
  for (const [name, property] of Object.entries(ALLOWLIST_PROPERTIES)) {
    const start = performance.now();
    property({ numRuns, seed });
    console.log(
      `ok   ${name} (${numRuns} runs, seed ${seed}, ${(performance.now() - start).toFixed(0)} ms)`,
    );
  }
}
