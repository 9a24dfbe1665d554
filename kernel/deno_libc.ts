/**
 * The Deno runtime's one FFI binding: libc for the root broker and the terminal
 * guardian. It grants nothing: each entry point opens libc at a path its own
 * `--allow-ffi` names.
 *
 * @module
 */

const SYMBOLS = {
  getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  getppid: { parameters: [], result: "i32" },
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  open: { parameters: ["buffer", "i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  write: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  ioctl: { parameters: ["i32", "u64", "u64"], result: "i32" },
  ioctlPtr: { name: "ioctl", parameters: ["i32", "u64", "buffer"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  mkfifo: { parameters: ["buffer", "u32"], result: "i32" },
  kill: { parameters: ["i32", "i32"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

/** The functions of {@link SYMBOLS}, callable. */
export type DenoLibc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** Opens libc at `path` (an absolute path the caller's `--allow-ffi` allows). */
export function openDenoLibc(path: string): DenoLibc {
  return Deno.dlopen(path, SYMBOLS).symbols;
}
