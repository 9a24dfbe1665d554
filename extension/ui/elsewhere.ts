/**
 * The modal on terminals other than pi's (inside tmux, each locked client's own, ADR 0009), drawn
 * in plain ANSI colours by whoever holds them. pi's pane shows a {@link PanePanel} with no input
 * field, so no key typed through tmux is ever taken as a password.
 *
 * @module
 */
import type { Component, Focusable } from "@earendil-works/pi-tui";
import { Key, matchesKey } from "@earendil-works/pi-tui";
import type { PromptOutcome } from "../../askpass/prompter.ts";
import { boxLines, type ModalTheme } from "./modal_frame.ts";
import { CANCEL, MaskedPromptModal, type ModalLook, OVERLAY } from "./masked_prompt.ts";
import type { ModalUI, QueuedRequest } from "./masked_prompt.ts";
import { wrapped } from "./modal_text.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** The modal's colours as plain SGR sequences, for a terminal pi draws on itself. */
export const ANSI_THEME: ModalTheme = {
  fg: (color, text) => {
    const code = { accent: 36, borderAccent: 36, muted: 90, dim: 2, error: 31, warning: 33 }[color];
    return `\x1b[${code}m${text}\x1b[${color === "dim" ? 22 : 39}m`;
  },
  bold: (text) => `\x1b[1m${text}\x1b[22m`,
};

/** One modal for one terminal, as the holder of that terminal draws and feeds it. */
export interface DrawnModal {
  render(width: number): string[];
  handleInput(data: string): void;
  dispose(): void;
  /** Closes it without the human (its request withdrawn). */
  abort(): void;
  /** It was withdrawn while the human was typing into it (their keys are then dropped). */
  readonly withdrawnWhileTyping: boolean;
}

/** Asks on other terminals, one modal each from `make`; `again` reaches clients attached since. */
export type Elsewhere = (
  make: (redraw: () => void, done: (outcome: PromptOutcome) => void) => DrawnModal,
  signal: AbortSignal,
) => { readonly outcome: Promise<PromptOutcome>; again(): void };

/** The pane's panel: Escape cancels, Enter asks tmux again, every other key is dropped. */
export class PanePanel implements Component, Focusable {
  focused = false;
  readonly #title: string;
  readonly #theme: ModalTheme;
  readonly #cancel: () => void;
  readonly #again: () => void;

  constructor(title: string, theme: ModalTheme, cancel: () => void, again: () => void) {
    [this.#title, this.#theme, this.#cancel, this.#again] = [title, theme, cancel, again];
  }

  render(width: number): string[] {
    const inner = Math.max(1, width - 4);
    const lines = [
      this.#theme.bold(this.#theme.fg("accent", this.#title)),
      "",
      ...[msg.panelAsksThere, msg.panelTypeThere, msg.panelNoBox].flatMap((l) =>
        wrapped(l, inner, (s) => s)
      ),
    ];
    return width < 12 ? lines : boxLines(lines, width, this.#theme);
  }

  handleInput(data: string): void {
    if (matchesKey(data, Key.escape) || matchesKey(data, Key.ctrl("c"))) this.#cancel();
    else if (matchesKey(data, Key.enter)) this.#again();
  }

  invalidate(): void {}
}

/** Shows the modal via `elsewhere` and the {@link PanePanel}; resolves with the first answer. */
export async function showElsewhere<R extends QueuedRequest>(
  ui: ModalUI,
  request: R,
  signal: AbortSignal,
  look: ModalLook<R>,
  elsewhere: Elsewhere,
): Promise<PromptOutcome> {
  if (signal.aborted) return CANCEL;
  const local = new AbortController();
  const abort = () => local.abort(signal.reason);
  signal.addEventListener("abort", abort, { once: true });
  const { draw, elsewhereTitle: title } = look;
  const prompt = elsewhere(
    (requestRender, done) =>
      new MaskedPromptModal({ request, theme: ANSI_THEME, draw, requestRender, done }),
    local.signal,
  );
  let closePanel: (() => void) | undefined;
  let ended = false;
  const panel = ui.custom<undefined>((_tui, theme, _keys, done) => {
    closePanel = () => done(undefined);
    // The answer may have come before pi drew the panel.
    if (ended) queueMicrotask(closePanel);
    return new PanePanel(title, theme, () => local.abort("cancelled"), () => prompt.again());
  }, { overlay: true, overlayOptions: OVERLAY });
  try {
    return await prompt.outcome;
  } finally {
    ended = true;
    signal.removeEventListener("abort", abort);
    closePanel?.();
    void Promise.resolve(panel).catch(() => {});
  }
}
