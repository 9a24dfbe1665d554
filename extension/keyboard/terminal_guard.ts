/**
 * Folder `extension/keyboard/`: only pi reads the keys (ADR 0007, 0009).
 *
 * Keeps pi's keyboard to pi for the life of the process: pi non-dumpable, its
 * terminal exclusive, a guardian (`terminal_guardian.ts`) that releases it only
 * when the user's shell takes it back, and no job-control signal leaving a modal
 * behind (ADR 0008).
 *
 * @module
 */
import { fstatSync, readlinkSync, writeSync } from "node:fs";
import { isatty } from "node:tty";
import process from "node:process";
import { spawnGuardian } from "./guardian_process.ts";
import { type GuardState, state, tellGuardian } from "./guard_state.ts";
import { markSelf } from "../../kernel/provenance.ts";
import {
  dumpable,
  flushTerminalInput,
  setDumpable,
  setTerminalExclusive,
  terminalExclusive,
} from "./terminal_control.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** The variable that keeps pi dumpable, for debugging with gdb or strace. */
export const DUMPABLE_SWITCH = "PI_SUDO_PROMPT_DUMPABLE";

/** What the guard achieved; shown by `/sudo-prompt status` and `doctor`. */
export interface TerminalGuardStatus {
  readonly started: boolean;
  /** The terminal pi reads keys from (`/dev/pts/N`), when stdin is one. */
  readonly ttyPath: string | undefined;
  readonly rdev: number | undefined;
  readonly exclusive: boolean;
  readonly nonDumpable: boolean;
  /** Non-dumpable was turned off on purpose with {@link DUMPABLE_SWITCH}. */
  readonly dumpableByChoice: boolean;
  readonly guardianPid: number | undefined;
  readonly guardianRootOwned: boolean;
  /** Why something above is off (one line each). */
  readonly problems: readonly string[];
}

/** A modal opened or closed: the guardian erases the screen if pi stops or dies while one shows. */
export function noteModal(open: boolean): void {
  const s = state();
  const before = s.modals;
  s.modals = Math.max(0, s.modals + (open ? 1 : -1));
  if (s.quittingWithModal) return;
  if ((before === 0) !== (s.modals === 0)) tellGuardian(s, s.modals > 0 ? "modal on" : "modal off");
}

/**
 * pi quits (SIGHUP, SIGTERM) with a modal shown, whose image may stay on the
 * screen: the guardian erases it, with typed keys and echo, once pi has gone (ADR 0008).
 */
export function quittingWithModal(): void {
  const s = state();
  if (s.modals === 0 || s.quittingWithModal) return;
  s.quittingWithModal = true;
  tellGuardian(s, "modal on");
  // pi's TUI would restore echo on its way out, showing a password typed at the
  // modal's image: the terminal stays raw, as after a SIGKILL; typed keys are dropped.
  flushTerminalInput(0);
  if (process.stdin.isTTY) {
    reapplyRawMode();
    const stdin = process.stdin as { setRawMode(on: boolean): unknown; resume(): unknown };
    stdin.setRawMode = () => process.stdin;
    // Nor may pi's editor take (show, send) keys meant for the modal: the guardian drops them.
    process.stdin.pause();
    stdin.resume = () => process.stdin;
  }
}

/**
 * `deny` runs (synchronously) when pi is about to stop and when it runs again: a
 * request pending across a stop is denied (ADR 0008). Returns its remover.
 */
export function onStopOrResume(deny: () => void): () => void {
  const s = state();
  s.stopListeners.add(deny);
  return () => s.stopListeners.delete(deny);
}

function denyPending(s: GuardState): void {
  for (const deny of s.stopListeners) {
    try {
      deny();
    } catch { /* one session's failure must not keep pi from stopping */ }
  }
}

function rawMode(on: boolean): void {
  try {
    if (process.stdin.isTTY) process.stdin.setRawMode(on);
  } catch { /* not a terminal any more */ }
}

/** Raw mode again: Node skips a mode it believes set, so off, then on, re-applies it. */
function reapplyRawMode(): void {
  rawMode(false);
  rawMode(true);
}

/**
 * Starts the guard once per process; resolves when pi is non-dumpable and its
 * terminal exclusive, or it is known why not ({@link terminalGuardStatus}).
 */
export function startTerminalGuard(): Promise<void> {
  const s = state();
  if (s.started === undefined) watchQuitSignals();
  s.started ??= start(s).catch((e) => {
    s.problems.push(msg.guardFailed(String((e as Error)?.message ?? e).slice(0, 200)));
  });
  return s.started;
}

/**
 * Decides "quitting with a modal" in the signal's own emit, right after pi's
 * handler and before the modal closes (ADR 0008, "SIGHUP and SIGTERM with a
 * modal open"). Where pi has no handler of its own, the signal is raised again.
 */
function watchQuitSignals(): void {
  for (const signal of ["SIGHUP", "SIGTERM"] as const) {
    const onSignal = () => {
      quittingWithModal();
      if (process.listenerCount(signal) === 1) {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/** pi's mark (`kernel/provenance.ts`): what every process pi starts inherits. */
export function processMark(): bigint | undefined {
  return state().mark;
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
    guardianPid: s.guardian?.exitCode === null ? s.guardian.pid : undefined,
    guardianRootOwned: s.guardianRootOwned === true,
    problems: [...s.problems],
  };
}

/**
 * The live guardian, by pid and start time: besides pi and its ancestors, the one
 * process the holder scan does not count; a dead guardian's reused pid is counted.
 */
export function liveGuardian(): { readonly pid: number; readonly startTime: bigint } | undefined {
  const s = state();
  if (!s.guardian || s.guardian.exitCode !== null || s.guardian.signalCode !== null) return;
  const pid = s.guardian.pid;
  if (pid === undefined || s.guardianStart === undefined) return;
  return { pid, startTime: s.guardianStart };
}

async function start(s: GuardState): Promise<void> {
  // Before the first tool call: every process pi starts carries the mark (ADR 0009 §2).
  s.mark = markSelf();
  s.dumpableByChoice = process.env[DUMPABLE_SWITCH] === "1";
  const r = s.dumpableByChoice ? undefined : setDumpable(false);
  if (r && (!r.ok || r.on)) {
    s.problems.push(msg.guardNotNonDumpable(r.ok ? msg.guardStillDumpable : r.reason));
  }
  const tty = terminalOf(0);
  if (!tty) {
    s.problems.push(msg.guardNoTerminal);
    return;
  }
  [s.ttyPath, s.rdev] = [tty.path, tty.rdev];
  // Register the releases before the terminal becomes exclusive.
  process.once("exit", () => {
    s.exiting = true;
    // With a guardian, the terminal is released once the shell has it back.
    if (!liveGuardian()) setTerminalExclusive(0, false);
  });
  // First in line: a SIGTSTP that finds pi's TUI listener still there came from
  // outside pi, not from the human's Ctrl+Z (ADR 0008).
  process.prependListener("SIGTSTP", () => {
    if (process.listenerCount("SIGTSTP") > 1) {
      s.external = true;
      return;
    }
    const hadModal = s.modals > 0;
    denyPending(s);
    if (hadModal) {
      // Erase the modal, drop its keys, keep echo off (a password typed blindly is
      // not shown); the guardian drops keys until pi or the shell reads again.
      flushTerminalInput(0);
      rawMode(true);
      try {
        writeSync(1, `\x1b[0m\x1b[2J\x1b[3J\x1b[H${msg.stoppedWithModal}\r\n`);
      } catch { /* a terminal that is gone shows nothing anyway */ }
      tellGuardian(s, "scrub");
    }
    // The human's Ctrl+Z: the shell must be able to open the terminal (sudo, ssh);
    // the guardian releases it once the shell has it. From outside: kept exclusive.
    if (!s.external) {
      if (liveGuardian()) tellGuardian(s, "suspend");
      else setTerminalExclusive(0, false);
    }
    s.external = false;
    process.kill(process.pid, "SIGSTOP");
  });
  process.on("SIGCONT", () => {
    s.external = false;
    if (s.exiting) return;
    setTerminalExclusive(0, true);
    tellGuardian(s, "resume");
    // SIGSTOP gives no warning: deny what was pending, drop what was typed meanwhile.
    denyPending(s);
    flushTerminalInput(0);
    // The shell may have set its own modes meanwhile: the TUI's raw mode again.
    if (process.stdin.isTTY && process.stdin.isRaw) reapplyRawMode();
  });
  // Exclusive first, then the guardian, which is handed pi's own descriptor:
  // from here on exclusive mode is never cleared while pi runs (ADR 0009 §3).
  const set = setTerminalExclusive(0, true);
  if (!set.ok) s.problems.push(msg.guardNotExclusive(set.reason));
  await spawnGuardian(s);
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
