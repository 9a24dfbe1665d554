/**
 * Asking root through the broker's NOPASSWD sudoers rule: one `sudo -n
 * /usr/local/libexec/pi-sudo-prompt/pi-secret-broker --<check> …` run, shared
 * by the pairing check (ADR 0005) and the terminal check (ADR 0007).
 *
 * Asynchronous with a deadline and capped output (the event loop never waits
 * on it). The `sudo` front end runs in a session of its own with nothing of
 * pi's environment, and while it runs its pid is in {@link ownFrontEnds}, so
 * the pairing checks do not count it as a stranger.
 *
 * @module
 */
import { BROKER_LAUNCHER } from "../../broker/paths.ts";
import { spawnWithDeadline } from "../../shared/spawn_deadline.ts";

/** Default deadline of one root check. */
export const ROOT_CHECK_TIMEOUT_MS = 5000;
const MAX_OUTPUT_BYTES = 4096;

/** How one run ended: its exit code (`null`: killed, or it never ran) and output. */
export interface RootCheckRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Why there is no exit code: it ran past its deadline, or sudo could not start. */
  readonly failure?: "timeout" | "cannot run sudo";
  /** pid of our own sudo front end. */
  readonly pid?: number;
}

const KEY = Symbol.for("pi-sudo-prompt.own-front-ends");

/** pids of our own `sudo -n` children that are still running (one set per process). */
export function ownFrontEnds(): Set<number> {
  const g = globalThis as unknown as Record<symbol, Set<number> | undefined>;
  return g[KEY] ??= new Set<number>();
}

/** Runs `sudo -n <broker launcher> ...args`; never throws. */
export async function runRootCheck(
  sudoPath: string,
  args: readonly string[],
  timeoutMs = ROOT_CHECK_TIMEOUT_MS,
): Promise<RootCheckRun> {
  const own = ownFrontEnds();
  let pid: number | undefined;
  const r = await spawnWithDeadline(sudoPath, ["-n", BROKER_LAUNCHER, ...args], {
    // Nothing of pi's environment: no askpass, no session variable.
    env: { PATH: "/usr/bin:/bin", LANG: "C" },
    // A session of its own: with pi's terminal as its controlling
    // terminal, sudo would open it (and count as a holder of it).
    detached: true,
    outputCap: MAX_OUTPUT_BYTES,
    deadlineMs: timeoutMs,
    onSpawn: (p) => {
      pid = p;
      own.add(p);
    },
  });
  if (pid !== undefined) own.delete(pid);
  const failure = r.timedOut ? "timeout" : r.spawnError ? "cannot run sudo" : undefined;
  return {
    code: failure ? null : r.code,
    stdout: r.stdout,
    stderr: r.stderr,
    ...(failure ? { failure } : {}),
    ...(pid !== undefined ? { pid } : {}),
  };
}
