/**
 * Asking root through the broker's NOPASSWD sudoers rule, shared by the
 * pairing check (ADR 0005) and the terminal check (ADR 0007).
 *
 * One `sudo -n /usr/local/libexec/pi-sudo-prompt/pi-secret-broker
 * --serve-checks` per pi process (`broker/check_server.sh`, ADR 0005's
 * check-server amendment), started at the first question and asked one line
 * per question over its stdin and stdout, in order, each under a random
 * nonce the answer must carry. A question then costs root's walk alone: no
 * sudo, no launcher, and no fork of pi's process (which holds pi's event
 * loop for as long as copying its memory takes) on a request's path.
 *
 * Every question has a deadline. An answer without the oldest question's
 * nonce (to a question someone else wrote into the server's input), a line
 * too long or a server that ends fails the questions waiting on it, and the
 * next question starts a new server. The server lives while pi holds its
 * stdin: it ends when pi exits. The `sudo` front end runs in a session of
 * its own with nothing of pi's environment, and while it runs its pid is in
 * {@link ownFrontEnds}, so the pairing checks do not count it as a stranger.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { BROKER_LAUNCHER } from "../../broker/paths.ts";

/** Default deadline of one root check. */
export const ROOT_CHECK_TIMEOUT_MS = 5000;
/** Longest answer line, and most stderr kept (sudo's own complaint). */
const MAX_LINE_BYTES = 4096;
/** Questions waiting at once; more are refused (each request asks at most two). */
const MAX_WAITING = 32;

/** How one question ended: its exit code (`null`: no answer) and output. */
export interface RootCheckRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /**
   * Why there is no exit code: past its deadline, sudo could not start, the
   * server broke its protocol, or too many questions were waiting.
   */
  readonly failure?: "timeout" | "cannot run sudo" | "bad answer" | "busy";
  /** pid of our own sudo front end. */
  readonly pid?: number;
}

const KEY = Symbol.for("pi-sudo-prompt.own-front-ends");
const SERVER = Symbol.for("pi-sudo-prompt.root-check-server");

/** pids of our own `sudo -n` children that are still running (one set per process). */
export function ownFrontEnds(): Set<number> {
  const g = globalThis as unknown as Record<symbol, Set<number> | undefined>;
  return g[KEY] ??= new Set<number>();
}

interface Waiting {
  readonly nonce: string;
  readonly resolve: (run: RootCheckRun) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

interface Server {
  readonly child: ChildProcess;
  readonly waiting: Waiting[];
  readonly decoder: TextDecoder;
  partial: string;
  stderr: string;
  /** Set once it takes no more questions. */
  ended: boolean;
}

/**
 * Asks root `args` (`--terminal-holders N`, `--verify-pairing H S I`: the
 * launcher's one-shot flags) through this process's check server; never
 * throws, never waits past `timeoutMs`.
 */
export function runRootCheck(
  sudoPath: string,
  args: readonly string[],
  timeoutMs = ROOT_CHECK_TIMEOUT_MS,
): Promise<RootCheckRun> {
  const s = currentServer(sudoPath);
  const pid = s?.child.pid;
  if (!s || s.waiting.length >= MAX_WAITING) {
    const failure = s ? "busy" : "cannot run sudo";
    return Promise.resolve({ code: null, stdout: "", stderr: "", failure });
  }
  return new Promise((resolve) => {
    const nonce = [...crypto.getRandomValues(new Uint8Array(8))]
      .map((b) => b.toString(16).padStart(2, "0")).join("");
    // A check that does not answer in time stalls every question behind it.
    const timer = setTimeout(() => end(s, "timeout"), timeoutMs);
    s.waiting.push({
      nonce,
      resolve: (r) => resolve(pid === undefined ? r : { ...r, pid }),
      timer,
    });
    held(s, true);
    s.child.stdin?.write(`${nonce} ${args.join(" ")}\n`);
  });
}

function currentServer(sudoPath: string): Server | undefined {
  const g = globalThis as unknown as Record<symbol, Server | undefined>;
  const old = g[SERVER];
  if (old && !old.ended) return old;
  return g[SERVER] = startServer(sudoPath);
}

function startServer(sudoPath: string): Server | undefined {
  let child: ChildProcess;
  try {
    child = spawn(sudoPath, ["-n", BROKER_LAUNCHER, "--serve-checks"], {
      // Nothing of pi's environment: no askpass, no session variable.
      env: { PATH: "/usr/bin:/bin", LANG: "C" },
      // A session of its own: with pi's terminal as its controlling
      // terminal, sudo would open it (and count as a holder of it).
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
  } catch {
    return undefined;
  }
  const s: Server = {
    child,
    waiting: [],
    decoder: new TextDecoder(),
    partial: "",
    stderr: "",
    ended: false,
  };
  const own = ownFrontEnds();
  if (child.pid !== undefined) own.add(child.pid);
  held(s, false);
  child.stdin?.on("error", () => end(s, "cannot run sudo"));
  child.stdout?.on("data", (b: Uint8Array) => answers(s, b));
  child.stderr?.on("data", (b: Uint8Array) => {
    if (s.stderr.length < MAX_LINE_BYTES) s.stderr += new TextDecoder().decode(b);
  });
  child.on("error", () => end(s, "cannot run sudo"));
  // sudo ended (or was killed): no more questions; the server ends at the
  // end of its input, after answering what it was asked.
  child.on("exit", () => {
    if (child.pid !== undefined) own.delete(child.pid);
    s.ended = true;
    child.stdin?.end();
  });
  // Whatever is still waiting gets sudo's own words (`sudo -n`: "a password
  // is required" when the broker's rule is not this user's).
  child.on("close", (code) => {
    s.ended = true;
    for (const w of s.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.resolve({ code, stdout: s.partial, stderr: s.stderr });
    }
  });
  return s;
}

/** Matches answers to questions, oldest first. */
function answers(s: Server, b: Uint8Array): void {
  s.partial += s.decoder.decode(b, { stream: true });
  for (let nl = s.partial.indexOf("\n"); nl >= 0; nl = s.partial.indexOf("\n")) {
    const line = s.partial.slice(0, nl);
    s.partial = s.partial.slice(nl + 1);
    const m = /^([0-9a-f]{16}) ([0-9]{1,3}) (.*)$/.exec(line);
    const w = s.waiting[0];
    if (!m || !w || m[1] !== w.nonce) return end(s, "bad answer");
    s.waiting.shift();
    clearTimeout(w.timer);
    w.resolve({ code: Number(m[2]), stdout: `${m[3]}\n`, stderr: "" });
  }
  if (s.partial.length > MAX_LINE_BYTES) end(s, "bad answer");
  held(s, s.waiting.length > 0);
}

/**
 * Takes no more questions and fails those waiting with `failure`: closes the
 * server's input (it ends after its current check) and kills our sudo.
 */
function end(s: Server, failure: NonNullable<RootCheckRun["failure"]>): void {
  s.ended = true;
  for (const w of s.waiting.splice(0)) {
    clearTimeout(w.timer);
    w.resolve({ code: null, stdout: "", stderr: "", failure });
  }
  s.child.stdin?.destroy();
  s.child.stdout?.destroy();
  s.child.stderr?.destroy();
  held(s, false);
  try {
    if (s.child.pid !== undefined) process.kill(-s.child.pid, "SIGKILL");
  } catch { /* already gone, or no longer ours to signal */ }
}

/**
 * The server keeps pi's event loop alive only while a question waits: pi
 * exits as it would without it, and its end of stdin closes with it.
 */
function held(s: Server, on: boolean): void {
  const handles = [s.child, s.child.stdin, s.child.stdout, s.child.stderr] as const;
  for (const h of handles) {
    const r = h as unknown as { ref?: () => void; unref?: () => void } | null;
    if (on) r?.ref?.();
    else r?.unref?.();
  }
}
