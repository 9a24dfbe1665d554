/**
 * What pi's start leaves behind in its process before any sudo, done once
 * by a suite that starts many sessions in one process: the kernel calls'
 * library loaded (its first load holds the loop ~40 ms) and the `/proc`
 * walker's worker running (Deno's worker start blocks its caller; Node's,
 * pi's runtime, does not). A suite-wide heartbeat started after it then sees
 * what a session and a request cost, not a process's first start.
 *
 * @module
 */
import { libc } from "../../kernel/libc.ts";
import { holdProcessWalker, releaseProcessWalker } from "../../kernel/proc_walk.ts";

/** Loads and holds what pi's start would; call the returned function in `after`. */
export function startLikePi(): () => void {
  libc();
  holdProcessWalker();
  return releaseProcessWalker;
}
