/**
 * Properties of the `/proc` parsers (`kernel/proc.ts`): the kernel's
 * formatting of `stat`, `status` and NUL lists round-trips through them for
 * any `comm` a process can give itself, and arbitrary text never throws.
 *
 * @module
 */
import fc from "fast-check";
import { parseNulList, parseStat, parseStatusIds } from "../../kernel/proc.ts";
import { checkSync, expect, type FuzzOptions, type FuzzProperty, sameBytes } from "./common.ts";

const utf8 = new TextEncoder();
/** As `readProcText` decodes: UTF-8, invalid sequences replaced. */
const lenientUtf8 = new TextDecoder();

/** The kernel keeps 15 bytes of a task name (TASK_COMM_LEN - 1). */
const COMM_BYTES = 15;

/** Pieces that confuse a naive `stat` parser: parens, spaces, digits, state letters. */
const commPieceArb = fc.oneof(
  fc.constantFrom(
    " ",
    "(",
    ")",
    ") ",
    " (",
    ")(",
    ") S 1 ",
    "0",
    "1",
    "9",
    " 1 ",
    "S",
    "R",
    "\n",
    "\t",
  ),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
);
/** Any `comm` (longer than the kernel's 15 bytes too: the parser must not care). */
const commArb = fc.array(commPieceArb, { maxLength: 24 }).map((a) =>
  a.join("").replaceAll("\0", "")
);
const u64Arb = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const fieldArb = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }).map(String);
const pidArb = fc.oneof(fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.constantFrom(0, 1, 4194304));
const stateArb = fc.constantFrom(
  ..."RSDZTtXxKWPIabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
);

interface StatFields {
  readonly pid: number;
  readonly comm: string;
  readonly state: string;
  readonly ppid: number;
  /** Fields 5..21. */
  readonly middle: readonly string[];
  readonly startTime: bigint;
  /** Fields 23.. (how many depends on the kernel). */
  readonly tail: readonly string[];
}

const statArb: fc.Arbitrary<StatFields> = fc.record({
  pid: pidArb,
  comm: commArb,
  state: stateArb,
  ppid: pidArb,
  middle: fc.array(fieldArb, { minLength: 17, maxLength: 17 }),
  startTime: u64Arb,
  tail: fc.array(fieldArb, { maxLength: 30 }),
});

/** `/proc/<pid>/stat` as `do_task_stat` prints it (comm unescaped). */
function formatStat(s: StatFields): string {
  return `${s.pid} (${s.comm}) ${s.state} ${s.ppid} ${
    [...s.middle, String(s.startTime), ...s.tail].join(" ")
  }\n`;
}

/** For any comm (spaces, parens, `)` followed by digits…) the fields come back exactly. */
export function statRoundTrip(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(statArb, (s) => {
      const parsed = parseStat(formatStat(s));
      expect(
        parsed !== undefined && parsed.pid === s.pid && parsed.comm === s.comm &&
          parsed.state === s.state && parsed.ppid === s.ppid && parsed.startTime === s.startTime,
        "stat fields changed",
        { line: formatStat(s), parsed },
      );
    }),
    options,
  );
}

/** Character-level edits of a real-looking line. */
const editedStatArb = fc.tuple(
  statArb,
  fc.array(
    fc.tuple(fc.nat(), fc.nat({ max: 4 }), fc.string({ unit: "binary", maxLength: 3 })),
    { maxLength: 4 },
  ),
).map(([s, edits]) => {
  let line = formatStat(s);
  for (const [at, del, ins] of edits) {
    const i = at % (line.length + 1);
    line = line.slice(0, i) + ins + line.slice(i + del);
  }
  return line;
});

/** Arbitrary or edited text: no throw, and anything returned is well-formed. */
export function statNeverThrows(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(
      fc.oneof(
        fc.string({ unit: "binary", maxLength: 400 }),
        fc.string({ unit: fc.constantFrom("(", ")", " ", "1", "-", "S", "\n"), maxLength: 200 }),
        editedStatArb,
      ),
      (text) => {
        const s = parseStat(text);
        if (s === undefined) return;
        expect(
          Number.isSafeInteger(s.pid) && s.pid >= 0 && Number.isSafeInteger(s.ppid) &&
            s.ppid >= 0 && /^[A-Za-z]$/.test(s.state) && s.startTime >= 0n &&
            s.startTime < 2n ** 67n && typeof s.comm === "string",
          "malformed parse result",
          { text, s },
        );
      },
    ),
    options,
  );
}

type Quad = readonly [number, number, number, number];
const idArb = fc.oneof(fc.integer({ min: 0, max: 2 ** 32 - 2 }), fc.constantFrom(0, 1000, 65534));
const quadArb: fc.Arbitrary<Quad> = fc.tuple(idArb, idArb, idArb, idArb);

/**
 * Names a process can choose: random text, or text that embeds a fake
 * `Uid:`/`Gid:` line behind something a regex may take for a line break.
 */
const hostileNameArb = fc.oneof(
  fc.string({ unit: "binary", maxLength: COMM_BYTES }),
  fc.tuple(
    fc.constantFrom("", " ", "\t", "\n", "\r", "\v", "\f", "\u0085", "\u2028", "\u2029", "x"),
    fc.constantFrom("Uid:", "Gid:"),
    fc.tuple(
      fc.integer({ min: 0, max: 9 }),
      fc.integer({ min: 0, max: 9 }),
      fc.integer({ min: 0, max: 9 }),
      fc.integer({ min: 0, max: 9 }),
    ),
    fc.string({ maxLength: 3 }),
  ).map(([sep, name, ids, rest]) => `${sep}${name}\t${ids.join("\t")}${rest}`),
);

/** The `Name:` value of `/proc/<pid>/status`: 15 bytes of comm, `\n` and `\\` escaped. */
function kernelStatusName(name: string): Uint8Array {
  const comm = utf8.encode(name.replaceAll("\0", "")).slice(0, COMM_BYTES);
  const out: number[] = [];
  for (const b of comm) {
    if (b === 0x0a) out.push(0x5c, 0x6e);
    else if (b === 0x5c) out.push(0x5c, 0x5c);
    else out.push(b);
  }
  return Uint8Array.from(out);
}

function statusBytes(name: Uint8Array, pid: number, uid: Quad, gid: Quad): Uint8Array {
  const before = utf8.encode("Name:\t");
  const after = utf8.encode(
    `\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t${pid}\nNgid:\t0\nPid:\t${pid}\nPPid:\t1\n` +
      `TracerPid:\t0\nUid:\t${uid.join("\t")}\nGid:\t${gid.join("\t")}\nFDSize:\t64\n` +
      `Groups:\t${gid[0]} \nNStgid:\t${pid}\nNSpid:\t${pid}\nVmPeak:\t   10000 kB\n`,
  );
  const out = new Uint8Array(before.length + name.length + after.length);
  out.set(before);
  out.set(name, before.length);
  out.set(after, before.length + name.length);
  return out;
}

/**
 * Whatever name a process gives itself, `parseStatusIds` of its status file
 * (decoded as `readProcText` does) returns its real `Uid:`.
 */
export function statusIdsFollowKernel(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(hostileNameArb, pidArb, quadArb, quadArb, (name, pid, uid, gid) => {
      const text = lenientUtf8.decode(statusBytes(kernelStatusName(name), pid, uid, gid));
      const ids = parseStatusIds(text);
      expect(
        ids !== undefined && ids.uid.every((v, i) => v === uid[i]),
        "status ids differ from the kernel's",
        { comm: name, real: { uid, gid }, parsed: ids },
      );
    }),
    options,
  );
}

/** Arbitrary text: no throw; anything returned is four safe non-negative integers each. */
export function statusNeverThrows(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(
      fc.oneof(
        fc.string({ unit: "binary", maxLength: 400 }),
        fc.array(
          fc.oneof(
            fc.constantFrom(
              "Uid:",
              "Gid:",
              "\t",
              "\n",
              "0",
              "1",
              "99999999999999999999",
              "-1",
              " ",
            ),
            fc.string({ maxLength: 4 }),
          ),
          { maxLength: 40 },
        ).map((a) => a.join("")),
        // Well-formed Uid/Gid lines around junk, with numbers past 2^53 and odd separators.
        fc.tuple(
          fc.array(fc.string({ maxLength: 12 }), { maxLength: 3 }),
          fc.array(
            fc.oneof(
              fc.nat().map(String),
              fc.constantFrom("9007199254740993", "99999999999999999999", "00", "1e3"),
              fc.bigInt({ min: 0n, max: 10n ** 25n }).map(String),
            ),
            { minLength: 8, maxLength: 8 },
          ),
          fc.constantFrom("\t", "\t", "\t", " "),
        ).map(([junk, n, sep]) =>
          [
            ...junk,
            `Uid:${sep}${n.slice(0, 4).join(sep)}`,
            `Gid:${sep}${n.slice(4).join(sep)}`,
          ].join("\n")
        ),
        // Lines shaped like the real ones, with odd numbers and separators.
        fc.array(
          fc.oneof(
            fc.tuple(
              fc.constantFrom("Uid:", "Gid:", "Uid", "uid:"),
              fc.array(
                fc.tuple(
                  fc.constantFrom("\t", " ", "\t\t", ""),
                  fc.oneof(
                    fc.nat().map(String),
                    fc.constantFrom("9007199254740993", "99999999999999999999", "-1", "1e3", "0x1"),
                  ),
                ),
                { minLength: 3, maxLength: 5 },
              ),
            ).map(([name, ids]) => name + ids.map(([sep, n]) => sep + n).join("")),
            fc.string({ maxLength: 10 }),
          ),
          { maxLength: 6 },
        ).map((lines) => lines.join("\n")),
      ),
      (text) => {
        const ids = parseStatusIds(text);
        if (ids === undefined) return;
        expect(
          ids.uid.length === 4 && ids.uid.every((n) => Number.isSafeInteger(n) && n >= 0),
          "malformed ids",
          { text, ids },
        );
      },
    ),
    options,
  );
}

/** `cmdline`/`environ`: NUL-terminated lists round-trip; any bytes parse consistently. */
export function nulListRoundTrip(options: FuzzOptions): Promise<void> {
  const elementArb = fc.oneof(
    fc.string({ unit: "binary", maxLength: 20 }),
    fc.constantFrom("", "=", "A=1", "-S", "\ufeffPATH=/bin"),
  ).map((s) => s.replaceAll("\0", ""));
  return checkSync(
    fc.property(
      fc.array(elementArb, { maxLength: 12 }),
      fc.oneof(
        fc.uint8Array({ maxLength: 300 }),
        // Valid UTF-8 pieces, NULs, a byte-order mark, stray continuation bytes.
        fc.array(
          fc.oneof(
            fc.string({ unit: "binary", maxLength: 4 }).map((s) => utf8.encode(s)),
            fc.constantFrom(
              Uint8Array.of(0),
              Uint8Array.of(0xef, 0xbb, 0xbf),
              Uint8Array.of(0x80),
              Uint8Array.of(0xc3),
            ),
          ),
          { maxLength: 30 },
        ).map((parts) => Uint8Array.from(parts.flatMap((p) => Array.from(p)))),
      ),
      (list, bytes) => {
        const encoded = utf8.encode(list.map((s) => `${s}\0`).join(""));
        const parsed = parseNulList(encoded);
        expect(
          parsed !== undefined && parsed.length === list.length &&
            parsed.every((v, i) => v === list[i]),
          "NUL list changed",
          { list, parsed },
        );
        const any = parseNulList(bytes);
        if (any === undefined) return;
        const last = bytes.length > 0 && bytes[bytes.length - 1] === 0;
        const rebuilt = utf8.encode(any.join("\0") + (last ? "\0" : ""));
        expect(sameBytes(rebuilt, bytes), "a parsed list does not rebuild its bytes", {
          bytes,
          any,
        });
      },
    ),
    options,
  );
}

/** The `/proc` suite, in registry form. */
export const PROC_PROPERTIES: readonly FuzzProperty[] = [
  {
    name: "proc: stat round trip (comm with spaces and parens)",
    ciRuns: 1000,
    longRuns: 50000,
    run: statRoundTrip,
  },
  { name: "proc: stat parser never throws", ciRuns: 1000, longRuns: 50000, run: statNeverThrows },
  {
    name: "proc: status ids are the kernel's, whatever the comm",
    ciRuns: 1000,
    longRuns: 50000,
    run: statusIdsFollowKernel,
  },
  {
    name: "proc: status parser never throws",
    ciRuns: 1000,
    longRuns: 50000,
    run: statusNeverThrows,
  },
  { name: "proc: NUL lists round trip", ciRuns: 1000, longRuns: 50000, run: nulListRoundTrip },
];
