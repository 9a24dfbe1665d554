/**
 * Event-loop watchdog for tests. A timer ticks every few milliseconds on the
 * loop under test; any gap between ticks longer than the limit is a stall.
 * `stop()` returns the worst gap, and `assertNoStall()` fails the test with
 * the stall length.
 *
 * On a loaded 2-core machine the kernel can simply not schedule the thread
 * for a while; that is not our code blocking the loop. So each gap is
 * reduced by what the machine took from it (`schedstat` of each thread):
 *
 * - the time the loop's thread waited on a run queue;
 * - the time it was neither running nor runnable (blocked) while other
 *   tasks waited on a run queue, at most as long as they waited: the
 *   process's other threads (V8's garbage collector, the thread pool, which
 *   the loop waits for), and any task of the machine (`/proc/pressure/cpu`,
 *   `some`): spawning a child blocks its parent until the child runs `exec`,
 *   which a starved child does late.
 *
 * What stays is the loop's own time: code that runs on it, always, and
 * blocking calls while nothing on the machine waited for a CPU (an idle
 * machine, as CI's, sees every blocking call). The raw worst gap is reported
 * alongside. The test runner's own per-test timeout turns a loop
 * that never comes back into a failure instead of a hang.
 *
 * @module
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { performance } from "node:perf_hooks";

/** Largest gap a test tolerates (docs/design.md §7, issue: 50 ms). */
export const MAX_LOOP_GAP_MS = 50;
const TICK_MS = 5;

/** A running heartbeat. */
export interface Heartbeat {
  /** Worst gap so far, in ms. */
  worstGap(): number;
  /** Stops ticking and returns the worst gap. */
  stop(): number;
  /** Stops and fails if the worst gap exceeded `limitMs`. */
  assertNoStall(limitMs?: number): void;
}

/** Starts a heartbeat on the current event loop. */
export function startHeartbeat(): Heartbeat {
  const self = ownTid();
  let last = performance.now();
  let before = threadTimes(self);
  let worst = 0;
  let worstRaw = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const after = threadTimes(self);
    // The timer itself is due every TICK_MS; anything beyond is lag.
    const raw = now - last - TICK_MS;
    worstRaw = Math.max(worstRaw, raw);
    const waited = after.wait - before.wait;
    const blocked = Math.max(0, now - last - (after.cpu - before.cpu) - waited);
    const starved = Math.max(
      after.othersWait - before.othersWait,
      after.machineWait - before.machineWait,
      0,
    );
    worst = Math.max(worst, raw - waited - Math.min(blocked, starved));
    last = now;
    before = after;
  }, TICK_MS);
  const stop = () => {
    clearInterval(timer);
    return worst;
  };
  return {
    worstGap: () => worst,
    stop,
    assertNoStall(limitMs = MAX_LOOP_GAP_MS) {
      const gap = stop();
      assert.ok(
        gap <= limitMs,
        `event loop stalled for ${gap.toFixed(1)} ms (limit ${limitMs} ms; ${
          worstRaw.toFixed(1)
        } ms before the machine's share)`,
      );
    },
  };
}

/** This thread's id (`/proc/thread-self` points at `<pid>/task/<tid>`). */
function ownTid(): string {
  try {
    return readlinkSync("/proc/thread-self").split("/").pop() ?? "";
  } catch {
    return "";
  }
}

/**
 * In ms: this thread's time on a CPU and on a run queue (`schedstat` fields
 * 1 and 2), the run-queue time of the process's other threads, and the time
 * some task of the machine waited for a CPU (0 without pressure stall
 * information: then only the process's own threads count).
 */
function threadTimes(
  self: string,
): { cpu: number; wait: number; othersWait: number; machineWait: number } {
  const out = { cpu: 0, wait: 0, othersWait: 0, machineWait: cpuPressureMs() };
  let tasks: string[] = [];
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return out;
  }
  for (const tid of tasks) {
    let fields: string[];
    try {
      fields = readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ");
    } catch {
      continue; // exited
    }
    if (tid === self) {
      out.cpu = Number(fields[0]) / 1e6;
      out.wait = Number(fields[1]) / 1e6;
    } else {
      out.othersWait += Number(fields[1]) / 1e6;
    }
  }
  return out;
}

/**
 * How long this thread has waited on a run queue, in ms (`schedstat` field
 * 2): subtract it from a measured span to judge our code, not the machine's
 * load.
 */
export function runQueueWaitMs(): number {
  try {
    const fields = readFileSync("/proc/thread-self/schedstat", "utf8").split(" ");
    return Number(fields[1]) / 1e6;
  } catch {
    return 0;
  }
}

/** `some … total=` of `/proc/pressure/cpu` (µs some task waited for a CPU), in ms. */
function cpuPressureMs(): number {
  try {
    const total = /^some .*total=([0-9]+)$/m.exec(readFileSync("/proc/pressure/cpu", "utf8"))?.[1];
    return total === undefined ? 0 : Number(total) / 1000;
  } catch {
    return 0;
  }
}
