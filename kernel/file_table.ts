/**
 * Whether two tasks share one file-descriptor table (`kcmp` `KCMP_FILES`).
 * A thread made without `CLONE_FILES` has its own table, visible only under
 * `/proc/<pid>/task/<tid>/fd`, so the fd walks ask before they skip a
 * thread's table.
 *
 * @module
 */
import process from "node:process";
import { libc } from "./libc.ts";

const KCMP_FILES = 2;
/** `kcmp` is 312 on x86_64 and 272 on the generic table (arm64, riscv64). */
const SYS_KCMP = process.arch === "x64" ? 312 : 272;

/**
 * Whether tasks `a` and `b` share one file-descriptor table; `undefined` when
 * the kernel would not say (no FFI, no permission): the caller reads the table.
 */
export function sharesFileTable(a: number, b: number): boolean | undefined {
  const c = libc();
  if (!c) return undefined;
  const r = c.syscall(SYS_KCMP, "long", a, "long", b, "long", KCMP_FILES, "long", 0, "long", 0);
  return r === 0 ? true : r > 0 ? false : undefined;
}
