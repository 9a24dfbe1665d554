/**
 * Doctor check `dumpable` (ADR 0007): pi is non-dumpable, so no process of
 * the user can ptrace it, read `/proc/<pi>/mem` or copy its terminal with
 * `pidfd_getfd`. Only meaningful inside pi.
 *
 * @module
 */
import {
  DUMPABLE_SWITCH,
  terminalGuardStatus,
} from "../../../extension/keyboard/terminal_guard.ts";
import type { CheckDefinition, Finding } from "../context.ts";
import { OUTSIDE_PI } from "../helpers.ts";

/** pi non-dumpable: no ptrace, no `/proc/<pi>/mem`, no `pidfd_getfd`. */
export const dumpableCheck = {
  id: "dumpable",
  title: "pi non-dumpable",
  run: checkDumpable,
} as const satisfies CheckDefinition;

function checkDumpable(): Promise<Finding> {
  return Promise.resolve(dumpableFinding());
}

function dumpableFinding(): Finding {
  const s = terminalGuardStatus();
  if (!s.started) return { status: "info", detail: `not inside pi: ${OUTSIDE_PI}` };
  if (s.nonDumpable) {
    return {
      status: "ok",
      detail: "pi is non-dumpable: no process of yours can trace it or read its memory",
    };
  }
  if (s.dumpableByChoice) {
    return {
      status: "warn",
      detail: `${DUMPABLE_SWITCH}=1: pi is dumpable, so any process of yours can read its memory ` +
        "and copy its terminal",
      fix: `unset ${DUMPABLE_SWITCH} (it is for debugging only) and restart pi`,
    };
  }
  return {
    status: "fail",
    detail: "pi is dumpable: any process of yours can read its memory and copy its terminal",
    fix: "check that FFI works (see the FFI check) and restart pi",
  };
}
