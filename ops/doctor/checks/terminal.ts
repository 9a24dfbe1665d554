/**
 * Doctor check `terminal` (ADR 0007): pi's terminal is exclusive, so no
 * other process of the user can open it and read what is typed, and a
 * guardian releases it if pi dies. Only meaningful inside pi.
 *
 * @module
 */
import {
  RELEASE_COMMAND,
  terminalGuardStatus,
} from "../../../extension/keyboard/terminal_guard.ts";
import type { CheckDefinition, Finding } from "../context.ts";
import { OUTSIDE_PI } from "../helpers.ts";

/** Exclusive mode on pi's terminal, and the guardian that releases it. */
export const terminalCheck = {
  id: "terminal",
  title: "exclusive terminal",
  run: checkTerminal,
} as const satisfies CheckDefinition;

function checkTerminal(): Promise<Finding> {
  return Promise.resolve(terminalFinding());
}

function terminalFinding(): Finding {
  const s = terminalGuardStatus();
  if (!s.started) return { status: "info", detail: `not inside pi: ${OUTSIDE_PI}` };
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
}
