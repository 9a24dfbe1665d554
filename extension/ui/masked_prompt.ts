/**
 * The masked input component both modals are ({@link MaskedPromptModal}, each drawn by its
 * {@link ModalLook}) and {@link showModal}, which shows one as a focused overlay in pi. The secret
 * lives only in the component's private array of code points until Enter, then goes straight into
 * a `Uint8Array` the server can zero; it is never rendered (one `•` per code point) and never
 * logged.
 *
 * @module
 */

import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";
import type { Component, Focusable, OverlayOptions } from "@earendil-works/pi-tui";
import { decodeKittyPrintable, Key, matchesKey } from "@earendil-works/pi-tui";
import { DENY_REASONS, MAX_PASSWORD_BYTES } from "../../askpass/protocol.ts";
import type { PromptOutcome } from "../../askpass/prompter.ts";
import { hasUnsafe } from "../../askpass/prompt_text.ts";
import type { MaskedInputView, ModalTheme } from "./modal_frame.ts";
import { msg } from "../../shared/i18n/locale.ts";
import { KEY_DROP, PASTE } from "../../shared/modal_keys.ts";

const TICK_MS = 1000;
/** The outcome of a modal closed without an answer. */
export const CANCEL: PromptOutcome = { kind: "cancel" };
/** Keys that scroll the command section, and by how many lines. */
const SCROLL_KEYS = [[Key.up, -1], [Key.down, 1], [Key.pageUp, -8], [Key.pageDown, 8]] as const;

/** Longest reply to the agent, in code points: one line, a reason, not a letter. */
export const MAX_REPLY_LENGTH = 160;

/** Overlay placement: centred, 80 columns (pi-tui clamps to the terminal). */
export const OVERLAY: OverlayOptions = { anchor: "center", width: 80, margin: 1 };

/** What the component needs of a request: when to cancel, and the queue behind it. */
export interface QueuedRequest {
  /** Epoch milliseconds at which the modal cancels by itself. */
  readonly deadline: number;
  /** How many other requests wait behind this one right now. */
  readonly waiting: () => number;
}

/** What a {@link MaskedPromptModal} is built from. */
export interface ModalOptions<R> {
  readonly request: R;
  readonly theme: ModalTheme;
  /** Draws it: what makes it the sudo or the secret modal. */
  readonly draw: ModalRenderer<R>;
  /** Asks the TUI to redraw (after typing and on each countdown tick). */
  readonly requestRender: () => void;
  /** Called exactly once with the outcome. */
  readonly done: (outcome: PromptOutcome) => void;
  /** Clock in epoch milliseconds; injectable for tests. */
  readonly now?: () => number;
}

/** Draws a modal for the live view of its request (pure; never sees the secret). */
export type ModalRenderer<R> = (
  state: MaskedInputView & { readonly request: R },
  width: number,
  theme: ModalTheme,
) => string[];

/** What tells the two modals apart: how each draws, and its words where it is not drawn. */
export interface ModalLook<R> {
  readonly draw: ModalRenderer<R>;
  /** What pi says of the overlay when it cannot show one (RPC mode). */
  readonly blocked: string;
  /** The title of pi's pane while the modal is on other terminals. */
  readonly elsewhereTitle: string;
}

/** The part of pi's `ctx.ui` that showing a modal uses. */
export type ModalUI =
  & Pick<ExtensionUIContext, "custom">
  & Partial<Pick<ExtensionUIContext, "onTerminalInput" | "notify">>;

/**
 * The current drop of keys ({@link KEY_DROP}). `throughNewModal`: the human was typing into the
 * withdrawn modal, so the rest of that password is dropped even if another modal opens meanwhile
 * (the agent can queue one).
 */
let keyDrop: { readonly stop: () => void; readonly throughNewModal: boolean } | undefined;

function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/**
 * Not part of a typed secret: controls (keys, not text) and lone surrogates (TextEncoder would
 * turn them into U+FFFD, silently changing the secret).
 */
function isRejectedInput(cp: number): boolean {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0xd800 && cp <= 0xdfff);
}

/**
 * A masked input overlay; the modals differ only in what they `draw`. Enter submits, Escape or
 * Ctrl+C cancels, as does the deadline; `done` is called exactly once. Tab switches to the user's
 * reply to the agent (issue 36): typed in clear in its own array, sent only with a decline, never
 * moved to or from the password; the modal always opens on the password.
 */
export class MaskedPromptModal<R extends QueuedRequest = QueuedRequest>
  implements Component, Focusable {
  /** Set by the TUI; draws the cursor marker for IME placement. */
  focused = false;

  readonly #options: ModalOptions<R>;
  /** One string per code point, so Backspace and the `•` count are exact. */
  readonly #secret: string[] = [];
  #secretBytes = 0;
  /** The reply to the agent, one string per code point; never part of the secret. */
  readonly #reply: string[] = [];
  /** Which field the keys go to. */
  #replying = false;
  /** Lines scrolled in the command section: keys that are not text, so never the secret's. */
  #scroll = 0;
  #resolved = false;
  /** Set when something other than the human closes it once drawn: a withdrawal or the deadline. */
  #withdrawn = false;
  /** Set with `#withdrawn` when the human was typing into it then. */
  #withdrawnWhileTyping = false;
  /** `performance.now()` of the last text or Backspace typed. */
  #lastTypedAt = -Infinity;
  #drawn = false;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(options: ModalOptions<R>) {
    this.#options = options;
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
  }

  /** Whether `done` has been called. */
  get resolved(): boolean {
    return this.#resolved;
  }

  /**
   * Whether it closed under the human's fingers: withdrawn (its request
   * aborted) or timed out, rather than by Enter, Escape or pi's teardown.
   */
  get withdrawn(): boolean {
    return this.#withdrawn;
  }

  /**
   * Whether it was withdrawn with text typed into it, or a key typed less
   * than `KEY_DROP.idleMs` before: the human was typing the secret.
   */
  get withdrawnWhileTyping(): boolean {
    return this.#withdrawnWhileTyping;
  }

  render(width: number): string[] {
    this.#drawn = true;
    const { request, theme, draw } = this.#options;
    const state = {
      typedLength: this.#secret.length,
      secondsLeft: this.#secondsLeft(),
      waiting: request.waiting(),
      focused: this.focused,
      scroll: this.#scroll,
      droppingKeys: keyDrop !== undefined,
      reply: this.#reply.join(""),
      replying: this.#replying,
      request,
    };
    return draw(state, width, theme);
  }

  handleInput(data: string): void {
    if (this.#resolved) return;
    // A paste arrives as one chunk wrapped in markers (pi-tui re-wraps it).
    // Its Enter/Escape bytes are text, never keys, so it is handled first.
    if (data.includes(PASTE.start) || data.includes(PASTE.end)) {
      const text = data.replaceAll(PASTE.start, "").replaceAll(PASTE.end, "");
      if (this.#replying) return this.#appendReply(text, "drop-controls");
      return this.#append(text, "drop-controls");
    }
    if (matchesKey(data, Key.tab)) {
      this.#replying = !this.#replying;
      return this.#options.requestRender();
    }
    if (matchesKey(data, Key.enter)) return this.#replying ? this.#decline() : this.#submit();
    if (matchesKey(data, Key.escape) || matchesKey(data, Key.ctrl("c"))) return this.#decline();
    const step = SCROLL_KEYS.find(([key]) => matchesKey(data, key))?.[1];
    if (step !== undefined) {
      // Clamped by the renderer; kept within a sane range here.
      this.#scroll = Math.min(Math.max(0, this.#scroll + step), 10_000);
      return this.#options.requestRender();
    }
    if (this.#replying) {
      if (matchesKey(data, Key.backspace)) {
        if (this.#reply.pop() !== undefined) this.#options.requestRender();
      } else this.#appendReply(decodeKittyPrintable(data) ?? data, "reject-chunk");
      return;
    }
    if (matchesKey(data, Key.backspace)) {
      this.#lastTypedAt = performance.now();
      const removed = this.#secret.pop();
      if (removed !== undefined) {
        this.#secretBytes -= utf8Length(removed.codePointAt(0) ?? 0);
        this.#options.requestRender();
      }
      return;
    }
    // With the Kitty keyboard protocol, plain characters arrive as CSI-u.
    this.#append(decodeKittyPrintable(data) ?? data, "reject-chunk");
  }

  /** Cancels the prompt (the request's AbortSignal fired). */
  abort(): void {
    this.#withdraw();
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
    const now = (this.#options.now ?? Date.now)();
    return Math.max(0, Math.ceil((this.#options.request.deadline - now) / 1000));
  }

  #tick(): void {
    if (this.#secondsLeft() <= 0) this.#withdraw();
    else this.#options.requestRender();
  }

  /** Closes it with cancel without the human; notes whether they were typing. */
  #withdraw(): void {
    if (this.#drawn && !this.#resolved) {
      this.#withdrawn = true;
      this.#withdrawnWhileTyping = this.#secret.length > 0 ||
        performance.now() - this.#lastTypedAt < KEY_DROP.idleMs;
    }
    this.#resolve(CANCEL);
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
    this.#lastTypedAt = performance.now();
    let changed = false;
    for (const ch of chars) {
      if (rejected(ch)) continue;
      const bytes = utf8Length(ch.codePointAt(0) ?? 0);
      if (this.#secretBytes + bytes > MAX_PASSWORD_BYTES) break;
      this.#secret.push(ch);
      this.#secretBytes += bytes;
      changed = true;
    }
    if (changed) this.#options.requestRender();
  }

  /**
   * Appends to the reply, as {@link #append} does to the secret: one line
   * of text, so control, bidi and invisible characters never enter it, and
   * at most {@link MAX_REPLY_LENGTH} code points.
   */
  #appendReply(text: string, mode: "reject-chunk" | "drop-controls"): void {
    const chars = [...text];
    const rejected = (ch: string) => isRejectedInput(ch.codePointAt(0) ?? 0) || hasUnsafe(ch);
    if (mode === "reject-chunk" && chars.some(rejected)) return;
    const before = this.#reply.length;
    for (const ch of chars) {
      if (this.#reply.length >= MAX_REPLY_LENGTH) break;
      if (!rejected(ch)) this.#reply.push(ch);
    }
    if (this.#reply.length !== before) this.#options.requestRender();
  }

  /** The human declined: cancel, with their reply when they wrote one. */
  #decline(): void {
    const reply = this.#reply.join("").trim();
    this.#resolve(reply === "" ? CANCEL : { kind: "cancel", reply });
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
    clearInterval(this.#timer);
    this.#secret.length = 0;
    this.#secretBytes = 0;
    this.#reply.length = 0;
    if (this.#resolved) return;
    this.#resolved = true;
    this.#options.done(outcome);
  }
}

/**
 * Shows the modal `look` draws as a focused overlay; resolves with the answer, or cancel when
 * `signal` aborts. Without a TUI (RPC mode: `custom` never calls the factory) it cancels: a secret
 * must never be asked for through an unmasked channel.
 */
export async function showModal<R extends QueuedRequest>(
  ui: ModalUI,
  request: R,
  signal: AbortSignal,
  look: ModalLook<R>,
): Promise<PromptOutcome> {
  if (signal.aborted) return CANCEL;
  // Keys typed from now on are this modal's, unless they are the rest of a
  // password that was being typed into a withdrawn one.
  if (!keyDrop?.throughNewModal) keyDrop?.stop();
  let modal: MaskedPromptModal<R> | undefined;
  const onAbort = () => modal?.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const outcome = await ui.custom<PromptOutcome | undefined>(
      (tui, theme, _keybindings, done) => {
        const requestRender = () => tui.requestRender();
        modal = new MaskedPromptModal({ request, theme, draw: look.draw, requestRender, done });
        // The signal may have fired while pi was preparing the overlay.
        if (signal.aborted) modal.abort();
        return modal;
      },
      {
        overlay: true,
        overlayOptions: OVERLAY,
        blocked: { kind: "auth", message: look.blocked },
      },
    );
    return modal === undefined ? CANCEL : outcome ?? CANCEL;
  } finally {
    signal.removeEventListener("abort", onAbort);
    // pi skips dispose() when done() ran before the factory returned.
    modal?.dispose();
    // Not when pi's session closes (quit, reload) or pi was stopped (the keys
    // went to the shell meanwhile): what is typed next is meant for pi.
    const forPi = signal.reason === DENY_REASONS.SESSION_CLOSED ||
      signal.reason === DENY_REASONS.PI_STOPPED;
    if (modal?.withdrawn && !forPi) dropKeysAfterModal(ui, modal.withdrawnWhileTyping);
  }
}

/**
 * Drops typed text, Backspace and Enter (which ends the drop) until `KEY_DROP.idleMs` pass without
 * one, or `KEY_DROP.maxMs`; any other key ends it and reaches pi (or the modal open then). A new
 * modal ends it too, unless `throughNewModal`. Says once that keys were dropped.
 */
function dropKeysAfterModal(ui: ModalUI, throughNewModal: boolean): void {
  if (!ui.onTerminalInput) return;
  const end = performance.now() + KEY_DROP.maxMs;
  let dropped = false;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    if (keyDrop !== drop) return;
    keyDrop = undefined;
    clearTimeout(idle);
    unsubscribe();
    if (dropped) ui.notify?.(msg.droppedKeys, "info");
  };
  // A drop still running when the next modal is withdrawn is the same burst of
  // typing: the keys it held back never reached that modal to say so.
  const drop = { stop, throughNewModal: throughNewModal || keyDrop?.throughNewModal === true };
  keyDrop?.stop();
  keyDrop = drop;
  const unsubscribe = ui.onTerminalInput((data) => {
    if (keyDrop !== drop) return undefined;
    const enter = matchesKey(data, Key.enter);
    if (performance.now() > end || (!enter && !isTypedText(data))) return void stop();
    dropped = true;
    clearTimeout(idle);
    if (enter) stop();
    else idle = setTimeout(stop, KEY_DROP.idleMs);
    return { consume: true };
  });
  idle = setTimeout(stop, KEY_DROP.idleMs);
}

/** What the modal would have taken as part of the secret: text, a paste, Backspace. */
function isTypedText(data: string): boolean {
  if (data.includes(PASTE.start) || matchesKey(data, Key.backspace)) return true;
  const text = decodeKittyPrintable(data) ?? data;
  return text.length > 0 && ![...text].some((ch) => isRejectedInput(ch.codePointAt(0) ?? 0));
}
