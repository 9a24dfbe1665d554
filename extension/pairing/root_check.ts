/**
 * Asks root through the broker's NOPASSWD sudoers rule, for the pairing check (ADR 0005: here) and
 * the terminal check (ADR 0007: `keyboard/root_terminal.ts`): one `sudo -n … pi-secret-broker
 * --serve-checks` per pi process (`broker/check_server.sh`), asked one line per question under a
 * random nonce its answer must carry. Why, what pi trusts and how it fails: ADR 0005's amendment
 * "one check server per pi process".
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import process from "node:process";
import { BROKER_LAUNCHER, BROKER_ROOT } from "../../broker/paths.ts";
import { isProtectedPath } from "../../broker/protected_path.ts";
import { parseRootPairingVerdict, type RootPairingVerdict } from "./sudo_pairing.ts";

/** Default deadline of one root check. */
export const ROOT_CHECK_TIMEOUT_MS = 5000;
const MAX_BYTES = 4096; // an answer line, and sudo's own complaint
const MAX_WAITING = 32; // a request asks two at a time

/** How one question ended: its exit code (`null`: no answer) and output. */
export interface RootCheckRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Why there is no answer: its deadline, no sudo, a broken answer, too many waiting. */
  readonly failure?: "timeout" | "cannot run sudo" | "bad answer" | "busy";
}

interface Server {
  readonly child: ChildProcess;
  readonly waiting: { readonly nonce: string; readonly done: (r: RootCheckRun) => void }[];
  out: string;
  err: string;
  ended: boolean;
}

// One per process, kept across /reload as the rest of pi's state.
const g = globalThis as unknown as Record<symbol, unknown>;
const OWN = Symbol.for("pi-sudo-prompt.own-front-ends");
const SERVER = Symbol.for("pi-sudo-prompt.root-check-server");

/** pids of our own `sudo -n` children that are still running (one set per process). */
export function ownFrontEnds(): Set<number> {
  return (g[OWN] ??= new Set<number>()) as Set<number>;
}

/**
 * Asks root `args` (`--terminal-holders N`, `--verify-pairing H S I`, as
 * the launcher's one-shot flags); never throws, never waits past `timeoutMs`.
 */
export function runRootCheck(
  sudoPath: string,
  args: readonly string[],
  timeoutMs = ROOT_CHECK_TIMEOUT_MS,
): Promise<RootCheckRun> {
  const old = g[SERVER] as Server | undefined;
  const s = old && !old.ended ? old : (g[SERVER] = start(sudoPath));
  if (!s || s.waiting.length >= MAX_WAITING) {
    return Promise.resolve(failed(s ? "busy" : "cannot run sudo"));
  }
  return new Promise((resolve) => {
    const nonce = randomBytes(8).toString("hex");
    // A check that does not answer in time stalls every question behind it.
    const timer = setTimeout(() => end(s, "timeout"), timeoutMs);
    s.waiting.push({
      nonce,
      done: (r) => {
        clearTimeout(timer);
        resolve(r);
      },
    });
    hold(s, true);
    s.child.stdin?.write(`${nonce} ${args.join(" ")}\n`);
  });
}

function start(sudoPath: string): Server | undefined {
  let child: ChildProcess;
  try {
    child = spawn(sudoPath, ["-n", BROKER_LAUNCHER, "--serve-checks"], {
      env: { PATH: "/usr/bin:/bin", LANG: "C" }, // no askpass, no session variable
      // Its own session: else sudo opens pi's terminal (a holder of it). Not
      // setsid(1), dumpable until it execs sudo (the agent could open the
      // pipes in /proc): pi's fork is non-dumpable into sudo (ADR 0005).
      detached: true,
      stdio: "pipe",
    });
  } catch {
    return undefined;
  }
  const s: Server = { child, waiting: [], out: "", err: "", ended: false };
  const own = ownFrontEnds();
  if (child.pid !== undefined) own.add(child.pid);
  hold(s, false);
  child.on("error", () => end(s, "cannot run sudo"));
  // Its input closed (EPIPE): what waits gets the close handler's answer.
  child.stdin?.on("error", () => s.ended = true);
  child.stdout?.setEncoding("utf8").on("data", (text: string) => answer(s, text));
  child.stderr?.setEncoding("utf8").on("data", (text: string) => {
    if (s.err.length < MAX_BYTES) s.err += text;
  });
  // sudo is gone (or killed): the server answers what it was asked, ends at the end of its input.
  child.on("exit", () => {
    if (child.pid !== undefined) own.delete(child.pid);
    s.ended = true;
    child.stdin?.end();
  });
  // What still waits gets sudo's own words ("a password is required": the
  // broker's rule is not this user's), never output without its nonce.
  child.on("close", (code) => {
    s.ended = true;
    for (const w of s.waiting.splice(0)) w.done({ code, stdout: "", stderr: s.err });
  });
  return s;
}

/** Gives each answer line to the oldest question, if it carries that question's nonce. */
function answer(s: Server, text: string): void {
  s.out += text;
  for (let nl = s.out.indexOf("\n"); nl >= 0; nl = s.out.indexOf("\n")) {
    const m = /^([0-9a-f]{16}) ([0-9]{1,3}) (.*)$/.exec(s.out.slice(0, nl));
    s.out = s.out.slice(nl + 1);
    if (!m || m[1] !== s.waiting[0]?.nonce) return end(s, "bad answer");
    s.waiting.shift()?.done({ code: Number(m[2]), stdout: `${m[3]}\n`, stderr: "" });
  }
  if (s.out.length > MAX_BYTES) return end(s, "bad answer");
  hold(s, s.waiting.length > 0);
}

/** Fails what waits, closes the server's input (it ends after its check), kills our sudo. */
function end(s: Server, failure: NonNullable<RootCheckRun["failure"]>): void {
  s.ended = true;
  for (const w of s.waiting.splice(0)) w.done(failed(failure));
  for (const stream of [s.child.stdin, s.child.stdout, s.child.stderr]) stream?.destroy();
  hold(s, false);
  // Only while sudo is not yet reaped: after that, its pid (our group's id)
  // may name another process group of the user.
  if (s.child.pid === undefined || s.child.exitCode !== null || s.child.signalCode !== null) return;
  try {
    process.kill(-s.child.pid, "SIGKILL");
  } catch { /* no longer ours to signal */ }
}

function failed(failure: NonNullable<RootCheckRun["failure"]>): RootCheckRun {
  return { code: null, stdout: "", stderr: "", failure };
}

/** The server keeps pi's event loop alive only while a question waits. */
function hold(s: Server, on: boolean): void {
  for (const h of [s.child, s.child.stdin, s.child.stdout, s.child.stderr]) {
    // Streams have ref() and unref() at run time, not in their types.
    const handle = h as { ref?: () => void; unref?: () => void } | null;
    if (on) handle?.ref?.();
    else handle?.unref?.();
  }
}

/** The installed root-owned pairing check (`broker/pairing_check.sh`). */
export const PAIRING_CHECK = `${BROKER_ROOT}/pairing-check`;

/** Whether the launcher and `check` (pairing or terminal) are root-protected: root must check. */
export async function rootCheckInstalled(check: string): Promise<boolean> {
  return await isProtectedPath(BROKER_LAUNCHER) && await isProtectedPath(check);
}

/** Asks root whether the helper's stdout pipe is read by its sudo alone; never throws. */
export async function runRootPairing(
  sudoPath: string,
  args: { helperPid: number; sudoPid: number; pipeInode: number },
): Promise<RootPairingVerdict> {
  const ids = [args.helperPid, args.sudoPid, args.pipeInode].map(String);
  const run = await runRootCheck(sudoPath, ["--verify-pairing", ...ids]);
  if (run.failure) return parseRootPairingVerdict(null, `pi-pairing: ${run.failure}`);
  return parseRootPairingVerdict(run.code, run.stdout, run.stderr);
}
