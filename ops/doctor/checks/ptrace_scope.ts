/**
 * Doctor check `ptrace_scope`: `kernel.yama.ptrace_scope`, which decides
 * whether any process of the user can read the helper's memory.
 *
 * @module
 */
import { join } from "node:path";
import type { CheckDefinition, Context, Finding } from "../context.ts";
import { oneLine, readSmall } from "../helpers.ts";

/** `kernel.yama.ptrace_scope`: 0 and missing warn; 1, 2 and 3 are fine. */
export const ptraceScopeCheck = {
  id: "ptrace_scope",
  title: "ptrace_scope",
  run: checkPtraceScope,
} as const satisfies CheckDefinition;

async function checkPtraceScope(ctx: Context): Promise<Finding> {
  const path = join(ctx.procRoot, "sys", "kernel", "yama", "ptrace_scope");
  const value = (await readSmall(path))?.trim();
  const risk = "any process of yours (the agent's included) can read the helper's memory while " +
    "a password passes through, and trace your terminal emulator or tmux server to read keys " +
    "(pi itself is non-dumpable)";
  if (value === undefined) {
    return {
      status: "warn",
      detail: `kernel.yama.ptrace_scope missing (no Yama LSM): ${risk}`,
      fix: "boot a kernel with Yama (CONFIG_SECURITY_YAMA; lsm=…,yama) and set " +
        "sysctl kernel.yama.ptrace_scope=1 (persist it in /etc/sysctl.d/)",
    };
  }
  if (value === "0") {
    return {
      status: "warn",
      detail: `kernel.yama.ptrace_scope=0: ${risk}`,
      fix: "sudo sysctl kernel.yama.ptrace_scope=1 (persist it in /etc/sysctl.d/)",
    };
  }
  if (value === "1") {
    return {
      status: "ok",
      detail: "kernel.yama.ptrace_scope=1: other processes cannot read pi; the agent's shell is " +
        "still an ancestor of the helper (2 closes that too, but disables debuggers)",
    };
  }
  if (value === "2" || value === "3") {
    return { status: "ok", detail: `kernel.yama.ptrace_scope=${value}: only root can attach` };
  }
  return {
    status: "warn",
    detail: `kernel.yama.ptrace_scope has an unknown value: ${oneLine(value)}`,
    fix: "sudo sysctl kernel.yama.ptrace_scope=1",
  };
}
