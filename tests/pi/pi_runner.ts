/**
 * Start the real `pi` CLI (interactive in tmux, or print mode) against the
 * scripted faux model, fully isolated in a temporary directory.
 *
 * ```ts
 * const pi = await startPi({ script: [{ bash: "echo hi" }, { text: "ok" }] });
 * try {
 *   await pi.tmux.sendText("go");
 *   await pi.tmux.sendKeys("Enter");
 *   await pi.tmux.waitFor("ok", 10_000);
 *   const log = await pi.readSessions(); // JSONL text of every session file
 * } finally {
 *   await pi.close();
 * }
 * ```
 *
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { TmuxSession } from "../helpers/tmux.ts";
import type { FauxStep } from "./faux_provider.ts";

/** Repository root (two levels above this file). */
export const REPO_ROOT: string = fileURLToPath(new URL("../../", import.meta.url));

/** The test-only extension that provides the scripted model. */
export const FAUX_EXTENSION: string = join(REPO_ROOT, "tests/pi/faux_provider.ts");

/** Model id shown at the right end of pi's footer. */
export const FAUX_MODEL_ID = "faux-1";

/**
 * Readiness check: pi's footer is the last line of the screen and ends with
 * the model id (`0.0%/128k (auto)   …   faux-1`). pi draws it once the
 * extensions and the model are loaded; the editor accepts keys from then on.
 */
export function isPiReady(screen: string): boolean {
  const lines = screen.split("\n").filter((l) => l.trim() !== "");
  const last = lines[lines.length - 1] ?? "";
  return new RegExp(`\\s${FAUX_MODEL_ID}\\s*$`).test(last);
}

/**
 * Node binary able to run pi (>= 22.19): the project's
 * `node_modules/.bin/node` if present, else the running Node.
 */
export function nodeBinary(): string {
  const local = join(REPO_ROOT, "node_modules/.bin/node");
  return existsSync(local) ? local : process.execPath;
}

/** Absolute path of pi's CLI entry (the `bin.pi` field of its package). */
export function piCliPath(): string {
  const pkgDir = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent");
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as {
    bin: Record<string, string>;
  };
  return resolve(pkgDir, pkg.bin.pi);
}

/**
 * Directory where pi 1.6.0 writes the session JSONL files for `cwd`:
 * `<agentDir>/sessions/--<cwd without leading "/", "/" -> "-">--/`
 * (file names: `<ISO timestamp>_<session id>.jsonl`).
 */
export function sessionDirFor(agentDir: string, cwd: string): string {
  const safe = `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
  return join(agentDir, "sessions", safe);
}

/** Options for {@link preparePi}. */
export interface PiLaunchOptions {
  /** Faux script: steps, or the path of an existing JSON file. */
  script?: FauxStep[] | string;
  /** Extra extension paths, each passed as `-e <path>` after the faux one. */
  extensions?: string[];
  /** Extra CLI arguments, appended last. */
  args?: string[];
  /** Extra environment variables (after isolation, so they win). */
  env?: Record<string, string>;
  /**
   * pi's `LANG`, with `LC_ALL` and `LC_MESSAGES` dropped so that it alone
   * picks the language pi speaks (`shared/i18n/locale.ts`); default: the
   * caller's (`LANG=C.UTF-8` in the suite, so English).
   */
  locale?: string;
  /** Working directory for pi (default: a fresh `work/` in the temp dir). */
  cwd?: string;
  /** HOME for pi (default: a fresh `home/` in the temp dir). */
  home?: string;
  /** Written to `<agentDir>/settings.json` before pi starts. */
  settings?: Record<string, unknown>;
}

/** Everything needed to run one isolated pi; see {@link preparePi}. */
export interface PiLaunch {
  /** Temporary root holding agent dir, home, work dir and script. */
  tmpDir: string;
  /** `PI_CODING_AGENT_DIR` (settings, auth, sessions). */
  agentDir: string;
  /** Working directory pi runs in (real path). */
  cwd: string;
  /** Where the session JSONL files of this cwd appear. */
  sessionDir: string;
  /** Path of the faux script JSON (`PI_FAUX_SCRIPT`). */
  scriptPath: string;
  /** Program and arguments for interactive mode. */
  argv: string[];
  /** Complete environment for pi. */
  env: Record<string, string>;
  /** Removes the temp dir. */
  cleanup(): Promise<void>;
}

/** Drops variables that would leak the caller's pi/tmux/test state into pi. */
function isolatedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (key.startsWith("PI_") || key === "AI_AGENT") continue;
    if (key === "TMUX" || key === "TMUX_PANE") continue;
    if (key.startsWith("NODE_TEST") || key === "NODE_OPTIONS") continue;
    env[key] = value;
  }
  return env;
}

/**
 * Creates a temp dir with an empty agent dir, HOME and work dir, writes the
 * faux script, and builds argv and env for
 * `pi --provider faux --model faux-1 -e faux_provider.ts [-e ext]…`.
 * Sessions are kept (no `--no-session`); see {@link PiLaunch.sessionDir}.
 */
export async function preparePi(options: PiLaunchOptions = {}): Promise<PiLaunch> {
  const tmpDir = await realpath(await mkdtemp(join(tmpdir(), "pi-e2e-")));
  const agentDir = join(tmpDir, "agent");
  const home = options.home ?? join(tmpDir, "home");
  const workDir = options.cwd ?? join(tmpDir, "work");
  await mkdir(workDir, { recursive: true });
  // pi names the session dir after the real path of its cwd.
  const cwd = await realpath(workDir);
  await mkdir(agentDir, { recursive: true });
  await mkdir(home, { recursive: true });
  if (options.settings) {
    await writeFile(join(agentDir, "settings.json"), JSON.stringify(options.settings, null, 2));
  }

  let scriptPath: string;
  if (typeof options.script === "string") {
    scriptPath = resolve(options.script);
  } else {
    scriptPath = join(tmpDir, "faux-script.json");
    await writeFile(scriptPath, JSON.stringify(options.script ?? [], null, 2));
  }

  const argv = [
    nodeBinary(),
    piCliPath(),
    "--provider",
    "faux",
    "--model",
    FAUX_MODEL_ID,
    "-e",
    FAUX_EXTENSION,
    ...(options.extensions ?? []).flatMap((e) => ["-e", resolve(e)]),
    ...(options.args ?? []),
  ];
  const caller = isolatedEnv();
  if (options.locale !== undefined) {
    delete caller.LC_ALL;
    delete caller.LC_MESSAGES;
    caller.LANG = options.locale;
  }
  const env: Record<string, string> = {
    ...caller,
    HOME: home,
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    PI_FAUX_SCRIPT: scriptPath,
    ...options.env,
  };
  return {
    tmpDir,
    agentDir,
    cwd,
    sessionDir: sessionDirFor(agentDir, cwd),
    scriptPath,
    argv,
    env,
    // A pi that ends with its pane may still write its session while this runs
    // (ENOTEMPTY): rm retries.
    cleanup: () => rm(tmpDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }),
  };
}

/** Paths of all session JSONL files written so far (sorted by name = time). */
export async function listSessionFiles(launch: PiLaunch): Promise<string[]> {
  const names = await readdir(launch.sessionDir).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith(".jsonl")).sort().map((n) => join(launch.sessionDir, n));
}

/** Concatenated text of all session files (for grepping canaries). */
export async function readSessions(launch: PiLaunch): Promise<string> {
  const files = await listSessionFiles(launch);
  const texts = await Promise.all(files.map((f) => readFile(f, "utf8")));
  return texts.join("");
}

/** Options for {@link startPi}. */
export interface StartPiOptions extends PiLaunchOptions {
  /** Terminal width (default 120). */
  cols?: number;
  /** Terminal height (default 40). */
  rows?: number;
  /** Deadline for the readiness marker (default 20 000 ms). */
  readyTimeoutMs?: number;
  /** Extra tmux config lines (default: `extended-keys on`). */
  tmuxConf?: string[];
}

/** A running interactive pi; see {@link startPi}. */
export interface PiSession {
  tmux: TmuxSession;
  launch: PiLaunch;
  /** Milliseconds from start until the readiness marker appeared. */
  startupMs: number;
  /** See {@link listSessionFiles}. */
  sessionFiles(): Promise<string[]>;
  /** See {@link readSessions}. */
  readSessions(): Promise<string>;
  /** Kills pi and tmux and removes all temp files. Never throws. */
  close(): Promise<void>;
}

/** Waits until pi's footer shows the faux model (see {@link isPiReady}). */
export async function waitForPiReady(tmux: TmuxSession, timeoutMs = 20_000): Promise<string> {
  return await tmux.waitUntil(isPiReady, `pi footer ending in "${FAUX_MODEL_ID}"`, timeoutMs);
}

/** Prepares an isolated pi, starts it in tmux and waits until it is ready. */
export async function startPi(options: StartPiOptions = {}): Promise<PiSession> {
  const launch = await preparePi(options);
  const started = Date.now();
  let tmux: TmuxSession;
  try {
    tmux = await TmuxSession.start({
      argv: launch.argv,
      env: launch.env,
      cwd: launch.cwd,
      cols: options.cols ?? 120,
      rows: options.rows ?? 40,
      tmuxConf: options.tmuxConf ?? ["set -g extended-keys on"],
    });
  } catch (e) {
    await launch.cleanup();
    throw e;
  }
  const close = async () => {
    await tmux.kill();
    await launch.cleanup().catch(() => {});
  };
  try {
    await waitForPiReady(tmux, options.readyTimeoutMs);
  } catch (e) {
    await close();
    throw e;
  }
  return {
    tmux,
    launch,
    startupMs: Date.now() - started,
    sessionFiles: () => listSessionFiles(launch),
    readSessions: () => readSessions(launch),
    close,
  };
}

/** Result of {@link runPiPrint}. */
export interface PrintResult {
  /** Exit code, or null if killed by a signal (e.g. on timeout). */
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Runs `pi … -p <prompt>` (print mode) with stdin closed and a deadline;
 * on timeout pi gets SIGKILL and `timedOut` is true.
 */
export function runPiPrint(
  launch: PiLaunch,
  prompt: string,
  timeoutMs = 20_000,
): Promise<PrintResult> {
  const [file, ...args] = launch.argv;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, [...args, "-p", prompt], {
      cwd: launch.cwd,
      env: launch.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, timedOut, stdout, stderr });
    });
  });
}
