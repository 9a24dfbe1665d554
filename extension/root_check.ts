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
import { spawn } from "node:child_process";
import { BROKER_LAUNCHER } from "../broker/paths.ts";

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
export function runRootCheck(
  sudoPath: string,
  args: readonly string[],
  timeoutMs = ROOT_CHECK_TIMEOUT_MS,
): Promise<RootCheckRun> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let done = false;
    const child = spawn(sudoPath, ["-n", BROKER_LAUNCHER, ...args], {
      // Nothing of pi's environment: no askpass, no session variable.
      env: { PATH: "/usr/bin:/bin", LANG: "C" },
      stdio: ["ignore", "pipe", "pipe"],
      // A session of its own: with pi's terminal as its controlling
      // terminal, sudo would open it (and count as a holder of it).
      detached: true,
    });
    const pid = child.pid;
    const own = ownFrontEnds();
    if (pid !== undefined) own.add(pid);
    const finish = (run: Omit<RootCheckRun, "stdout" | "stderr" | "pid">) => {
      if (pid !== undefined) own.delete(pid);
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...run, stdout, stderr, pid });
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish({ code: null, failure: "timeout" });
    }, timeoutMs);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < MAX_OUTPUT_BYTES) stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < MAX_OUTPUT_BYTES) stderr += d;
    });
    child.on("error", () => finish({ code: null, failure: "cannot run sudo" }));
    child.on("close", (code) => finish({ code }));
  });
}
