/**
 * What the human is told about a session: refusals (at most one per
 * {@link NOTICE_INTERVAL_MS} unless new), start-up and call-end notices. Texts hold
 * process names and named reasons, never anything typed.
 *
 * @module
 */
import type { TicketHolder } from "./call_credentials.ts";
import type { SessionEvent } from "./session_types.ts";
import { refusalNotice } from "./refusal_advice.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** How often at most a refused request is reported with a notice. */
export const NOTICE_INTERVAL_MS = 5000;

/** What the session's events drive, beside the notices. */
export interface SessionObservers {
  /** Shows a one-line warning to the human. */
  readonly notify: (text: string) => void;
  /** A modal of this session opened (`true`) or closed (`false`): the terminal guard's cue. */
  readonly modalShown: (open: boolean) => void;
  /** A password was given: the call it belongs to ends its ticket (ADR 0006, 0009 §4). */
  readonly answered: (ticket?: TicketHolder) => void;
  /** The audit log's sink, when it is open. */
  readonly record?: (event: SessionEvent) => void;
  /** The calls in progress hear how their requests ended (`call_outcomes.ts`). */
  readonly outcome?: (event: SessionEvent) => void;
}

/**
 * The session's `onEvent`: records the event, follows which modals are on screen,
 * and notifies refusals: one with its own notice unless that notice was just shown
 * (an agent retrying in a loop), others at most once per interval.
 */
export function observeSession(
  hooks: SessionObservers,
  now: () => number = Date.now,
): (event: SessionEvent) => void {
  const shown = new Set<string>();
  let lastNotice = -Infinity;
  let lastDetail = "";
  let lastDetailAt = -Infinity;
  return (event) => {
    hooks.record?.(event);
    hooks.outcome?.(event);
    if (event.kind === "prompted" && !shown.has(event.requestId)) {
      shown.add(event.requestId);
      hooks.modalShown(true);
    } else if (
      (event.kind === "answered" || event.kind === "denied") && shown.delete(event.requestId)
    ) {
      hooks.modalShown(false);
    }
    if (event.kind === "answered") hooks.answered(event.ticket);
    if (event.kind !== "refused" || !("requestId" in event) || !event.requestId) return;
    const t = now();
    if (event.notice) {
      if (event.notice === lastDetail && t - lastDetailAt < NOTICE_INTERVAL_MS) return;
      lastDetail = event.notice;
      lastDetailAt = t;
      return hooks.notify(
        `${msg.noPasswordPrompt(event.notice)} · ${msg.detailsHint(event.reason)}`,
      );
    }
    if (t - lastNotice < NOTICE_INTERVAL_MS) return;
    lastNotice = t;
    hooks.notify(`pi-sudo-prompt: ${refusalNotice(event.reason)}`);
  };
}

/** Why a tool call is blocked while a ticket may live (ADR 0009 §4); for the agent: English. */
export const CREDENTIALS_NOT_REMOVED =
  "pi-sudo-prompt: blocked: sudo's cached credentials of an earlier call could not be removed " +
  "(something kills `sudo -K`). Ask the user to run `sudo -K` and stop what kills it.";
