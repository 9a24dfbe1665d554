/**
 * Folder `extension/ui/`: what the human sees: the modals, the info panel, and
 * untrusted text made safe to draw.
 *
 * The two masked-input overlays:
 *
 * - "🔐 Sudo Authentication Required" ({@link SudoModal}): sudo's password,
 *   showing what is being authorised.
 * - "🔑 Secret request" ({@link SecretModal}): a secret for `pi-secret-run`,
 *   showing the real argv the root broker will run, the agent's label marked
 *   unverified and, when the argv is not allowlisted, a red warning.
 *
 * Both are one component ({@link MaskedPromptModal}: masked input, keys,
 * paste, byte cap, live auto-cancel countdown, resolve-once, dispose/abort)
 * that differ only in their content lines, and one box.
 *
 * Everything shown comes from a {@link PromptRequest} or a
 * {@link SecretPromptRequest}, which the server read from the kernel or
 * verified itself, except the text the agent controls: sudo's prompt line
 * (`SUDO_PROMPT`) and the secret's `--label`. That text is sanitised and drawn
 * inside `«…»` after its own label, with continuation lines indented, so that
 * it can never pass for one of the modal's own lines.
 *
 * The secret lives only in {@link MaskedPromptModal}'s private array of code
 * points until Enter; it is then encoded straight into a `Uint8Array` that the
 * server can zero, and the array is emptied. It is never rendered (one `•` per
 * code point) and never logged.
 *
 * Rendering is pure ({@link renderSudoModal}, {@link renderSecretModal}) so
 * that it can be tested without a terminal.
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
import { MAX_PASSWORD_BYTES } from "../../askpass/protocol.ts";
import { isUnsafeCodePoint, sanitizeUntrusted } from "./prompt_text.ts";
import type { PromptOutcome, PromptRequest, SecretPromptRequest } from "../channel/prompter.ts";

/** The sudo modal's title, exactly as the spec words it. */
export const SUDO_MODAL_TITLE = "🔐 Sudo Authentication Required";
/** The secret modal's title: deliberately not the sudo modal's. */
export const SECRET_MODAL_TITLE = "🔑 Secret request";
/** Shown in the error colour when the secret's argv is not on the allowlist. */
export const NOT_ALLOWLISTED_WARNING =
  "⚠ Not on the allowlist: this command may show the agent what you type.";
/** Longest sanitised prompt text shown, in code points. */
export const MAX_PROMPT_DISPLAY_CHARS = 200;
/** Lines of the shell command shown before the rest is summarised. */
export const MAX_SHELL_COMMAND_LINES = 3;

/** Wrapped lines of the `Command:` line shown before it is cut with `…`. */
const MAX_COMMAND_LINES = 4;
/** Wrapped lines of sudo's prompt (or the secret's label) shown before it is cut with `…`. */
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
}

/** Everything {@link renderSudoModal} draws; no secrets, no callbacks. */
export interface SudoModalState extends MaskedInputView {
  readonly request: Pick<
    PromptRequest,
    "sudoArgv" | "toolCommand" | "promptText" | "attempt" | "maxAttempts"
  >;
}

/** Everything {@link renderSecretModal} draws; no secrets, no callbacks. */
export interface SecretModalState extends MaskedInputView {
  readonly request: Pick<SecretPromptRequest, "argv" | "cwd" | "label" | "allowlisted">;
}

// ---------------------------------------------------------------------------
// Text sanitising and quoting

/** sudo's prompt text (or a label) for display: see `prompt_text.ts`. */
export function sanitizePromptText(s: string): string {
  return sanitizeUntrusted(s, MAX_PROMPT_DISPLAY_CHARS);
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

/** Text that must stay visible after a cut `labelled` text, with its own style. */
interface Suffix {
  readonly text: string;
  readonly style: (s: string) => string;
}

/**
 * Wraps `text` after `label`, continuation lines indented under the text so
 * that untrusted text can never start a line of its own. At most `maxLines`;
 * the last kept line ends with `…` when text was cut. A `suffix` is never cut:
 * it goes after the last line, or on a line of its own when it does not fit.
 */
function labelled(
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
  const cut = wrapped.length > maxLines;
  const kept = wrapped.slice(0, maxLines);
  if (cut) {
    const last = kept.length - 1;
    kept[last] = truncateToWidth(kept[last], wrapWidth - 1, "") + "…";
  }
  const margin = hanging ? " ".repeat(indent) : "";
  const lines = hanging
    ? kept.map((line, i) => (i === 0 ? label : margin) + style(line))
    : kept.map(style);
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

/** `Command: ` and the quoted argv, wrapped under the label. */
function commandLines(argv: readonly string[], width: number): string[] {
  return labelled("Command: ", argv.map(shellQuote).join(" "), width, MAX_COMMAND_LINES);
}

/** Agent-controlled text, sanitised and framed in `«…»` after a muted label. */
function untrustedLines(
  label: string,
  untrusted: string,
  width: number,
  theme: ModalTheme,
  suffix?: Suffix,
): string[] {
  return labelled(
    theme.fg("muted", label),
    `«${sanitizePromptText(untrusted).trim()}»`,
    width,
    MAX_PROMPT_LINES,
    (s) => theme.fg("warning", s),
    suffix,
  );
}

/** Text wrapped to `width`, every line in one colour. */
function wrapped(text: string, width: number, style: (s: string) => string): string[] {
  return wrapTextWithAnsi(text, width).map(style);
}

/** The input line: the label and one `•` per code point, tail kept. */
function inputLine(
  label: string,
  typed: number,
  focused: boolean,
  width: number,
): string {
  const room = width - visibleWidth(label) - 1; // 1 column for the cursor
  const dots = typed <= room ? "•".repeat(typed) : "…" + "•".repeat(Math.max(0, room - 1));
  return label + dots + (focused ? CURSOR_MARKER : "") + CURSOR_BLOCK;
}

/**
 * The part both modals share, from the input line down: the masked input,
 * the countdown, the modal's reassurance `note`, and `N more waiting`.
 */
function inputFooterLines(
  view: MaskedInputView,
  inputLabel: string,
  note: string,
  width: number,
  theme: ModalTheme,
): string[] {
  const dim = (s: string) => theme.fg("dim", s);
  const countdown = formatCountdown(view.secondsLeft);
  const lines = [
    inputLine(inputLabel, view.typedLength, view.focused, width),
    "",
    ...wrapped(`Press Enter to submit, Escape to cancel · auto-cancel in ${countdown}`, width, dim),
    ...wrapped(note, width, dim),
  ];
  if (view.waiting > 0) {
    lines.push(theme.fg("warning", `${view.waiting} more waiting`));
  }
  return lines;
}

/** The sudo modal's content lines, unframed, for a content area `width` wide. */
function sudoContentLines(
  state: SudoModalState,
  width: number,
  theme: ModalTheme,
): string[] {
  const { request } = state;
  const lines: string[] = [
    theme.bold(theme.fg("accent", SUDO_MODAL_TITLE)),
    "",
    ...commandLines(request.sudoArgv, width),
  ];
  if (request.toolCommand !== null && request.toolCommand.length > 0) {
    lines.push(...shellCommandLines(request.toolCommand, width, theme));
  }
  lines.push(...untrustedLines("sudo asks: ", request.promptText, width, theme), "");
  if (request.attempt >= 2) {
    lines.push(theme.fg(
      "error",
      `Incorrect password, try again (${request.attempt}/${request.maxAttempts})`,
    ));
  }
  lines.push(...inputFooterLines(
    state,
    "Password: ",
    "Your password is secure and will not be visible to the AI model.",
    width,
    theme,
  ));
  return lines;
}

/** The secret modal's content lines, unframed, for a content area `width` wide. */
function secretContentLines(
  state: SecretModalState,
  width: number,
  theme: ModalTheme,
): string[] {
  const { request } = state;
  const lines: string[] = [
    theme.bold(theme.fg("accent", SECRET_MODAL_TITLE)),
    "",
    ...commandLines(request.argv, width),
    // Where it runs matters (`cat .env`): the caller's real cwd, checked by the broker.
    ...labelled("In: ", shellQuote(request.cwd), width, MAX_COMMAND_LINES),
    // The marker is a suffix, so a long label can never push it out of view.
    ...untrustedLines("Label: ", request.label, width, theme, {
      text: "(unverified)",
      style: (s) => theme.bold(theme.fg("warning", s)),
    }),
  ];
  if (!request.allowlisted) {
    lines.push(...wrapped(NOT_ALLOWLISTED_WARNING, width, (s) => theme.fg("error", s)));
  }
  lines.push(
    "",
    ...inputFooterLines(
      state,
      "Secret: ",
      "The secret goes to this command's stdin and will not be visible to the AI model.",
      width,
      theme,
    ),
  );
  return lines;
}

/**
 * Frames content lines for a terminal area `width` columns wide: every line at
 * most `width` visible columns, boxed so it cannot be mistaken for tool output
 * (bare, but still cut to width, when there is no room for a box).
 */
function boxed(
  content: (innerWidth: number) => string[],
  width: number,
  theme: ModalTheme,
): string[] {
  if (width < MIN_BOX_WIDTH) {
    return content(Math.max(1, width)).map((line) => truncateToWidth(line, Math.max(0, width), ""));
  }
  const inner = width - 4;
  const border = (s: string) => theme.fg("borderAccent", s);
  const rule = "─".repeat(width - 2);
  return [
    border(`╭${rule}╮`),
    ...content(inner).map((line) =>
      `${border("│")} ${truncateToWidth(line, inner, "…", true)} ${border("│")}`
    ),
    border(`╰${rule}╯`),
  ];
}

/**
 * Draws the sudo modal for a terminal area `width` columns wide. Pure: the
 * same state gives the same lines. Every line is at most `width` visible
 * columns; content is boxed so it cannot be mistaken for tool output.
 */
export function renderSudoModal(
  state: SudoModalState,
  width: number,
  theme: ModalTheme,
): string[] {
  return boxed((inner) => sudoContentLines(state, inner, theme), width, theme);
}

/**
 * Draws the "Secret request" modal for a terminal area `width` columns wide.
 * Pure, width-safe and boxed like {@link renderSudoModal}.
 */
export function renderSecretModal(
  state: SecretModalState,
  width: number,
  theme: ModalTheme,
): string[] {
  return boxed((inner) => secretContentLines(state, inner, theme), width, theme);
}

// ---------------------------------------------------------------------------
// The component

/** What a {@link MaskedPromptModal} is built from. */
export interface MaskedPromptModalOptions {
  /** Epoch milliseconds at which the modal cancels by itself. */
  readonly deadline: number;
  /** How many other requests wait behind this one right now. */
  readonly waiting: () => number;
  /** Draws the modal for the live view (pure; never sees the secret). */
  readonly render: (view: MaskedInputView, width: number) => string[];
  /** Asks the TUI to redraw (after typing and on each countdown tick). */
  readonly requestRender: () => void;
  /** Called exactly once with the outcome. */
  readonly done: (outcome: PromptOutcome) => void;
  /** Clock in epoch milliseconds; injectable for tests. */
  readonly now?: () => number;
}

/** What {@link SudoModal} or {@link SecretModal} is built from. */
export interface ModalOptions<R> {
  readonly request: R;
  readonly theme: ModalTheme;
  /** Asks the TUI to redraw (after typing and on each countdown tick). */
  readonly requestRender: () => void;
  /** Called exactly once with the outcome. */
  readonly done: (outcome: PromptOutcome) => void;
  /** Clock in epoch milliseconds; injectable for tests. */
  readonly now?: () => number;
}

/** What {@link SudoModal} is built from. */
export type SudoModalOptions = ModalOptions<PromptRequest>;
/** What {@link SecretModal} is built from. */
export type SecretModalOptions = ModalOptions<SecretPromptRequest>;

/** UTF-8 length of one code point. */
function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/**
 * Characters that cannot be part of a typed secret: controls (keys that are
 * not text) and lone surrogates (TextEncoder would turn them into U+FFFD,
 * silently changing the secret).
 */
function isRejectedInput(cp: number): boolean {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
    (cp >= 0xd800 && cp <= 0xdfff);
}

/**
 * A masked input overlay; the modals differ only in what `render` draws.
 * Enter submits, Escape or Ctrl+C cancels, Backspace removes the last code
 * point; the countdown cancels at the deadline. `done` is called exactly
 * once; later input is ignored.
 */
export class MaskedPromptModal implements Component, Focusable {
  /** Set by the TUI; draws the cursor marker for IME placement. */
  focused = false;

  readonly #deadline: number;
  readonly #waiting: () => number;
  readonly #render: (view: MaskedInputView, width: number) => string[];
  readonly #requestRender: () => void;
  readonly #done: (outcome: PromptOutcome) => void;
  readonly #now: () => number;
  /** One string per code point, so Backspace and the `•` count are exact. */
  readonly #secret: string[] = [];
  #secretBytes = 0;
  #resolved = false;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: MaskedPromptModalOptions) {
    this.#deadline = options.deadline;
    this.#waiting = options.waiting;
    this.#render = options.render;
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
    return this.#render(
      {
        typedLength: this.#secret.length,
        secondsLeft: this.#secondsLeft(),
        waiting: this.#waiting(),
        focused: this.focused,
      },
      width,
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
      const removed = this.#secret.pop();
      if (removed !== undefined) {
        this.#secretBytes -= utf8Length(removed.codePointAt(0) ?? 0);
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
    return Math.max(0, Math.ceil((this.#deadline - this.#now()) / 1000));
  }

  #tick(): void {
    if (this.#secondsLeft() <= 0) this.#resolve(CANCEL);
    else this.#requestRender();
  }

  /**
   * Appends typed or pasted text. A typed chunk with any control character
   * is an unhandled key (arrows, F-keys…) and is ignored whole; in a paste,
   * controls (including CR/LF) are dropped one by one. Input past
   * {@link MAX_PASSWORD_BYTES} UTF-8 bytes (sudo's limit, and the protocol's
   * for secrets) is ignored.
   */
  #append(text: string, mode: "reject-chunk" | "drop-controls"): void {
    const chars = [...text];
    const rejected = (ch: string) => isRejectedInput(ch.codePointAt(0) ?? 0);
    if (mode === "reject-chunk" && chars.some(rejected)) return;
    let changed = false;
    for (const ch of chars) {
      if (rejected(ch)) continue;
      const bytes = utf8Length(ch.codePointAt(0) ?? 0);
      if (this.#secretBytes + bytes > MAX_PASSWORD_BYTES) break;
      this.#secret.push(ch);
      this.#secretBytes += bytes;
      changed = true;
    }
    if (changed) this.#requestRender();
  }

  #submit(): void {
    // Encode code point by code point into the final buffer, so no joined
    // string copy of the secret is ever made (strings cannot be zeroed).
    const password = new Uint8Array(this.#secretBytes);
    const encoder = new TextEncoder();
    let offset = 0;
    for (const ch of this.#secret) {
      offset += encoder.encodeInto(ch, password.subarray(offset)).written;
    }
    this.#resolve({ kind: "submit", password });
  }

  #resolve(outcome: PromptOutcome): void {
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    this.#secret.length = 0;
    this.#secretBytes = 0;
    if (this.#resolved) return;
    this.#resolved = true;
    this.#done(outcome);
  }
}

/** The masked sudo password overlay ("🔐 Sudo Authentication Required"). */
export class SudoModal extends MaskedPromptModal {
  constructor(options: SudoModalOptions) {
    const { request, theme } = options;
    super({
      deadline: request.deadline,
      waiting: request.waiting,
      render: (view, width) => renderSudoModal({ ...view, request }, width, theme),
      requestRender: options.requestRender,
      done: options.done,
      now: options.now,
    });
  }
}

/** The masked `pi-secret-run` overlay ("🔑 Secret request"). */
export class SecretModal extends MaskedPromptModal {
  constructor(options: SecretModalOptions) {
    const { request, theme } = options;
    super({
      deadline: request.deadline,
      waiting: request.waiting,
      render: (view, width) => renderSecretModal({ ...view, request }, width, theme),
      requestRender: options.requestRender,
      done: options.done,
      now: options.now,
    });
  }
}

// ---------------------------------------------------------------------------
// Showing it in pi

/** The part of pi's `ctx.ui` that {@link showSudoModal} uses. */
export type SudoModalUI = Pick<ExtensionUIContext, "custom">;
/** The part of pi's `ctx.ui` that {@link showSecretModal} uses. */
export type SecretModalUI = SudoModalUI;

/** Overlay placement: centred, 80 columns (pi-tui clamps to the terminal). */
export const SUDO_MODAL_OVERLAY: OverlayOptions = {
  anchor: "center",
  width: OVERLAY_WIDTH,
  margin: 1,
};
/** The secret modal's placement: the same as the sudo modal's. */
export const SECRET_MODAL_OVERLAY: OverlayOptions = SUDO_MODAL_OVERLAY;

/** What `showModal` needs to build a modal inside pi's overlay factory. */
type ModalFactory = (
  theme: ModalTheme,
  requestRender: () => void,
  done: (outcome: PromptOutcome) => void,
) => MaskedPromptModal;

/**
 * Shows a modal as a focused overlay and resolves with the human's answer.
 * `signal` aborting closes it with cancel. When pi has no TUI (RPC mode, where
 * `custom` resolves without calling the factory) this resolves cancel: a
 * secret must never be asked for through an unmasked channel.
 */
async function showModal(
  ui: SudoModalUI,
  signal: AbortSignal,
  overlayOptions: OverlayOptions,
  blockedMessage: string,
  create: ModalFactory,
): Promise<PromptOutcome> {
  if (signal.aborted) return CANCEL;
  let modal: MaskedPromptModal | undefined;
  const onAbort = () => modal?.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const outcome = await ui.custom<PromptOutcome | undefined>(
      (tui, theme, _keybindings, done) => {
        modal = create(theme, () => tui.requestRender(), done);
        // The signal may have fired while pi was preparing the overlay.
        if (signal.aborted) modal.abort();
        return modal;
      },
      {
        overlay: true,
        overlayOptions,
        blocked: { kind: "auth", message: blockedMessage },
      },
    );
    return modal === undefined ? CANCEL : outcome ?? CANCEL;
  } finally {
    signal.removeEventListener("abort", onAbort);
    // pi skips dispose() when done() ran before the factory returned.
    modal?.dispose();
  }
}

/**
 * Shows the sudo modal as a focused overlay and resolves with the human's
 * answer. `signal` aborting closes it with cancel. When pi has no TUI (RPC
 * mode, where `custom` resolves without calling the factory) this resolves
 * cancel: the password must never be asked for through an unmasked channel.
 */
export function showSudoModal(
  ui: SudoModalUI,
  request: PromptRequest,
  signal: AbortSignal,
): Promise<PromptOutcome> {
  return showModal(
    ui,
    signal,
    SUDO_MODAL_OVERLAY,
    "sudo password",
    (theme, requestRender, done) => new SudoModal({ request, theme, requestRender, done }),
  );
}

/**
 * Shows the "Secret request" modal for `pi-secret-run`, with the same
 * overlay, abort and RPC-mode behaviour as {@link showSudoModal}.
 */
export function showSecretModal(
  ui: SecretModalUI,
  request: SecretPromptRequest,
  signal: AbortSignal,
): Promise<PromptOutcome> {
  return showModal(
    ui,
    signal,
    SECRET_MODAL_OVERLAY,
    "secret for pi-secret-run",
    (theme, requestRender, done) => new SecretModal({ request, theme, requestRender, done }),
  );
}
