/**
 * `doctor --explain <reason>`: what the check named in a notice saw (`reason_details.ts`), its
 * group, and what to do (`extension/channel/refusal_advice.ts`).
 *
 * @module
 */
import { refusalAdvice } from "../../extension/channel/refusal_advice.ts";
import type { NamedReason } from "../../extension/channel/refusal_advice.ts";
import type { Result } from "../../shared/result.ts";
import { msg } from "../../shared/i18n/tools_locale.ts";
import { REASON_DETAILS } from "./reason_details.ts";

/** The lines that explain `reason`, or a one-line error for a name that is no reason. */
export function explainRefusal(reason: string): Result<{ lines: readonly string[] }, string> {
  // Every reason has its detail line; a group's name that is no reason gets no advice.
  const advice = Object.hasOwn(REASON_DETAILS, reason) ? refusalAdvice(reason) : undefined;
  if (!advice) {
    const shown = reason.replace(/[^a-z0-9_]/gi, "?").slice(0, 40);
    return {
      ok: false,
      reason: msg.doctorNoSuchReason(shown, Object.keys(REASON_DETAILS).sort().join(", ")),
    };
  }
  return {
    ok: true,
    lines: [
      reason,
      msg.explainMeans(REASON_DETAILS[reason as NamedReason]),
      msg.explainTodo(advice.todo),
      msg.explainGroup(advice.title, advice.group),
      msg.explainMore,
    ],
  };
}
