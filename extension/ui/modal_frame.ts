/**
 * What both modals draw alike: theme, masked-input view, `Command:` and untrusted-text lines,
 * title, input line, footer and box. Pure: the same input gives the same lines.
 *
 * @module
 */

import { CURSOR_MARKER, truncateToWidth, visibleWidth } from "@earendil-works/pi-tui";
import { formatCountdown, labelled, shellQuote, type Suffix, wrapped } from "./modal_text.ts";
import { sanitizePrompt, sanitizeUntrusted } from "../../askpass/prompt_text.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** Wrapped lines of the secret modal's `In:` line shown before it is cut with `…`. */
export const MAX_COMMAND_LINES = 4;
/** Wrapped lines of sudo's prompt (or the secret's label) shown before it is cut with `…`. */
const MAX_PROMPT_LINES = 3;
/** Below this width there is no room for a box; lines are drawn bare. */
const MIN_BOX_WIDTH = 12;
/** Inverse-video space: a visible cursor block even when the terminal hides its own. */
const CURSOR_BLOCK = "\x1b[7m \x1b[27m";

/** Theme colours the modal uses; a subset of pi's `ThemeColor`. */
export type ModalColor = "accent" | "borderAccent" | "muted" | "dim" | "error" | "warning";

/** The part of pi's `Theme` the modal needs (tests pass a plain object). */
export interface ModalTheme {
  fg(color: ModalColor, text: string): string;
  bold(text: string): string;
}

/** The live part of a modal's state, common to both modals; no secrets. */
export interface MaskedInputView {
  /** Code points typed so far (the secret itself is never passed in). */
  readonly typedLength: number;
  /** Whole seconds until auto-cancel, rounded up, never negative. */
  readonly secondsLeft: number;
  /** Other requests queued behind this one. */
  readonly waiting: number;
  /** Whether the overlay has keyboard focus (draws the cursor). */
  readonly focused: boolean;
  /** Lines scrolled down in the command section (↑/↓, PgUp/PgDn); 0 when absent. */
  readonly scroll?: number;
  /** Keys typed for a modal withdrawn under the human's fingers are still being dropped. */
  readonly droppingKeys?: boolean;
  /** The reply to the agent typed so far (shown in clear: it is not a secret); "" when absent. */
  readonly reply?: string;
  /** Whether the keys go to the reply field (Tab) rather than the password. */
  readonly replying?: boolean;
}

/** Lines of the command section shown at once; more scroll (nothing is cut). */
export const COMMAND_WINDOW_LINES = 10;

/**
 * A window of `lines` from `scroll` down, with a line saying where it is, when they do not all
 * fit: nothing root may run is hidden without a way to see it.
 */
export function scrolledLines(
  lines: readonly string[],
  scroll: number,
  theme: ModalTheme,
): string[] {
  if (lines.length <= COMMAND_WINDOW_LINES) return [...lines];
  const top = Math.min(Math.max(0, scroll), lines.length - COMMAND_WINDOW_LINES);
  const end = top + COMMAND_WINDOW_LINES;
  return [
    ...lines.slice(top, end),
    theme.fg("accent", msg.scrollHint(top + 1, end, lines.length)),
  ];
}

/** `Command: ` and the quoted argv, wrapped under the label, whole (never cut). */
export function commandLines(argv: readonly string[], width: number): string[] {
  return labelled(msg.commandLabel, argv.map(shellQuote).join(" "), width, Infinity);
}

/** Agent-controlled text, sanitised and framed in `«…»` after a muted label. */
export function untrustedLines(
  label: string,
  untrusted: string,
  width: number,
  theme: ModalTheme,
  suffix?: Suffix,
): string[] {
  return labelled(
    theme.fg("muted", label),
    `«${sanitizePrompt(untrusted)}»`,
    width,
    MAX_PROMPT_LINES,
    (s) => theme.fg("warning", s),
    suffix,
  );
}

/** The cursor, drawn only in the field the keys go to. */
function cursor(active: boolean, focused: boolean): string {
  return active ? (focused ? CURSOR_MARKER : "") + CURSOR_BLOCK : "";
}

/** The input line: the label and one `•` per code point, tail kept. */
function inputLine(label: string, typed: number, cursorText: string, width: number): string {
  const room = width - visibleWidth(label) - 1; // 1 column for the cursor
  const dots = typed <= room ? "•".repeat(typed) : "…" + "•".repeat(Math.max(0, room - 1));
  return label + dots + cursorText;
}

/**
 * The reply field: a hint while empty and not chosen, else the reply in clear, tail kept (drawn
 * safely all the same, since it reaches the agent).
 */
function replyLines(state: MaskedInputView, width: number, theme: ModalTheme): string[] {
  const reply = state.reply ?? "";
  if (!state.replying && reply === "") {
    return wrapped(msg.replyHint, width, (s) => theme.fg("muted", s));
  }
  const room = Math.max(1, width - visibleWidth(msg.replyLabel) - 1);
  // The tail, where the human types; a line too wide is still cut by the box.
  const shown = visibleWidth(reply) <= room ? reply : "…" + [...reply].slice(1 - room).join("");
  return [
    theme.fg("accent", msg.replyLabel) + sanitizeUntrusted(shown, room) +
    cursor(state.replying === true, state.focused),
  ];
}

/** `lines` in a box `width` columns wide, each cut with `…` or padded to fit inside. */
export function boxLines(lines: readonly string[], width: number, theme: ModalTheme): string[] {
  const border = (s: string) => theme.fg("borderAccent", s);
  const rule = "─".repeat(width - 2);
  return [
    border(`╭${rule}╮`),
    ...lines.map((line) =>
      `${border("│")} ${truncateToWidth(line, width - 4, "…", true)} ${border("│")}`
    ),
    border(`╰${rule}╯`),
  ];
}

/**
 * A modal's renderer: title, its `body` lines, masked input, countdown, `note` and `N more
 * waiting`. Every line fits `width`, boxed so it cannot be mistaken for tool output.
 */
export function modalRenderer<S extends MaskedInputView>(
  title: string,
  body: (state: S, width: number, theme: ModalTheme) => string[],
  input: { readonly label: string; readonly note: string },
): (state: S, width: number, theme: ModalTheme) => string[] {
  const content = (state: S, width: number, theme: ModalTheme): string[] => {
    const dim = (s: string) => theme.fg("dim", s);
    const countdown = formatCountdown(state.secondsLeft);
    const keys = state.replying ? msg.keysReplying(countdown) : msg.keysPassword(countdown);
    return [
      theme.bold(theme.fg("accent", title)),
      "",
      ...body(state, width, theme),
      inputLine(input.label, state.typedLength, cursor(!state.replying, state.focused), width),
      ...replyLines(state, width, theme),
      ...(state.droppingKeys ? wrapped(msg.keysDropped, width, (s) => theme.fg("warning", s)) : []),
      "",
      ...wrapped(keys, width, dim),
      ...wrapped(input.note, width, dim),
      ...(state.waiting > 0 ? [theme.fg("warning", msg.moreWaiting(state.waiting))] : []),
    ];
  };
  return (state, width, theme) =>
    width < MIN_BOX_WIDTH
      ? content(state, Math.max(1, width), theme).map((line) =>
        truncateToWidth(line, Math.max(0, width), "")
      )
      : boxLines(content(state, width - 4, theme), width, theme);
}
