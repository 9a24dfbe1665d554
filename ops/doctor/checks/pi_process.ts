/**
 * Doctor checks of pi's own process (ADR 0007), only meaningful inside pi: `terminal` (exclusive,
 * so no other process of the user can open it and read what is typed; a guardian releases it if
 * pi dies) and `dumpable` (non-dumpable, so none can ptrace pi or copy its terminal).
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
import { msg } from "../../../shared/i18n/tools_locale.ts";

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
        detail: msg.piOutside,
      };
    }
    return judge(s);
  });
}

/** Exclusive mode on pi's terminal, and the guardian that releases it. */
export const terminalCheck = piProcessCheck("terminal", msg.terminalTitle, (s) => {
  if (!s.ttyPath) {
    return { status: "warn", detail: msg.piNoTerminal };
  }
  if (!s.exclusive) {
    return {
      status: "fail",
      detail: msg.piNotExclusive(s.ttyPath, s.problems.join("; ") || msg.piClearedSince),
      fix: msg.piNotExclusiveFix,
    };
  }
  if (s.guardianPid === undefined) {
    return {
      status: "warn",
      detail: msg.piNoGuardian(s.ttyPath),
      fix: msg.piNoGuardianFix(RELEASE_COMMAND),
    };
  }
  return {
    status: "ok",
    detail: msg.piExclusive(s.ttyPath, s.guardianPid),
  };
});

/** pi non-dumpable: no ptrace, no `/proc/<pi>/mem`, no `pidfd_getfd`. */
export const dumpableCheck = piProcessCheck("dumpable", msg.dumpableTitle, (s) => {
  if (s.nonDumpable) {
    return {
      status: "ok",
      detail: msg.piNonDumpable,
    };
  }
  if (s.dumpableByChoice) {
    return {
      status: "warn",
      detail: msg.piDumpableByChoice(DUMPABLE_SWITCH),
      fix: msg.piDumpableByChoiceFix(DUMPABLE_SWITCH),
    };
  }
  return {
    status: "fail",
    detail: msg.piDumpable,
    fix: msg.piDumpableFix,
  };
});
