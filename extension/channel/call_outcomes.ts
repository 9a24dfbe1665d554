/**
 * What the agent hears when a request of its tool call ends without a
 * password (issue 36): one plain line per ending, added to the call's result,
 * so that a declined or refused sudo is not simply tried again. Endings are
 * the session's events (the user's Escape, the modal's timeout, a refusal by
 * pi, a password wrong too often), given to every call in progress when they
 * happen: pi does not know which of two calls at once started a sudo.
 *
 * Every line is fixed text and a named reason, nothing the agent chose; the
 * only typed text is the reply the human wrote in the modal's reply field,
 * sanitised and quoted as their words.
 *
 * @module
 */
import type { SessionEvent } from "./session_types.ts";
import { sanitizeUntrusted } from "../../askpass/prompt_text.ts";

/** At most this many lines per call (a loop of sudos must not flood the result). */
const MAX_LINES = 4;
/** Longest reply quoted, in code points (the modal takes no more). */
const MAX_REPLY = 160;
const ASK = "Ask the user before you run sudo again.";

/** The agent's line for one event, or undefined when the event ends nothing the agent must hear. */
export function endingLine(event: SessionEvent, what: string): string | undefined {
  if (event.kind === "refused") {
    return `pi-sudo-prompt: pi refused the ${what} (${event.reason}). ${ASK}`;
  }
  if (event.kind !== "denied") return undefined;
  switch (event.reason) {
    case "cancelled":
      return event.reply
        ? `pi-sudo-prompt: the user declined the ${what}, and replied (the user's own words): ` +
          `«${sanitizeUntrusted(event.reply, MAX_REPLY)}». ${ASK}`
        : `pi-sudo-prompt: the user declined the ${what}. ${ASK}`;
    case "timeout":
      return `pi-sudo-prompt: the ${what} timed out: nobody answered in time. ${ASK}`;
    case "attempts_exhausted":
      return `pi-sudo-prompt: the ${what} failed: the password was wrong too often. ${ASK}`;
    default:
      return undefined;
  }
}

/** Collects the endings of requests for the calls in progress. */
export class CallOutcomes {
  readonly #open = new Set<string[]>();
  readonly #secret = new Set<string>();

  /** A call begins: its lines collect until {@link close}. */
  open(): string[] {
    const lines: string[] = [];
    this.#open.add(lines);
    return lines;
  }

  /** A call ends: its lines, once each. */
  close(lines: string[]): string[] {
    this.#open.delete(lines);
    return lines;
  }

  /** Takes one session event. */
  note(event: SessionEvent): void {
    if (event.kind === "queued") {
      if (event.request === "secret") this.#secret.add(event.requestId);
      return;
    }
    const id = "requestId" in event ? event.requestId : undefined;
    // A refusal before any request id (a malformed frame) is no request of a call.
    if (id === undefined) return;
    const secret = this.#secret.has(id);
    // Every ending forgets the request, so the set holds only requests still open.
    if (event.kind !== "prompted") this.#secret.delete(id);
    const line = endingLine(event, secret ? "secret request" : "sudo password request");
    if (!line) return;
    for (const lines of this.#open) {
      if (lines.length < MAX_LINES && !lines.includes(line)) lines.push(line);
    }
  }
}
