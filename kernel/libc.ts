/**
 * libc through koffi, loaded once ({@link libc}): the system calls Node does
 * not expose. koffi is a native addon loaded lazily, so a missing build only
 * disables those paths, and the callers fail closed.
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

/**
 * Every libc function this package calls from Node (Deno's: `deno_libc.ts`).
 * Numbers come back as numbers; `errno` is koffi's copy of the last call's.
 */
export interface LibcCalls {
  /** `syscall(nr, …)`: arguments as koffi `(type, value)` pairs. */
  syscall(nr: number, ...typedArgs: unknown[]): number;
  close(fd: number): number;
  /** `fcntl` with an `int` argument. */
  fcntl(fd: number, cmd: number, arg: number): number;
  write(fd: number, bytes: Uint8Array, length: number): number;
  read(fd: number, into: Uint8Array, length: number): number;
  ioctlInt(fd: number, request: number, arg: number): number;
  ioctlOut(fd: number, request: number, out: Int32Array): number;
  /** `ioctl` on a structure (`termios`, `winsize`) that it reads from and writes into `buf`. */
  ioctlStruct(fd: number, request: number, buf: Uint8Array): number;
  /** `prctl` with one `unsigned long` argument. */
  prctl(option: number, arg: number): number;
  getsockopt(fd: number, level: number, name: number, out: Uint8Array, len: number[]): number;
  socket(domain: number, type: number, protocol: number): number;
  connect(fd: number, addr: Uint8Array, addrLen: number): number;
  send(fd: number, buf: Uint8Array, len: number, flags: number): number;
  sendto(
    fd: number,
    buf: Uint8Array,
    len: number,
    flags: number,
    addr: Uint8Array,
    addrLen: number,
  ): number;
  recv(fd: number, buf: Uint8Array, len: number, flags: number): number;
  /** `prlimit(pid, resource, new, old)`: each limit a `{cur, max}` pair, or `null`. */
  prlimit(
    pid: number,
    resource: number,
    limit: BigUint64Array | null,
    old: BigUint64Array | null,
  ): number;
  errno(): number;
}

let calls: LibcCalls | null | undefined;

/** {@link LibcCalls}, or `null` when FFI is unavailable here (the callers fail closed). */
export function libc(): LibcCalls | null {
  if (calls !== undefined) return calls;
  calls = null;
  if (process.platform !== "linux" || !SUPPORTED_ARCHES.has(process.arch)) return calls;
  try {
    const koffi = createRequire(import.meta.url)("koffi");
    const lib: KoffiLibrary = koffi.load("libc.so.6");
    const f = (prototype: string) => {
      const fn = lib.func(prototype);
      return (...args: unknown[]) => Number(fn(...args));
    };
    // Variadic in C: koffi passes the extra arguments with the types given per call.
    const fcntl = f("int fcntl(int, int, ...)");
    const ioctl = f("int ioctl(int, unsigned long, ...)");
    const prctl = f("int prctl(int, ...)");
    calls = {
      syscall: f("long syscall(long, ...)"),
      close: f("int close(int)"),
      fcntl: (fd, cmd, arg) => fcntl(fd, cmd, "int", arg),
      write: f("long write(int, const uint8_t *buf, size_t)"),
      read: f("long read(int, _Out_ uint8_t *buf, size_t)"),
      ioctlInt: (fd, request, arg) => ioctl(fd, request, "long", arg),
      ioctlOut: (fd, request, out) => ioctl(fd, request, "_Out_ int *", out),
      ioctlStruct: (fd, request, buf) => ioctl(fd, request, "_Inout_ uint8_t *", buf),
      prctl: (option, arg) => prctl(option, "unsigned long", arg),
      getsockopt: f(
        "int getsockopt(int, int, int, _Out_ uint8_t *optval, _Inout_ uint32_t *optlen)",
      ),
      socket: f("int socket(int, int, int)"),
      connect: f("int connect(int, const uint8_t *addr, uint32_t addrlen)"),
      send: f("intptr_t send(int, const uint8_t *buf, size_t len, int flags)"),
      sendto: f(
        "intptr_t sendto(int, const uint8_t *buf, size_t len, int flags, const uint8_t *addr, uint32_t addrlen)",
      ),
      recv: f("intptr_t recv(int, _Out_ uint8_t *buf, size_t len, int flags)"),
      prlimit: f(
        "int prlimit(int pid, int resource, const uint64_t *limit, _Out_ uint64_t *old)",
      ),
      errno: () => koffi.errno(),
    };
  } catch { /* koffi or libc missing: calls stays null */ }
  return calls;
}
