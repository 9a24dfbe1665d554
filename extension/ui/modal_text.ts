/**
 * Pure text helpers for the modals: quoting argv the way a shell user reads
 * it, the `M:SS` countdown, and wrapping with a hanging indent. No theme,
 * no state, no terminal.
 *
 * @module
 */

import { truncateToWidth, visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { isUnsafeCodePoint } from "../../askpass/prompt_text.ts";

/** One character as is, or spelt `\n`-style or `\xHH` / `\uHHHH` when unsafe. */
function escapeChar(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  if (!isUnsafeCodePoint(cp)) return ch;
  if (cp === 0x0a) return "\\n";
  if (cp === 0x09) return "\\t";
  if (cp === 0x0d) return "\\r";
  const hex = cp.toString(16).padStart(cp <= 0xff ? 2 : 4, "0");
  return cp <= 0xff ? `\\x${hex}` : `\\u${hex}`;
}

/**
 * Shows unsafe characters as visible escapes instead of removing them: for
 * what is being authorised, silently dropping characters would make the
 * modal show a different command from the one that runs.
 */
export function escapeUnsafe(s: string): string {
  return Array.from(s, escapeChar).join("");
}

const SHELL_SAFE_WORD = /^[\p{L}\p{N}_@%+=:,./-]+$/u;

/**
 * Quotes one argv element the way a shell user would read it: bare when it
 * has no specials, `'…'` otherwise, and `$'…'` (bash ANSI-C quoting) when it
 * contains control, bidi or invisible characters, so those are shown exactly
 * and harmlessly.
 */
export function shellQuote(arg: string): string {
  if (arg === "") return "''";
  if ([...arg].some((ch) => isUnsafeCodePoint(ch.codePointAt(0) ?? 0))) {
    // Backslashes and quotes first, so the escapes added after stay single.
    return `$'${escapeUnsafe(arg.replace(/[\\']/g, "\\$&"))}'`;
  }
  if (SHELL_SAFE_WORD.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command text to show for the shell that runs sudo: for `bash -c CMD`
 * (also `-lc`, `-l -c`) the script CMD, otherwise the quoted argv.
 */
export function shellCommandText(argv: readonly string[]): string {
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--" || !arg.startsWith("-")) break;
    if (/^-[A-Za-z]*c[A-Za-z]*$/.test(arg) && i + 1 < argv.length) return argv[i + 1];
  }
  return argv.map(shellQuote).join(" ");
}

/** `M:SS`, e.g. 114 → `1:54`. */
export function formatCountdown(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** Text that must stay visible after a cut `labelled` text, with its own style. */
export interface Suffix {
  readonly text: string;
  readonly style: (s: string) => string;
}

/**
 * Wraps `text` after `label`, continuation lines indented under the text so
 * that untrusted text can never start a line of its own. At most `maxLines`;
 * the last kept line ends with `…` when text was cut. A `suffix` is never cut:
 * it goes after the last line, or on a line of its own when it does not fit.
 */
export function labelled(
  label: string,
  text: string,
  width: number,
  maxLines: number,
  style: (s: string) => string = (s) => s,
  suffix?: Suffix,
): string[] {
  const indent = visibleWidth(label);
  // Too narrow for a hanging indent: wrap label and text together instead.
  const hanging = width - indent >= 8;
  const wrapWidth = hanging ? width - indent : width;
  const wrapped = wrapTextWithAnsi(hanging ? text : label + text, wrapWidth);
  const kept = wrapped.slice(0, maxLines);
  if (wrapped.length > maxLines) {
    const last = kept.length - 1;
    kept[last] = truncateToWidth(kept[last], wrapWidth - 1, "") + "…";
  }
  const margin = hanging ? " ".repeat(indent) : "";
  const lines = kept.map((line, i) => (hanging && i === 0 ? label : margin) + style(line));
  if (suffix !== undefined) {
    const last = lines.length - 1;
    if (visibleWidth(kept[last]) + 1 + visibleWidth(suffix.text) <= wrapWidth) {
      lines[last] += " " + suffix.style(suffix.text);
    } else {
      lines.push(margin + suffix.style(suffix.text));
    }
  }
  return lines;
}

/** Text wrapped to `width`, every line in one colour. */
export function wrapped(text: string, width: number, style: (s: string) => string): string[] {
  return wrapTextWithAnsi(text, width).map(style);
}
