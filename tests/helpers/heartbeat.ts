/**
 * Event-loop watchdog for tests. A timer ticks every few milliseconds on the
 * loop under test; any gap between ticks longer than the limit is a stall.
 * `stop()` returns the worst gap, and `assertNoStall()` fails the test with
 * the stall length. The test runner's own per-test timeout turns a loop that
 * never comes back into a failure instead of a hang.
 *
 * @module
 */
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";

/** Largest gap a test tolerates (SPEC §7, issue: 50 ms). */
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
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    // The timer itself is due every TICK_MS; anything beyond is lag.
    worst = Math.max(worst, now - last - TICK_MS);
    last = now;
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
