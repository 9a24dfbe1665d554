/**
 * The one way to run a child process to its end with a deadline: a program that hangs, floods its
 * output or cannot be started becomes a typed result, never an exception or a blocked event loop.
 * Children that live as long as their owner (guardian, tmux control client, root check server) are
 * started and ended by that owner.
 * @module
 */
import { Buffer } from "node:buffer";
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { errnoCode } from "./errno.ts";

/** Bytes kept of each captured output stream by default. */
export const DEFAULT_OUTPUT_CAP = 64 * 1024;

/** Wait for the streams after the SIGKILL: a grandchild holding the pipes must not keep us long. */
export const KILL_GRACE_MS = 1_000;

/** How {@link spawnWithDeadline} starts and watches the child. */
export interface SpawnDeadlineOptions {
  readonly deadlineMs: number;
  /** The child's complete environment; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** `"pipe"` (default): stdin `/dev/null`, stdout and stderr captured; `"inherit"`: none. */
  readonly stdio?: "pipe" | "inherit";
  /** With `"pipe"`: an open descriptor for the child's stdout (stdout is then ""). */
  readonly stdoutFd?: number;
  /** With `"pipe"`: stderr into `stdout`, like `2>&1` (stderr is then ""). */
  readonly mergeStderr?: boolean;
  /** A new session and process group (no controlling terminal); the deadline kills the group. */
  readonly detached?: boolean;
  /** Bytes kept of each captured stream; the rest is dropped. */
  readonly outputCap?: number;
  /** Aborting it kills the child as the deadline would. */
  readonly signal?: AbortSignal;
}

/** What {@link spawnWithDeadline} reports once the child is gone. */
export interface SpawnDeadlineResult {
  /** Exit code, or `null` when the process was killed by a signal or never started. */
  readonly code: number | null;
  /** The signal that ended it (`"SIGKILL"` at the deadline), else `null`. */
  readonly signal: string | null;
  /** At most `outputCap` bytes each, as UTF-8. */
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  /** A stream passed `outputCap`: what was kept is cut (parse nothing). */
  readonly truncated: boolean;
  /** Why it could not be started: the errno code, else the message. */
  readonly spawnError?: string;
}

/**
 * Runs `file` (no shell); resolves once it has exited and its streams closed, or
 * {@link KILL_GRACE_MS} after the SIGKILL at `deadlineMs` (to its group when `detached`). Never
 * rejects.
 */
export function spawnWithDeadline(
  file: string,
  args: readonly string[],
  options: SpawnDeadlineOptions,
): Promise<SpawnDeadlineResult> {
  return new Promise((resolve) => {
    const cap = options.outputCap ?? DEFAULT_OUTPUT_CAP;
    const out = boundedSink(cap);
    const err = options.mergeStderr ? out : boundedSink(cap);
    let timedOut = false;
    let done = false;
    const timers: { kill?: ReturnType<typeof setTimeout>; grace?: ReturnType<typeof setTimeout> } =
      {};
    const finish = (code: number | null, signal: string | null, spawnError?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timers.kill);
      clearTimeout(timers.grace);
      // A long-lived signal must not keep every child it watched (a no-op if never added).
      options.signal?.removeEventListener("abort", stop);
      resolve({
        code,
        signal,
        stdout: out.text(),
        stderr: options.mergeStderr ? "" : err.text(),
        timedOut,
        truncated: out.overflowed() || err.overflowed(),
        ...(spawnError ? { spawnError } : {}),
      });
    };
    let child: ChildProcess;
    try {
      child = spawn(file, [...args], {
        env: options.env ?? process.env,
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        detached: options.detached === true,
        stdio: options.stdio === "inherit"
          ? "inherit"
          : ["ignore", options.stdoutFd ?? "pipe", "pipe"],
      });
    } catch (e) {
      finish(null, null, spawnErrorText(e));
      return;
    }
    // A declaration, hoisted, so that `finish` can name it.
    function stop(): void {
      if (timers.grace || done) return;
      kill(child, options.detached === true);
      timers.grace = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(null, "SIGKILL");
      }, KILL_GRACE_MS);
    }
    timers.kill = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.deadlineMs);
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener("abort", stop, { once: true });
    child.stdout?.on("data", out.push);
    child.stderr?.on("data", err.push);
    child.on("error", (e) => finish(null, null, spawnErrorText(e)));
    child.on("close", (code, signal) => finish(code, signal));
  });
}

/** A byte buffer that keeps the first `cap` bytes pushed into it. */
function boundedSink(cap: number) {
  const chunks: Buffer[] = [];
  let bytes = 0;
  return {
    push: (b: Buffer) => {
      if (bytes < cap) chunks.push(b.subarray(0, cap - bytes));
      bytes += b.length;
    },
    text: () => Buffer.concat(chunks).toString("utf8"),
    overflowed: () => bytes > cap,
  };
}

function kill(child: ChildProcess, group: boolean): void {
  try {
    if (group && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    else child.kill("SIGKILL");
  } catch { /* already gone */ }
}

function spawnErrorText(e: unknown): string {
  return errnoCode(e) ?? (e instanceof Error ? e.message : String(e));
}
