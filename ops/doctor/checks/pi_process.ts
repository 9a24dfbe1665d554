/**
 * Doctor checks of pi's own process (ADR 0007), only meaningful inside pi:
 * `terminal`: pi's terminal is exclusive, so no other process of the user
 * can open it and read what is typed, and a guardian releases it if pi dies;
 * `dumpable`: pi is non-dumpable, so no process of the user can ptrace it,
 * read `/proc/<pi>/mem` or copy its terminal with `pidfd_getfd`.
 *
 * @module
 */
import { RELEASE_COMMAND } from "../../../extension/keyboard/guard_state.ts";
import {
  DUMPABLE_SWITCH,
  type TerminalGuardStatus,
  terminalGuardStatus,
} from "../../../extension/keyboard/terminal_guard.ts";
import { defineCheck, type Finding } from "../context.ts";

/** A check that judges the terminal guard's status; outside pi there is nothing to judge. */
function piProcessCheck<Id extends string>(
  id: Id,
  title: string,
  judge: (s: TerminalGuardStatus) => Finding,
) {
  return defineCheck(id, title, (ctx) => {
    const s = ctx.piState ?? terminalGuardStatus();
    if (!s.started) {
      return {
        status: "info",
        detail: "not inside pi: run /sudo-prompt doctor inside pi to check pi's own process",
      };
    }
    return judge(s);
  });
}

/** Exclusive mode on pi's terminal, and the guardian that releases it. */
export const terminalCheck = piProcessCheck("terminal", "exclusive terminal", (s) => {
  if (!s.ttyPath) {
    return { status: "warn", detail: "pi's stdin is not a terminal: nothing to make exclusive" };
  }
  if (!s.exclusive) {
    return {
      status: "fail",
      detail: `${s.ttyPath} is not exclusive: any process of yours can open it and read what ` +
        `you type (${s.problems.join("; ") || "cleared since"})`,
      fix: "restart pi; if it persists, run this doctor and report the problem it lists",
    };
  }
  if (s.guardianPid === undefined) {
    return {
      status: "warn",
      detail: `${s.ttyPath} is exclusive, but no guardian runs: if pi is killed, the terminal ` +
        "stays exclusive and sudo there fails with a busy terminal",
      fix: `after such a kill run ${RELEASE_COMMAND} in that terminal`,
    };
  }
  return {
    status: "ok",
    detail: `${s.ttyPath} is exclusive (no other process can open it); guardian pid ` +
      `${s.guardianPid} releases it if pi dies`,
  };
});

/** pi non-dumpable: no ptrace, no `/proc/<pi>/mem`, no `pidfd_getfd`. */
export const dumpableCheck = piProcessCheck("dumpable", "pi non-dumpable", (s) => {
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
});
