/**
 * `/sudo-prompt allow` (docs/design.md §5): turn the last argv shown with the red
 * warning in this session into an allowlist entry. The human edits the
 * suggested shape, the edited shape must still match that argv, an explicit
 * confirmation follows, and only then is one line appended through sudo by
 * the root-owned `allowlist-append` (which never follows a symlink and never
 * creates a missing allowlist).
 *
 * Runtime limit (documented in docs/pi-secret-run.md): another extension can dispatch
 * registered commands through `sendUserMessage(…, { expandPromptTemplates:
 * true })`, so opening this command is not proof of a human; the
 * confirmation dialog is the real barrier.
 *
 * @module
 */
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { checkAllowlistFile, checkShape, suggestShape } from "../../broker/allowlist.ts";
import { runAsRoot } from "./root_command.ts";
import type { AskpassSession } from "../channel/session_server.ts";

/** Runs the whole flow; every outcome ends in one notice. */
export async function allowFlow(
  ctx: Pick<ExtensionCommandContext, "ui">,
  session: AskpassSession,
  allowlistPath: string,
  appendScript: string,
): Promise<void> {
  const notify = ctx.ui.notify.bind(ctx.ui);
  const argv = session.lastUnverifiedArgv();
  if (!argv) {
    return notify("allow: no secret request with the red warning in this session yet", "info");
  }
  const file = await checkAllowlistFile(allowlistPath);
  if (!file.ok) {
    const why = file.reason.replaceAll("_", " ");
    return notify(
      `allow: ${allowlistPath} is ${why}: install the broker first (/sudo-prompt install-broker)`,
      "error",
    );
  }
  const suggestion = suggestShape(argv);
  if (!suggestion.ok) {
    notify(`allow: this command cannot be an allowlist entry (${suggestion.reason})`, "error");
    return;
  }
  const edited = await ctx.ui.editor(
    "Allowlist entry: program path, then the exact arguments; <name> matches one argument not starting with '-'",
    suggestion.line,
  );
  if (edited === undefined) return notify("allow: cancelled; nothing written", "info");
  const lines = edited.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  if (lines.length !== 1) {
    return notify("allow: write exactly one entry line; nothing written", "error");
  }
  const shape = checkShape(lines[0], argv);
  if (!shape.ok) {
    return notify(
      `allow: that entry does not match the command shown (${shape.reason}); nothing written`,
      "error",
    );
  }
  const confirmed = await ctx.ui.confirm(
    "Add this entry to the allowlist?",
    `${shape.line}\n\nMatching commands will get a secret without the red warning.`,
  );
  if (!confirmed) return notify("allow: not confirmed; nothing written", "info");
  const r = await runAsRoot(session, [appendScript, shape.line]);
  if (r.code === 0) notify(r.output || `allow: added ${shape.line}`, "info");
  else notify(`allow: failed (${r.output.split("\n").at(-1) || `exit ${r.code}`})`, "error");
}
