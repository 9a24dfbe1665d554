/**
 * Pure parsers for the `/proc` files the peer verification reads: no I/O
 * (`proc_reader.ts` reads), so they can be fuzzed with hostile input.
 *
 * @module
 */

/** The fields of `/proc/<pid>/stat` that the verification uses. */
export interface ProcStat {
  readonly pid: number;
  /** The command name; may contain spaces and `)`. */
  readonly comm: string;
  readonly state: string;
  readonly ppid: number;
  /** Field 5: the process group. */
  readonly pgrp: number | undefined;
  /** Field 7: the controlling terminal's device number (0 for none); unparsable: undefined. */
  readonly ttyNr: number | undefined;
  /** Field 8: the foreground process group of that terminal (-1 for none). */
  readonly tpgid: number | undefined;
  /** Field 22: start time in clock ticks since boot (a PID-reuse guard). */
  readonly startTime: bigint;
}

/**
 * The one walk up a process's parents, until init, an unreadable `stat` or
 * `max` pids. Each pid is yielded before its `stat` is read (a caller that
 * stops there pays no read); the caller supplies the read of its runtime.
 */
export async function* ancestors(
  start: number,
  statOf: (pid: number) => ProcStat | undefined | Promise<ProcStat | undefined>,
  max = 64,
): AsyncGenerator<number> {
  let pid = start;
  for (let hop = 0; hop < max && pid > 1; hop++) {
    yield pid;
    const stat = await statOf(pid);
    if (!stat) return;
    pid = stat.ppid;
  }
}

/**
 * Parses `/proc/<pid>/stat`, or `undefined` for any other shape. `comm` runs
 * from the first `(` to the *last* `)`: a process may name itself `a) b (c`.
 */
export function parseStat(text: string): ProcStat | undefined {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 1 || close < open) return undefined;
  const pid = parseDecimal(text.slice(0, open).trim());
  const comm = text.slice(open + 1, close);
  // Fields after comm start at field 3 (state); starttime is field 22.
  const rest = text.slice(close + 1).trim().split(" ");
  if (rest.length < 20) return undefined;
  const state = rest[0];
  const ppid = parseDecimal(rest[1]);
  const signed = (s: string | undefined) => /^-?[0-9]{1,10}$/.test(s ?? "") ? Number(s) : undefined;
  const pgrp = signed(rest[2]);
  const ttyNr = signed(rest[4]);
  const tpgid = signed(rest[5]);
  const start = rest[19];
  if (pid === undefined || ppid === undefined || !/^[0-9]{1,20}$/.test(start)) return undefined;
  if (!/^[A-Za-z]$/.test(state)) return undefined;
  return { pid, comm, state, ppid, pgrp, ttyNr, tpgid, startTime: BigInt(start) };
}

/** True for a process stopped (`T`) or in tracing stop (`t`, a tracer holds it). */
export function isStopped(stat: ProcStat): boolean {
  return stat.state === "T" || stat.state === "t";
}

/** The four ids of a `Uid:` line: real, effective, saved, filesystem. */
export type IdQuad = readonly [number, number, number, number];

/** The ids of `/proc/<pid>/status` that the checks read: its `Uid:` line. */
export interface ProcIds {
  readonly uid: IdQuad;
}

/** `status`'s `State:` letter (`?` if none), from its own line: `Name:` may forge one (P16). */
export function parseStatusState(text: string): string {
  return text.split("\n").find((l) => l.startsWith("State:\t"))?.[7] ?? "?";
}

/** Parses the `Uid:` line of `/proc/<pid>/status`. */
export function parseStatusIds(text: string): ProcIds | undefined {
  // Split on "\n" only: the kernel escapes "\n" in a process's Name: line
  // but not "\r" or U+2028, which a multiline regex would treat as line
  // breaks (a process could then plant a fake "Uid:" line in its name).
  const line = text.split("\n").find((l) => l.startsWith("Uid:"));
  const match = line === undefined ? null : /^Uid:\t(\d+)\t(\d+)\t(\d+)\t(\d+)$/.exec(line);
  if (!match) return undefined;
  const ids = match.slice(1, 5).map(Number);
  return ids.every(Number.isSafeInteger) ? { uid: [ids[0], ids[1], ids[2], ids[3]] } : undefined;
}

/**
 * The supplementary groups (`Groups:`) of `/proc/<pid>/status`; `undefined` when
 * missing or bent. The caller must have read the file whole, or a cut number
 * (`4` of `42`) would be a group the process does not have.
 */
export function parseStatusGroups(text: string): readonly number[] | undefined {
  const line = text.split("\n").find((l) => l.startsWith("Groups:"));
  if (line === undefined || !/^Groups:\t?(?:[0-9]{1,10}(?: [0-9]{1,10})*)? ?$/.test(line)) {
    return undefined;
  }
  const ids = line.slice("Groups:".length).trim().split(" ").filter((s) => s !== "").map(Number);
  return ids.every(Number.isSafeInteger) ? ids : undefined;
}

/**
 * The `TracerPid:` of `/proc/<pid>/status` (0: untraced); `undefined` when
 * missing or malformed, which the caller treats as traced (fail closed).
 */
export function parseTracerPid(text: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith("TracerPid:"));
  const match = line === undefined ? null : /^TracerPid:\t([0-9]{1,10})$/.exec(line);
  return match ? Number(match[1]) : undefined;
}

/**
 * Splits a NUL-separated `/proc` file (`cmdline`, `environ`); a trailing NUL
 * ends the last element. `undefined` if the bytes are not valid UTF-8.
 */
export function parseNulList(bytes: Uint8Array): string[] | undefined {
  if (bytes.length === 0) return [];
  let text: string;
  try {
    // ignoreBOM: a leading U+FEFF is data here, not a byte-order mark.
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
  const parts = text.split("\0");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/** True when two string lists are equal element by element. */
export function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function parseDecimal(s: string): number | undefined {
  if (!/^[0-9]{1,10}$/.test(s)) return undefined;
  const n = Number(s);
  return n > 0 || s === "0" ? n : undefined;
}
