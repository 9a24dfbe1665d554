/**
 * Warms a session's Deno cache so its first sudo and `pi-secret-run` are as fast as the
 * rest (docs/benchmarks.md row a2): each entry point runs once, without argument under its
 * pinned flags, in a child with a deadline and only the cache dir (no socket) in its env.
 *
 * @module
 */
import { spawnWithDeadline } from "../../shared/spawn_deadline.ts";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";

/** Longest one warm-up run may take before it is killed (a cold start is ~50 ms). */
export const WARMUP_DEADLINE_MS = 10_000;

/** One entry point to run once: its pinned argv (no arguments) and the exit it must end with. */
export interface WarmupRun {
  readonly argv: readonly string[];
  readonly expectedCode: number;
}

/** Why a warm-up did not complete. */
export const WARMUP_FAILURES = reasons("spawn_failed", "timed_out", "cancelled", "unexpected_exit");

/** One of {@link WARMUP_FAILURES}. */
export type WarmupFailure = ReasonOf<typeof WARMUP_FAILURES>;

/** How a warm-up ended; informational only, a failed warm-up just leaves the cache cold. */
export type WarmupResult = Result<{ ms: number }, WarmupFailure>;

/** Runs each of `runs` once, in order, with `DENO_DIR=denoDir`; `cancel` stops it. Never throws. */
export function warmDenoCache(
  runs: readonly WarmupRun[],
  denoDir: string,
  deadlineMs = WARMUP_DEADLINE_MS,
): { readonly done: Promise<WarmupResult>; cancel(): void } {
  const abort = new AbortController();
  const started = performance.now();
  const done = (async (): Promise<WarmupResult> => {
    for (const run of runs) {
      if (abort.signal.aborted) return { ok: false, reason: WARMUP_FAILURES.CANCELLED };
      const result = await runOnce(run, denoDir, deadlineMs, abort.signal);
      if (!result.ok) {
        return abort.signal.aborted ? { ok: false, reason: WARMUP_FAILURES.CANCELLED } : result;
      }
    }
    return { ok: true, ms: performance.now() - started };
  })();
  return { done, cancel: () => abort.abort() };
}

async function runOnce(
  run: WarmupRun,
  denoDir: string,
  deadlineMs: number,
  signal: AbortSignal,
): Promise<{ ok: true } | { ok: false; reason: WarmupFailure }> {
  const r = await spawnWithDeadline(run.argv[0], run.argv.slice(1), {
    deadlineMs,
    env: { DENO_DIR: denoDir, NO_COLOR: "1" },
    outputCap: 4096,
    signal,
  });
  if (r.spawnError !== undefined) return { ok: false, reason: WARMUP_FAILURES.SPAWN_FAILED };
  if (r.timedOut) return { ok: false, reason: WARMUP_FAILURES.TIMED_OUT };
  if (r.code !== run.expectedCode) return { ok: false, reason: WARMUP_FAILURES.UNEXPECTED_EXIT };
  return { ok: true };
}
