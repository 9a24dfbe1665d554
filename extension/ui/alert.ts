/**
 * A modal that waits must call the user: when one opens, pi rings its
 * terminal's bell once (tmux then marks pi's window), puts the request in the
 * terminal's title, and sends a desktop notification where the terminal
 * shows one (OSC 9: iTerm2, WezTerm, Windows Terminal, kitty; OSC 777: foot,
 * urxvt, Ghostty, VTE). The title comes back when the modal ends.
 * `--sudo-quiet` (or `PI_SUDO_PROMPT_QUIET=1`) turns all of it off.
 *
 * Only fixed text is written: nothing the agent chose (argv, the prompt)
 * reaches the terminal this way, so no escape can ride along.
 *
 * @module
 */

/** What the alert needs of pi's terminal. */
export interface AlertTerminal {
  /** Writes raw bytes to pi's terminal (its stdout). */
  write(data: string): void;
  /** Sets the terminal's title (pi's `ctx.ui.setTitle`). */
  setTitle(title: string): void;
}

/** The bell, and the two notifications; inside tmux, each passed through to the outer terminal. */
export function alertBytes(text: string, inTmux: boolean): string {
  const notices = [`\x1b]9;${text}\x07`, `\x1b]777;notify;pi;${text}\x07`];
  // tmux hands a DCS "tmux;" sequence to the outer terminal (with
  // allow-passthrough on; else it drops it, harmlessly), ESC doubled inside.
  const through = (seq: string) =>
    inTmux ? `\x1bPtmux;${seq.replaceAll("\x1b", "\x1b\x1b")}\x1b\\` : seq;
  return "\x07" + notices.map(through).join("");
}

/**
 * Calls the user for one modal: the bell and the notifications now, `title`
 * until the returned function runs, which puts `restore` back.
 */
export function callTheUser(
  terminal: AlertTerminal,
  text: { readonly title: string; readonly restore: string },
  inTmux: boolean,
): () => void {
  terminal.write(alertBytes(text.title, inTmux));
  terminal.setTitle(text.title);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    terminal.setTitle(text.restore);
  };
}
