/**
 * libc through koffi, loaded once, with every function the package calls
 * from Node declared in one place ({@link libc}): system calls Node does not
 * expose (`getsockopt`, `pidfd_open`, netlink, `ioctl`, `prctl`). koffi is a
 * native addon: it is loaded lazily, so a missing build only disables those
 * paths, and the callers then fail closed.
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
function loadLibc(): Libc | null {
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
 * Every libc function this package calls from Node, declared once, here:
 * the one FFI binding module of pi's runtime (the broker's Deno has its own,
 * `Deno.dlopen` in `broker/broker.ts`). Numbers come back as numbers; `errno`
 * is koffi's copy of the last call's.
 */
export interface LibcCalls {
  /** `syscall(nr, …)`: arguments as koffi `(type, value)` pairs. */
  syscall(nr: number, ...typedArgs: unknown[]): number;
  close(fd: number): number;
  /** `fcntl` with an `int` argument. */
  fcntl(fd: number, cmd: number, arg: number): number;
  write(fd: number, bytes: Uint8Array, length: number): number;
  /** `ioctl` with a plain integer argument. */
  ioctlInt(fd: number, request: number, arg: number): number;
  /** `ioctl` that writes one `int` into `out`. */
  ioctlOut(fd: number, request: number, out: Int32Array): number;
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
  errno(): number;
}

let calls: LibcCalls | null | undefined;

/** {@link LibcCalls}, or `null` when FFI is unavailable here (the callers fail closed). */
export function libc(): LibcCalls | null {
  if (calls !== undefined) return calls;
  const c = loadLibc();
  if (!c) return calls = null;
  try {
    const f = (prototype: string) => c.lib.func(prototype);
    const syscall = f("long syscall(long, ...)");
    const close = f("int close(int)");
    // fcntl, ioctl and prctl are variadic in C: koffi passes the extra
    // arguments with the types given per call.
    const fcntl = f("int fcntl(int, int, ...)");
    const write = f("long write(int, const uint8_t *buf, size_t)");
    const ioctl = f("int ioctl(int, unsigned long, ...)");
    const prctl = f("int prctl(int, ...)");
    const getsockopt = f(
      "int getsockopt(int, int, int, _Out_ uint8_t *optval, _Inout_ uint32_t *optlen)",
    );
    const socket = f("int socket(int, int, int)");
    const connect = f("int connect(int, const uint8_t *addr, uint32_t addrlen)");
    const send = f("intptr_t send(int, const uint8_t *buf, size_t len, int flags)");
    const sendto = f(
      "intptr_t sendto(int, const uint8_t *buf, size_t len, int flags, const uint8_t *addr, uint32_t addrlen)",
    );
    const recv = f("intptr_t recv(int, _Out_ uint8_t *buf, size_t len, int flags)");
    calls = {
      syscall: (nr, ...args) => Number(syscall(nr, ...args)),
      close: (fd) => Number(close(fd)),
      fcntl: (fd, cmd, arg) => Number(fcntl(fd, cmd, "int", arg)),
      write: (fd, bytes, length) => Number(write(fd, bytes, length)),
      ioctlInt: (fd, request, arg) => Number(ioctl(fd, request, "long", arg)),
      ioctlOut: (fd, request, out) => Number(ioctl(fd, request, "_Out_ int *", out)),
      prctl: (option, arg) => Number(prctl(option, "unsigned long", arg)),
      getsockopt: (fd, level, name, out, len) => Number(getsockopt(fd, level, name, out, len)),
      socket: (domain, type, protocol) => Number(socket(domain, type, protocol)),
      connect: (fd, addr, addrLen) => Number(connect(fd, addr, addrLen)),
      send: (fd, buf, len, flags) => Number(send(fd, buf, len, flags)),
      sendto: (fd, buf, len, flags, addr, addrLen) =>
        Number(sendto(fd, buf, len, flags, addr, addrLen)),
      recv: (fd, buf, len, flags) => Number(recv(fd, buf, len, flags)),
      errno: c.errno,
    };
  } catch {
    calls = null;
  }
  return calls;
}
