/**
 * `deno task bench`: measures the askpass channel on this machine, each
 * figure beside a baseline taken in the same run, against the targets of
 * docs/design.md §10. Run by tests/bench/run.sh as the throwaway sudo user (real sudo
 * only asks a non-root user); it prints a markdown table and writes it to
 * `$PI_SUDO_PROMPT_TEST_LOG_DIR/benchmarks.md`, which run.sh copies to
 * `docs/benchmarks.md`.
 *
 * Every wait has a deadline, every loop is bounded, and a watchdog ends the
 * whole run if it ever takes longer than a few minutes. Deadlines scale with
 * a calibration of the machine taken at the start (a loaded machine gets
 * longer ones), and a row whose measurement fails is retried (and the table
 * says so) before the run gives up.
 *
 * `--quick` (run by `npm test`): a few iterations of the rows with ratio
 * targets (a, a2, d, k, g), each checked against a regression limit that a
 * doubled figure breaks. It compares ratios from the same run, never absolute
 * times, prints its verdict, writes no table and exits 1 on a regression.
 *
 * @module
 */
import { execFile, spawn } from "node:child_process";
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { stripTypeScriptTypes } from "node:module";
import { createServer } from "node:net";
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { fileURLToPath } from "node:url";
import {
  createBashToolDefinition,
  type ExtensionAPI,
  type ExtensionToolContext,
  getAgentDir,
  SettingsManager,
  type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import piSudoPrompt from "../../extension/index.ts";
import {
  type AskpassSession,
  DEFAULT_TIMEOUT_MS,
  HELPER_DEADLINE_MARGIN_MS,
  type SessionEvent,
  startSession,
} from "../../extension/channel/session_server.ts";
import type { Prompter, PromptOutcome, PromptRequest } from "../../askpass/prompter.ts";
import { readStat, verifyRequester } from "../../kernel/peer_verification.ts";
import { ownUid } from "../../shared/own_uid.ts";
import { closeFd, pidfdOpen } from "../../kernel/peer_credentials.ts";
import { socketInodesOf, unixPeerInodeByInode } from "../../kernel/socket_peer.ts";
import { firstExecutable, resolveDenoBinary } from "../../shared/executables.ts";
import { launcherScript, sudoShellPrelude } from "../../extension/channel/shell_injection.ts";
import { encodeRequest, newRequestId } from "../../askpass/protocol.ts";
import {
  HELPER_ENV,
  helperArgvPrefix,
  helperEnvironment,
} from "../../askpass/helper_permissions.ts";
import { type CommandResult, runShell, runToolCommand } from "../helpers/tool_command.ts";
import { startHeartbeat } from "../helpers/heartbeat.ts";
import { rawExchange } from "../helpers/raw_client.ts";
import { pidsWithCmdline, waitFor } from "../helpers/processes.ts";
import { REPO_ROOT, testPassword } from "../helpers/test_env.ts";
import type { FloodSummary } from "./flood_client.ts";
import { gatherPairingSnapshot } from "../../extension/pairing/pairing_snapshot.ts";
import { decidePairing } from "../../extension/pairing/sudo_pairing.ts";
import {
  PAIRING_CHECK,
  rootCheckInstalled,
  runRootPairing,
} from "../../extension/pairing/root_check.ts";
import { scanTerminalHolders } from "../../extension/keyboard/terminal_holders.ts";
import type { terminalGate } from "../../extension/keyboard/terminal_gate.ts";
import { runRootTerminalCheck, TERMINAL_CHECK } from "../../extension/keyboard/root_terminal.ts";
import { BROKER_LAUNCHER } from "../../broker/paths.ts";
import type { promptOnTmuxClients } from "../../extension/keyboard/tmux_prompt.ts";
import { DENO_RUN_PINNED } from "../../askpass/helper_permissions.ts";
import {
  mutatedCopy,
  PAIRING_WALK_OFF,
  ROOT_PAIRING_OFF,
  USER_PAIRING_OFF,
} from "../helpers/mutated_copy.ts";

// --- settings ---------------------------------------------------------------

const QUICK = process.argv.includes("--quick");
/**
 * `--root-rows` (run by tests/bench/run.sh while the broker is installed):
 * row r only, written as JSON for the full run's table.
 */
const ROOT_ROWS = process.argv.includes("--root-rows");
/** Where `--root-rows` leaves row r for the full run, in the log directory. */
const ROOT_ROWS_FILE = "root-rows.json";
const SUDO_RUNS = QUICK ? 6 : 40; // per variant, after warm-up, for rows a, b and k
const FRESH_SESSIONS = QUICK ? 2 : 5; // row a2
const VERIFY_RUNS = 200;
const STARTUP_RUNS = QUICK ? 6 : 40;
const LAG_FLOWS = 10;
const FLOOD_CONNECTIONS = 1000;
const FORGED_REQUESTS = 1000;
const BASH_RUNS = QUICK ? 10 : 100;
/** Attempts per row: a row that fails (typically for load) is measured again. */
const ATTEMPTS = 3;

/**
 * Deadlines on a quiet machine; each is multiplied by {@link loadFactor},
 * measured at the start (and again before a retry).
 */
const BASE = {
  flowMs: 15_000,
  waitMs: 15_000,
  spawnMs: 10_000,
  watchdogMs: QUICK ? 120_000 : 300_000,
} as const;
/** An empty `deno run` on a quiet machine of this class (2 cores, warm cache). */
const CALIBRATION_REFERENCE_MS = 25;
let loadFactor = 1;
const flowDeadline = () => Math.round(BASE.flowMs * loadFactor);
const waitDeadline = () => Math.round(BASE.waitMs * loadFactor);
const spawnDeadline = () => Math.round(BASE.spawnMs * loadFactor);

const TARGETS = {
  openMs: 30,
  firstRatio: 1.3,
  submitMs: 20,
  verifyMs: 5,
  /** One root terminal check (`sudo -n … --terminal-holders`), whole. */
  rootCheckMs: 30,
  /** Helper start → exit after its self-check, against an empty one-line program. */
  helperOverFloor: 1.15,
  /** Node helper time over Deno helper time. */
  nodeOverDeno: 1.5,
  lagMs: 20,
  /** The event-loop lag of the 100 ms re-check of an open modal. */
  recheckLagMs: 5,
  memoryMb: 5,
  bashFixedMs: 0.3,
} as const;

/**
 * `--quick`'s regression limits: ratios from the same run, each wide enough
 * for the noise of a few iterations on a loaded machine, and each broken when
 * the row's own figure doubles (row a's 45 ms → 90 ms gives 2.8× its floor in place;
 * the helper's 24 ms → 48 ms gives 2.2× the one-line program; and so on).
 * `max` limits are upper bounds, `min` lower bounds.
 */
const QUICK_LIMITS = {
  /** Row a: ours p50 over its floor in place (sudo runs a one-line Deno askpass, same launcher). */
  openOverFloor: { max: 2.0 },
  /** Row a2: the first request of a session over the warm p50. */
  firstOverWarm: { max: 2.0 },
  /** Row d: the helper over an empty one-line deno program. */
  helperOverFloor: { max: 1.6 },
  /** Row d: the Node helper over the Deno helper. */
  nodeOverDeno: { min: 1.0 },
  /** Row k: with the checks of ADR 0005/0007 over without them. */
  checksOverPlain: { max: 1.6 },
  /**
   * Row g: our bash tool over pi's built-in. About 1.06× on a quiet machine,
   * but 1.32–1.35× with two CPU-bound jobs beside it (four of five measures
   * in two loaded CI runs: +4 ms on 11.8 ms); that extra doubled is 1.7×.
   */
  bashOverBuiltin: { max: 1.6 },
  /**
   * Row t: the modal on a locked tmux client over tmux's lock running a
   * one-line Deno program. About 1.7× on a quiet machine and up to 2.3× with
   * two CPU-bound jobs beside it (tmux, Deno and pi share the cores); a
   * doubled figure is 3.4×.
   */
  takeoverOverFloor: { max: 2.6 },
} as const;
type QuickName = keyof typeof QUICK_LIMITS;
/** The ratios `--quick` checks, filled in by the rows. */
const quickRatios = new Map<QuickName, number>();

const PASSWORD = testPassword();
const LOG_DIR = process.env.PI_SUDO_PROMPT_TEST_LOG_DIR;
const SUDO_COMMAND = "sudo -k -A true";

// --- small statistics and formatting ----------------------------------------

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}
const median = (v: readonly number[]) => percentile(v, 50);
const p90 = (v: readonly number[]) => percentile(v, 90);

/** `value ≤ limit` as the table shows them (rounded to `digits`), so a row never reads "40.0 > 40". */
function atMost(value: number, limit: number, digits = 1): boolean {
  return Number(value.toFixed(digits)) <= limit;
}

function ms(value: number, digits = 1): string {
  return `${value.toFixed(digits)} ms`;
}
function dist(values: readonly number[], digits = 1): string {
  return `${ms(median(values), digits)} (p90 ${p90(values).toFixed(digits)})`;
}

interface Row {
  readonly id: string;
  readonly what: string;
  readonly ours: string;
  readonly baseline: string;
  readonly extra: string;
  readonly target: string;
  readonly met: boolean;
  readonly note: string;
  /** Why the target was missed, computed when the table is rendered (text for row r). */
  readonly why?: (() => string) | string;
}

/** Figures one row's explanation (or a quick ratio) takes from another row. */
const facts = {
  denoStartMs: NaN,
  denoEmptyMs: NaN,
  denoOneLineMs: NaN,
  verifyMs: NaN,
  pairingMs: NaN,
  openP50: NaN,
  openBaselineP50: NaN,
  /** Row a's floor in place: sudo → a one-line Deno askpass under the helper's launcher. */
  openFloorP50: NaN,
};

const rows: Row[] = [];
const surprises: string[] = [];
/**
 * While row a measures: `verifyMs` of each sudo request the session queues
 * (its checks, from the frame to the queue).
 */
let checksMs: number[] | undefined;

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

function deadline<T>(what: string, promise: Promise<T>, limitMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${limitMs} ms`)), limitMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (msToWait: number) => new Promise((r) => setTimeout(r, msToWait));

/** One sudo flow's failure, with everything sudo and the helper said (the helper's stderr is sudo's). */
function flowError(what: string, r: CommandResult, prompts: number): Error {
  const said = (label: string, text: string) =>
    text.trim() ? `\n  ${label}: ${text.trim().split("\n").slice(-6).join("\n    ")}` : "";
  return new Error(
    `${what} failed (code ${r.code}, prompts ${prompts})${said("stderr (sudo, helper)", r.stderr)}${
      said("stdout", r.stdout)
    }`,
  );
}

/**
 * Measures how loaded the machine is now: the median of 5 empty `deno run`s
 * over {@link CALIBRATION_REFERENCE_MS}, never below 1. Deadlines scale by it.
 */
async function calibrate(): Promise<number> {
  const denoPath = await resolveDenoBinary();
  if (!denoPath) throw new Error("deno binary not found");
  const dir = await mkdtemp(join(os.tmpdir(), "pi-sudo-bench-cal-"));
  try {
    const empty = join(dir, "empty.ts");
    await writeFile(empty, "");
    const env = { DENO_DIR: join(dir, "cache"), NO_COLOR: "1" };
    const args = ["run", "--no-prompt", "--no-config", "--no-lock", empty];
    await timeSpawn(denoPath, args, env, 60_000); // fills the cache
    const times: number[] = [];
    for (let i = 0; i < 5; i++) times.push((await timeSpawn(denoPath, args, env, 60_000)).ms);
    return Math.min(20, Math.max(1, median(times) / CALIBRATION_REFERENCE_MS));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One plain sudo with the sh askpass (set by row a), for row a2's like-for-like conditions. */
let plainSudo: (() => Promise<void>) | undefined;

/** Retries noted in the table: which row, and why. */
const retries: string[] = [];

/**
 * Runs one row's measurement up to {@link ATTEMPTS} times. A failure is most
 * often load (a deadline missed, a flow that timed out): the machine is
 * calibrated again, the retry is logged and noted in the table, and only the
 * last failure ends the run.
 */
async function attempt(id: string, measure: () => Promise<void>): Promise<void> {
  for (let n = 1;; n++) {
    const rowsBefore = rows.length;
    try {
      await measure();
      return;
    } catch (error) {
      rows.length = rowsBefore;
      const reason = error instanceof Error ? error.message : String(error);
      if (n >= ATTEMPTS) throw new Error(`row ${id} failed ${n} times; last: ${reason}`);
      loadFactor = Math.max(loadFactor, await calibrate());
      clearTimeout(watchdog);
      armWatchdog();
      log(
        `row ${id} failed (${reason}); retrying (attempt ${n + 1} of ${ATTEMPTS}, ` +
          `deadlines ×${loadFactor.toFixed(1)})`,
      );
      retries.push(`row ${id} was measured again after: ${reason.split("\n")[0]}`);
    }
  }
}

function execText(file: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (error, stdout) => {
      resolve(error ? "(unavailable)" : String(stdout).split("\n")[0].trim());
    });
  });
}

/** Runs `file` and resolves with its exit code (never rejects; -1 when it could not run). */
function execFileResult(file: string, args: string[]): Promise<{ code: number }> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { timeout: 10_000 }, () => {});
    child.once("error", () => resolve({ code: -1 }));
    child.once("exit", (code) => resolve({ code: code ?? -1 }));
  });
}

// --- a prompter that records precise times ------------------------------------

/** Answers at once with the password (or waits for a gate) and timestamps each call. */
class TimedPrompter implements Prompter {
  /** performance.now() when the server called the prompter. */
  calledAt: number[] = [];
  /** performance.now() right before the answer was handed back. */
  answeredAt: number[] = [];
  /** When set, the next prompt waits for this promise before answering. */
  gate: Promise<void> | undefined;
  /** Called with each request when it is opened. */
  onOpen: ((request: PromptRequest) => void) | undefined;

  async prompt(request: PromptRequest, signal: AbortSignal): Promise<PromptOutcome> {
    this.calledAt.push(performance.now());
    this.onOpen?.(request);
    const gate = this.gate;
    this.gate = undefined;
    if (gate) {
      const aborted = new Promise<"aborted">((resolve) =>
        signal.addEventListener("abort", () => resolve("aborted"), { once: true })
      );
      if (await Promise.race([gate, aborted]) === "aborted") return { kind: "cancel" };
    }
    this.answeredAt.push(performance.now());
    return { kind: "submit", password: new TextEncoder().encode(PASSWORD) };
  }

  reset(): void {
    this.calledAt = [];
    this.answeredAt = [];
  }
}

// --- clocks -------------------------------------------------------------------

/**
 * Offset with `epochMs = performance.now() + offset`, accurate to a few µs:
 * spins (≤ 2 ms) until Date.now() ticks, the moment it equals the real
 * epoch millisecond.
 */
function epochOffset(): number {
  const first = Date.now();
  const limit = performance.now() + 2;
  for (;;) {
    const d = Date.now();
    const p = performance.now();
    if (d !== first || p > limit) return d - p;
  }
}

/** `date +%s%N` text to performance.now() time, given an {@link epochOffset}. */
function epochNsToPerf(text: string, offset: number): number {
  const micros = Number(BigInt(text.trim()) / 1000n);
  return micros / 1000 - offset;
}

// --- main -------------------------------------------------------------------

async function main(): Promise<void> {
  if (!LOG_DIR) throw new Error("PI_SUDO_PROMPT_TEST_LOG_DIR is not set: run tests/bench/run.sh");
  if (ROOT_ROWS) return await rootRows(LOG_DIR);
  loadFactor = await calibrate();
  log(`calibration: deadlines ×${loadFactor.toFixed(1)}${QUICK ? " (quick mode)" : ""}`);
  armWatchdog();
  const gc = (globalThis as { gc?: () => void }).gc;
  const tmp = await mkdtemp(join(os.tmpdir(), "pi-sudo-bench-"));
  const events = new Map<string, number>();
  const count = (reason: string) => events.set(reason, (events.get(reason) ?? 0) + 1);
  const prompter = new TimedPrompter();
  const started = await startSession({
    prompter,
    onEvent: (e: SessionEvent) => {
      if (e.kind === "refused") count(e.reason);
      if (e.kind === "queued" && e.request === "sudo") checksMs?.push(e.verifyMs);
    },
  });
  if (!started.ok) throw new Error(`session did not start: ${started.reason}`);
  const session = started.session;
  // As in pi, where the first sudo comes well after the session started.
  await deadline("the session's cache warm-up", session.warmup, spawnDeadline());
  try {
    await attempt("d", () => helperStartup(tmp));
    await attempt("a", () => sudoLatency(session, prompter, tmp));
    await attempt("a2", () => firstRequests());
    if (!QUICK) await attempt("c", () => verificationCost(session, prompter));
    if (!QUICK) await attempt("p", () => pairingCost(session, prompter));
    await attempt("k", () => addedChecksCost());
    await attempt("t", () => tmuxTakeover(tmp));
    if (!QUICK) await attempt("e", () => eventLoopLag(session, prompter, events));
    if (!QUICK) await attempt("f", () => memoryGrowth(session, events, gc));
    await attempt("g", () => bashOverhead());
    // Before the session and the scratch directory go: the rows run again.
    if (QUICK) await remeasureOutliers(session, prompter, tmp);
  } finally {
    await session.close();
    await rm(tmp, { recursive: true, force: true });
  }
  if (QUICK) {
    const verdict = quickVerdict();
    process.stdout.write(verdict.text);
    await writeFile(join(LOG_DIR, "bench-quick.txt"), verdict.text);
    if (!verdict.ok) process.exitCode = 1;
    return;
  }
  rows.push(...await readRootRows(LOG_DIR));
  const machine = await describeMachine();
  const text = render(machine);
  process.stdout.write(text);
  await writeFile(join(LOG_DIR, "benchmarks.md"), text);
}

/**
 * `--root-rows`: row r while the broker is installed, written to
 * {@link ROOT_ROWS_FILE} for the full run (which runs with no broker, as a
 * user-level install does).
 */
async function rootRows(logDir: string): Promise<void> {
  loadFactor = await calibrate();
  armWatchdog();
  if (!await rootCheckInstalled(TERMINAL_CHECK)) {
    throw new Error("--root-rows: the broker is not installed");
  }
  await attempt("r", () => addedChecksCost("r"));
  const text = JSON.stringify(
    rows.map((r) => ({ ...r, why: typeof r.why === "function" ? r.why() : r.why })),
  );
  await writeFile(join(logDir, ROOT_ROWS_FILE), text);
  for (const r of rows) log(`row ${r.id}: ${r.ours} vs ${r.baseline} → ${r.extra}`);
}

/** Row r from `--root-rows`, when it ran before this run; none otherwise. */
async function readRootRows(logDir: string): Promise<Row[]> {
  const text = await readFile(join(logDir, ROOT_ROWS_FILE), "utf8").catch(() => undefined);
  return text === undefined ? [] : JSON.parse(text) as Row[];
}

/** Whether a quick ratio is within its regression limit. */
function withinLimit(name: QuickName, value: number | undefined): boolean {
  const limit: { max?: number; min?: number } = QUICK_LIMITS[name];
  return value !== undefined &&
    (limit.max === undefined || value <= limit.max) &&
    (limit.min === undefined || value >= limit.min);
}

/**
 * A ratio over its limit is measured again, up to twice, and the best value
 * kept: a regression is there every time, while another job's burst beside
 * a few iterations is not. Each re-measure is noted.
 */
async function remeasureOutliers(
  session: AskpassSession,
  prompter: TimedPrompter,
  tmp: string,
): Promise<void> {
  const rowOf: Record<QuickName, () => Promise<void>> = {
    openOverFloor: () => sudoLatency(session, prompter, tmp),
    firstOverWarm: () => firstRequests(),
    helperOverFloor: () => helperStartup(tmp),
    nodeOverDeno: () => helperStartup(tmp),
    checksOverPlain: () => addedChecksCost(),
    bashOverBuiltin: () => bashOverhead(),
    takeoverOverFloor: () => tmuxTakeover(tmp),
  };
  for (const name of Object.keys(QUICK_LIMITS) as QuickName[]) {
    for (let again = 1; again <= 2 && !withinLimit(name, quickRatios.get(name)); again++) {
      const before = quickRatios.get(name);
      const rowsBefore = rows.length;
      log(
        `quick: ${name} at ${before?.toFixed(2)}× is over its limit; measuring again (${again}/2)`,
      );
      await attempt(name, rowOf[name]);
      rows.length = rowsBefore; // the first measurement's rows stay the report's
      const now = quickRatios.get(name);
      const lowerIsBetter = "max" in QUICK_LIMITS[name];
      const values = [before, now].filter((v): v is number => v !== undefined);
      quickRatios.set(name, lowerIsBetter ? Math.min(...values) : Math.max(...values));
      retries.push(`${name} measured again (${before?.toFixed(2)}× → ${now?.toFixed(2)}×)`);
    }
  }
}

/** `--quick`'s report: each ratio against its regression limit. */
function quickVerdict(): { ok: boolean; text: string } {
  const lines: string[] = [];
  let ok = true;
  for (
    const [name, limit] of Object.entries(QUICK_LIMITS) as [
      QuickName,
      { max?: number; min?: number },
    ][]
  ) {
    const value = quickRatios.get(name);
    const within = withinLimit(name, value);
    if (!within) ok = false;
    const bound = limit.max !== undefined ? `≤ ${limit.max}` : `≥ ${limit.min}`;
    lines.push(
      `${within ? "ok  " : "FAIL"} ${name}: ${
        value === undefined ? "not measured" : value.toFixed(2)
      }× (limit ${bound}×)`,
    );
  }
  for (const r of rows) lines.push(`row ${r.id}: ${r.ours} vs ${r.baseline} → ${r.extra}`);
  for (const r of retries) lines.push(`note: ${r}`);
  lines.push(ok ? "bench --quick: no regression" : "bench --quick: REGRESSION (see FAIL lines)");
  return { ok, text: lines.join("\n") + "\n" };
}

// --- rows a and b: sudo → modal, submit → sudo exit ---------------------------

async function sudoLatency(
  session: AskpassSession,
  prompter: TimedPrompter,
  tmp: string,
): Promise<void> {
  log("a/b: real sudo through the session vs a plain sh askpass");
  const passwordFile = process.env.PI_SUDO_PROMPT_TEST_PASSWORD_FILE!;
  const t0File = join(tmp, "askpass-t0");
  const t1File = join(tmp, "askpass-t1");
  const askpass = join(tmp, "askpass.sh");
  await writeFile(
    askpass,
    [
      "#!/bin/sh",
      `date +%s%N >'${t0File}'`,
      `pw=$(cat '${passwordFile}')`,
      `date +%s%N >'${t1File}'`,
      `printf '%s\\n' "$pw"`,
      "",
    ].join("\n"),
    { mode: 0o700 },
  );
  const baseEnv = { ...process.env, SUDO_ASKPASS: askpass };
  const floor = await denoFloorAskpass(tmp, passwordFile);

  const ours = () => timedFlow(session, prompter, "our sudo flow");
  const baseline = async () => {
    await rm(t0File, { force: true });
    await rm(t1File, { force: true });
    const offset = epochOffset();
    const t0 = performance.now();
    const r = await runShell(`/usr/bin/sudo -k -A true`, baseEnv, flowDeadline());
    const closed = performance.now();
    if (r.code !== 0) throw flowError("the baseline sudo flow", r, 0);
    const asked = epochNsToPerf(await readFile(t0File, "utf8"), offset);
    const answered = epochNsToPerf(await readFile(t1File, "utf8"), offset);
    return { open: asked - t0, submit: closed - answered };
  };

  // Warm-up of every path (page cache, Node's JIT, the floor's Deno cache);
  // row a2 measures first requests.
  await ours();
  await baseline();
  await floor.flow();
  plainSudo = async () => void await baseline();
  const checks: number[] = [];
  checksMs = checks;
  const oursOpen: number[] = [];
  const oursSubmit: number[] = [];
  const baseOpen: number[] = [];
  const baseSubmit: number[] = [];
  const floorOpen: number[] = [];
  const variants = [
    async () => {
      const o = await ours();
      oursOpen.push(o.open);
      oursSubmit.push(o.submit);
    },
    async () => {
      const b = await baseline();
      baseOpen.push(b.open);
      baseSubmit.push(b.submit);
    },
    async () => void floorOpen.push(await floor.flow()),
  ];
  try {
    for (let i = 0; i < SUDO_RUNS; i++) {
      // Rotate the order so drift favours no variant.
      for (let j = 0; j < variants.length; j++) await variants[(i + j) % variants.length]();
    }
  } finally {
    await floor.close();
  }
  checksMs = undefined;
  const extraOpen = median(oursOpen) - median(baseOpen);
  const floorExtra = median(floorOpen) - median(baseOpen);
  facts.openP50 = median(oursOpen);
  facts.openBaselineP50 = median(baseOpen);
  facts.openFloorP50 = median(floorOpen);
  quickRatios.set("openOverFloor", median(oursOpen) / median(floorOpen));
  const extraSubmit = median(oursSubmit) - median(baseSubmit);
  rows.push({
    id: "a",
    what: "sudo asks → request reaches the prompter (spawn → prompt)",
    ours: dist(oursOpen),
    baseline: `${dist(baseOpen)}: sh askpass runs; Deno's floor here ${dist(floorOpen)}`,
    extra: `+${ms(extraOpen)}`,
    target: `≤ ${TARGETS.openMs} ms extra (p50)`,
    met: atMost(extraOpen, TARGETS.openMs),
    note: `${SUDO_RUNS} runs of each of three variants, interleaved, after a warm-up. Extra = ` +
      "our sudo wrapper + launcher (sh: its stdout check, env -i) + Deno start + the helper's " +
      "checks + connect + verification + pairing checks + queue. Deno's floor " +
      "here: sudo runs, as its askpass, the launcher a session writes (the helper's flags and " +
      "environment) around a program that only connects to a socket and relays the password; " +
      `it connects +${ms(floorExtra)} after the sh askpass runs. Ours is ${
        ms(median(oursOpen) - median(floorOpen))
      } above that floor, of which pi's checks (request → queue, the session's own ` +
      `timing) take ${ms(median(checks))}. Row d's one-line program takes ${
        ms(facts.denoOneLineMs)
      } to start and exit`,
    why: () =>
      `Deno's floor in this place is +${ms(floorExtra)} over the sh askpass (a program that only ` +
      "connects, run by sudo through the helper's launcher with its flags, interleaved with both " +
      `flows), which leaves ${ms(TARGETS.openMs - floorExtra)} of the target for our sudo ` +
      "wrapper, the helper's own work (its checks, the request), the verification (" +
      `${ms(facts.verifyMs, 2)} alone, row c), the pairing checks (${
        ms(facts.pairingMs, 2)
      } alone, row p) and the queue; together they cost ${
        ms(median(oursOpen) - median(floorOpen))
      }, with sudo, bash, Deno and pi sharing ${os.availableParallelism()} cores`,
  });
  rows.push({
    id: "b",
    what: "submit → sudo exits",
    ours: dist(oursSubmit),
    baseline: `${dist(baseSubmit)}: sh askpass prints`,
    extra: `+${ms(extraSubmit)}`,
    target: `≤ ${TARGETS.submitMs} ms extra (p50)`,
    met: atMost(extraSubmit, TARGETS.submitMs),
    note:
      "both include sudo's own PAM check and running `true`; extra = liveness, tracer and pairing re-checks, pi's own write into sudo's pipe (pidfd_getfd, ADR 0008), the helper's exit",
    why: () =>
      "see the note: the extra is everything between the prompter and sudo reading the line",
  });
  if (median(oursSubmit) > TARGETS.submitMs) {
    surprises.push(
      `Row b: the absolute submit → exit time (${
        ms(median(oursSubmit))
      }) is above 20 ms only because sudo's own work after it reads the password (PAM hashing, session, running \`true\`) takes ${
        ms(median(baseSubmit))
      } with a plain askpass too; our share is the extra column.`,
    );
  }
}

/**
 * Row a's floor in place: the askpass launcher a session writes (its stdout
 * check, `env -i`, the helper's flags and environment), made by the same
 * functions, around a program that only connects to a socket and relays the
 * password it reads there. `flow()` runs one plain sudo with it and returns
 * spawn → connect, as row a's flows measure spawn → prompt.
 */
async function denoFloorAskpass(
  tmp: string,
  passwordFile: string,
): Promise<{ flow(): Promise<number>; close(): Promise<void> }> {
  const denoPath = await resolveDenoBinary();
  const envPath = await firstExecutable(["/usr/bin/env", "/bin/env"]);
  if (!denoPath || !envPath) throw new Error("deno or env not found for the floor askpass");
  const socketPath = join(tmp, "floor.sock");
  const program = join(tmp, "floor_askpass.ts");
  // Connects first, as the helper does, then relays what the bench sends.
  const connectOnly = `const path = Deno.env.get("PI_ASKPASS_SOCKET")!;
const c = await Deno.connect({ transport: "unix", path });
const line = new Uint8Array(1024);
Deno.stdout.writeSync(line.subarray(0, await c.read(line) ?? 0));
`;
  await writeFile(program, connectOnly);
  const launcher = join(tmp, "floor-askpass");
  const environment = helperEnvironment({
    denoDir: join(tmp, "deno-cache"),
    socketPath,
    deadlineMs: DEFAULT_TIMEOUT_MS + HELPER_DEADLINE_MARGIN_MS,
  });
  const argvPrefix = helperArgvPrefix(denoPath, program, socketPath);
  await writeFile(launcher, launcherScript({ envPath, environment, argvPrefix }), { mode: 0o700 });
  const line = `${(await readFile(passwordFile, "utf8")).replace(/\n+$/, "")}\n`;
  let connectedAt: number | undefined;
  const server = createServer((socket) => {
    connectedAt ??= performance.now();
    socket.on("error", () => {});
    socket.end(line);
  });
  const listening = new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  await deadline("the floor's socket", listening, spawnDeadline());
  const env = { ...process.env, SUDO_ASKPASS: launcher };
  return {
    async flow() {
      connectedAt = undefined;
      const t0 = performance.now();
      const r = await runShell("/usr/bin/sudo -k -A true", env, flowDeadline());
      if (r.code !== 0 || connectedAt === undefined) throw flowError("the floor's sudo flow", r, 0);
      return connectedAt - t0;
    },
    close: () =>
      deadline(
        "closing the floor's socket",
        new Promise<void>((resolve) => server.close(() => resolve())),
        spawnDeadline(),
      ),
  };
}

/** One real sudo through `session`: spawn → prompter called, and answer → sudo exited. */
async function timedFlow(
  session: AskpassSession,
  prompter: TimedPrompter,
  what: string,
): Promise<{ open: number; submit: number }> {
  prompter.reset();
  const t0 = performance.now();
  const r = await runToolCommand(session, SUDO_COMMAND, flowDeadline());
  const closed = performance.now();
  if (r.code !== 0 || prompter.calledAt.length !== 1) {
    throw flowError(what, r, prompter.calledAt.length);
  }
  return { open: prompter.calledAt[0] - t0, submit: closed - prompter.answeredAt[0] };
}

// --- row a2: the first request of a session ------------------------------------

/**
 * The first sudo of fresh sessions, each started (with its own, new Deno
 * cache), left to finish its warm-up as pi does while it starts, then asked
 * once; against row a's warm p50 from the same run.
 */
async function firstRequests(): Promise<void> {
  log(`a2: the first request of ${FRESH_SESSIONS} fresh sessions`);
  const firsts: number[] = [];
  const warmups: number[] = [];
  for (let i = 0; i < FRESH_SESSIONS; i++) {
    const prompter = new TimedPrompter();
    const started = await startSession({ prompter });
    if (!started.ok) throw new Error(`fresh session did not start: ${started.reason}`);
    try {
      const w = await deadline(
        "a fresh session's warm-up",
        started.session.warmup,
        spawnDeadline(),
      );
      if (!w.ok) throw new Error(`a fresh session's warm-up failed: ${w.reason}`);
      warmups.push(w.ms);
      // As in row a, where each of our flows follows a plain sudo: what
      // differs is only that this session is new.
      await plainSudo?.();
      firsts.push((await timedFlow(started.session, prompter, "a first sudo flow")).open);
    } finally {
      await started.session.close();
    }
  }
  const ratio = median(firsts) / facts.openP50;
  quickRatios.set("firstOverWarm", ratio);
  rows.push({
    id: "a2",
    what: "first request of a session (sudo asks → prompter)",
    ours: dist(firsts),
    baseline: `${ms(facts.openP50)}: row a's warm p50`,
    extra: `${ratio.toFixed(2)}×`,
    target: `≤ ${TARGETS.firstRatio}× the warm p50`,
    met: atMost(ratio, TARGETS.firstRatio, 2),
    note:
      `${FRESH_SESSIONS} fresh sessions, each with a new Deno cache that its start-up warm-up ` +
      `(extension/channel/deno_warmup.ts: the helper and pi-secret-run run once, ${
        ms(median(warmups), 0)
      } in the background) filled before the first sudo; each first request follows one plain ` +
      "sudo, as row a's flows do. Without the warm-up, the first request transpiles the helper " +
      "and fills V8's code cache on the way",
    why: () => "the first request still pays for code that only the first connection runs",
  });
}

// --- row c: peer verification -------------------------------------------------

async function verificationCost(session: AskpassSession, prompter: TimedPrompter): Promise<void> {
  log("c: verifyRequester against a live helper that waits for an answer");
  let release!: () => void;
  prompter.reset();
  prompter.gate = new Promise<void>((resolve) => release = resolve);
  const flow = runToolCommand(session, SUDO_COMMAND, flowDeadline());
  const samples: number[] = [];
  let verdictReason = "";
  try {
    await waitFor(
      "the prompt to open",
      () => prompter.calledAt.length > 0 || undefined,
      waitDeadline(),
    );
    // The session's own choice (hardened mode pins the root-owned copies).
    const { denoPath, helperPath } = session;
    const pids = (await pidsWithCmdline(`--allow-net=unix:${session.socketPath}`)).filter((
      pid,
    ) => pid !== process.pid);
    if (pids.length !== 1) throw new Error(`expected one waiting helper, found ${pids.length}`);
    const pid = pids[0];
    const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").slice(0, -1);
    const expected = {
      uid: ownUid(),
      exePath: denoPath,
      argvPrefix: helperArgvPrefix(denoPath, helperPath, session.socketPath),
      environment: helperEnvironment({
        denoDir: session.denoDir,
        socketPath: session.socketPath,
        deadlineMs: DEFAULT_TIMEOUT_MS + HELPER_DEADLINE_MARGIN_MS,
      }),
      ownerPid: process.pid,
    };
    const creds = { pid, uid: ownUid(), gid: process.getgid?.() ?? -1 };
    const request = {
      type: "password_request" as const,
      id: newRequestId(),
      prompt: argv[argv.length - 1],
      pid,
    };
    const acceptedInode = await acceptedInodeFor(pid);
    const opened = pidfdOpen(pid);
    const pidfd = opened.ok ? opened.fd : undefined;
    try {
      const first = await verifyRequester(expected, creds, pidfd, acceptedInode, request);
      if (!first.ok) verdictReason = first.reason;
      for (let i = 0; i < VERIFY_RUNS && first.ok; i++) {
        const t0 = performance.now();
        const verdict = await verifyRequester(expected, creds, pidfd, acceptedInode, request);
        samples.push(performance.now() - t0);
        if (!verdict.ok) throw new Error(`verification failed midway: ${verdict.reason}`);
      }
    } finally {
      if (pidfd !== undefined) closeFd(pidfd);
    }
  } finally {
    release();
    const r = await flow;
    if (r.code !== 0) log(`c: the gated sudo flow ended with code ${r.code}`);
  }
  if (verdictReason) throw new Error(`the reconstructed verification refused: ${verdictReason}`);

  const base: number[] = [];
  for (let i = 0; i < VERIFY_RUNS; i++) {
    const t0 = performance.now();
    await readFile("/proc/self/stat");
    base.push(performance.now() - t0);
  }
  rows.push({
    id: "c",
    what: "peer verification (verifyRequester, live helper, with pidfd)",
    ours: dist(samples, 2),
    baseline: `${dist(base, 3)}: one readFile(/proc/self/stat)`,
    extra: `${(median(samples) / median(base)).toFixed(0)}× one read`,
    target: `≤ ${TARGETS.verifyMs} ms`,
    met: atMost(median(samples), TARGETS.verifyMs, 2),
    note: `${VERIFY_RUNS} calls against a helper waiting in a real sudo flow; each reads the ` +
      "helper's stat, status, exe, cmdline, environ and fd/1, sudo's stat, status and cmdline, " +
      "the ancestry up to this process, asks SOCK_DIAG for the peer socket, scans the helper's " +
      "fd table and fdinfo, and reads the pidfd's fdinfo",
    why: () =>
      `about ${Math.round(median(samples) / median(base))} sequential /proc reads at ~${
        ms(median(base), 3)
      } each`,
  });
  facts.verifyMs = median(samples);
}

// --- row p: the pairing checks of ADR 0005 ----------------------------------------

async function pairingCost(session: AskpassSession, prompter: TimedPrompter): Promise<void> {
  log("p: the pairing checks against a live helper that waits for an answer");
  let release!: () => void;
  prompter.reset();
  prompter.gate = new Promise<void>((resolve) => release = resolve);
  const flow = runToolCommand(session, SUDO_COMMAND, flowDeadline());
  const user: number[] = [];
  const root: number[] = [];
  let processes = 0;
  try {
    await waitFor(
      "the prompt to open",
      () => prompter.calledAt.length > 0 || undefined,
      waitDeadline(),
    );
    const pids = (await pidsWithCmdline(`--allow-net=unix:${session.socketPath}`)).filter((
      pid,
    ) => pid !== process.pid);
    if (pids.length !== 1) throw new Error(`expected one waiting helper, found ${pids.length}`);
    const helperPid = pids[0];
    const stat = await readFile(`/proc/${helperPid}/stat`, "utf8");
    const sudoPid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const link = await import("node:fs/promises").then((fs) =>
      fs.readlink(`/proc/${helperPid}/fd/1`)
    );
    const pipeInode = Number(/^pipe:\[(\d+)\]$/.exec(link)?.[1]);
    const candidate = { helperPid, sudoPid, pipeInode };
    const shape = {
      uid: ownUid(),
      exePath: session.denoPath,
      argvPrefix: helperArgvPrefix(session.denoPath, session.helperPath, session.socketPath),
      ownFrontEnds: new Set<number>(),
    };
    for (let i = 0; i < VERIFY_RUNS; i++) {
      const t0 = performance.now();
      const g = await gatherPairingSnapshot({
        uid: shape.uid,
        gid: process.getgid?.() ?? -1,
        inodes: [pipeInode],
        notBefore: performance.now(),
        deadline: performance.now() + 500,
      });
      if (!g.ok) throw new Error(`pairing snapshot failed: ${g.reason}`);
      const d = decidePairing(candidate, [], g.snapshot, shape);
      user.push(performance.now() - t0);
      if (!d.ok) throw new Error(`the pairing check refused a legitimate helper: ${d.reason}`);
    }
    processes = (await import("node:fs/promises").then((fs) => fs.readdir("/proc")))
      .filter((n) => /^\d+$/.test(n)).length;
    if (await rootCheckInstalled(PAIRING_CHECK)) {
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        const v = await runRootPairing("/usr/bin/sudo", candidate);
        root.push(performance.now() - t0);
        if (!v.ok && v.reason !== "root_pairing_not_permitted") {
          throw new Error(`the root pairing check refused a legitimate helper: ${v.reason}`);
        }
      }
    }
  } finally {
    release();
    await flow;
  }
  facts.pairingMs = median(user);
  rows.push({
    id: "p",
    what: "pairing checks (ADR 0005): front ends + pipe holders, user level",
    ours: dist(user, 2),
    baseline: root.length > 0
      ? `root check (sudo -n … --verify-pairing): ${dist(root, 0)}`
      : "root check: broker not installed",
    extra: `${processes} processes in /proc`,
    target: `≤ ${TARGETS.verifyMs} ms`,
    met: atMost(median(user), TARGETS.verifyMs, 2),
    note: `${VERIFY_RUNS} passes against a helper waiting in a real sudo flow, each with a walk ` +
      "of its own (kernel/proc_walk.ts, in a worker thread: the owner of every /proc/<pid>, the " +
      "fd links of every process of ours, the Uid: of root's outside root's group), then " +
      "the children of each setuid-root front end of ours on pi's thread; runs once before the " +
      "modal and once before the answer",
    why: () => `one pass costs ~${ms(median(user) / Math.max(processes, 1), 3)} per process`,
  });
}

// --- row k: what the checks of ADR 0005 and ADR 0007 add ---------------------------

/**
 * What the pairing checks (ADR 0005) and the keyboard gate (ADR 0007) add to
 * sudo → prompter: real sudo flows through two sessions, interleaved: one
 * without either (the baseline: a copy of the sources whose pairing checks
 * answer "paired" at once, since the product has no switch for them) and one
 * with both (a real pty to scan, as pi's terminal in a copy: {@link gateCopy}). The
 * gate starts when a request arrives, beside the kernel and pairing
 * checks, so only what it takes beyond them is added. Also the scan alone,
 * and the event-loop lag while the checks repeat every 100 ms, as they do
 * while a modal is open.
 */
async function addedChecksCost(id: "k" | "r" = "k"): Promise<void> {
  log(`${id}: sudo → prompter without vs with the pairing checks and the keyboard gate`);
  // A real terminal to look for: `script` makes a pty and runs sleep on it.
  const holder = spawn("script", ["-qfc", "sleep 60", "/dev/null"], {
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
  });
  const sessions: AskpassSession[] = [];
  const copy = await mkdtemp(join(os.tmpdir(), "pi-sudo-bench-unpaired-"));
  const plainTimes: number[] = [];
  const checkedTimes: number[] = [];
  const scans: number[] = [];
  const roots: number[] = [];
  const launchers: number[] = [];
  let lag = NaN;
  let idle = NaN;
  let processes = 0;
  try {
    const [ttyPath, sleeper] = await waitFor("the sleep on its pty", async () => {
      for (const pid of await pidsWithCmdline("sleep\u000060")) { // argv NUL-separated
        const tty = await readlink(`/proc/${pid}/fd/0`).catch(() => "");
        if (tty.startsWith("/dev/pts/")) return [tty, pid] as const;
      }
      return undefined;
    }, waitDeadline());
    const rdev = (await stat(ttyPath)).rdev;
    // The scan runs in full but the pty's own holders do not count: the
    // gate must let the flow through for its cost to be measured.
    const guarded = await gateCopy(join(copy, "gate"), { ttyPath, rdev }, [
      sleeper,
      holder.pid ?? 0,
    ]);
    const unpaired: typeof startSession = (await import(
      join(
        await mutatedCopy(join(copy, "unpaired"), [
          ROOT_PAIRING_OFF,
          USER_PAIRING_OFF,
          PAIRING_WALK_OFF,
        ]),
        "extension/channel/session_server.ts",
      )
    )).startSession;
    const start = async (
      options: Partial<Parameters<typeof startSession>[0]>,
      begin: typeof startSession = startSession,
    ) => {
      const prompter = new TimedPrompter();
      const started = await begin({ prompter, ...options });
      if (!started.ok) throw new Error(`a row k session did not start: ${started.reason}`);
      sessions.push(started.session);
      await deadline("a row k session's warm-up", started.session.warmup, spawnDeadline());
      return { session: started.session, prompter };
    };
    const plain = await start({}, unpaired);
    const checked = await start(
      { gate: guarded.terminalGate(NO_PROVENANCE) },
      guarded.startSession,
    );
    const variants = [
      { s: plain, times: plainTimes },
      { s: checked, times: checkedTimes },
    ];
    for (const v of variants) await timedFlow(v.s.session, v.s.prompter, "a row k warm-up flow");
    for (let i = 0; i < SUDO_RUNS; i++) {
      // Rotate the order so drift favours no variant.
      for (let j = 0; j < variants.length; j++) {
        const v = variants[(i + j) % variants.length];
        v.times.push((await timedFlow(v.s.session, v.s.prompter, "a row k sudo flow")).open);
      }
    }
    const spec = { ttyPath, rdev, uid: ownUid(), exclude: new Set([process.pid]) };
    const runs = QUICK ? 10 : VERIFY_RUNS / 4;
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const scan = await scanTerminalHolders(spec);
      scans.push(performance.now() - t0);
      if (!scan || scan.holders.length === 0) throw new Error("the scan missed the pty's holders");
    }
    processes = (await readdir("/proc")).filter((n) => /^\d+$/.test(n)).length;
    if (id === "r") {
      // The root check alone: one question to the process's check server
      // (its sudo started by the flows above), against what the server spares
      // each question: a one-shot sudo and launcher refusing a call without
      // a number (no walk).
      const n = Number(ttyPath.slice("/dev/pts/".length));
      const sudo = await firstExecutable(["/usr/bin/sudo"]);
      if (!sudo) throw new Error("no /usr/bin/sudo");
      for (let i = 0; i < VERIFY_RUNS / 4; i++) {
        let t0 = performance.now();
        const r = await runRootTerminalCheck(sudo, n);
        roots.push(performance.now() - t0);
        if (!r.ok || !r.holders.includes(sleeper)) {
          throw new Error(`the root check missed the pty's holder: ${JSON.stringify(r)}`);
        }
        t0 = performance.now();
        const usage = await execFileResult(sudo, ["-n", BROKER_LAUNCHER, "--terminal-holders"]);
        if (usage.code !== 125) throw new Error(`the launcher's usage exit was ${usage.code}`);
        launchers.push(performance.now() - t0);
      }
    }
    if (!QUICK && id === "k") {
      // The re-check of an open modal: one at a time, every 100 ms, for 3 s.
      const beat = startHeartbeat();
      const until = performance.now() + 3000;
      while (performance.now() < until) {
        await Promise.all([scanTerminalHolders(spec), sleep(100)]);
      }
      lag = beat.stop();
      idle = await idleLag(3000);
    }
  } finally {
    for (const s of sessions) await s.close();
    await rm(copy, { recursive: true, force: true });
    if (holder.pid) {
      try {
        process.kill(-holder.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  const added = median(checkedTimes) - median(plainTimes);
  if (id === "r") {
    const root = median(roots);
    rows.push({
      id: "r",
      what: "hardened mode's root checks (ADR 0005, 0007): sudo → prompter with vs without; " +
        "the root terminal check alone",
      ours: dist(checkedTimes),
      baseline: `${dist(plainTimes)}: the same session without the checks`,
      extra: `+${ms(added)}; alone: root check ${dist(roots)} (a one-shot sudo -n and ` +
        `launcher without the walk, which the check server spares each question: ` +
        `${ms(median(launchers))})`,
      target: `root check ≤ ${TARGETS.rootCheckMs} ms`,
      met: atMost(root, TARGETS.rootCheckMs),
      note: `measured while the broker is installed (tests/bench/run.sh installs it for this ` +
        `row alone, then restores the machine); ${SUDO_RUNS} flows per session, interleaved, ` +
        `against a real pty; ${processes} processes in /proc. A request in hardened mode waits ` +
        "for root's `--verify-pairing` and, beside it, the gate's check begun when the helper " +
        "connected (the user's scan and root's `--terminal-holders`, whose listing then serves " +
        "the modal's opening); the root check is one question to the session's check server " +
        "(one `sudo -n --serve-checks` per pi process, ADR 0005's check-server amendment) " +
        "and one walk of the caller's descriptor tables (no sudo, no runtime start per " +
        "question)",
      why: `the root check takes ${ms(root)} (a one-shot sudo -n and launcher: ${
        ms(median(launchers))
      })`,
    });
    return;
  }
  quickRatios.set("checksOverPlain", median(checkedTimes) / median(plainTimes));
  const lagNote = QUICK ? "" : `; lag of the 100 ms re-check ${ms(lag)} (idle ${ms(idle)})`;
  rows.push({
    id: "k",
    what: "pairing checks + keyboard gate (ADR 0005, 0007): sudo → prompter with vs without",
    ours: dist(checkedTimes),
    baseline: `${dist(plainTimes)}: the same session without both`,
    extra: `+${ms(added)}; alone: scan ${ms(median(scans), 2)}${lagNote}`,
    target: `≤ ${TARGETS.verifyMs} ms extra${QUICK ? "" : `; lag ≤ ${TARGETS.recheckLagMs} ms`}`,
    met: atMost(added, TARGETS.verifyMs) && (QUICK || atMost(lag, TARGETS.recheckLagMs)),
    note: `${SUDO_RUNS} flows per session, interleaved, against a real pty (held by script and ` +
      `sleep); ${processes} processes in /proc. The gate and the pairing checks read one walk ` +
      "of /proc (row p), started in its worker thread when the request arrives, beside the " +
      'kernel checks; "scan alone" is a walk asked for and read by the gate. Hardened mode ' +
      "adds one `sudo -n … --terminal-holders` and one `--verify-pairing` (each about one " +
      "sudo -n, row p)",
    why: () =>
      `the scan alone takes ${ms(median(scans), 2)} and the pairing pass ${
        ms(facts.pairingMs, 2)
      } (row p); what of them runs on pi's thread adds up on the request's path`,
  });
}

/** The bench proves nothing of where a process came from: no mark, no call running. */
const NO_PROVENANCE = { mark: () => undefined, duringCall: () => false };

/**
 * The gate, the session server and the tmux prompt (which share its state) of a copy of the
 * sources in `dir`, whose gate guards `pty` as pi's terminal (without: none, as pi's stdin is none
 * here) and never counts `exempt`: the holders a pi would have as its ancestors (its terminal's
 * `script`, tmux's server) are the bench's children here. The product has no switch for either.
 */
async function gateCopy(
  dir: string,
  pty: { ttyPath: string; rdev: number } | undefined,
  exempt: readonly number[],
) {
  const file = "extension/keyboard/terminal_gate.ts";
  // The pty, exclusive and with a guardian, as the terminal guard reports pi's.
  const guarded = pty && `{ ttyPath: "${pty.ttyPath}", rdev: ${pty.rdev}, exclusive: true, ` +
      "guardianPid: 0 }";
  const root = await mutatedCopy(dir, [
    ...(guarded ? [{ file, from: "terminalGuardStatus();", to: `${guarded};` }] : []),
    {
      file,
      from: "new Set<number>([process.pid]);",
      to: `new Set<number>([process.pid, ${exempt.join(", ")}]);`,
    },
  ]);
  const load = (path: string) => import(join(root, path));
  return {
    terminalGate: (await load(file)).terminalGate as typeof terminalGate,
    startSession: (await load("extension/channel/session_server.ts"))
      .startSession as typeof startSession,
    promptOnTmuxClients: (await load("extension/keyboard/tmux_prompt.ts"))
      .promptOnTmuxClients as typeof promptOnTmuxClients,
  };
}

// --- row t: the modal on a locked tmux client (ADR 0009) ---------------------

/**
 * Inside tmux the modal is drawn on the client's own terminal during tmux's
 * lock: from asking (`promptOnTmuxClients`) to the modal's first frame on the
 * client, through `lock-session`, the keeper's Deno start and connect, its
 * kernel check, taking the terminal and the keyboard gate on it. The floor
 * is tmux's own lock running a one-line Deno program that only connects to a
 * socket (the same `deno run` flags), from `lock-session` to its connect;
 * interleaved, against one real client on a pty (`script`).
 */
async function tmuxTakeover(tmp: string): Promise<void> {
  log("t: inside tmux, asking → the modal on the locked client, vs tmux's lock around a bare Deno");
  const socket = join(tmp, `tmux-t-${Date.now()}.sock`);
  const tmux = (...args: string[]) => execText("tmux", ["-S", socket, ...args]);
  await tmux("new-session", "-d", "-s", "t", "-x", "100", "-y", "30", "sleep 600");
  const pane = (await tmux("display-message", "-p", "-t", "t", "#{pane_id}")).trim();
  const serverPid = Number((await tmux("display-message", "-p", "#{pid}")).trim());
  const client = spawn("script", ["-qfc", `tmux -S '${socket}' attach -t t`, "/dev/null"], {
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
    env: { ...process.env, TERM: "xterm-256color" },
  });
  const ours: number[] = [];
  const floor: number[] = [];
  try {
    const clientPid = await waitFor("the client to attach", async () => {
      const out = await tmux("list-clients", "-F", "#{client_pid}").catch(() => "");
      return Number(out.trim().split("\n")[0]) || undefined;
    }, waitDeadline());
    /** Until tmux's lock of the client has ended (its lock process gone). */
    const unlocked = () =>
      waitFor("the client unlocked", async () => {
        for (const name of await readdir("/proc")) {
          if (
            /^\d+$/.test(name) && await readStat(Number(name)).then((s) => s?.ppid) === clientPid
          ) {
            return undefined;
          }
        }
        return true;
      }, waitDeadline());
    const { terminalGate, promptOnTmuxClients } = await gateCopy(
      join(tmp, `t-copy-${Date.now()}`),
      undefined,
      [serverPid, client.pid ?? 0],
    );
    const gate = terminalGate(NO_PROVENANCE);
    const oneOurs = async () => {
      const abort = new AbortController();
      const t0 = performance.now();
      let drawnAt: number | undefined;
      const drawn = new Promise<void>((resolve) => {
        const prompt = promptOnTmuxClients({ socket, pane }, {
          make: () => ({
            render: () => {
              drawnAt ??= performance.now();
              resolve();
              return ["modal"];
            },
            handleInput: () => {},
            dispose: () => {},
          }),
          signal: abort.signal,
          recheck: async () => (await gate.check("open")).ok,
        });
        void prompt.outcome.then(() => resolve());
      });
      await deadline("the modal on the client", drawn, flowDeadline());
      abort.abort("bench");
      if (drawnAt === undefined) throw new Error("the modal was not drawn on the client");
      ours.push(drawnAt - t0);
      await unlocked();
    };
    const deno = await resolveDenoBinary();
    const envPath = await firstExecutable(["/usr/bin/env", "/bin/env"]);
    if (!deno || !envPath) throw new Error("deno or env not found for the lock's floor");
    const floorSocket = join(tmp, "t-floor.sock");
    const program = join(tmp, "t_floor.ts");
    await writeFile(program, "await Deno.connect({ transport: 'unix', path: Deno.args[0] });\n");
    const flags = [
      `--allow-read=${floorSocket}`,
      `--allow-write=${floorSocket}`,
      `--allow-net=unix:${floorSocket}`,
    ];
    const command = `exec ${envPath} -i DENO_DIR=${join(tmp, "t-deno")} NO_COLOR=1 ${deno} ${
      DENO_RUN_PINNED.join(" ")
    } ${flags.join(" ")} ${program} ${floorSocket} >/dev/null 2>&1`;
    let connected: (() => void) | undefined;
    const server = createServer((c) => {
      c.on("error", () => {});
      connected?.();
      c.destroy();
    });
    await deadline(
      "the lock floor's socket",
      new Promise<void>((resolve) => server.listen(floorSocket, () => resolve())),
      spawnDeadline(),
    );
    const oneFloor = async () => {
      const t0 = performance.now();
      const accepted = new Promise<number>((resolve) =>
        connected = () => resolve(performance.now())
      );
      await tmux(
        "set-option",
        "-t",
        pane,
        "lock-command",
        command,
        ";",
        "lock-session",
        "-t",
        pane,
      );
      floor.push(await deadline("the floor's connect", accepted, flowDeadline()) - t0);
      await unlocked();
    };
    try {
      await oneFloor(); // warm-up: the Deno caches of both
      await oneOurs();
      const runs = QUICK ? 4 : 20;
      for (let i = 0; i < runs; i++) {
        if (i % 2 === 0) {
          await oneOurs();
          await oneFloor();
        } else {
          await oneFloor();
          await oneOurs();
        }
      }
    } finally {
      server.close();
    }
  } finally {
    await tmux("kill-server").catch(() => "");
    if (client.pid) {
      try {
        process.kill(-client.pid, "SIGKILL");
      } catch {
        // gone
      }
    }
  }
  const extra = median(ours) - median(floor);
  quickRatios.set("takeoverOverFloor", median(ours) / median(floor));
  rows.push({
    id: "t",
    what: "inside tmux: asking → the modal drawn on the locked client (ADR 0009)",
    ours: dist(ours),
    baseline: `${dist(floor)}: tmux's lock running a one-line Deno that connects`,
    extra: `+${ms(extra)}`,
    target: `≤ ${TARGETS.openMs} ms extra (p50)`,
    met: atMost(extra, TARGETS.openMs),
    note: "ours: the lock command, the keeper's Deno start and connect, its kernel check " +
      "(SO_PEERCRED, /proc of the keeper and its client), opening the client's terminal " +
      "(exclusive, raw) and the keyboard gate's scan of it, then the first frame. The floor is " +
      "tmux's lock running a Deno program with the same pinned flags that only connects",
    why: () =>
      `beyond tmux's lock and Deno's start, the kernel check, the terminal and the gate's scan ` +
      `take ${ms(extra)}, with tmux, Deno and pi sharing ${os.availableParallelism()} cores`,
  });
}

/**
 * Inode of the server's accepted socket for the connection `helperPid`
 * holds: the socket of ours whose peer (by SOCK_DIAG) is one of the helper's.
 */
async function acceptedInodeFor(helperPid: number): Promise<number> {
  const theirs = await socketInodesOf(helperPid);
  const ours = await socketInodesOf(process.pid);
  if (!theirs.ok || !ours.ok) throw new Error("cannot list socket descriptors");
  // The helper's stderr is one of our spawn socketpairs too (and Deno keeps
  // a duplicate of it): skip every socket that is also on fd 0-2.
  const stdio = new Set(theirs.sockets.filter((s) => s.fd <= 2).map((s) => s.inode));
  const helperInodes = new Set(
    theirs.sockets.map((s) => s.inode).filter((inode) => !stdio.has(inode)),
  );
  const matches = ours.sockets.filter((s) => {
    const peer = unixPeerInodeByInode(s.inode);
    return peer.ok && helperInodes.has(peer.peerInode);
  });
  if (matches.length !== 1) {
    throw new Error(
      `expected one accepted socket for the helper, found ${JSON.stringify(matches)} in ${
        JSON.stringify(theirs.sockets)
      }`,
    );
  }
  return matches[0].inode;
}

// --- row d: Deno helper vs Node helper startup ----------------------------------

function timeSpawn(
  file: string,
  args: string[],
  env: Record<string, string>,
  limitMs = spawnDeadline(),
): Promise<{ ms: number; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => stderr += d);
    child.stdout.on("data", () => {});
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${file} did not exit within ${limitMs} ms`));
    }, limitMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ ms: performance.now() - t0, code, stderr });
    });
  });
}

async function helperStartup(tmp: string): Promise<void> {
  log("d: Deno helper vs an empty Deno program vs the Node helper, start to self-check exit");
  const denoPath = await resolveDenoBinary();
  if (!denoPath) throw new Error("deno binary not found");
  const helperPath = await realpath(join(REPO_ROOT, "askpass", "helper.ts"));
  const socketPath = join(tmp, "unused.sock");
  const denoDir = join(tmp, "deno-cache");
  const environment = helperEnvironment({
    denoDir,
    socketPath,
    deadlineMs: DEFAULT_TIMEOUT_MS + HELPER_DEADLINE_MARGIN_MS,
  });
  const env: Record<string, string> = {};
  for (const entry of environment) {
    const eq = entry.indexOf("=");
    env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  // Without the socket variable, both helpers stop right after their
  // self-check ("no session socket configured"), before any connect.
  delete env[HELPER_ENV.SOCKET];
  const prompt = "[sudo] password for bench: ";
  const argvPrefix = helperArgvPrefix(denoPath, helperPath, socketPath);
  const argv = [...argvPrefix, prompt];
  // The floor: a one-line program under the very same flags and environment.
  const oneLine = join(tmp, "one_line.ts");
  await writeFile(oneLine, "Deno.exit(1);\n");
  const oneLineArgv = [...argvPrefix.slice(0, -1), oneLine, prompt];

  // The Node helper as it would ship: plain JS, its modules stripped of types
  // once beforehand (Deno's counterpart is the warm DENO_DIR).
  const nodeDir = join(tmp, "node-helper");
  await mkdir(nodeDir, { recursive: true });
  const nodeHelperTs = fileURLToPath(new URL("./node_helper.mjs", import.meta.url));
  for (const name of ["protocol", "helper_permissions"]) {
    const source = await readFile(join(REPO_ROOT, "askpass", `${name}.ts`), "utf8");
    await writeFile(join(nodeDir, `${name}.mjs`), stripTypeScriptTypes(source));
  }
  const nodeHelperJs = join(nodeDir, "helper.mjs");
  await writeFile(
    nodeHelperJs,
    (await readFile(nodeHelperTs, "utf8")).replaceAll(
      /"\.\.\/\.\.\/askpass\/(\w+)\.ts"/g,
      `"./$1.mjs"`,
    ),
  );
  // For the notes: each runtime's empty program, and what the node: imports
  // the helper used to have cost Deno by themselves.
  const emptyJs = join(tmp, "empty.mjs");
  const nodeImports = join(tmp, "node_imports.mjs");
  await writeFile(emptyJs, "");
  await writeFile(nodeImports, 'import "node:fs";\nimport "node:process";\n');
  const denoRun = (file: string) =>
    timeSpawn(denoPath, ["run", "--no-prompt", "--no-config", "--no-lock", file], env);

  const series = {
    deno: () => timeSpawn(argv[0], argv.slice(1), env),
    oneLine: () => timeSpawn(oneLineArgv[0], oneLineArgv.slice(1), env),
    node: () => timeSpawn(process.execPath, [nodeHelperJs, prompt], env),
    nodeTs: () => timeSpawn(process.execPath, [nodeHelperTs, prompt], env),
    denoEmpty: () => denoRun(emptyJs),
    denoNodeImports: () => denoRun(nodeImports),
    nodeEmpty: () => timeSpawn(process.execPath, [emptyJs], env),
  };
  type Name = keyof typeof series;
  const helpers: ReadonlySet<Name> = new Set(["deno", "node", "nodeTs"]);
  const times = new Map<Name, number[]>();
  const names = Object.keys(series) as Name[];
  // Two warm-up rounds (DENO_DIR transpile and code cache, page cache), then the runs.
  for (let round = -2; round < STARTUP_RUNS; round++) {
    for (const name of names) {
      const r = await series[name]();
      if (helpers.has(name) && (r.code !== 1 || !r.stderr.includes("no session socket"))) {
        throw new Error(`${name} helper did not stop after its self-check: ${r.code} ${r.stderr}`);
      }
      const expected = name === "oneLine" ? 1 : 0;
      if (!helpers.has(name) && r.code !== expected) {
        throw new Error(`${name}: exit ${r.code} ${r.stderr}`);
      }
      if (round >= 0) times.set(name, [...times.get(name) ?? [], r.ms]);
    }
  }
  const t = (name: Name) => times.get(name) ?? [];
  const overFloor = median(t("deno")) / median(t("oneLine"));
  const nodeOverDeno = median(t("node")) / median(t("deno"));
  facts.denoStartMs = median(t("deno"));
  facts.denoEmptyMs = median(t("denoEmpty"));
  facts.denoOneLineMs = median(t("oneLine"));
  quickRatios.set("helperOverFloor", overFloor);
  quickRatios.set("nodeOverDeno", nodeOverDeno);
  rows.push({
    id: "d",
    what: "Deno helper start → exit after its self-check, vs a one-line program",
    ours: dist(t("deno")),
    baseline: `${dist(t("oneLine"))}: \`Deno.exit(1)\`, same flags and environment`,
    extra: `${overFloor.toFixed(2)}×`,
    target: `≤ ${TARGETS.helperOverFloor}×`,
    met: atMost(overFloor, TARGETS.helperOverFloor, 2),
    note: `${STARTUP_RUNS} runs each, interleaved, spawned from Node, warm DENO_DIR; the helper ` +
      "stops right after its self-check (no socket configured). It imports no `node:` module: " +
      `an empty Deno program that only imports node:fs and node:process takes ${
        ms(median(t("denoNodeImports")))
      } against ${ms(median(t("denoEmpty")))} for an empty one, which the helper used to pay`,
    why: () =>
      `the helper's own work (parsing its modules, the self-check) is ${
        ms(median(t("deno")) - median(t("oneLine")))
      } over Deno's floor of ${ms(median(t("oneLine")))}`,
  });
  rows.push({
    id: "d2",
    what: "Node helper vs Deno helper, start → exit after the self-check",
    ours: `Deno ${dist(t("deno"))}`,
    baseline: `Node 22 ${dist(t("node"))}`,
    extra: `Node/Deno ${nodeOverDeno.toFixed(2)}×`,
    target: `Node ≥ ${TARGETS.nodeOverDeno}× slower`,
    met: atMost(TARGETS.nodeOverDeno, nodeOverDeno, 2),
    note: "the Node helper (tests/bench/node_helper.mjs) makes the same checks on the same " +
      "modules, pre-stripped to JS (loading the .ts files directly with Node's type stripping: " +
      `${ms(median(t("nodeTs")))}). Empty program: Deno ${ms(median(t("denoEmpty")))}, ` +
      `Node ${ms(median(t("nodeEmpty")))}`,
    why: () =>
      `an empty program takes Deno ${ms(median(t("denoEmpty")))} and Node ${
        ms(median(t("nodeEmpty")))
      } here (${(median(t("nodeEmpty")) / median(t("denoEmpty"))).toFixed(2)}×)`,
  });
}

// --- row e: event-loop lag ------------------------------------------------------

async function idleLag(wallMs: number): Promise<number> {
  const beat = startHeartbeat();
  await sleep(wallMs);
  return beat.stop();
}

async function eventLoopLag(
  session: AskpassSession,
  prompter: TimedPrompter,
  events: Map<string, number>,
): Promise<void> {
  log(`e: heartbeat during ${LAG_FLOWS} sudo flows and a ${FLOOD_CONNECTIONS}-connection flood`);
  let beat = startHeartbeat();
  let t0 = performance.now();
  for (let i = 0; i < LAG_FLOWS; i++) {
    prompter.reset();
    const r = await runToolCommand(session, SUDO_COMMAND, flowDeadline());
    if (r.code !== 0) {
      beat.stop();
      throw new Error(`sudo flow ${i} failed with code ${r.code}`);
    }
  }
  const flowLag = beat.stop();
  const flowWall = performance.now() - t0;
  const flowIdle = await idleLag(flowWall);

  const before = new Map(events);
  const delta = (reason: string) => (events.get(reason) ?? 0) - (before.get(reason) ?? 0);
  const flooder = fileURLToPath(new URL("./flood_client.ts", import.meta.url));
  beat = startHeartbeat();
  t0 = performance.now();
  const out = await timeFlood(flooder, session.socketPath);
  const floodLag = beat.stop();
  const floodWall = performance.now() - t0;
  // Let the server finish its bookkeeping of the last closes.
  await sleep(100);
  const floodIdle = await idleLag(floodWall);
  const dropped = delta("too_many_connections");
  const timedOut = delta("request_timeout");
  const worst = Math.max(flowLag, floodLag);
  rows.push({
    id: "e",
    what:
      `worst event-loop lag: ${LAG_FLOWS} sudo flows / flood of ${FLOOD_CONNECTIONS} connections`,
    ours: `${ms(flowLag)} / ${ms(floodLag)}`,
    baseline: `idle loop, same wall time: ${ms(flowIdle)} / ${ms(floodIdle)}`,
    extra: `${sign(flowLag - flowIdle, 1)} ms / ${sign(floodLag - floodIdle, 1)} ms`,
    target: `≤ ${TARGETS.lagMs} ms`,
    met: atMost(worst, TARGETS.lagMs),
    note: `flood (separate process, 1 byte each, maxConnections 64): server dropped ${dropped}, ` +
      `timed out ${timedOut} (2 s request deadline), other refusals ${
        delta("peer_closed") + delta("bad_frame")
      }; client saw ${out.closedFast} closed < 1 s, ${out.closedSlow} closed later, ` +
      `${out.connectErrors} failed connects, ${out.stillOpen} still open at 8 s (socket errors: ${
        Object.entries(out.errorCodes).map(([k, v]) => `${k} ${v}`).join(", ") || "none"
      }); flood wall ${ms(out.wallMs, 0)}`,
    why: () =>
      flowLag > TARGETS.lagMs
        ? "a stall during the sudo flows: something synchronous on the server path"
        : "the accept burst: each accepted connection does its SO_PEERCRED/SO_PEERPIDFD/fstat synchronously",
  });
}

function timeFlood(script: string, socketPath: string): Promise<FloodSummary> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [script, socketPath, String(FLOOD_CONNECTIONS), "8000"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => stdout += d);
    child.stderr.on("data", (d) => stderr += d);
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`flood client did not finish within ${20 * loadFactor} s`));
    }, Math.round(20_000 * loadFactor));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve(JSON.parse(stdout) as FloodSummary);
      } catch (e) {
        reject(new Error(`flood client failed (${e}): ${stderr}`));
      }
    });
  });
}

// --- row f: memory over forged requests ----------------------------------------

async function settle(gc: (() => void) | undefined): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await sleep(20);
  }
}

async function memoryGrowth(
  session: AskpassSession,
  events: Map<string, number>,
  gc: (() => void) | undefined,
): Promise<void> {
  log(`f: memory before and after ${FORGED_REQUESTS} forged requests`);
  const forge = async () => {
    const frame = encodeRequest({
      id: newRequestId(),
      prompt: "[sudo] password for bench: ",
      pid: process.pid,
    });
    const r = await rawExchange(session.socketPath, frame, Math.round(3000 * loadFactor));
    if (r.ended !== "closed") throw new Error("a forged request was not answered in time");
  };
  const send = async (n: number) => {
    let next = 0;
    const worker = async () => {
      while (next < n) {
        next++;
        await forge();
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
  };
  const mb = (bytes: number) => bytes / (1024 * 1024);
  // Warm-up batches until the process's working set is steady: code paths,
  // FFI, buffers and malloc's arenas grow RSS by up to 15 MB over the first
  // two thousand requests, then stop (0.1–0.6 MB a batch after). A leak never
  // settles, so it still shows in the measured batch.
  let warmups = 0;
  for (let grew = Infinity; grew >= 1 && warmups < 5; warmups++) {
    const rssBefore = process.memoryUsage().rss;
    await send(FORGED_REQUESTS);
    await settle(gc);
    grew = mb(process.memoryUsage().rss - rssBefore);
  }
  const refusedBefore = events.get("peer_exe_mismatch") ?? 0;
  const m0 = process.memoryUsage();
  const t0 = performance.now();
  await send(FORGED_REQUESTS);
  const wall = performance.now() - t0;
  await settle(gc);
  const m1 = process.memoryUsage();
  const refused = (events.get("peer_exe_mismatch") ?? 0) - refusedBefore;
  const rss = mb(m1.rss - m0.rss);
  const heap = mb(m1.heapUsed - m0.heapUsed);
  rows.push({
    id: "f",
    what: `memory growth over ${FORGED_REQUESTS} forged requests`,
    ours: `RSS ${sign(rss)} MB, heap ${sign(heap)} MB`,
    baseline: `before: RSS ${mb(m0.rss).toFixed(1)} MB, heap ${mb(m0.heapUsed).toFixed(1)} MB`,
    extra: `${(wall / FORGED_REQUESTS).toFixed(2)} ms per request`,
    target: `≤ ${TARGETS.memoryMb} MB`,
    met: atMost(Math.max(rss, heap), TARGETS.memoryMb, 2),
    note:
      `${refused}/${FORGED_REQUESTS} refused at verification (peer_exe_mismatch), 8 at a time, ` +
      `after ${warmups} warm-up batches of as many (until one grew RSS by less than 1 MB); ${
        gc ? "forced GC before each reading" : "no --expose-gc: readings without forced GC"
      }`,
    why: () =>
      "memory retained per refused request (the replay set keeps up to 4096 ids by design)",
  });
}

function sign(value: number, digits = 2): string {
  return `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`;
}

// --- row g: the replaced bash tool vs pi's built-in ------------------------------

// deno-lint-ignore no-explicit-any -- any tool definition, called through its execute
type BashDefinition = ToolDefinition<any, any, any>;

async function bashOverhead(): Promise<void> {
  log(`g: the extension's bash tool vs pi's built-in, ${BASH_RUNS} runs of \`true\` each`);
  const cwd = process.cwd();
  const handlers = new Map<string, (event: unknown, ctx: unknown) => unknown>();
  let ours: BashDefinition | undefined;
  const fakePi = {
    on(name: string, handler: (event: unknown, ctx: unknown) => unknown) {
      handlers.set(name, handler);
    },
    registerTool(definition: BashDefinition) {
      ours = definition;
    },
    registerCommand() {},
    registerFlag() {},
    registerToolRenderer() {},
    registerMarkdownTransformer() {},
    getFlag: () => undefined,
  } as unknown as ExtensionAPI;
  piSudoPrompt(fakePi);
  const notices: string[] = [];
  const startCtx = {
    mode: "tui",
    hasUI: true,
    cwd,
    ui: { notify: (message: string) => notices.push(message) },
  };
  await deadline(
    "extension session_start",
    Promise.resolve(handlers.get("session_start")?.({ type: "session_start" }, startCtx)),
    spawnDeadline(),
  );
  if (!ours) throw new Error("the extension registered no tool");
  // The bench has no terminal (stdin is not a tty): that notice alone is expected.
  const unexpected = notices.filter((n) => !n.includes("stdin is not a terminal"));
  if (unexpected.length > 0) throw new Error(`extension did not start: ${unexpected.join("; ")}`);
  try {
    const settings = SettingsManager.create(cwd, getAgentDir());
    const builtin = createBashToolDefinition(cwd, {
      commandPrefix: settings.getShellCommandPrefix(),
      shellPath: settings.getShellPath(),
    });
    const ctx = {
      cwd,
      hasUI: true,
      model: undefined,
      sessionManager: { getSessionId: () => "bench", getSessionFile: () => undefined },
    } as unknown as ExtensionToolContext;
    let n = 0;
    const run = async (tool: BashDefinition) => {
      const t0 = performance.now();
      const result = await deadline(
        "bash tool call",
        tool.execute(`bench-${n++}`, { command: "true" }, undefined, undefined, ctx),
        spawnDeadline(),
      );
      const took = performance.now() - t0;
      if ((result as { isError?: boolean }).isError) throw new Error("`true` failed in the tool");
      return took;
    };
    // Make sure the two really differ the way pi and the extension do.
    const kind = async (tool: BashDefinition) => {
      const r = await deadline(
        "bash tool call",
        tool.execute("bench-check", { command: "type -t sudo" }, undefined, undefined, ctx),
        spawnDeadline(),
      ) as { content: { type: string; text?: string }[] };
      return r.content.map((c) => c.text ?? "").join("").trim();
    };
    const kinds = [await kind(builtin), await kind(ours)];
    if (kinds[0] !== "file" || kinds[1] !== "function") {
      throw new Error(`unexpected tool setup: sudo is ${kinds.join(" / ")} (built-in / ours)`);
    }
    for (let i = 0; i < 3; i++) {
      await run(builtin);
      await run(ours);
    }
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < BASH_RUNS; i++) {
      if (i % 2 === 0) {
        a.push(await run(builtin));
        b.push(await run(ours));
      } else {
        b.push(await run(ours));
        a.push(await run(builtin));
      }
    }
    const percent = (median(b) / median(a) - 1) * 100;
    const fixed = median(b) - median(a);
    quickRatios.set("bashOverBuiltin", median(b) / median(a));
    // The part of the difference the extension's own code costs, without bash.
    const settingsCost: number[] = [];
    for (let i = 0; i < BASH_RUNS; i++) {
      const t0 = performance.now();
      const s = SettingsManager.create(cwd, getAgentDir());
      createBashToolDefinition(cwd, {
        commandPrefix: s.getShellCommandPrefix(),
        shellPath: s.getShellPath(),
      });
      settingsCost.push(performance.now() - t0);
    }
    // And what bash itself pays for the prelude, outside pi: `bash -c true`
    // with and without the same sudo() prelude in front.
    const prelude = sudoShellPrelude("/run/user/1000/pi-sudo-prompt-XXXXXX/bin/sudo");
    const shellEnv = Object.fromEntries(
      Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
    );
    const plainBash: number[] = [];
    const preludeBash: number[] = [];
    for (let i = 0; i < BASH_RUNS; i++) {
      plainBash.push((await timeSpawn("/bin/bash", ["-c", "true"], shellEnv)).ms);
      preludeBash.push((await timeSpawn("/bin/bash", ["-c", `${prelude}\ntrue`], shellEnv)).ms);
    }
    const preludeCost = median(preludeBash) - median(plainBash);
    rows.push({
      id: "g",
      what: "bash tool on `true`: ours (extension) vs pi's built-in",
      ours: dist(b, 2),
      baseline: `${dist(a, 2)}: built-in`,
      extra: `${sign(fixed, 2)} ms per call (${sign(percent, 1)} %, information only)`,
      target: `≤ ${TARGETS.bashFixedMs} ms fixed extra per call`,
      met: atMost(fixed, TARGETS.bashFixedMs, 2),
      note: `${BASH_RUNS} interleaved calls each, in process, through the tool's execute(); ` +
        `ours is the tool extension/index.ts registers (checked: \`sudo\` is its prelude's ` +
        `function), which rebuilds settings and the definition per call (${
          ms(median(settingsCost), 2)
        } of the difference) and prepends the sudo() prelude (bash -c true spawned directly: ${
          ms(median(plainBash), 2)
        }, with the ${prelude.length}-byte prelude: ${
          ms(median(preludeBash), 2)
        }); spread between p50 and p90 ` +
        `of the built-in alone: ${ms(p90(a) - median(a), 2)}, which is why the % figure is ` +
        "information only",
      why: () =>
        `the difference (${
          ms(median(b) - median(a), 2)
        }) is the sum of bash parsing the sudo() prelude (${
          sign(preludeCost, 2)
        } ms when spawned outside pi), the larger environment, and rebuilding settings and ` +
        `the definition per call (${ms(median(settingsCost), 2)}); the built-in's own p50–p90 ` +
        `spread is ${ms(p90(a) - median(a), 2)}. It is a fixed cost per call, so on a command ` +
        "that does real work it is a far smaller share",
    });
  } finally {
    await deadline(
      "extension session_shutdown",
      Promise.resolve(handlers.get("session_shutdown")?.({ type: "session_shutdown" }, startCtx)),
      spawnDeadline(),
    );
  }
}

// --- machine and rendering ------------------------------------------------------------

interface Machine {
  readonly kernel: string;
  readonly cpu: string;
  readonly cores: number;
  readonly memory: string;
  readonly sudo: string;
  readonly node: string;
  readonly deno: string;
  readonly date: string;
}

async function describeMachine(): Promise<Machine> {
  const cpuinfo = await readFile("/proc/cpuinfo", "utf8").catch(() => "");
  const cpu = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ??
    "unknown";
  const denoPath = await resolveDenoBinary();
  return {
    kernel: os.release(),
    cpu,
    cores: os.availableParallelism(),
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    sudo: await execText("/usr/bin/sudo", ["-V"]),
    node: process.version,
    deno: denoPath ? await execText(denoPath, ["--version"]) : "(not found)",
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  };
}

function render(m: Machine): string {
  const missed = rows.filter((r) => !r.met);
  const lines = [
    "# Benchmarks",
    "",
    "Measured by `deno task bench` (`tests/bench/run.sh`, as a throwaway sudo user against real",
    "sudo). Every figure has its baseline from the same run beside it; times are medians with the",
    "90th percentile in brackets. Regenerate with `deno task bench` as root (it creates the user).",
    "",
    "| machine | |",
    "| --- | --- |",
    `| date | ${m.date} |`,
    `| kernel | ${m.kernel} |`,
    `| CPU | ${m.cpu}, ${m.cores} cores, ${m.memory} |`,
    `| sudo | ${m.sudo} |`,
    `| node | ${m.node} |`,
    `| deno | ${m.deno} |`,
    "",
    "| | measurement | ours | baseline | difference | target | result |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) =>
      `| ${r.id} | ${r.what} | ${r.ours} | ${r.baseline} | ${r.extra} | ${r.target} | ${
        r.met ? "met" : "**MISSED**"
      } |`
    ),
    "",
    "Notes:",
    "",
    ...rows.map((r) => `- **${r.id}**: ${r.note}.`),
    ...surprises.map((s) => `- ${s}`),
    ...retries.map((r) => `- Retried: ${r}.`),
    "",
    ...(missed.length === 0 ? ["All targets met."] : [
      "Missed targets:",
      "",
      ...missed.map((r) =>
        `- **${r.id}** (${r.target}): ${
          (typeof r.why === "function" ? r.why() : r.why) ?? "see the note"
        }.`
      ),
    ]),
    "",
  ];
  return lines.join("\n");
}

let watchdog: ReturnType<typeof setTimeout> | undefined;
/** Ends the whole run if it ever takes longer than its scaled budget. */
function armWatchdog(): void {
  const limit = Math.round(BASE.watchdogMs * loadFactor);
  watchdog = setTimeout(() => {
    process.stderr.write(`bench: gave up after ${(limit / 1000).toFixed(0)} s\n`);
    process.exit(1);
  }, limit);
  watchdog.unref();
}

main().then(
  () => {
    clearTimeout(watchdog);
    process.exit(process.exitCode ?? 0);
  },
  (error: unknown) => {
    process.stderr.write(`bench: FAILED: ${error instanceof Error ? error.message : error}\n`);
    process.exit(1);
  },
);
