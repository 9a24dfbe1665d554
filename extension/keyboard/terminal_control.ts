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
import process from "node:process";
import { loadLibc } from "../../kernel/libc.ts";

/** Named reasons a switch could not be read or set. */
export const TERMINAL_CONTROL_ERRORS = {
  FFI_UNAVAILABLE: "ffi_unavailable",
  IOCTL_FAILED: "ioctl_failed",
  PRCTL_FAILED: "prctl_failed",
} as const;

/** One of the values of {@link TERMINAL_CONTROL_ERRORS}. */
export type TerminalControlError =
  typeof TERMINAL_CONTROL_ERRORS[keyof typeof TERMINAL_CONTROL_ERRORS];

/** A switch result: the state after the call, or why it failed. */
export type SwitchResult =
  | { readonly ok: true; readonly on: boolean }
  | { readonly ok: false; readonly reason: TerminalControlError; readonly errno?: number };

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

interface Calls {
  syscall5(nr: number, a: number, b: number, c: number, d: number, e: number): number;
  ioctlInt(fd: number, request: number, arg: number): number;
  ioctlOut(fd: number, request: number, out: Int32Array): number;
  prctl(option: number, arg: number): number;
  errno(): number;
}

let calls: Calls | null | undefined;

function load(): Calls | null {
  if (calls !== undefined) return calls;
  const c = loadLibc();
  if (!c) return calls = null;
  try {
    // ioctl and prctl are variadic in C; koffi passes the extra arguments
    // with the types given per call.
    const ioctl = c.lib.func("int ioctl(int, unsigned long, ...)");
    const prctl = c.lib.func("int prctl(int, ...)");
    const syscall = c.lib.func("long syscall(long, ...)");
    calls = {
      syscall5: (nr, a, b, cc, d, e) =>
        Number(syscall(nr, "long", a, "long", b, "long", cc, "long", d, "long", e)),
      ioctlInt: (fd, request, arg) => ioctl(fd, request, "long", arg),
      ioctlOut: (fd, request, out) => ioctl(fd, request, "_Out_ int *", out),
      prctl: (option, arg) => prctl(option, "unsigned long", arg),
      errno: c.errno,
    };
  } catch {
    calls = null;
  }
  return calls;
}

/**
 * Sets (`on`) or clears exclusive mode on the terminal open on `fd`. The
 * flag belongs to the terminal, not the descriptor: any holder can clear it.
 */
export function setTerminalExclusive(fd: number, on: boolean): SwitchResult {
  const c = load();
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
  const c = load();
  if (!c) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE };
  if (c.ioctlInt(fd, TCFLSH, TCIFLUSH) !== 0) {
    return { ok: false, reason: TERMINAL_CONTROL_ERRORS.IOCTL_FAILED, errno: c.errno() };
  }
  return { ok: true, on: false };
}

/** Whether the terminal open on `fd` is in exclusive mode (`TIOCGEXCL`). */
export function terminalExclusive(fd: number): SwitchResult {
  const c = load();
  if (!c) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE };
  const out = new Int32Array(1);
  if (c.ioctlOut(fd, TIOCGEXCL, out) !== 0) {
    return { ok: false, reason: TERMINAL_CONTROL_ERRORS.IOCTL_FAILED, errno: c.errno() };
  }
  return { ok: true, on: out[0] !== 0 };
}

/** Makes this process dumpable (`on`) or not. `execve` makes children dumpable again. */
export function setDumpable(on: boolean): SwitchResult {
  const c = load();
  if (!c) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE };
  if (c.prctl(PR_SET_DUMPABLE, on ? 1 : 0) !== 0) {
    return { ok: false, reason: TERMINAL_CONTROL_ERRORS.PRCTL_FAILED, errno: c.errno() };
  }
  return dumpable();
}

/** Whether this process is dumpable (`PR_GET_DUMPABLE`). */
export function dumpable(): SwitchResult {
  const c = load();
  if (!c) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.FFI_UNAVAILABLE };
  const v = c.prctl(PR_GET_DUMPABLE, 0);
  if (v < 0) return { ok: false, reason: TERMINAL_CONTROL_ERRORS.PRCTL_FAILED, errno: c.errno() };
  return { ok: true, on: v !== 0 };
}

const KCMP_FILES = 2;
/** `kcmp` is 312 on x86_64 and 272 on the generic table (arm64, riscv64). */
const SYS_KCMP = process.arch === "x64" ? 312 : 272;

/**
 * Whether tasks `a` and `b` share one file-descriptor table (`kcmp`
 * `KCMP_FILES`). A thread made without `CLONE_FILES` has its own table,
 * visible only under `/proc/<pid>/task/<tid>/fd`; `undefined` when the
 * kernel would not say (no FFI, no permission): the caller reads that table.
 */
export function sharesFileTable(a: number, b: number): boolean | undefined {
  const c = load();
  if (!c) return undefined;
  const r = c.syscall5(SYS_KCMP, a, b, KCMP_FILES, 0, 0);
  return r === 0 ? true : r > 0 ? false : undefined;
}
