/**
 * Makes agent-chosen text (sudo's prompt line, a `pi-secret-run` label, argv) safe to draw: every
 * escape sequence (7- and 8-bit), control, invisible formatting or bidi character is removed (for
 * argv, escaped by the modal) and the length capped. One implementation for the server, the
 * modals, the status panel and every tool call and model text pi draws
 * (`extension/ui/safe_rendering.ts`).
 *
 * @module
 */

/** Longest prompt shown, in code points. */
export const MAX_PROMPT_DISPLAY = 200;

/**
 * Characters never drawn as themselves: C0 and C1 controls, DEL, and the invisible formatting and
 * bidi characters that could hide or reorder what the human reads. All lie in the BMP outside the
 * surrogates, so matching UTF-16 units matches code points (an emoji's halves never match).
 */
// deno-lint-ignore no-control-regex -- matching control characters is the point
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;
const ALL_UNSAFE = new RegExp(UNSAFE.source, "g");

/** Whether `text` holds a control, DEL, or an invisible formatting or bidi character. */
export function hasUnsafe(text: string): boolean {
  return UNSAFE.test(text);
}

/** Escape sequences, 7-bit (ESC …) and 8-bit (CSI 0x9b, OSC 0x9d, …), with their parameters. */
export const ESCAPE_SEQUENCE =
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x2f]*[\x30-\x7e]?/g;

/** Removes escape sequences and unsafe characters; caps at `max` code points. */
export function sanitizeUntrusted(text: string, max = MAX_PROMPT_DISPLAY): string {
  const kept = [...safeChars(text.replace(ESCAPE_SEQUENCE, ""))];
  return kept.length > max ? kept.slice(0, max - 1).join("") + "…" : kept.join("");
}

/** sudo's prompt line, sanitised and trimmed for display. */
export function sanitizePrompt(prompt: string): string {
  return sanitizeUntrusted(prompt).trim();
}

/**
 * Untrusted text of many lines cleaned as {@link sanitizeUntrusted}, keeping line breaks and tabs,
 * cutting nothing. Per line, so an unterminated sequence never swallows the lines after it.
 */
export function sanitizeMultiline(text: string): string {
  return text.split("\n").map((line) => {
    const cells = line.replace(ESCAPE_SEQUENCE, "").split("\t");
    return cells.map(safeChars).join("\t");
  }).join("\n");
}

/** Colours and styles (SGR), and OSC 8 hyperlinks: the only sequences a drawn line may keep. */
// deno-lint-ignore no-control-regex -- matching control characters is the point
const STYLING = /^(?:\x1b\[[0-9;:]*m|\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\))$/;

/**
 * A line a renderer drew, reduced to what cannot move the cursor or change the terminal (styling
 * and links stay): the last defence when a renderer read text from disk, past argument cleaning.
 */
export function keepStylingOnly(line: string): string {
  let out = "";
  let last = 0;
  for (const m of line.matchAll(ESCAPE_SEQUENCE)) {
    out += safeChars(line.slice(last, m.index));
    if (STYLING.test(m[0])) out += m[0];
    last = m.index + m[0].length;
  }
  return out + safeChars(line.slice(last));
}

function safeChars(text: string): string {
  return text.replace(ALL_UNSAFE, "");
}
