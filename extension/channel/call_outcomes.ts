/**
 * What the agent hears when its tool call's request ends without a password (issue 36): one
 * fixed line per ending in the call's result, so a declined sudo is not just retried. Every
 * call in progress hears it (pi cannot tell which started the sudo); the only typed text is
 * the human's reply, sanitised and quoted.
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
