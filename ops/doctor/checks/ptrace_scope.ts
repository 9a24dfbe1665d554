/**
 * Doctor check `ptrace_scope`: `kernel.yama.ptrace_scope`, which decides
 * which processes of the user can trace others: the terminal emulator or
 * tmux server (every key), a `pi-secret-run` command (its secret). sudo's
 * askpass helper never holds the password (docs/adr/0008), so it is not
 * among them.
 *
 * @module
 */
import { join } from "node:path";
import { defineCheck } from "../context.ts";
import { oneLine, readSmall } from "../helpers.ts";

/** `kernel.yama.ptrace_scope`: 0 and missing warn; 1, 2 and 3 are fine. */
export const ptraceScopeCheck = defineCheck("ptrace_scope", "ptrace_scope", async (ctx) => {
  const path = join(ctx.procRoot, "sys", "kernel", "yama", "ptrace_scope");
  const value = (await readSmall(path))?.trim();
  const risk = "any process of yours (the agent's included) can trace your terminal emulator or " +
    "tmux server to read keys, and a pi-secret-run command to read its secret (pi itself is " +
    "non-dumpable, and sudo's askpass helper never holds the password)";
  if (value === undefined) {
    return {
      status: "warn",
      detail: `kernel.yama.ptrace_scope missing (no Yama LSM): ${risk}`,
      fix: "boot a kernel with Yama (CONFIG_SECURITY_YAMA; lsm=…,yama) and set " +
        "sysctl kernel.yama.ptrace_scope=1 (persist it in /etc/sysctl.d/); or install the " +
        "broker (/sudo-prompt install-broker), so that root clears processes that hide their " +
        "open files",
    };
  }
  if (value === "0") {
    return {
      status: "warn",
      detail: `kernel.yama.ptrace_scope=0: ${risk}`,
      fix: "sudo sysctl kernel.yama.ptrace_scope=1 (persist it in /etc/sysctl.d/); or install " +
        "the broker (/sudo-prompt install-broker), so that root, not a question in the modal, " +
        "clears processes that hide their open files",
    };
  }
  if (value === "1") {
    return {
      status: "ok",
      detail: "kernel.yama.ptrace_scope=1: only ancestors can trace; the agent's shell is still " +
        "an ancestor of a pi-secret-run command it starts (2 closes that too, but disables " +
        "debuggers)",
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
});
