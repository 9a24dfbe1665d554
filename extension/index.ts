/**
 * Folder `extension/`: the pi side, in pi's Node; this file only wires its
 * parts (`channel/`, `pairing/`, `keyboard/`, `ui/`, `commands/`, `audit/`).
 *
 * pi-sudo-prompt: the pi extension entry (loaded by pi through jiti).
 *
 * In interactive mode it starts an askpass session server on
 * `session_start` and stops it on `session_shutdown`, replaces the `bash`
 * tool with pi's own definition plus the askpass environment, and does the
 * same for `!cmd`/`!!cmd`. When sudo asks for a password, the session server
 * verifies the requester through the kernel and shows the masked modal.
 *
 * In print, JSON and RPC modes nothing is started or injected: sudo behaves
 * exactly as without the extension (it fails fast for lack of a terminal).
 *
 * @module
 */
import {
  createBashToolDefinition,
  createLocalBashOperations,
  type ExtensionAPI,
  type ExtensionContext,
  getAgentDir,
  SettingsManager,
} from "@earendil-works/pi-coding-agent";
import { join } from "node:path";
import process from "node:process";
import { showSecretModal, showSudoModal } from "./ui/modal.ts";
import { type AskpassSession, startSession } from "./channel/session_server.ts";
import { registerCommands } from "./commands/commands.ts";
import { cleanMarkdown, inertRenderers } from "./ui/safe_rendering.ts";
import { AuditLog } from "./audit/writer.ts";
import { sessionAuditSink } from "./channel/audit_events.ts";
import type { CredentialCacheMode } from "./channel/credential_policy.ts";
import {
  auditUnavailableNotice,
  credentialRemovalNotice,
  guardProblemNotice,
  observeSession,
} from "./channel/session_notices.ts";
import { registerFlags, sessionFlags } from "./commands/flags.ts";
import {
  type CallHandle,
  CallTracker,
  removeCachedCredentials,
} from "./channel/call_credentials.ts";
import {
  noteModal,
  onStopOrResume,
  quittingWithModal,
  startTerminalGuard,
  terminalGuardStatus,
} from "./keyboard/terminal_guard.ts";
import { terminalGate } from "./keyboard/terminal_gate.ts";
import { closeTmuxControl } from "./keyboard/tmux_control.ts";
import { ownUid } from "../shared/own_uid.ts";
import { packageInstall, startFailureNotice } from "./channel/start_notice.ts";

/** The Markdown surfaces whose text the model writes: cleaned of escapes before pi draws them. */
const MODEL_TEXT = ["assistant", "assistant-thinking", "custom", "summary"] as const;

/** The extension factory. */
export default function piSudoPrompt(pi: ExtensionAPI): void {
  let session: AskpassSession | undefined;
  let starting: Promise<void> | undefined;
  let audit: AuditLog | undefined;
  // Credential cache (ADR 0006): one approval per call unless --sudo-strict.
  let cacheMode: CredentialCacheMode = "call";
  const calls = new CallTracker();
  let unhookStop: (() => void) | undefined;

  registerCommands(pi, { session: () => session, auditStats: () => audit?.stats() });
  registerFlags(pi);

  pi.on("session_start", (_event, ctx) => {
    if (!isInteractive(ctx)) return;
    starting = start(ctx).finally(() => starting = undefined);
    return starting;
  });

  pi.on("session_shutdown", async (event) => {
    await starting;
    if (event.reason === "quit") quittingWithModal();
    unhookStop?.();
    unhookStop = undefined;
    closeTmuxControl();
    const s = session;
    session = undefined;
    await s?.close();
    const a = audit;
    audit = undefined;
    await a?.close();
  });

  async function start(ctx: ExtensionContext): Promise<void> {
    // Before anything else, and so before the first tool call can run: pi
    // non-dumpable, its terminal exclusive (kept across /reload and /new).
    await startTerminalGuard();
    const warn = (text: string) => ctx.ui.notify(text, "warning");
    for (const problem of terminalGuardStatus().problems) warn(guardProblemNotice(problem));
    await session?.close();
    session = undefined;
    await audit?.close();
    audit = undefined;
    const opened = await AuditLog.open();
    if (opened.ok) audit = opened.log;
    else warn(auditUnavailableNotice(opened.reason));
    const flags = sessionFlags(pi, process.env);
    cacheMode = flags.cacheMode;
    const started = await startSession({
      credentialCache: cacheMode,
      callInProgress: () => calls.inProgress(),
      refuseRiskySudo: flags.refuseRiskySudo,
      gate: terminalGate(ownUid()),
      prompter: {
        prompt: (request, signal) => showSudoModal(ctx.ui, request, signal),
        promptSecret: (request, signal) => showSecretModal(ctx.ui, request, signal),
      },
      // The terminal guard erases a modal on screen if pi stops (ADR 0008).
      onEvent: observeSession({
        notify: warn,
        modalShown: noteModal,
        answered: () => calls.noteAnswer(),
        record: audit ? sessionAuditSink(audit, "sudo") : undefined,
      }),
    });
    if (!started.ok) return warn(startFailureNotice(started.reason, packageInstall()));
    session = started.session;
    unhookStop?.();
    unhookStop = onStopOrResume(() => session?.denyAllNow());
  }

  // The replaced bash tool: pi's own definition (rendering, streaming,
  // truncation, details), rebuilt per call so it follows ctx.cwd and the
  // user's shell settings, which an override does not receive from pi.
  const prototype = createBashToolDefinition(process.cwd());
  // Every tool's call and result is drawn inert (escapes out, styling kept),
  // and so is the model's own text: a tool call could otherwise clear the
  // screen and draw a look-alike of the modal. What runs is unchanged.
  const drawnInert = typeof pi.registerToolRenderer === "function";
  if (drawnInert) {
    pi.registerToolRenderer((toolName, next) => {
      const slots = next();
      return slots ? inertRenderers(toolName, slots) : undefined;
    });
  }
  if (typeof pi.registerMarkdownTransformer === "function") {
    pi.registerMarkdownTransformer(cleanMarkdown, { messageTypes: MODEL_TEXT });
  }
  pi.registerTool({
    ...prototype,
    // A pi without renderer resolvers (before 1.6): at least bash's call is drawn inert.
    ...(drawnInert ? {} : inertRenderers(prototype.name, prototype)),
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      const settings = SettingsManager.create(ctx.cwd, getAgentDir());
      // A call that arrives while the session is still starting waits for it,
      // so its sudo reaches the modal instead of failing for lack of a tty.
      await starting;
      const s = session;
      const tool = createBashToolDefinition(ctx.cwd, {
        commandPrefix: settings.getShellCommandPrefix(),
        shellPath: settings.getShellPath(),
        spawnHook: s
          ? ({ command, cwd, env }) => ({
            command: withPrelude(s, command),
            cwd,
            env: s.toolEnvironment(env),
          })
          : undefined,
      });
      const call = calls.begin();
      try {
        return await tool.execute(toolCallId, params, signal, onUpdate, ctx);
      } finally {
        await endCall(call, s, ctx);
      }
    },
  });

  /**
   * The end of a tool call or `!` command. In the opt-in cache mode, when a
   * password was given during it, every sudo credential is removed before
   * its result returns, so nothing the call started keeps root (ADR 0006).
   */
  async function endCall(
    call: CallHandle,
    s: AskpassSession | undefined,
    ctx: ExtensionContext,
  ): Promise<void> {
    if (!calls.end(call) || cacheMode !== "call" || !s) return;
    const removed = await removeCachedCredentials(s.realSudo);
    if (!removed.ok) ctx.ui.notify(credentialRemovalNotice(removed.reason), "warning");
  }

  // `!cmd` and `!!cmd`: pi still applies the user's prefix and records the
  // result (and keeps `!!` out of the model's context); we only add the env.
  pi.on("user_bash", async (_event, ctx) => {
    await starting; // as in execute(): a `!` typed during start-up waits for it
    const s = session;
    if (!s) return undefined;
    const settings = SettingsManager.create(ctx.cwd, getAgentDir());
    const local = createLocalBashOperations({ shellPath: settings.getShellPath() });
    return {
      operations: {
        exec: async (command, cwd, options) => {
          const call = calls.begin();
          try {
            return await local.exec(withPrelude(s, command), cwd, {
              ...options,
              env: s.toolEnvironment(options.env ?? shellEnv()),
            });
          } finally {
            await endCall(call, s, ctx);
          }
        },
      },
    };
  });
}

/** True only for pi's interactive TUI (older pi without `ctx.mode`: any UI). */
function isInteractive(ctx: ExtensionContext): boolean {
  const mode = (ctx as { mode?: string }).mode;
  return mode === undefined ? ctx.hasUI : mode === "tui";
}

function withPrelude(session: AskpassSession, command: string): string {
  const prelude = session.shellPrelude();
  return prelude ? `${prelude}\n${command}` : command;
}

/** What pi gives its own shells: the environment with pi's `bin` first on PATH. */
function shellEnv(): Record<string, string | undefined> {
  const bin = join(getAgentDir(), "bin");
  return { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` };
}
