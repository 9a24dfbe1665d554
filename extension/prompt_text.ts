/**
 * Makes untrusted text safe to draw in the terminal. sudo's prompt line can
 * be set by the agent (`SUDO_PROMPT`, `-p`), and argv can hold anything, so
 * before either reaches the modal every control character, escape sequence
 * and bidirectional override is removed and the length is capped.
 *
 * @module
 */

/** Longest prompt shown, in code points. */
export const MAX_PROMPT_DISPLAY = 200;

// C0 and C1 controls, DEL, and the bidi embeddings/overrides/isolates that
// could reorder what the human reads.
// deno-lint-ignore no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
// deno-lint-ignore no-control-regex -- ESC-introduced sequences (CSI, OSC, …)
const ESCAPES = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])/g;

/** Removes escape sequences and unsafe characters; caps at `max` code points. */
export function sanitizeUntrusted(text: string, max = MAX_PROMPT_DISPLAY): string {
  const clean = text.replace(ESCAPES, "").replace(UNSAFE, "");
  const chars = [...clean];
  return chars.length > max ? chars.slice(0, max - 1).join("") + "…" : clean;
}

/** sudo's prompt line, sanitised and trimmed for display. */
export function sanitizePrompt(prompt: string): string {
  return sanitizeUntrusted(prompt).trim();
}
