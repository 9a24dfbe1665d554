/**
 * Folder `extension/commands/`: the `/sudo-prompt` commands.
 *
 * `/sudo-prompt <subcommand>`: install-broker, uninstall-broker, allow,
 * status, doctor. User commands, never tools; they refuse to run outside the
 * interactive TUI. Anything that needs root goes through the sudo modal.
 *
 * @module
 */
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { fileURLToPath } from "node:url";
import { userInfo } from "node:os";
import { ALLOWLIST_APPEND, ALLOWLIST_PATH } from "../../broker/paths.ts";
import { runAsRoot } from "./root_command.ts";
import { showInfoPanel } from "../ui/info_panel.ts";
import type { AskpassSession } from "../channel/session_server.ts";
import { allowFlow } from "./allow_flow.ts";
import { type AuditStats, statusLines } from "./status.ts";
import { renderDoctor, runDoctor } from "../../ops/doctor/runner.ts";
import { explainRefusal } from "../../ops/doctor/explain.ts";

/** Subcommands, for completion and help. */
export const SUBCOMMANDS = ["install-broker", "uninstall-broker", "allow", "status", "doctor"];

/** What the commands need from the extension. */
export interface CommandDeps {
  /** The running session, if any (interactive mode only). */
  readonly session: () => AskpassSession | undefined;
  /** The session's audit log counts (its system-log copy included), if the log is open. */
  readonly auditStats?: () => AuditStats | undefined;
}

/** Registers `/sudo-prompt`. */
export function registerCommands(pi: ExtensionAPI, deps: CommandDeps): void {
  pi.registerCommand("sudo-prompt", {
    description: `pi-sudo-prompt: ${SUBCOMMANDS.join(" | ")} [reason]`,
    getArgumentCompletions: (prefix: string) =>
      SUBCOMMANDS.filter((s) => s.startsWith(prefix.trim())).map((s) => ({ value: s, label: s })),
    handler: async (args: string, ctx: ExtensionCommandContext) => {
      const [sub, reason] = args.trim().split(/\s+/);
      if ((ctx as { mode?: string }).mode !== "tui") {
        return void ctx.ui.notify("/sudo-prompt runs only in pi's interactive TUI", "error");
      }
      const session = deps.session();
      switch (sub) {
        case "install-broker":
        case "uninstall-broker": {
          if (!session) return void ctx.ui.notify("pi-sudo-prompt is not active", "error");
          const installer = fileURLToPath(new URL("../../broker/install.sh", import.meta.url));
          const argv = ["sh", installer, "--user", userInfo().username];
          if (sub === "uninstall-broker") argv.push("--uninstall");
          ctx.ui.notify(`${sub}: sudo will ask for your password in the modal`, "info");
          const r = await runAsRoot(session, argv);
          const ok = r.code === 0;
          return await showInfoPanel(ctx.ui, `/sudo-prompt ${sub}: ${ok ? "done" : "failed"}`, [
            ...r.output.split("\n").slice(-30),
            ...(r.timedOut ? ["(timed out)"] : []),
          ]);
        }
        case "allow":
          if (!session) return void ctx.ui.notify("pi-sudo-prompt is not active", "error");
          return await allowFlow(ctx, session, ALLOWLIST_PATH, ALLOWLIST_APPEND);
        case "status":
          return await showInfoPanel(
            ctx.ui,
            "pi-sudo-prompt status",
            await statusLines(session, deps.auditStats?.()),
          );
        case "doctor": {
          if (reason !== undefined) {
            const explained = explainRefusal(reason);
            if (!explained.ok) return void ctx.ui.notify(`doctor: ${explained.reason}`, "error");
            return void await showInfoPanel(ctx.ui, "pi-sudo-prompt doctor", explained.lines);
          }
          const checks = await runDoctor(
            session && {
              denoPath: session.denoPath,
              helperPath: session.helperPath,
              denoCacheDir: session.denoDir,
            },
          );
          return await showInfoPanel(ctx.ui, "pi-sudo-prompt doctor", renderDoctor(checks));
        }
        default:
          ctx.ui.notify(`usage: /sudo-prompt ${SUBCOMMANDS.join(" | ")}`, "info");
      }
    },
  });
}
