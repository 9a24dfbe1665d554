/**
 * Folder `extension/keyboard/`: only pi reads the keys (ADR 0007).
 *
 * Keeps pi's keyboard to pi for the life of the process (ADR 0007):
 *
 * - pi becomes non-dumpable (`PR_SET_DUMPABLE` 0), so no process of the user
 *   can ptrace it, read `/proc/<pi>/mem` or copy its terminal descriptor
 *   with `pidfd_getfd` (`PI_SUDO_PROMPT_DUMPABLE=1` turns this off for
 *   debugging);
 * - pi's terminal goes into exclusive mode (`TIOCEXCL`), so no process
 *   without CAP_SYS_ADMIN can open it again, to read keys or to draw;
 * - a guardian process (`terminal_guardian.ts`) holds the terminal too and
 *   takes it out of exclusive mode when pi dies, even by SIGKILL; pi itself
 *   does so on a normal exit and while it is suspended (Ctrl+Z).
 *
 * The guard is one per process, not per session: it is kept on `globalThis`
 * so that `/reload` (which imports the extension afresh) and `/new` find the
 * same one.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fstatSync, readFileSync, readlinkSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isatty } from "node:tty";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { guardianArgv } from "./guardian_permissions.ts";
import { parseStat } from "../../kernel/proc.ts";
import { resolveDenoBinary } from "../channel/deno_binary.ts";
import {
  dumpable,
  setDumpable,
  setTerminalExclusive,
  terminalExclusive,
} from "./terminal_control.ts";

/** The variable that keeps pi dumpable, for debugging with gdb or strace. */
export const DUMPABLE_SWITCH = "PI_SUDO_PROMPT_DUMPABLE";

/** How long the guardian may take to start and to take the terminal. */
const GUARDIAN_START_MS = 15_000;
/** Respawns of a guardian that died, at most this many per minute. */
const MAX_RESPAWNS_PER_MINUTE = 3;

/** The one-line command that releases a terminal left exclusive (for notices and docs). */
export const RELEASE_COMMAND = "perl -e 'ioctl(STDIN, 0x540D, 0)'";

/** What the guard achieved; shown by `/sudo-prompt status` and `doctor`. */
export interface TerminalGuardStatus {
  /** The guard was started in this process (it is, in interactive pi). */
  readonly started: boolean;
  /** The terminal pi reads keys from (`/dev/pts/N`), when stdin is one. */
  readonly ttyPath: string | undefined;
  /** Its device number (`st_rdev`). */
  readonly rdev: number | undefined;
  /** Exclusive mode is on right now. */
  readonly exclusive: boolean;
  /** pi is non-dumpable right now. */
  readonly nonDumpable: boolean;
  /** Non-dumpable was turned off on purpose with {@link DUMPABLE_SWITCH}. */
  readonly dumpableByChoice: boolean;
  /** pid of the live guardian, if any. */
  readonly guardianPid: number | undefined;
  /** Why something above is off (one line each). */
  readonly problems: readonly string[];
}

interface GuardState {
  ttyPath?: string;
  rdev?: number;
  guardian?: ChildProcess;
  guardianPid?: number;
  /** The live guardian's start time (`stat` field 22), so a reused pid is never exempt. */
  guardianStart?: bigint;
  dumpableByChoice: boolean;
  problems: string[];
  respawns: number[];
  exiting: boolean;
  started?: Promise<void>;
}

const KEY = Symbol.for("pi-sudo-prompt.terminal-guard");

function state(): GuardState {
  const g = globalThis as unknown as Record<symbol, GuardState | undefined>;
  return g[KEY] ??= {
    dumpableByChoice: false,
    problems: [],
    respawns: [],
    exiting: false,
  };
}

/**
 * Starts the guard once per process (later calls wait for the first).
 * Resolves when pi is non-dumpable and its terminal exclusive, or when it is
 * known why not (see {@link terminalGuardStatus}). Never throws.
 */
export function startTerminalGuard(): Promise<void> {
  const s = state();
  s.started ??= start(s).catch((e) => {
    s.problems.push(`terminal guard failed: ${String((e as Error)?.message ?? e).slice(0, 200)}`);
  });
  return s.started;
}

/** The guard's current state (reads the kernel's view of both switches). */
export function terminalGuardStatus(): TerminalGuardStatus {
  const s = state();
  const excl = s.ttyPath ? terminalExclusive(0) : undefined;
  const dump = dumpable();
  return {
    started: s.started !== undefined,
    ttyPath: s.ttyPath,
    rdev: s.rdev,
    exclusive: excl?.ok === true && excl.on,
    nonDumpable: dump.ok && !dump.on,
    dumpableByChoice: s.dumpableByChoice,
    guardianPid: s.guardian && s.guardian.exitCode === null ? s.guardianPid : undefined,
    problems: [...s.problems],
  };
}

/**
 * The live guardian, by pid and start time: the one process besides pi and
 * its ancestors that the holder scan does not count. A dead guardian's pid is
 * not exempt, even when another process gets it.
 */
export function liveGuardian(): { readonly pid: number; readonly startTime: bigint } | undefined {
  const s = state();
  if (!s.guardian || s.guardian.exitCode !== null || s.guardian.signalCode !== null) return;
  if (s.guardianPid === undefined || s.guardianStart === undefined) return;
  return { pid: s.guardianPid, startTime: s.guardianStart };
}

async function start(s: GuardState): Promise<void> {
  if (process.platform !== "linux") {
    s.problems.push("not Linux: no exclusive terminal, pi stays dumpable");
    return;
  }
  if (process.env[DUMPABLE_SWITCH] === "1") {
    s.dumpableByChoice = true;
  } else {
    const r = setDumpable(false);
    if (!r.ok || r.on) {
      s.problems.push(`pi could not be made non-dumpable (${r.ok ? "still dumpable" : r.reason})`);
    }
  }
  const tty = terminalOf(0);
  if (!tty) {
    s.problems.push("stdin is not a terminal: nothing to make exclusive");
    return;
  }
  s.ttyPath = tty.path;
  s.rdev = tty.rdev;
  // Register the releases before the terminal becomes exclusive.
  process.once("exit", () => {
    s.exiting = true;
    setTerminalExclusive(0, false);
  });
  process.on("SIGTSTP", () => {
    // pi suspends itself (Ctrl+Z) with SIGTSTP to its group; the shell that
    // takes over must be able to open the terminal (sudo, ssh). Stop for real
    // once it is released; SIGCONT sets it again.
    setTerminalExclusive(0, false);
    process.kill(process.pid, "SIGSTOP");
  });
  process.on("SIGCONT", () => {
    if (!s.exiting) setTerminalExclusive(0, true);
  });
  await spawnGuardian(s);
  const now = terminalExclusive(0);
  if (!now.ok || !now.on) {
    // Without a guardian pi still takes the terminal: a SIGKILL then leaves
    // it exclusive, which the notice explains how to undo.
    const r = setTerminalExclusive(0, true);
    if (!r.ok) s.problems.push(`the terminal could not be made exclusive (${r.reason})`);
  }
}

/** The terminal open on `fd`: its path and device number, if it is one. */
function terminalOf(fd: number): { path: string; rdev: number } | undefined {
  try {
    // A character device is not enough: /dev/null is one too.
    if (!isatty(fd)) return undefined;
    const st = fstatSync(fd);
    if (!st.isCharacterDevice()) return undefined;
    const path = readlinkSync(`/proc/self/fd/${fd}`);
    return /^\/dev\/[a-z0-9/]+$/.test(path) ? { path, rdev: st.rdev } : undefined;
  } catch {
    return undefined;
  }
}

/** `stat` field 22 of `pid` (a small world-readable file, read once per guardian). */
function startTimeOf(pid: number | undefined): bigint | undefined {
  if (pid === undefined) return undefined;
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "latin1"))?.startTime;
  } catch {
    return undefined;
  }
}

/** The libc pi has mapped: the guardian may load exactly that file. */
function libcPath(): string | undefined {
  try {
    const maps = readFileSync("/proc/self/maps", "utf8");
    const m = /\s(\/\S*\/libc\.so\.6)$/m.exec(maps);
    return m?.[1];
  } catch {
    return undefined;
  }
}

async function spawnGuardian(s: GuardState): Promise<void> {
  const deno = await resolveDenoBinary();
  const libc = libcPath();
  if (!deno || !libc || !s.ttyPath) {
    s.problems.push("terminal guardian unavailable (no deno binary or libc path)");
    return;
  }
  const guardianPath = await realpath(
    fileURLToPath(new URL("./terminal_guardian.ts", import.meta.url)),
  );
  const denoDir = await mkdtemp(join(tmpdir(), "pi-sudo-prompt-guardian-"));
  let child: ChildProcess;
  try {
    const [cmd, ...args] = guardianArgv(deno, guardianPath, libc, s.ttyPath);
    child = spawn(cmd, args, {
      stdio: ["pipe", "pipe", "ignore"],
      detached: true, // its own session: no job-control signals from pi's terminal
      env: { DENO_DIR: denoDir, NO_COLOR: "1" },
    });
  } catch (e) {
    await rm(denoDir, { recursive: true, force: true });
    s.problems.push(`terminal guardian did not start (${(e as Error).message})`);
    return;
  }
  const ok = await handshake(child).finally(() => rm(denoDir, { recursive: true, force: true }));
  if (!ok) {
    child.kill("SIGKILL");
    s.problems.push(
      "terminal guardian did not take the terminal; if pi is killed, run " + RELEASE_COMMAND,
    );
    return;
  }
  s.guardian = child;
  s.guardianPid = child.pid;
  s.guardianStart = startTimeOf(child.pid);
  // Neither the child nor its pipes may keep pi's event loop alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void })?.unref?.();
  (child.stdout as unknown as { unref?: () => void })?.unref?.();
  child.once("exit", () => {
    if (s.exiting || s.guardian !== child) return;
    s.guardian = undefined;
    s.guardianPid = undefined;
    s.guardianStart = undefined;
    const now = Date.now();
    s.respawns = s.respawns.filter((t) => now - t < 60_000);
    if (s.respawns.length >= MAX_RESPAWNS_PER_MINUTE) {
      s.problems.push("terminal guardian keeps dying; if pi is killed, run " + RELEASE_COMMAND);
      return;
    }
    s.respawns.push(now);
    void spawnGuardian(s);
  });
}

/**
 * `ready` → (clear exclusive mode if set, so it can open) `open` → `held`.
 * The terminal is non-exclusive only between our clear and its open, a
 * pipe round trip; the holder scan before every modal covers that moment.
 */
function handshake(child: ChildProcess): Promise<boolean> {
  return new Promise((resolve) => {
    let buffer = "";
    let stage: "ready" | "held" = "ready";
    const done = (ok: boolean) => {
      clearTimeout(timer);
      child.stdout?.removeAllListeners("data");
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), GUARDIAN_START_MS);
    child.once("error", () => done(false));
    child.once("exit", () => done(false));
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      if (buffer.length > 256) return done(false);
      while (buffer.includes("\n")) {
        const line = buffer.slice(0, buffer.indexOf("\n"));
        buffer = buffer.slice(line.length + 1);
        if (stage === "ready" && line === "ready") {
          stage = "held";
          const excl = terminalExclusive(0);
          if (excl.ok && excl.on) setTerminalExclusive(0, false);
          child.stdin?.write("open\n");
        } else if (stage === "held" && line === "held") {
          return done(true);
        } else {
          return done(false);
        }
      }
    });
  });
}
