/**
 * A suite-wide heartbeat for suites that start many sessions in one process,
 * started after what pi's start leaves behind in its process before any
 * sudo: the kernel calls' library loaded (its first load holds the loop
 * ~40 ms) and the `/proc` walker's worker running (Deno's worker start blocks
 * its caller; Node's, pi's runtime, does not). The heartbeat then sees what
 * sessions and requests cost, not a process's first start.
 *
 * @module
 */
import { libc } from "../../kernel/libc.ts";
import { holdProcessWalker, releaseProcessWalker } from "../../kernel/proc_walk.ts";
import { type Heartbeat, startHeartbeat } from "./heartbeat.ts";

/** `start` for the suite's `before`, `finish` (asserts no stall, lets the walker go) for its `after`. */
export function suiteHeartbeat(): { start(): void; finish(): void } {
  let beat: Heartbeat | undefined;
  return {
    start() {
      libc();
      holdProcessWalker();
      beat = startHeartbeat();
    },
    finish() {
      try {
        beat?.assertNoStall();
      } finally {
        releaseProcessWalker();
      }
    },
  };
}
