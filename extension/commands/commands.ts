/**
 * `/sudo-prompt <subcommand>`: user commands, never tools, only in the interactive TUI. Anything
 * that needs root goes through the sudo modal.
 * @module
 */
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { fileURLToPath } from "node:url";
import { userInfo } from "node:os";
import { ALLOWLIST_APPEND } from "../../broker/paths.ts";
import { runAsRoot } from "./root_command.ts";
import { showInfoPanel } from "../ui/info_panel.ts";
import type { AskpassSession } from "../channel/session_server.ts";
import { allowFlow } from "./allow_flow.ts";
import { type AuditStats, statusLines } from "./status.ts";
import { runPackageCli } from "./package_cli.ts";
import { terminalGuardStatus } from "../keyboard/terminal_guard.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** Longer than every check's own deadline (15 s each, run side by side). */
const DOCTOR_DEADLINE_MS = 60_000;
/** The stored status: a few small files read. */
const STATUS_DEADLINE_MS = 15_000;

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
    description: msg.commandDescription(SUBCOMMANDS.join(" | ")),
    getArgumentCompletions: (prefix: string) =>
      SUBCOMMANDS.filter((s) => s.startsWith(prefix.trim())).map((s) => ({ value: s, label: s })),
    handler: async (args: string, ctx: ExtensionCommandContext) => {
      const [sub, reason] = args.trim().split(/\s+/);
      if (ctx.mode !== "tui") {
        return void ctx.ui.notify(msg.onlyInTui, "error");
      }
      const session = deps.session();
      switch (sub) {
        case "install-broker":
        case "uninstall-broker": {
          if (!session) return void ctx.ui.notify(msg.notActive, "error");
          const installer = fileURLToPath(new URL("../../broker/install.sh", import.meta.url));
          const argv = ["sh", installer, "--user", userInfo().username];
          if (sub === "uninstall-broker") argv.push("--uninstall");
          ctx.ui.notify(msg.sudoWillAsk(sub), "info");
          const r = await runAsRoot(session, argv);
          const title = r.code === 0 ? msg.subcommandDone(sub) : msg.subcommandFailed(sub);
          return await showInfoPanel(ctx.ui, title, [
            ...r.output.split("\n").slice(-30),
            ...(r.timedOut ? [msg.timedOutLine] : []),
          ]);
        }
        case "allow":
          if (!session) return void ctx.ui.notify(msg.notActive, "error");
          return await allowFlow(ctx, session, ALLOWLIST_APPEND);
        case "status": {
          const run = await runPackageCli(["status"], STATUS_DEADLINE_MS);
          const stored = run.code === 0
            ? run.stdout.trimEnd().split("\n")
            : [msg.statusFailed(run.stderr.trim() || `exit ${run.code}`)];
          return await showInfoPanel(
            ctx.ui,
            "pi-sudo-prompt status",
            statusLines(session, stored.slice(0, 200), deps.auditStats?.()),
          );
        }
        case "doctor": {
          const args = reason !== undefined ? ["--explain", reason] : [
            "--width",
            "76",
            "--inside-pi",
            JSON.stringify({
              session: session && {
                denoPath: session.denoPath,
                helperPath: session.helperPath,
                denoCacheDir: session.denoDir,
              },
              piState: terminalGuardStatus(),
            }),
          ];
          const run = await runPackageCli(["doctor", ...args], DOCTOR_DEADLINE_MS);
          const lines = (run.stdout.trim() || run.stderr.trim() || msg.doctorNoAnswer).split("\n");
          return await showInfoPanel(ctx.ui, "pi-sudo-prompt doctor", lines.slice(0, 400));
        }
        default:
          ctx.ui.notify(msg.commandUsage(SUBCOMMANDS.join(" | ")), "info");
      }
    },
  });
}
