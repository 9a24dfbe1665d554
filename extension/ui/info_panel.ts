/**
 * A small read-only overlay for `/sudo-prompt status` and `doctor`: a title
 * and lines of text in a box; Enter or Escape closes it. Lines are truncated
 * to the width, never wrapped into the border.
 *
 * @module
 */
import {
  type Component,
  Key,
  matchesKey,
  truncateToWidth,
  visibleWidth,
} from "@earendil-works/pi-tui";
import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";

/** Colour names the panel uses from pi's theme. */
interface PanelTheme {
  fg(color: "accent" | "dim" | "borderAccent", text: string): string;
  bold(text: string): string;
}

/** The panel component. */
export class InfoPanel implements Component {
  readonly #title: string;
  readonly #lines: readonly string[];
  readonly #theme: PanelTheme;
  readonly #done: () => void;

  constructor(title: string, lines: readonly string[], theme: PanelTheme, done: () => void) {
    this.#title = title;
    this.#lines = lines;
    this.#theme = theme;
    this.#done = done;
  }

  render(width: number): string[] {
    const t = this.#theme;
    if (width < 8) return [truncateToWidth(this.#title, Math.max(0, width), "")];
    const inner = width - 4;
    const rule = "─".repeat(width - 2);
    const body = [
      t.bold(t.fg("accent", this.#title)),
      "",
      ...this.#lines,
      "",
      t.fg("dim", "Enter or Escape to close"),
    ];
    return [
      t.fg("borderAccent", `╭${rule}╮`),
      ...body.map((line) => {
        const cut = truncateToWidth(line, inner, "…");
        const pad = " ".repeat(Math.max(0, inner - visibleWidth(cut)));
        return `${t.fg("borderAccent", "│")} ${cut}${pad} ${t.fg("borderAccent", "│")}`;
      }),
      t.fg("borderAccent", `╰${rule}╯`),
    ];
  }

  handleInput(data: string): void {
    if (matchesKey(data, Key.enter) || matchesKey(data, Key.escape)) this.#done();
  }

  invalidate(): void {}
}

/** Shows the panel and resolves when it is closed. */
export async function showInfoPanel(
  ui: Pick<ExtensionUIContext, "custom">,
  title: string,
  lines: readonly string[],
): Promise<void> {
  await ui.custom<void>(
    (_tui, theme, _keybindings, done) => new InfoPanel(title, lines, theme, () => done()),
    { overlay: true, overlayOptions: { anchor: "center", width: "90%" } },
  );
}
