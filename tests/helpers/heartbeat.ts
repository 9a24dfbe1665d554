/**
 * Event-loop watchdog for tests. A timer ticks every few milliseconds on the
 * loop under test; any gap between ticks longer than the limit is a stall.
 * `stop()` returns the worst gap, and `assertNoStall()` fails the test with
 * the stall length.
 *
 * On a loaded 2-core machine the kernel can simply not schedule the thread
 * for a while; that is not our code blocking the loop. So each gap is
 * reduced by the time the thread spent waiting on a run queue
 * (`/proc/thread-self/schedstat`, field 2) during that gap. The raw worst gap
 * is reported alongside. The test runner's own per-test timeout turns a loop that
 * never comes back into a failure instead of a hang.
 *
 * @module
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
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
  let last = performance.now();
  let lastWait = runQueueWaitMs();
  let worst = 0;
  let worstRaw = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const wait = runQueueWaitMs();
    // The timer itself is due every TICK_MS; anything beyond is lag.
    const raw = now - last - TICK_MS;
    worstRaw = Math.max(worstRaw, raw);
    worst = Math.max(worst, raw - (wait - lastWait));
    last = now;
    lastWait = wait;
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
        `event loop stalled for ${gap.toFixed(1)} ms (limit ${limitMs} ms)`,
      );
    },
  };
}

/** Milliseconds this thread has spent runnable but waiting for a CPU. */
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
