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

/** koffi's module, as far as it is used here. */
interface Koffi {
  load(path: string): {
    // deno-lint-ignore no-explicit-any -- koffi functions take and return C values of any type
    func(prototype: string): (...args: any[]) => any;
  };
  errno(): number;
}

type Bytes = Uint8Array;
type Limit = BigUint64Array | null;

/**
 * Binds every libc function this package calls from Node (Deno's: `deno_libc.ts`): each
 * C prototype for koffi, beside its argument types for TypeScript. Numbers come back as numbers;
 * `errno` is koffi's copy of the last call's.
 */
function bind(koffi: Koffi) {
  const lib = koffi.load("libc.so.6");
  const f = <A extends unknown[]>(prototype: string) => {
    const fn = lib.func(prototype);
    return (...args: A) => Number(fn(...args));
  };
  // Variadic in C: koffi passes the extra arguments with the types given per call.
  const fcntl = f<[number, number, string, number]>("int fcntl(int, int, ...)");
  const ioctl = f<[number, number, string, unknown]>("int ioctl(int, unsigned long, ...)");
  const prctl = f<[number, string, number]>("int prctl(int, ...)");
  return {
    /** `syscall(nr, …)`: arguments as koffi `(type, value)` pairs. */
    syscall: f<[nr: number, ...typedArgs: unknown[]]>("long syscall(long, ...)"),
    close: f<[number]>("int close(int)"),
    /** `fcntl` with an `int` argument. */
    fcntl: (fd: number, cmd: number, arg: number) => fcntl(fd, cmd, "int", arg),
    write: f<[number, Bytes, number]>("long write(int, const uint8_t *buf, size_t)"),
    read: f<[number, Bytes, number]>("long read(int, _Out_ uint8_t *buf, size_t)"),
    ioctlInt: (fd: number, request: number, arg: number) => ioctl(fd, request, "long", arg),
    ioctlOut: (fd: number, request: number, out: Int32Array) =>
      ioctl(fd, request, "_Out_ int *", out),
    /** `ioctl` on a structure (`termios`, `winsize`) that it reads from and writes into `buf`. */
    ioctlStruct: (fd: number, request: number, buf: Bytes) =>
      ioctl(fd, request, "_Inout_ uint8_t *", buf),
    /** `prctl` with one `unsigned long` argument. */
    prctl: (option: number, arg: number) => prctl(option, "unsigned long", arg),
    getsockopt: f<[number, number, number, Bytes, number[]]>(
      "int getsockopt(int, int, int, _Out_ uint8_t *optval, _Inout_ uint32_t *optlen)",
    ),
    socket: f<[number, number, number]>("int socket(int, int, int)"),
    connect: f<[number, Bytes, number]>("int connect(int, const uint8_t *addr, uint32_t addrlen)"),
    send: f<[number, Bytes, number, number]>(
      "intptr_t send(int, const uint8_t *buf, size_t len, int flags)",
    ),
    sendto: f<[number, Bytes, number, number, Bytes, number]>(
      "intptr_t sendto(int, const uint8_t *buf, size_t len, int flags, const uint8_t *addr, uint32_t addrlen)",
    ),
    recv: f<[number, Bytes, number, number]>(
      "intptr_t recv(int, _Out_ uint8_t *buf, size_t len, int flags)",
    ),
    /** `prlimit(pid, resource, new, old)`: each limit a `{cur, max}` pair, or `null`. */
    prlimit: f<[number, number, Limit, Limit]>(
      "int prlimit(int pid, int resource, const uint64_t *limit, _Out_ uint64_t *old)",
    ),
    errno: (): number => koffi.errno(),
  };
}

/** The bound libc functions of {@link libc}. */
export type LibcCalls = ReturnType<typeof bind>;

let calls: LibcCalls | null | undefined;

/** {@link LibcCalls}, or `null` when FFI is unavailable here (the callers fail closed). */
export function libc(): LibcCalls | null {
  if (calls !== undefined) return calls;
  calls = null;
  if (process.platform !== "linux" || !SUPPORTED_ARCHES.has(process.arch)) return calls;
  try {
    calls = bind(createRequire(import.meta.url)("koffi"));
  } catch { /* koffi or libc missing: calls stays null */ }
  return calls;
}
