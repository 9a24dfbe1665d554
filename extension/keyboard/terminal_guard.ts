/**
 * Folder `extension/keyboard/`: only pi reads the keys (ADR 0007).
 *
 * Keeps pi's keyboard to pi for the life of the process, one guard per
 * process (`guard_state.ts`):
 *
 * - pi becomes non-dumpable and its terminal exclusive (`terminal_control.ts`;
 *   `PI_SUDO_PROMPT_DUMPABLE=1` keeps pi dumpable for debugging);
 * - a guardian process (`terminal_guardian.ts`) holds the terminal too and
 *   releases it only when the user's shell takes it back: after the human's
 *   own Ctrl+Z, or once pi has ended (even by SIGKILL). A stop the human did
 *   not ask for (an agent's SIGTSTP or SIGSTOP) keeps the terminal exclusive;
 * - a job-control signal never leaves a modal behind (docs/adr/0008): on
 *   SIGTSTP pi denies what is pending, erases the modal and drops the keys
 *   typed at it before it stops; for SIGSTOP and SIGKILL, which pi cannot
 *   catch, the guardian does the erasing, and on SIGCONT pi denies whatever
 *   was pending while it was stopped.
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
  /** The guardian runs the root-owned deno and sources (hardened mode). */
  readonly guardianRootOwned: boolean;
  /** Why something above is off (one line each). */
  readonly problems: readonly string[];
}

/**
 * Tells the guard that a modal opened (`true`) or closed (`false`): the
 * guardian erases the screen if pi stops or dies while one shows.
 */
export function noteModal(open: boolean): void {
  const s = state();
  const before = s.modals;
  s.modals = Math.max(0, s.modals + (open ? 1 : -1));
  if (s.quittingWithModal) return;
  if ((before === 0) !== (s.modals === 0)) tellGuardian(s, s.modals > 0 ? "modal on" : "modal off");
}

/**
 * pi is quitting (SIGHUP, SIGTERM) while a modal shows: its denial closes the
 * modal, but its image may stay on the screen pi leaves behind, so the
 * guardian is told that a modal still shows and erases it, with typed keys
 * and echo, once pi has gone (docs/adr/0008).
 */
export function quittingWithModal(): void {
  const s = state();
  if (s.modals === 0 || s.quittingWithModal) return;
  s.quittingWithModal = true;
  tellGuardian(s, "modal on");
  // pi's TUI would restore echo on its way out, and a password typed at the
  // modal's image would show: the terminal stays raw (no echo), as after a
  // SIGKILL, and what was typed is dropped.
  flushTerminalInput(0);
  if (process.stdin.isTTY) {
    reapplyRawMode();
    const stdin = process.stdin as { setRawMode(on: boolean): unknown; resume(): unknown };
    stdin.setRawMode = () => process.stdin;
    // Nor may pi's editor take keys meant for the modal (and show them, or
    // send them on Enter): pi reads no more input; the guardian drops it.
    process.stdin.pause();
    stdin.resume = () => process.stdin;
  }
}

/**
 * `deny` runs (synchronously) when pi is about to stop and when it runs
 * again: a request pending across a stop is denied (docs/adr/0008). Returns
 * the function that removes it.
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

/** Sets or clears raw mode on pi's stdin, when it is a terminal. */
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
 * Starts the guard once per process (later calls wait for the first).
 * Resolves when pi is non-dumpable and its terminal exclusive, or when it is
 * known why not (see {@link terminalGuardStatus}). Never throws.
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
 * SIGHUP and SIGTERM make pi quit, and pi's own handler first kills the tool
 * calls (so their sudo and helper die, and the modal closes on the next turn
 * of the event loop) and only then, asynchronously, tells extensions. So the
 * modal is judged open or not here, in the same synchronous emit, right after
 * pi's handler (which pi prepends): a modal open at the signal keeps the
 * terminal raw and the keys dropped. Where pi has no handler of its own for
 * the signal, it is raised again, so it still ends pi.
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
 * The live guardian, by pid and start time: the one process besides pi and
 * its ancestors that the holder scan does not count. A dead guardian's pid is
 * not exempt, even when another process gets it.
 */
export function liveGuardian(): { readonly pid: number; readonly startTime: bigint } | undefined {
  const s = state();
  if (!s.guardian || s.guardian.exitCode !== null || s.guardian.signalCode !== null) return;
  const pid = s.guardian.pid;
  if (pid === undefined || s.guardianStart === undefined) return;
  return { pid, startTime: s.guardianStart };
}

async function start(s: GuardState): Promise<void> {
  if (process.platform !== "linux") {
    s.problems.push(msg.guardNotLinux);
    return;
  }
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
  // First in line: while pi's TUI owns the terminal it listens too, restores
  // the terminal and sends SIGTSTP again; so a SIGTSTP that finds its
  // listener still there came from outside pi, not from the human's Ctrl+Z.
  process.prependListener("SIGTSTP", () => {
    if (process.listenerCount("SIGTSTP") > 1) {
      s.external = true;
      return;
    }
    const hadModal = s.modals > 0;
    denyPending(s);
    if (hadModal) {
      // The TUI is stopped: the modal's image is erased here, the keys typed
      // at it dropped, and echo kept off (a password typed blindly is not
      // shown); the guardian keeps dropping keys until pi or the user's shell
      // reads the terminal again.
      flushTerminalInput(0);
      rawMode(true);
      try {
        writeSync(1, `\x1b[0m\x1b[2J\x1b[3J\x1b[H${msg.stoppedWithModal}\r\n`);
      } catch { /* a terminal that is gone shows nothing anyway */ }
      tellGuardian(s, "scrub");
    }
    // The human's Ctrl+Z: the shell that takes over must be able to open the
    // terminal (sudo, ssh); the guardian releases it once the shell has it.
    // A SIGTSTP from outside keeps it exclusive: `fg` still works.
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
    // Whatever was pending while pi was stopped (SIGSTOP gives no warning),
    // and whatever was typed meanwhile: not for pi's editor.
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
