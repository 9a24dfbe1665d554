/**
 * The two kernel switches that keep pi's keyboard to pi (ADR 0007): exclusive
 * mode (`TIOCEXCL`) and a non-dumpable pi (`PR_SET_DUMPABLE` 0), through libc
 * (koffi). Without FFI every function reports `ffi_unavailable`, and the caller
 * decides how to fail closed.
 *
 * @module
 */
import { libc, type LibcCalls } from "../../kernel/libc.ts";
import { DUMPABLE_PRCTL, TTY_IOCTL } from "../../kernel/tty_ioctls.ts";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";

/** Named reasons a switch could not be read or set. */
export const TERMINAL_CONTROL_ERRORS = reasons("ffi_unavailable", "ioctl_failed", "prctl_failed");

/** One of the values of {@link TERMINAL_CONTROL_ERRORS}. */
export type TerminalControlError = ReasonOf<typeof TERMINAL_CONTROL_ERRORS>;
const { IOCTL_FAILED, PRCTL_FAILED } = TERMINAL_CONTROL_ERRORS;

/** A switch result: the state after the call, or why it failed. */
export type SwitchResult = Result<{ on: boolean }, TerminalControlError>;

/** One libc call: `run` returns the state, or `undefined` for `failure`. */
function viaLibc(
  failure: TerminalControlError,
  run: (c: LibcCalls) => boolean | undefined,
): SwitchResult {
  const c = libc();
  if (!c) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE };
  const on = run(c);
  return on === undefined ? { ok: false, reason: failure } : { ok: true, on };
}

/** Sets or clears exclusive mode; the flag is the terminal's, so any holder can clear it. */
export function setTerminalExclusive(fd: number, on: boolean): SwitchResult {
  const request = on ? TTY_IOCTL.TIOCEXCL : TTY_IOCTL.TIOCNXCL;
  return viaLibc(IOCTL_FAILED, (c) => c.ioctlInt(fd, request, 0) === 0 ? on : undefined);
}

/** Drops unread input (`TCIFLUSH`): keys typed at a gone modal must reach no later reader. */
export function flushTerminalInput(fd: number): void {
  libc()?.ioctlInt(fd, TTY_IOCTL.TCFLSH, TTY_IOCTL.TCIFLUSH);
}

/** Whether the terminal open on `fd` is in exclusive mode (`TIOCGEXCL`). */
export function terminalExclusive(fd: number): SwitchResult {
  const out = new Int32Array(1);
  return viaLibc(
    IOCTL_FAILED,
    (c) => c.ioctlOut(fd, TTY_IOCTL.TIOCGEXCL, out) === 0 ? out[0] !== 0 : undefined,
  );
}

/** Makes this process dumpable (`on`) or not. `execve` makes children dumpable again. */
export function setDumpable(on: boolean): SwitchResult {
  const set = viaLibc(
    PRCTL_FAILED,
    (c) => c.prctl(DUMPABLE_PRCTL.SET, on ? 1 : 0) === 0 ? on : undefined,
  );
  return set.ok ? dumpable() : set;
}

/** Whether this process is dumpable (`PR_GET_DUMPABLE`). */
export function dumpable(): SwitchResult {
  return viaLibc(PRCTL_FAILED, (c) => {
    const v = c.prctl(DUMPABLE_PRCTL.GET, 0);
    return v < 0 ? undefined : v !== 0;
  });
}
