/**
 * Folder `shared/`: small runtime-neutral utilities (`node:` built-ins only)
 * several parts use.
 *
 * This file: the one way to run a child process to its end with a deadline.
 * {@link spawnWithDeadline} kills it with SIGKILL at the deadline (its whole
 * process group when `detached`), reaps it and keeps a bounded amount of its
 * output; a program that hangs, floods its output or cannot be started
 * becomes a typed result, never an exception or a blocked event loop. The
 * children that live as long as their owner (the terminal guardian, the
 * tmux control client and the root check server) are started by that owner,
 * which watches and ends them; the Deno runtimes of the broker and `pi-secret-run` spawn with
 * `Deno.Command`.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { errnoCode } from "./errno.ts";

/** Bytes kept of each captured output stream unless {@link SpawnDeadlineOptions.outputCap} says otherwise. */
export const DEFAULT_OUTPUT_CAP = 64 * 1024;

/**
 * After the SIGKILL at the deadline, how long to wait for the streams to
 * close: a grandchild that holds the pipes open must not keep the caller
 * waiting.
 */
export const KILL_GRACE_MS = 1_000;

/** How {@link spawnWithDeadline} starts and watches the child. */
export interface SpawnDeadlineOptions {
  /** SIGKILL after this many milliseconds. */
  readonly deadlineMs: number;
  /** The child's complete environment; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The child's working directory; default the caller's. */
  readonly cwd?: string;
  /**
   * `"pipe"` (default): stdin `/dev/null`, stdout and stderr captured.
   * `"inherit"`: the child shares the caller's terminal; nothing is captured.
   */
  readonly stdio?: "pipe" | "inherit";
  /** With `"pipe"`: an open descriptor for the child's stdout instead of a pipe (stdout is then ""). */
  readonly stdoutFd?: number;
  /** With `"pipe"`: capture stderr into `stdout` in arrival order, like `2>&1` (stderr is then ""). */
  readonly mergeStderr?: boolean;
  /**
   * Start the child in a new session and process group (no controlling
   * terminal); the deadline then kills the whole group.
   */
  readonly detached?: boolean;
  /** Bytes kept of each captured stream; default {@link DEFAULT_OUTPUT_CAP}. The rest is dropped. */
  readonly outputCap?: number;
  /** Aborting it kills the child as the deadline would (its owner is shutting down). */
  readonly signal?: AbortSignal;
}

/** What {@link spawnWithDeadline} reports once the child is gone. */
export interface SpawnDeadlineResult {
  /** Exit code, or `null` when the process was killed by a signal or never started. */
  readonly code: number | null;
  /** The signal that ended it (`"SIGKILL"` at the deadline), else `null`. */
  readonly signal: string | null;
  /** The captured output, at most `outputCap` bytes, decoded as UTF-8. */
  readonly stdout: string;
  readonly stderr: string;
  /** True when the deadline expired and the process was killed. */
  readonly timedOut: boolean;
  /** True when a stream wrote more than `outputCap` bytes: what was kept is cut (parse nothing). */
  readonly truncated: boolean;
  /** Set when the process could not be started: the errno code (`ENOENT`, `EACCES`) or the message. */
  readonly spawnError?: string;
}

/**
 * Runs `file` with `args` (no shell) and resolves once it has exited and its
 * output streams are closed, or {@link KILL_GRACE_MS} after the SIGKILL at
 * `deadlineMs`. Never rejects.
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
      // A long-lived signal must not keep every child it ever watched (a no-op before it was added).
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
