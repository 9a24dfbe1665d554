/**
 * Makes untrusted text safe to draw in the terminal. sudo's prompt line, a
 * `pi-secret-run` label and any argv can be chosen by the agent, so before
 * they reach the screen every escape sequence (7- and 8-bit CSI, OSC, DCS,
 * …), control character and invisible formatting or bidirectional character
 * is removed (or, for argv, escaped by the modal) and the length is capped.
 * One implementation, used by the session server, the modal, the status panel
 * and the drawn bash call.
 *
 * @module
 */

/** Longest prompt shown, in code points. */
export const MAX_PROMPT_DISPLAY = 200;

/**
 * Code points that must never reach the terminal as themselves: C0 and C1
 * controls, DEL, and the invisible formatting and bidi characters that could
 * hide or reorder what the human reads.
 */
export function isUnsafeCodePoint(cp: number): boolean {
  return cp < 0x20 ||
    (cp >= 0x7f && cp <= 0x9f) ||
    cp === 0x061c ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x2028 && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x2069) ||
    cp === 0xfeff;
}

/** Escape sequences, 7-bit (ESC …) and 8-bit (CSI 0x9b, OSC 0x9d, …), with their parameters. */
export const ESCAPE_SEQUENCE =
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x2f]*[\x30-\x7e]?/g;

/** Removes escape sequences and unsafe characters; caps at `max` code points. */
export function sanitizeUntrusted(text: string, max = MAX_PROMPT_DISPLAY): string {
  const kept: string[] = [];
  for (const ch of text.replace(ESCAPE_SEQUENCE, "")) {
    if (!isUnsafeCodePoint(ch.codePointAt(0) ?? 0)) kept.push(ch);
  }
  return kept.length > max ? kept.slice(0, max - 1).join("") + "…" : kept.join("");
}

/** sudo's prompt line, sanitised and trimmed for display. */
export function sanitizePrompt(prompt: string): string {
  return sanitizeUntrusted(prompt).trim();
}
