/**
 * A suite-wide heartbeat for suites that start many sessions in one process,
 * started after what pi's start leaves behind in its process before any
 * sudo: the kernel calls' library loaded (its first load holds the loop
 * ~40 ms), the `/proc` walker's worker running (Deno's worker start blocks
 * its caller; Node's, pi's runtime, does not) and, with the broker
 * installed, the process's one root check server, which pi's first root
 * question starts (its `detached` spawn copies a Deno process whole, 30–45 ms
 * at 300 MB under load; Node, pi's runtime, forks for every child anyway).
 * The heartbeat then sees what sessions and requests cost, not a process's
 * first start.
 *
 * @module
 */
import { libc } from "../../kernel/libc.ts";
import { holdProcessWalker, releaseProcessWalker } from "../../kernel/proc_walk.ts";
import { rootPairingInstalled, runRootCheck } from "../../extension/pairing/root_check.ts";
import { type Heartbeat, startHeartbeat } from "./heartbeat.ts";

/** `start` for the suite's `before`, `finish` (asserts no stall, lets the walker go) for its `after`. */
export function suiteHeartbeat(): { start(): Promise<void>; finish(): void } {
  let beat: Heartbeat | undefined;
  return {
    async start() {
      libc();
      holdProcessWalker();
      // A terminal that does not exist: the server answers with its usage line, and stays.
      if (await rootPairingInstalled()) {
        await runRootCheck("/usr/bin/sudo", ["--terminal-holders", "999999"]);
      }
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
