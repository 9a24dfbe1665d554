/**
 * Demo-only pi extension (`deno task demo` loads it with `-e`): says inside
 * pi which password to type, once the TUI has started (a line printed before
 * pi starts is wiped by the TUI). The hint is a widget above the editor,
 * where the modal does not cover it, and it stays there.
 *
 * @module
 */
import { userInfo } from "node:os";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

/** Key of the widget that holds the hint. */
export const DEMO_HINT_WIDGET = "pi-sudo-prompt-demo";

/** The hint for `user`, the account the demo runs as. */
export function demoHint(user: string): string {
  return `demo: when the modal opens, type the sudo password of ${user} (your login password), ` +
    "or press Escape to cancel. Quit with Ctrl+D.";
}

/** Extension factory: shows {@link demoHint} for the current user at session start. */
export default function demoHintExtension(pi: ExtensionAPI): void {
  pi.on("session_start", (_event, ctx) => {
    if (!ctx.hasUI) return;
    ctx.ui.setWidget(DEMO_HINT_WIDGET, [demoHint(userInfo().username)]);
  });
}
