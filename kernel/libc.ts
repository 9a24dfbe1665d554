/**
 * libc through koffi, loaded once for the modules that need system calls Node
 * does not expose (`getsockopt`, `pidfd_open`, netlink). koffi is a native
 * addon: it is loaded lazily, so a missing build only disables those paths,
 * and the callers then fail closed.
 *
 * @module
 */
import { createRequire } from "node:module";
import process from "node:process";

/** Architectures whose socket constants the callers use (Linux generic values). */
const SUPPORTED_ARCHES: ReadonlySet<string> = new Set(["x64", "arm64", "riscv64"]);

/** koffi's loaded library: declares a C function from its prototype. */
export interface KoffiLibrary {
  // deno-lint-ignore no-explicit-any -- koffi functions take and return C values of any type
  func(prototype: string): (...args: any[]) => any;
}

/** The loaded library and koffi's `errno()`. */
export interface Libc {
  readonly lib: KoffiLibrary;
  readonly errno: () => number;
}

let loaded: Libc | null | undefined;

/** `libc.so.6` through koffi, or `null` when FFI is unavailable on this machine. */
export function loadLibc(): Libc | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  if (process.platform !== "linux" || !SUPPORTED_ARCHES.has(process.arch)) return loaded;
  try {
    const koffi = createRequire(import.meta.url)("koffi");
    loaded = { lib: koffi.load("libc.so.6"), errno: () => koffi.errno() };
  } catch {
    loaded = null;
  }
  return loaded;
}

/**
 * The plain system calls several modules need, bound once here rather than
 * in each (`syscall`, `close`, an `int`-argument `fcntl`, `write`).
 */
export interface CommonCalls {
  syscall(nr: number, ...typedArgs: unknown[]): number;
  close(fd: number): number;
  fcntl(fd: number, cmd: number, arg: number): number;
  write(fd: number, bytes: Uint8Array, length: number): number;
  errno(): number;
}

let common: CommonCalls | null | undefined;

/** {@link CommonCalls}, or `null` when FFI is unavailable here. */
export function commonCalls(): CommonCalls | null {
  if (common !== undefined) return common;
  const c = loadLibc();
  if (!c) return common = null;
  try {
    const syscall = c.lib.func("long syscall(long, ...)");
    const close = c.lib.func("int close(int)");
    const fcntl = c.lib.func("int fcntl(int, int, ...)");
    const write = c.lib.func("long write(int, const uint8_t *buf, size_t)");
    common = {
      syscall: (nr, ...args) => Number(syscall(nr, ...args)),
      close: (fd) => close(fd),
      fcntl: (fd, cmd, arg) => fcntl(fd, cmd, "int", arg),
      write: (fd, bytes, length) => Number(write(fd, bytes, length)),
      errno: c.errno,
    };
  } catch {
    common = null;
  }
  return common;
}
