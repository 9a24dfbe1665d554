/**
 * Doctor check `ptrace_scope`: which processes of the user can trace others, such as the terminal
 * emulator or tmux server (every key) or a `pi-secret-run` command (its secret). sudo's askpass
 * helper never holds the password (docs/adr/0008), so it is not among them.
 *
 * @module
 */
import { join } from "node:path";
import { defineCheck } from "../context.ts";
import { oneLine, readSmall } from "../helpers.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

/** `kernel.yama.ptrace_scope`: 0 and missing warn; 1, 2 and 3 are fine. */
export const ptraceScopeCheck = defineCheck("ptrace_scope", "ptrace_scope", async (ctx) => {
  const path = join(ctx.procRoot, "sys", "kernel", "yama", "ptrace_scope");
  const value = (await readSmall(path))?.trim();
  const risk = msg.ptraceRisk;
  if (value === undefined) {
    return {
      status: "warn",
      detail: msg.ptraceMissing(risk),
      fix: msg.ptraceMissingFix,
    };
  }
  if (value === "0") {
    return {
      status: "warn",
      detail: msg.ptraceZero(risk),
      fix: msg.ptraceZeroFix,
    };
  }
  if (value === "1") {
    return {
      status: "ok",
      detail: msg.ptraceOne,
    };
  }
  if (value === "2" || value === "3") {
    return { status: "ok", detail: msg.ptraceRootOnly(value) };
  }
  return {
    status: "warn",
    detail: msg.ptraceUnknown(oneLine(value)),
    fix: "sudo sysctl kernel.yama.ptrace_scope=1",
  };
});
