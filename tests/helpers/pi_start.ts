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
 * A suite that also runs a mutated copy of the sources (`mutated_copy.ts`)
 * names the copy's directory: its modules are other instances, compiled on
 * the loop when first imported (35–40 ms beside two CPU-bound jobs) and with
 * a walker and a root check server of their own, so they are loaded and
 * started before the heartbeat too.
 *
 * @module
 */
import { join } from "node:path";
import { type Heartbeat, startHeartbeat } from "./heartbeat.ts";
import { REPO_ROOT } from "./test_env.ts";

type Libc = typeof import("../../kernel/libc.ts");
type Walker = typeof import("../../kernel/proc_walk.ts");
type RootCheck = typeof import("../../extension/pairing/root_check.ts");

/**
 * `start` for the suite's `before`, `finish` (asserts no stall, lets the
 * walkers go) for its `after`; `copies` gives the directories of the mutated
 * copies the suite runs, made before the heartbeat starts.
 */
export function suiteHeartbeat(
  copies: () => Promise<readonly string[]> = () => Promise.resolve([]),
): { start(): Promise<void>; finish(): void } {
  let beat: Heartbeat | undefined;
  const releases: (() => void)[] = [];
  return {
    async start() {
      for (const root of [REPO_ROOT, ...await copies()]) releases.push(await startedIn(root));
      beat = startHeartbeat();
    },
    finish() {
      try {
        beat?.assertNoStall();
      } finally {
        for (const release of releases.splice(0)) release();
      }
    },
  };
}

/** Loads and starts what pi's start leaves in its process, from the sources under `root`. */
async function startedIn(root: string): Promise<() => void> {
  const { libc }: Libc = await import(join(root, "kernel/libc.ts"));
  const walker: Walker = await import(join(root, "kernel/proc_walk.ts"));
  const check: RootCheck = await import(join(root, "extension/pairing/root_check.ts"));
  libc();
  walker.holdProcessWalker();
  // A terminal that does not exist: the server answers with its usage line, and stays.
  if (await check.rootCheckInstalled(check.PAIRING_CHECK)) {
    await check.runRootCheck("/usr/bin/sudo", ["--terminal-holders", "999999"]);
  }
  return walker.releaseProcessWalker;
}
