/**
 * The two kernel switches that keep pi's keyboard to pi: a terminal in
 * exclusive mode (`TIOCEXCL`: no process without CAP_SYS_ADMIN can open it
 * again, to read or to draw) and a non-dumpable pi (`PR_SET_DUMPABLE` 0: no
 * process of the user can ptrace it, read its memory or copy its descriptors
 * with `pidfd_getfd`). Node has neither, so this calls libc through koffi.
 *
 * Every function reports a typed result; without FFI they report
 * {@link TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE} and the caller decides how
 * to fail closed.
 *
 * @module
 */
import { libc } from "../../kernel/libc.ts";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";

/** Named reasons a switch could not be read or set. */
export const TERMINAL_CONTROL_ERRORS = reasons("ffi_unavailable", "ioctl_failed", "prctl_failed");

/** One of the values of {@link TERMINAL_CONTROL_ERRORS}. */
export type TerminalControlError = ReasonOf<typeof TERMINAL_CONTROL_ERRORS>;

/** A switch result: the state after the call, or why it failed. */
export type SwitchResult = Result<{ on: boolean }, TerminalControlError, { errno?: number }>;

// asm-generic/ioctls.h values, the same on x86_64, arm64 and riscv64 (the
// architectures libc.ts accepts).
const TIOCEXCL = 0x540c;
const TIOCNXCL = 0x540d;
const TCFLSH = 0x540b;
const TCIFLUSH = 0;
/** `_IOR('T', 0x40, int)`. */
const TIOCGEXCL = 0x80045440;
const PR_GET_DUMPABLE = 3;
const PR_SET_DUMPABLE = 4;

/**
 * Sets (`on`) or clears exclusive mode on the terminal open on `fd`. The
 * flag belongs to the terminal, not the descriptor: any holder can clear it.
 */
export function setTerminalExclusive(fd: number, on: boolean): SwitchResult {
  const c = libc();
  if (!c) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE };
  if (c.ioctlInt(fd, on ? TIOCEXCL : TIOCNXCL, 0) !== 0) {
    return { ok: false, reason: TERMINAL_CONTROL_ERRORS.IOCTL_FAILED, errno: c.errno() };
  }
  return { ok: true, on };
}

/**
 * Drops what was typed on the terminal open on `fd` and not yet read
 * (`TCFLSH`, `TCIFLUSH`): keys typed at a modal that is gone must not reach
 * whatever reads the terminal next.
 */
export function flushTerminalInput(fd: number): SwitchResult {
  const c = libc();
  if (!c) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE };
  if (c.ioctlInt(fd, TCFLSH, TCIFLUSH) !== 0) {
    return { ok: false, reason: TERMINAL_CONTROL_ERRORS.IOCTL_FAILED, errno: c.errno() };
  }
  return { ok: true, on: false };
}

/** Whether the terminal open on `fd` is in exclusive mode (`TIOCGEXCL`). */
export function terminalExclusive(fd: number): SwitchResult {
  const c = libc();
  if (!c) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE };
  const out = new Int32Array(1);
  if (c.ioctlOut(fd, TIOCGEXCL, out) !== 0) {
    return { ok: false, reason: TERMINAL_CONTROL_ERRORS.IOCTL_FAILED, errno: c.errno() };
  }
  return { ok: true, on: out[0] !== 0 };
}

/** Makes this process dumpable (`on`) or not. `execve` makes children dumpable again. */
export function setDumpable(on: boolean): SwitchResult {
  const c = libc();
  if (!c) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE };
  if (c.prctl(PR_SET_DUMPABLE, on ? 1 : 0) !== 0) {
    return { ok: false, reason: TERMINAL_CONTROL_ERRORS.PRCTL_FAILED, errno: c.errno() };
  }
  return dumpable();
}

/** Whether this process is dumpable (`PR_GET_DUMPABLE`). */
export function dumpable(): SwitchResult {
  const c = libc();
  if (!c) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE };
  const v = c.prctl(PR_GET_DUMPABLE, 0);
  if (v < 0) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.PRCTL_FAILED, errno: c.errno() };
  return { ok: true, on: v !== 0 };
}
