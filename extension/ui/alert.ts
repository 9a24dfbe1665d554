/**
 * A waiting modal calls the user: a bell (tmux then marks pi's window), the request in the
 * terminal's title until the modal ends, and a desktop notification (OSC 9, OSC 777);
 * `--sudo-quiet` or `PI_SUDO_PROMPT_QUIET=1` turns it off. Only fixed text is written, nothing
 * the agent chose (argv, the prompt), so no escape can ride along.
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

/** The bell and the two notifications; inside tmux, passed through to the outer terminal. */
export function alertBytes(text: string, inTmux: boolean): string {
  const notices = [`\x1b]9;${text}\x07`, `\x1b]777;notify;pi;${text}\x07`];
  // tmux passes a DCS "tmux;" sequence (ESC doubled) on only with allow-passthrough; else drops it.
  const through = (seq: string) =>
    inTmux ? `\x1bPtmux;${seq.replaceAll("\x1b", "\x1b\x1b")}\x1b\\` : seq;
  return "\x07" + notices.map(through).join("");
}

/** The bell and notifications now; `title` until the returned function puts `restore` back. */
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
