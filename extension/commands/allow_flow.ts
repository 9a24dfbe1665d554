/**
 * `/sudo-prompt allow`: the last red-warning argv of this session, edited, re-checked against that
 * argv and confirmed, becomes one allowlist line appended through sudo by the root-owned
 * `allowlist-append`. Another extension can dispatch this command, so the confirmation is the real
 * barrier (docs/pi-secret-run.md).
 * @module
 */
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { runAsRoot } from "./root_command.ts";
import { runPackageCli } from "./package_cli.ts";
import type { AskpassSession } from "../channel/session_server.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** Longer than the allowlist file's own reads; the grammar's checks are pure. */
const CLI_DEADLINE_MS = 15_000;

/** One step of `pi-sudo-prompt allowlist` (the grammar, in its own process): a line, or why not. */
async function allowlistStep(
  args: readonly string[],
): Promise<{ ok: true; line: string } | { ok: false; message: string }> {
  const run = await runPackageCli(["allowlist", ...args], CLI_DEADLINE_MS);
  try {
    const r = JSON.parse(run.stdout);
    if (r?.ok === true && typeof r.line === "string") return { ok: true, line: r.line };
    if (r?.ok === false && typeof r.message === "string") return { ok: false, message: r.message };
  } catch {
    // no answer we can read
  }
  const why = run.timedOut
    ? msg.allowTimedOut
    : run.stderr.trim().split("\n")[0] || `exit ${run.code}`;
  return { ok: false, message: msg.allowCliFailed(why) };
}

/** Runs the whole flow; every outcome ends in one notice. */
export async function allowFlow(
  ctx: Pick<ExtensionCommandContext, "ui">,
  session: AskpassSession,
  appendScript: string,
): Promise<void> {
  const notify = ctx.ui.notify.bind(ctx.ui);
  const argv = session.lastUnverifiedArgv();
  if (!argv) {
    return notify(msg.allowNothingToAllow, "info");
  }
  const suggestion = await allowlistStep(["suggest", JSON.stringify(argv)]);
  if (!suggestion.ok) return notify(msg.allowError(suggestion.message), "error");
  const edited = await ctx.ui.editor(msg.allowEditorTitle, suggestion.line);
  if (edited === undefined) return notify(msg.allowCancelled, "info");
  const lines = edited.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  if (lines.length !== 1) {
    return notify(msg.allowOneLine, "error");
  }
  const shape = await allowlistStep(["check", lines[0], JSON.stringify(argv)]);
  if (!shape.ok) return notify(msg.allowShapeError(shape.message), "error");
  const confirmed = await ctx.ui.confirm(msg.allowConfirmTitle, msg.allowConfirmBody(shape.line));
  if (!confirmed) return notify(msg.allowNotConfirmed, "info");
  const r = await runAsRoot(session, [appendScript, shape.line]);
  if (r.code === 0) notify(r.output || msg.allowAdded(shape.line), "info");
  else notify(msg.allowFailed(r.output.split("\n").at(-1) || `exit ${r.code}`), "error");
}
