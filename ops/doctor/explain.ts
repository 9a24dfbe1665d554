/**
 * `pi-sudo-prompt doctor --explain <reason>` and `/sudo-prompt doctor
 * <reason>`: what a refusal named in a notice means and what to do about it,
 * from the one table of advice (`extension/channel/refusal_advice.ts`).
 *
 * @module
 */
import { refusalAdvice, refusalReasons } from "../../extension/channel/refusal_advice.ts";
import type { Result } from "../../shared/result.ts";
import { msg } from "../../shared/i18n/locale.ts";

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
      msg.explainMeans(advice.means),
      msg.explainTodo(advice.todo),
      msg.explainMore,
    ],
  };
}
