/**
 * The "🔐 Sudo Authentication Required" overlay: a masked password field that
 * shows what is being authorised, with a live auto-cancel countdown.
 *
 * Everything shown comes from a {@link PromptRequest}, which the server read
 * from the kernel, except `promptText` (sudo's prompt line, which the agent
 * controls through `SUDO_PROMPT`). That line is sanitised and drawn inside
 * `«…»` after a `sudo asks:` label, with continuation lines indented, so that
 * it can never pass for one of the modal's own lines.
 *
 * The password lives only in {@link SudoModal}'s private array of code points
 * until Enter; it is then encoded straight into a `Uint8Array` that the server
 * can zero, and the array is emptied. It is never rendered (one `•` per code
 * point) and never logged.
 *
 * Rendering is a pure function ({@link renderSudoModal}) so that it can be
 * tested without a terminal.
 *
 * @module
 */

import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";
import type { Component, Focusable, OverlayOptions } from "@earendil-works/pi-tui";
import {
  CURSOR_MARKER,
  decodeKittyPrintable,
  Key,
  matchesKey,
  truncateToWidth,
  visibleWidth,
  wrapTextWithAnsi,
} from "@earendil-works/pi-tui";
import { MAX_PASSWORD_BYTES } from "../askpass/protocol.ts";
import type { PromptOutcome, PromptRequest } from "./prompter.ts";

/** The modal's title, exactly as the spec words it. */
export const SUDO_MODAL_TITLE = "🔐 Sudo Authentication Required";
/** Longest sanitised prompt text shown, in code points. */
export const MAX_PROMPT_DISPLAY_CHARS = 200;
/** Lines of the shell command shown before the rest is summarised. */
export const MAX_SHELL_COMMAND_LINES = 3;

/** Wrapped lines of the `Command:` line shown before it is cut with `…`. */
const MAX_COMMAND_LINES = 4;
/** Wrapped lines of sudo's prompt shown before it is cut with `…`. */
const MAX_PROMPT_LINES = 3;
/** Below this width there is no room for a box; lines are drawn bare. */
const MIN_BOX_WIDTH = 12;
/** Preferred overlay width; pi-tui clamps it to the terminal. */
const OVERLAY_WIDTH = 80;
const TICK_MS = 1000;
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
/** Inverse-video space: a visible cursor block even when the terminal hides its own. */
const CURSOR_BLOCK = "\x1b[7m \x1b[27m";
const CANCEL: PromptOutcome = { kind: "cancel" };

/** Theme colours the modal uses; a subset of pi's `ThemeColor`. */
export type ModalColor =
  | "accent"
  | "borderAccent"
  | "muted"
  | "dim"
  | "error"
  | "warning";

/** The part of pi's `Theme` the modal needs (tests pass a plain object). */
export interface ModalTheme {
  fg(color: ModalColor, text: string): string;
  bold(text: string): string;
}

/** Everything {@link renderSudoModal} draws; no secrets, no callbacks. */
export interface SudoModalState {
  readonly request: Pick<
    PromptRequest,
    "sudoArgv" | "toolCommand" | "promptText" | "attempt" | "maxAttempts"
  >;
  /** Code points typed so far (the password itself is never passed in). */
  readonly typedLength: number;
  /** Whole seconds until auto-cancel, rounded up, never negative. */
  readonly secondsLeft: number;
  /** Other requests queued behind this one. */
  readonly waiting: number;
  /** Whether the overlay has keyboard focus (draws the cursor). */
  readonly focused: boolean;
}

// ---------------------------------------------------------------------------
// Text sanitising and quoting

/**
 * Characters that must never reach the terminal from untrusted text: C0, DEL
 * and C1 controls (ESC starts escape sequences, CR/LF could forge lines),
 * bidi marks, embeddings, overrides and isolates (they reorder what is shown,
 * "Trojan Source"), zero-width characters and line/paragraph separators.
 */
function isUnsafeCodePoint(cp: number): boolean {
  return cp < 0x20 ||
    (cp >= 0x7f && cp <= 0x9f) ||
    cp === 0x061c ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x2028 && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x2069) ||
    cp === 0xfeff;
}

/**
 * Terminal escape sequences: CSI (7- and 8-bit), string sequences (OSC, DCS,
 * SOS, PM, APC) up to BEL/ST or the end of the text, and two-character ESC
 * sequences. Removed whole, so their parameters do not show up as text.
 */
const ESCAPE_SEQUENCE =
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x2f]*[\x30-\x7e]?/g;

/**
 * Makes untrusted one-line text (sudo's prompt) safe to draw: removes escape
 * sequences, C0/C1 controls, DEL, bidi controls and invisible characters,
 * then keeps at most {@link MAX_PROMPT_DISPLAY_CHARS} code points (the last
 * one becomes `…` when the text was longer).
 */
export function sanitizePromptText(s: string): string {
  const kept: string[] = [];
  for (const ch of s.replace(ESCAPE_SEQUENCE, "")) {
    if (!isUnsafeCodePoint(ch.codePointAt(0) ?? 0)) kept.push(ch);
  }
  if (kept.length <= MAX_PROMPT_DISPLAY_CHARS) return kept.join("");
  return kept.slice(0, MAX_PROMPT_DISPLAY_CHARS - 1).join("") + "…";
}

/** `\n`-style or `\xHH` / `\uHHHH` spelling of an unsafe character. */
function escapeCodePoint(cp: number): string {
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
function escapeUnsafe(s: string): string {
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    out += isUnsafeCodePoint(cp) ? escapeCodePoint(cp) : ch;
  }
  return out;
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
    let body = "";
    for (const ch of arg) {
      const cp = ch.codePointAt(0) ?? 0;
      if (isUnsafeCodePoint(cp)) body += escapeCodePoint(cp);
      else if (ch === "\\" || ch === "'") body += `\\${ch}`;
      else body += ch;
    }
    return `$'${body}'`;
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
    if (/^-[A-Za-z]*c[A-Za-z]*$/.test(arg) && i + 1 < argv.length) {
      return argv[i + 1];
    }
  }
  return argv.map(shellQuote).join(" ");
}

// ---------------------------------------------------------------------------
// Rendering

/** `M:SS`, e.g. 114 → `1:54`. */
export function formatCountdown(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/**
 * Wraps `text` after `label`, continuation lines indented under the text so
 * that untrusted text can never start a line of its own. At most `maxLines`;
 * the last kept line ends with `…` when text was cut.
 */
function labelled(
  label: string,
  text: string,
  width: number,
  maxLines: number,
  style: (s: string) => string = (s) => s,
): string[] {
  const indent = visibleWidth(label);
  // Too narrow for a hanging indent: wrap label and text together instead.
  const hanging = width - indent >= 8;
  const wrapWidth = hanging ? width - indent : width;
  const wrapped = wrapTextWithAnsi(hanging ? text : label + text, wrapWidth);
  const cut = wrapped.length > maxLines;
  const kept = wrapped.slice(0, maxLines);
  if (cut) {
    const last = kept.length - 1;
    kept[last] = truncateToWidth(kept[last], wrapWidth - 1, "") + "…";
  }
  if (!hanging) return kept.map(style);
  return kept.map((line, i) => (i === 0 ? label : " ".repeat(indent)) + style(line));
}

/** Lines for the shell command: at most 3, then `… (N more lines)`. */
function shellCommandLines(
  argv: readonly string[],
  width: number,
  theme: ModalTheme,
): string[] {
  const source = shellCommandText(argv).replace(/\n+$/, "");
  const all = source.split("\n").map((line) =>
    escapeUnsafe(line.replace(/\r$/, "").replaceAll("\t", "  "))
  );
  const shown = all.slice(0, MAX_SHELL_COMMAND_LINES).map((line) =>
    "  " + truncateToWidth(line, Math.max(0, width - 2), "…")
  );
  const hidden = all.length - shown.length;
  if (hidden > 0) {
    const noun = hidden === 1 ? "line" : "lines";
    shown.push("  " + theme.fg("muted", `… (${hidden} more ${noun})`));
  }
  return [theme.fg("muted", "Shell command:"), ...shown];
}

/** The password line: `Password: ` and one `•` per code point, tail kept. */
function passwordLine(
  typed: number,
  focused: boolean,
  width: number,
): string {
  const label = "Password: ";
  const room = width - visibleWidth(label) - 1; // 1 column for the cursor
  const dots = typed <= room ? "•".repeat(typed) : "…" + "•".repeat(Math.max(0, room - 1));
  return label + dots + (focused ? CURSOR_MARKER : "") + CURSOR_BLOCK;
}

/** The modal's content lines, unframed, for a content area `width` wide. */
function contentLines(
  state: SudoModalState,
  width: number,
  theme: ModalTheme,
): string[] {
  const { request } = state;
  const lines: string[] = [
    theme.bold(theme.fg("accent", SUDO_MODAL_TITLE)),
    "",
  ];
  const command = request.sudoArgv.map(shellQuote).join(" ");
  lines.push(...labelled("Command: ", command, width, MAX_COMMAND_LINES));
  if (request.toolCommand !== null && request.toolCommand.length > 0) {
    lines.push(...shellCommandLines(request.toolCommand, width, theme));
  }
  const prompt = sanitizePromptText(request.promptText).trim();
  lines.push(
    ...labelled(
      theme.fg("muted", "sudo asks: "),
      `«${prompt}»`,
      width,
      MAX_PROMPT_LINES,
      (s) => theme.fg("warning", s),
    ),
    "",
  );
  if (request.attempt >= 2) {
    lines.push(theme.fg(
      "error",
      `Incorrect password, try again (${request.attempt}/${request.maxAttempts})`,
    ));
  }
  lines.push(passwordLine(state.typedLength, state.focused, width), "");
  const countdown = formatCountdown(state.secondsLeft);
  for (
    const text of [
      `Press Enter to submit, Escape to cancel · auto-cancel in ${countdown}`,
      "Your password is secure and will not be visible to the AI model.",
    ]
  ) {
    lines.push(...wrapTextWithAnsi(text, width).map((l) => theme.fg("dim", l)));
  }
  if (state.waiting > 0) {
    lines.push(theme.fg("warning", `${state.waiting} more waiting`));
  }
  return lines;
}

/**
 * Draws the modal for a terminal area `width` columns wide. Pure: the same
 * state gives the same lines. Every line is at most `width` visible columns;
 * content is boxed so it cannot be mistaken for tool output.
 */
export function renderSudoModal(
  state: SudoModalState,
  width: number,
  theme: ModalTheme,
): string[] {
  if (width < MIN_BOX_WIDTH) {
    return contentLines(state, Math.max(1, width), theme).map((line) =>
      truncateToWidth(line, Math.max(0, width), "")
    );
  }
  const inner = width - 4;
  const border = (s: string) => theme.fg("borderAccent", s);
  const rule = "─".repeat(width - 2);
  return [
    border(`╭${rule}╮`),
    ...contentLines(state, inner, theme).map((line) =>
      `${border("│")} ${truncateToWidth(line, inner, "…", true)} ${border("│")}`
    ),
    border(`╰${rule}╯`),
  ];
}

// ---------------------------------------------------------------------------
// The component

/** What {@link SudoModal} is built from. */
export interface SudoModalOptions {
  readonly request: PromptRequest;
  readonly theme: ModalTheme;
  /** Asks the TUI to redraw (after typing and on each countdown tick). */
  readonly requestRender: () => void;
  /** Called exactly once with the outcome. */
  readonly done: (outcome: PromptOutcome) => void;
  /** Clock in epoch milliseconds; injectable for tests. */
  readonly now?: () => number;
}

/** UTF-8 length of one code point. */
function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/**
 * Characters that cannot be part of a typed password: controls (keys that are
 * not text) and lone surrogates (TextEncoder would turn them into U+FFFD,
 * silently changing the password).
 */
function isRejectedInput(cp: number): boolean {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
    (cp >= 0xd800 && cp <= 0xdfff);
}

/**
 * The masked password overlay. Enter submits, Escape or Ctrl+C cancels,
 * Backspace removes the last code point; the countdown cancels at the
 * deadline. `done` is called exactly once; later input is ignored.
 */
export class SudoModal implements Component, Focusable {
  /** Set by the TUI; draws the cursor marker for IME placement. */
  focused = false;

  readonly #request: PromptRequest;
  readonly #theme: ModalTheme;
  readonly #requestRender: () => void;
  readonly #done: (outcome: PromptOutcome) => void;
  readonly #now: () => number;
  /** One string per code point, so Backspace and the `•` count are exact. */
  readonly #password: string[] = [];
  #passwordBytes = 0;
  #resolved = false;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: SudoModalOptions) {
    this.#request = options.request;
    this.#theme = options.theme;
    this.#requestRender = options.requestRender;
    this.#done = options.done;
    this.#now = options.now ?? Date.now;
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
  }

  /** Whether `done` has been called. */
  get resolved(): boolean {
    return this.#resolved;
  }

  render(width: number): string[] {
    return renderSudoModal(
      {
        request: this.#request,
        typedLength: this.#password.length,
        secondsLeft: this.#secondsLeft(),
        waiting: this.#request.waiting(),
        focused: this.focused,
      },
      width,
      this.#theme,
    );
  }

  handleInput(data: string): void {
    if (this.#resolved) return;
    // A paste arrives as one chunk wrapped in markers (pi-tui re-wraps it).
    // Its Enter/Escape bytes are text, never keys, so it is handled first.
    if (data.includes(PASTE_START) || data.includes(PASTE_END)) {
      const text = data.replaceAll(PASTE_START, "").replaceAll(PASTE_END, "");
      this.#append(text, "drop-controls");
      return;
    }
    if (matchesKey(data, Key.enter)) return this.#submit();
    if (matchesKey(data, Key.escape) || matchesKey(data, Key.ctrl("c"))) {
      return this.#resolve(CANCEL);
    }
    if (matchesKey(data, Key.backspace)) {
      const removed = this.#password.pop();
      if (removed !== undefined) {
        this.#passwordBytes -= utf8Length(removed.codePointAt(0) ?? 0);
        this.#requestRender();
      }
      return;
    }
    // With the Kitty keyboard protocol, plain characters arrive as CSI-u.
    this.#append(decodeKittyPrintable(data) ?? data, "reject-chunk");
  }

  /** Cancels the prompt (the request's AbortSignal fired). */
  abort(): void {
    this.#resolve(CANCEL);
  }

  invalidate(): void {
    // Nothing cached: every render restyles with the current theme.
  }

  /**
   * Stops the countdown. pi calls this after `done`; it also calls it when
   * it tears overlays down without `done` (extension UI reset), so an
   * unresolved modal cancels here rather than leave its caller waiting.
   */
  dispose(): void {
    this.#resolve(CANCEL);
  }

  #secondsLeft(): number {
    return Math.max(
      0,
      Math.ceil((this.#request.deadline - this.#now()) / 1000),
    );
  }

  #tick(): void {
    if (this.#secondsLeft() <= 0) this.#resolve(CANCEL);
    else this.#requestRender();
  }

  /**
   * Appends typed or pasted text. A typed chunk with any control character
   * is an unhandled key (arrows, F-keys…) and is ignored whole; in a paste,
   * controls (including CR/LF) are dropped one by one. Input past
   * {@link MAX_PASSWORD_BYTES} UTF-8 bytes (sudo's limit) is ignored.
   */
  #append(text: string, mode: "reject-chunk" | "drop-controls"): void {
    const chars = [...text];
    const rejected = (ch: string) => isRejectedInput(ch.codePointAt(0) ?? 0);
    if (mode === "reject-chunk" && chars.some(rejected)) return;
    let changed = false;
    for (const ch of chars) {
      if (rejected(ch)) continue;
      const bytes = utf8Length(ch.codePointAt(0) ?? 0);
      if (this.#passwordBytes + bytes > MAX_PASSWORD_BYTES) break;
      this.#password.push(ch);
      this.#passwordBytes += bytes;
      changed = true;
    }
    if (changed) this.#requestRender();
  }

  #submit(): void {
    // Encode code point by code point into the final buffer, so no joined
    // string copy of the password is ever made (strings cannot be zeroed).
    const password = new Uint8Array(this.#passwordBytes);
    const encoder = new TextEncoder();
    let offset = 0;
    for (const ch of this.#password) {
      offset += encoder.encodeInto(ch, password.subarray(offset)).written;
    }
    this.#resolve({ kind: "submit", password });
  }

  #resolve(outcome: PromptOutcome): void {
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    this.#password.length = 0;
    this.#passwordBytes = 0;
    if (this.#resolved) return;
    this.#resolved = true;
    this.#done(outcome);
  }
}

// ---------------------------------------------------------------------------
// Showing it in pi

/** The part of pi's `ctx.ui` that {@link showSudoModal} uses. */
export type SudoModalUI = Pick<ExtensionUIContext, "custom">;

/** Overlay placement: centred, 80 columns (pi-tui clamps to the terminal). */
export const SUDO_MODAL_OVERLAY: OverlayOptions = {
  anchor: "center",
  width: OVERLAY_WIDTH,
  margin: 1,
};

/**
 * Shows the modal as a focused overlay and resolves with the human's answer.
 * `signal` aborting closes it with cancel. When pi has no TUI (RPC mode, where
 * `custom` resolves without calling the factory) this resolves cancel: the
 * password must never be asked for through an unmasked channel.
 */
export async function showSudoModal(
  ui: SudoModalUI,
  request: PromptRequest,
  signal: AbortSignal,
): Promise<PromptOutcome> {
  if (signal.aborted) return CANCEL;
  let modal: SudoModal | undefined;
  const onAbort = () => modal?.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const outcome = await ui.custom<PromptOutcome | undefined>(
      (tui, theme, _keybindings, done) => {
        modal = new SudoModal({
          request,
          theme,
          requestRender: () => tui.requestRender(),
          done,
        });
        // The signal may have fired while pi was preparing the overlay.
        if (signal.aborted) modal.abort();
        return modal;
      },
      {
        overlay: true,
        overlayOptions: SUDO_MODAL_OVERLAY,
        blocked: { kind: "auth", message: "sudo password" },
      },
    );
    return modal === undefined ? CANCEL : outcome ?? CANCEL;
  } finally {
    signal.removeEventListener("abort", onAbort);
    // pi skips dispose() when done() ran before the factory returned.
    modal?.dispose();
  }
}
