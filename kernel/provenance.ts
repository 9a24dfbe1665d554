/**
 * What pi can prove about where a process came from, for the modal's list of
 * processes it could not check, from two kernel facts the process cannot
 * choose: pi's mark, a hard `RLIMIT_RTTIME` that everything pi starts inherits and no
 * user process can raise; and its start time against {@link CallWindows}.
 * Why: ADR 0009 §2.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { libc } from "./libc.ts";
import { readProcText } from "./proc_reader.ts";

/** `RLIMIT_RTTIME`: real-time CPU time, in µs; it binds only `SCHED_FIFO`/`SCHED_RR` tasks. */
const RLIMIT_RTTIME = 15;
/** A mark is this far below "unlimited" at most: 2⁶² µs is about 146,000 years. */
const MARK_CEILING = 1n << 62n;

/**
 * A mark for this process: just below 2⁶² µs, minus a random 20-bit number
 * so that two pi processes mark their descendants apart. Never above the
 * hard limit in force (`current`), which can only be lowered.
 */
export function chooseMark(current: bigint, random: number): bigint {
  const wanted = MARK_CEILING - 1n - BigInt(random & 0xfffff);
  return current < wanted ? current - 1n - BigInt(random & 0xfff) : wanted;
}

/**
 * Marks this process, and so all it starts from now on, irreversibly by design.
 * `undefined` when FFI or `prlimit` failed (descent is then proved by time alone).
 */
export function markSelf(): bigint | undefined {
  const c = libc();
  if (!c) return undefined;
  const now = new BigUint64Array(2);
  if (c.prlimit(0, RLIMIT_RTTIME, null, now) !== 0) return undefined;
  const random = crypto.getRandomValues(new Uint32Array(1))[0];
  const mark = chooseMark(now[1], random);
  if (mark <= 0n) return undefined;
  return c.prlimit(0, RLIMIT_RTTIME, new BigUint64Array([mark, mark]), null) === 0
    ? mark
    : undefined;
}

/**
 * The hard "Max realtime timeout" of a `/proc/<pid>/limits` text (pure): µs,
 * `"unlimited"`, or `undefined` when the line is missing or bent.
 */
export function parseRealtimeHardLimit(text: string): bigint | "unlimited" | undefined {
  const line = text.split("\n").find((l) => l.startsWith("Max realtime timeout"));
  const m = line && /^Max realtime timeout\s+(\S+)\s+(\S+)\s+us\s*$/.exec(line);
  if (!m) return undefined;
  if (m[2] === "unlimited") return "unlimited";
  return /^[0-9]{1,20}$/.test(m[2]) ? BigInt(m[2]) : undefined;
}

/** Whether `pid` carries `mark` (it descends from the process that set it). */
export async function carriesMark(pid: number, mark: bigint | undefined): Promise<boolean> {
  if (mark === undefined) return false;
  return parseRealtimeHardLimit(await readProcText(`/proc/${pid}/limits`) ?? "") === mark;
}

/** Now, in the clock of `stat`'s start times: ticks (1/100 s) since boot, from `/proc/uptime`. */
export function ticksNow(): bigint | undefined {
  try {
    // One tiny read of a kernel-generated file: it cannot wait on anything.
    const m = /^([0-9]{1,12})\.([0-9]{2}) /.exec(readFileSync("/proc/uptime", "latin1"));
    return m ? BigInt(m[1]) * 100n + BigInt(m[2]) : undefined;
  } catch {
    return undefined;
  }
}

/** Most windows kept; older ones merge into one (a wider window only names more). */
const MAX_WINDOWS = 256;

/**
 * When pi's tool calls and `!` commands ran, in start-time ticks (a running call
 * has no end yet). Pure bookkeeping: the clock is passed in.
 */
export class CallWindows {
  readonly #windows: { from: bigint; to: bigint | undefined }[] = [];

  /** A call begins at `at`; returns its window, to pass to {@link end}. */
  begin(at: bigint | undefined): object {
    const w = { from: (at ?? 0n) - 1n, to: undefined as bigint | undefined };
    this.#windows.push(w);
    if (this.#windows.length > MAX_WINDOWS) {
      const [a, b] = this.#windows.splice(0, 2);
      this.#windows.unshift({
        from: a.from < b.from ? a.from : b.from,
        to: a.to === undefined || b.to === undefined ? undefined : a.to > b.to ? a.to : b.to,
      });
    }
    return w;
  }

  /** The call of `window` ended at `at` (a tick late: start times are whole ticks). */
  end(window: object, at: bigint | undefined): void {
    const w = this.#windows.find((x) => x === window);
    if (w) w.to = at === undefined ? undefined : at + 1n;
  }

  /** Whether a process that started at `startTime` started while a call ran. */
  covers(startTime: bigint): boolean {
    return this.#windows.some((w) =>
      startTime >= w.from && (w.to === undefined || startTime <= w.to)
    );
  }
}
