/**
 * Yama's `kernel.yama.ptrace_scope`: who may trace a process of the user.
 * 0 (or no Yama): any process of the same uid; 1: only its ancestors;
 * 2: only root; 3: nobody.
 *
 * @module
 */
import { readProcText } from "./proc_reader.ts";

/** The current `ptrace_scope`, or `undefined` without Yama (then any process of the uid may trace). */
export async function ptraceScope(): Promise<number | undefined> {
  const text = (await readProcText("/proc/sys/kernel/yama/ptrace_scope", 64))?.trim();
  return text !== undefined && /^[0-3]$/.test(text) ? Number(text) : undefined;
}
