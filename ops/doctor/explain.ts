/**
 * `doctor --explain <reason>`: what the check named in a notice saw (`reason_details.ts`), its
 * group, and what to do (`extension/channel/refusal_advice.ts`).
 *
 * @module
 */
import { refusalAdvice, refusalReasons } from "../../extension/channel/refusal_advice.ts";
import type { NamedReason } from "../../extension/channel/refusal_advice.ts";
import type { Result } from "../../shared/result.ts";
import { msg } from "../../shared/i18n/tools_locale.ts";
import { REASON_DETAILS } from "./reason_details.ts";

/** The lines that explain `reason`, or a one-line error for a name that is no reason. */
export function explainRefusal(reason: string): Result<{ lines: readonly string[] }, string> {
  const advice = refusalAdvice(reason);
  if (!advice) {
    const shown = reason.replace(/[^a-z0-9_]/gi, "?").slice(0, 40);
    return {
      ok: false,
      reason: msg.doctorNoSuchReason(shown, refusalReasons().join(", ")),
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
