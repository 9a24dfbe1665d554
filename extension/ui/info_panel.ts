/**
 * A read-only overlay for `/sudo-prompt status` and `doctor`: a title and lines in a box, closed
 * by Enter or Escape. Lines are truncated to the width, never wrapped into the border.
 *
 * @module
 */
import { type Component, Key, matchesKey, truncateToWidth } from "@earendil-works/pi-tui";
import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";
import { boxLines } from "./modal_frame.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** Shows the panel and resolves when it is closed. */
export async function showInfoPanel(
  ui: Pick<ExtensionUIContext, "custom">,
  title: string,
  lines: readonly string[],
): Promise<void> {
  await ui.custom<void>(
    (_tui, theme, _keybindings, done): Component => ({
      render: (width) => {
        if (width < 8) return [truncateToWidth(title, Math.max(0, width), "")];
        const close = theme.fg("dim", msg.panelClose);
        const body = [theme.bold(theme.fg("accent", title)), "", ...lines, "", close];
        return boxLines(body, width, theme);
      },
      handleInput: (data) => {
        if (matchesKey(data, Key.enter) || matchesKey(data, Key.escape)) done();
      },
      invalidate: () => {},
    }),
    { overlay: true, overlayOptions: { anchor: "center", width: "90%" } },
  );
}
