/**
 * Drive a full-screen terminal program in tmux, for end-to-end tests.
 *
 * Every session runs on its own tmux server behind a private socket
 * (`tmux -S <tmpdir>/sock`) with its own config, so tests never touch the
 * user's tmux server or `~/.tmux.conf`. All calls are asynchronous
 * (`execFile` with a timeout); nothing blocks the event loop.
 *
 * **Keys are typed through a real tmux client on a pty**, as a human types
 * them, never with `send-keys` to the program's pane: a second private
 * server (the "terminal", `<tmpdir>/term`) runs `tmux attach` to the
 * program's session in a pane of its own. That pane's pty is the client's
 * terminal; {@link TmuxSession.sendText} and {@link TmuxSession.sendKeys}
 * type into it, and {@link TmuxSession.capture} shows its screen: what the
 * human sees (pi's modal is drawn there while tmux is locked, ADR 0009).
 *
 * Runtime-neutral: only `node:` built-ins, so it runs under Node and Deno.
 *
 * ```ts
 * const t = await TmuxSession.start({ argv: ["bash"], cols: 120, rows: 40 });
 * try {
 *   await t.sendText("echo hi");
 *   await t.sendKeys("Enter");
 *   await t.waitFor(/^hi$/m, 5_000);
 * } finally {
 *   await t.kill();
 * }
 * ```
 *
 * @module
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Timeout for a single tmux command, in milliseconds. */
const TMUX_CALL_TIMEOUT_MS = 5_000;
/** Interval between two screen captures while waiting, in milliseconds. */
const POLL_INTERVAL_MS = 100;
/** Unix socket paths are limited to 107 bytes on Linux. */
const MAX_SOCKET_PATH = 100;

/** Options for {@link TmuxSession.start}. */
export interface TmuxStartOptions {
  /** Program and arguments, executed directly (no shell). */
  argv: string[];
  /**
   * Complete environment of the program (default: `process.env`). It becomes
   * the environment of the private tmux server, which the program inherits;
   * tmux adds `TMUX`, `TMUX_PANE` and sets `TERM` (see `term`).
   */
  env?: Record<string, string | undefined>;
  /** Working directory of the program (default: `process.cwd()`). */
  cwd?: string;
  /** Terminal width in columns (default 120). */
  cols?: number;
  /** Terminal height in rows (default 40); the tmux status line is off. */
  rows?: number;
  /** `TERM` inside the pane (default `tmux-256color`). */
  term?: string;
  /** Extra lines for the private tmux config file. */
  tmuxConf?: string[];
}

/** Options for {@link TmuxSession.capture}. */
export interface CaptureOptions {
  /** Include the scrollback history, not only the visible screen. */
  history?: boolean;
  /** Join lines that tmux wrapped at the pane width. */
  joinWrapped?: boolean;
  /** Keep colours and attributes as escape sequences. */
  ansi?: boolean;
  /** The program's own pane instead of the client's terminal (pi's panel while tmux is locked). */
  pane?: boolean;
}

/** Options for {@link TmuxSession.waitFor}. */
export interface WaitOptions extends CaptureOptions {
  /** Deadline in milliseconds (default 10 000). */
  timeoutMs?: number;
  /**
   * Fail at once if the program exits before the pattern appears
   * (default true).
   */
  failOnExit?: boolean;
}

/** Result of a tmux invocation. */
interface ExecResult {
  stdout: string;
  stderr: string;
}

/** Runs a command with a deadline; rejects with stderr in the message. */
function run(
  file: string,
  args: string[],
  env?: Record<string, string | undefined>,
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { env, timeout: TMUX_CALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          const detail = String(stderr).trim() || error.message;
          reject(new Error(`${file} ${args.join(" ")}: ${detail}`));
        } else {
          resolve({ stdout: String(stdout), stderr: String(stderr) });
        }
      },
    );
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Returns true if a process group with this id still has members. */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}

function describe(pattern: RegExp | string): string {
  return typeof pattern === "string" ? JSON.stringify(pattern) : `${pattern}`;
}

function matches(screen: string, pattern: RegExp | string): boolean {
  if (typeof pattern === "string") return screen.includes(pattern);
  pattern.lastIndex = 0; // a /g or /y regex is stateful
  return pattern.test(screen);
}

/** A program running in a detached tmux session on a private server. */
export class TmuxSession {
  /** Temporary directory holding the socket and the config (removed by kill). */
  readonly dir: string;
  /** Path of the private tmux server socket. */
  readonly socket: string;
  /** Target for tmux commands (the program's pane, on the program's server). */
  readonly target: string;
  /** The terminal server's socket (the one the human's client runs in). */
  readonly terminalSocket: string;
  /**
   * Pid of the pane's process: a small `sh` that runs the program and
   * records its exit status. It leads the pane's process group.
   */
  readonly pid: number;
  private readonly statusFile: string;
  private killed = false;

  private constructor(dir: string, socket: string, target: string, pid: number) {
    this.dir = dir;
    this.socket = socket;
    this.target = target;
    this.pid = pid;
    this.terminalSocket = join(dir, "term");
    this.statusFile = join(dir, "exit-status");
  }

  /**
   * Starts `argv` in a new detached session of size `cols` x `rows`.
   * The pane stays around after the program exits (`remain-on-exit`), so the
   * last screen and the exit status remain readable until {@link kill}.
   */
  static async start(options: TmuxStartOptions): Promise<TmuxSession> {
    if (options.argv.length === 0) throw new Error("tmux: empty argv");
    let dir = await mkdtemp(join(tmpdir(), "tmux-test-"));
    if (join(dir, "sock").length > MAX_SOCKET_PATH) {
      await rm(dir, { recursive: true, force: true });
      dir = await mkdtemp("/tmp/tmux-test-");
    }
    const socket = join(dir, "sock");
    const conf = join(dir, "tmux.conf");
    const statusFile = join(dir, "exit-status");
    await writeFile(
      conf,
      [
        "set -g status off",
        "set -g remain-on-exit on",
        "set -g history-limit 10000",
        `set -g default-terminal ${options.term ?? "tmux-256color"}`,
        "set -g escape-time 0",
        ...(options.tmuxConf ?? []),
        "",
      ].join("\n"),
    );
    const cols = options.cols ?? 120;
    const rows = options.rows ?? 40;
    const env = options.env ?? process.env;
    try {
      const { stdout } = await run("tmux", [
        "-S",
        socket,
        "-f",
        conf,
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{pane_id} #{pane_pid}",
        "-s",
        "test",
        "-x",
        String(cols),
        "-y",
        String(rows),
        "-c",
        options.cwd ?? process.cwd(),
        "--",
        // tmux 3.3a sometimes loses #{pane_dead_status} (a race between
        // pty EOF and SIGCHLD), so a wrapper shell records the exit status.
        "/bin/sh",
        "-c",
        '"$@"; s=$?; echo "$s" > "$0"; exit "$s"',
        statusFile,
        ...options.argv,
      ], env);
      const [target, pid] = stdout.trim().split(" ");
      const session = new TmuxSession(dir, socket, target, Number(pid));
      await session.attachClient(cols, rows, env);
      return session;
    } catch (e) {
      await run("tmux", ["-S", socket, "kill-server"]).catch(() => {});
      await run("tmux", ["-S", join(dir, "term"), "kill-server"]).catch(() => {});
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /**
   * The human's client: `tmux attach` to the program's session, run in a pane
   * of a second private server (its pty is the client's terminal). Another
   * call attaches another client, in a window of its own (`window` is then
   * the terminal target to type into).
   */
  async attachClient(
    cols: number,
    rows: number,
    env: Record<string, string | undefined> = process.env,
    window = "0",
  ): Promise<string> {
    const conf = join(this.dir, "term.conf");
    await writeFile(
      conf,
      ["set -g status off", "set -g remain-on-exit on", "set -g escape-time 0", ""].join("\n"),
    );
    const attach = [
      "env",
      "-u",
      "TMUX",
      "-u",
      "TMUX_PANE",
      "tmux",
      "-S",
      this.socket,
      "attach",
      "-t",
      "test",
    ];
    const clientEnv = { ...env, TERM: "xterm-256color" };
    if (window === "0") {
      await run("tmux", [
        "-S",
        this.terminalSocket,
        "-f",
        conf,
        "new-session",
        "-d",
        "-s",
        "term",
        "-x",
        String(cols),
        "-y",
        String(rows),
        "--",
        ...attach,
      ], clientEnv);
    } else {
      await run("tmux", [
        "-S",
        this.terminalSocket,
        "new-window",
        "-d",
        "-t",
        `term:${window}`,
        "--",
        ...attach,
      ], clientEnv);
    }
    // Attached once the program's server lists it.
    const deadline = Date.now() + TMUX_CALL_TIMEOUT_MS;
    const want = window === "0" ? 1 : Number(window) + 1;
    while (Date.now() < deadline) {
      const { stdout } = await this.tmux("list-clients", "-F", "#{client_pid}");
      if (stdout.trim().split("\n").filter(Boolean).length >= want) return `term:${window}`;
      await sleep(20);
    }
    throw new Error("tmux: the client did not attach");
  }

  /** Runs a tmux command against the terminal server (the human's client runs there). */
  terminal(...args: string[]): Promise<ExecResult> {
    return run("tmux", ["-S", this.terminalSocket, ...args]);
  }

  /** Runs a tmux command against this session's private server. */
  tmux(...args: string[]): Promise<ExecResult> {
    return run("tmux", ["-S", this.socket, ...args]);
  }

  /**
   * What the human sees: the client's terminal (trailing spaces trimmed by
   * tmux). With `history`, the program's pane with its scrollback too,
   * then that screen (a notice pi printed long ago is in the pane's
   * history; a modal drawn on the client's terminal is on the screen).
   */
  async capture(options: CaptureOptions = {}): Promise<string> {
    const flags = [...(options.joinWrapped ? ["-J"] : []), ...(options.ansi ? ["-e"] : [])];
    if (options.pane) {
      return (await this.tmux("capture-pane", "-p", "-t", this.target, ...flags)).stdout;
    }
    const screen = (await this.terminal("capture-pane", "-p", "-t", "term:0", ...flags)).stdout;
    if (!options.history) return screen;
    const pane = await this.tmux("capture-pane", "-p", "-t", this.target, "-S", "-", ...flags);
    return `${pane.stdout}\n${screen}`;
  }

  /** The program's own pane (not the client's terminal), e.g. pi's panel while tmux is locked. */
  async capturePane(): Promise<string> {
    return (await this.tmux("capture-pane", "-p", "-t", this.target)).stdout;
  }

  /**
   * Types literal text into the client's terminal, as typed on a keyboard
   * (`send-keys -l` into the terminal server's pane: its pty is the
   * client's tty). `client` names another client from {@link attachClient}.
   */
  async sendText(text: string, client = "term:0"): Promise<void> {
    await this.terminal("send-keys", "-t", client, "-l", "--", text);
  }

  /**
   * Types named keys into the client's terminal, e.g. `"Enter"`,
   * `"Escape"`, `"BSpace"`, `"C-c"`, `"Up"`. Each argument is one tmux key
   * name.
   */
  async sendKeys(...keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.terminal("send-keys", "-t", "term:0", ...keys);
  }

  /**
   * Exit status of the program, or `undefined` while it is running. A
   * program killed by a signal reports 128 + signal number.
   */
  async exitStatus(): Promise<number | undefined> {
    // Ask tmux first: once the pane is dead, tmux has read all output.
    const { stdout } = await this.tmux(
      "display-message",
      "-p",
      "-t",
      this.target,
      "#{pane_dead} #{pane_dead_status} #{pane_dead_signal}",
    );
    const [dead, status, signal] = stdout.trim().split(" ");
    if (dead !== "1") return undefined;
    const recorded = await readFile(this.statusFile, "utf8").catch(() => "");
    if (/^\d+\s*$/.test(recorded)) return Number(recorded);
    // The wrapper itself was killed; tmux may or may not know how.
    if (status) return Number(status);
    return signal ? 128 + Number(signal) : -1;
  }

  /**
   * Polls the screen every ~100 ms until it matches `pattern` (a substring
   * or a regex) and returns that screen. On timeout, or when the program
   * exits first, rejects with an error that includes the last screen.
   */
  async waitFor(
    pattern: RegExp | string,
    timeoutOrOptions: number | WaitOptions = {},
  ): Promise<string> {
    return await this.waitUntil(
      (screen) => matches(screen, pattern),
      describe(pattern),
      timeoutOrOptions,
    );
  }

  /** Like {@link waitFor}, but waits until `pattern` is no longer shown. */
  async waitForGone(
    pattern: RegExp | string,
    timeoutOrOptions: number | WaitOptions = {},
  ): Promise<string> {
    return await this.waitUntil(
      (screen) => !matches(screen, pattern),
      `absence of ${describe(pattern)}`,
      timeoutOrOptions,
    );
  }

  /**
   * Polls the screen until `predicate` holds; `what` names the condition in
   * the timeout error.
   */
  async waitUntil(
    predicate: (screen: string) => boolean,
    what: string,
    timeoutOrOptions: number | WaitOptions = {},
  ): Promise<string> {
    const options: WaitOptions = typeof timeoutOrOptions === "number"
      ? { timeoutMs: timeoutOrOptions }
      : timeoutOrOptions;
    const timeoutMs = options.timeoutMs ?? 10_000;
    const started = Date.now();
    const deadline = started + timeoutMs;
    let screen = "";
    for (;;) {
      screen = await this.capture(options);
      if (predicate(screen)) return screen;
      if (options.failOnExit !== false) {
        const status = await this.exitStatus();
        if (status !== undefined) {
          // tmux 3.3a scrolls the dead pane's screen into the history when it
          // prints "Pane is dead", so look at the history too.
          screen = await this.capture({ ...options, history: true });
          if (predicate(screen)) return screen;
          throw new Error(
            `tmux: program exited (status ${status}) while waiting for ${what}` +
              ` after ${Date.now() - started} ms; last screen:\n${frame(screen)}`,
          );
        }
      }
      if (Date.now() >= deadline) break;
      await sleep(Math.min(POLL_INTERVAL_MS, Math.max(0, deadline - Date.now())));
    }
    throw new Error(
      `tmux: timed out after ${timeoutMs} ms waiting for ${what}; last screen:\n${frame(screen)}`,
    );
  }

  /** Resizes the terminal (the client's, which tmux then gives the program's window). */
  async resize(cols: number, rows: number): Promise<void> {
    await this.terminal("resize-window", "-t", "term:0", "-x", String(cols), "-y", String(rows));
  }

  /**
   * Stops everything: kills the tmux server (SIGHUP to the program), then
   * SIGKILLs the pane's process group if it is still alive after `graceMs`
   * (children that left the group, e.g. pi's detached tool processes, are
   * the program's own business), and removes
   * the temporary directory. Safe to call twice; never throws.
   */
  async kill(graceMs = 2_000): Promise<void> {
    if (this.killed) return;
    this.killed = true;
    await this.terminal("kill-server").catch(() => {});
    await this.tmux("kill-server").catch(() => {});
    const deadline = Date.now() + graceMs;
    while (groupExists(this.pid) && Date.now() < deadline) {
      await sleep(50);
    }
    if (groupExists(this.pid)) {
      try {
        process.kill(-this.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await rm(this.dir, { recursive: true, force: true }).catch(() => {});
  }
}

/** Frames a screen dump so it stands out in an error message. */
export function frame(screen: string): string {
  const rule = "-".repeat(40);
  return `${rule}\n${screen.replace(/\n+$/, "")}\n${rule}`;
}
