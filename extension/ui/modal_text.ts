/**
 * Pure text helpers for the modals: shell quoting of argv, the `M:SS` countdown, wrapping with a
 * hanging indent.
 *
 * @module
 */

import { truncateToWidth, visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { hasUnsafe } from "../../askpass/prompt_text.ts";

/** One character as is, or spelt `\n`-style or `\xHH` / `\uHHHH` when unsafe. */
function escapeChar(ch: string): string {
  if (!hasUnsafe(ch)) return ch;
  const cp = ch.codePointAt(0) ?? 0;
  if (cp === 0x0a) return "\\n";
  if (cp === 0x09) return "\\t";
  if (cp === 0x0d) return "\\r";
  const hex = cp.toString(16).padStart(cp <= 0xff ? 2 : 4, "0");
  return cp <= 0xff ? `\\x${hex}` : `\\u${hex}`;
}

/**
 * Unsafe characters as visible escapes, not removed: dropping them would make the modal show a
 * different command from the one that runs.
 */
export function escapeUnsafe(s: string): string {
  return Array.from(s, escapeChar).join("");
}

const SHELL_SAFE_WORD = /^[\p{L}\p{N}_@%+=:,./-]+$/u;

/**
 * Quotes one argv element as a shell user reads it: bare, `'…'`, or `$'…'` (ANSI-C quoting) when
 * it holds control, bidi or invisible characters, so those show exactly and harmlessly.
 */
export function shellQuote(arg: string): string {
  if (arg === "") return "''";
  if (hasUnsafe(arg)) {
    // Backslashes and quotes first, so the escapes added after stay single.
    return `$'${escapeUnsafe(arg.replace(/[\\']/g, "\\$&"))}'`;
  }
  if (SHELL_SAFE_WORD.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** What to show for the shell that runs sudo: CMD of `bash -c CMD` (`-lc`…), else the argv. */
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
 * Wraps `text` after `label`, continuation lines indented so untrusted text never starts a line
 * of its own; at most `maxLines`, cut with `…`. A `suffix` is never cut.
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
