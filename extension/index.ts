/**
 * The pi extension entry; it only wires the parts. In interactive mode: an askpass session server
 * per pi session, and the askpass environment for the `bash` tool and `!cmd`/`!!cmd`. In print,
 * JSON and RPC modes nothing is started: sudo behaves as without the extension.
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
import { basename, join } from "node:path";
import process from "node:process";
import { showSecretModal, showSudoModal } from "./ui/modal.ts";
import { type AskpassSession, startSession } from "./channel/session_server.ts";
import { registerCommands } from "./commands/commands.ts";
import { cleanMarkdown, inertRenderers } from "./ui/safe_rendering.ts";
import { AuditLog } from "./audit/writer.ts";
import { sessionAuditSink } from "./channel/audit_events.ts";
import type { CredentialCacheMode } from "./channel/credential_policy.ts";
import { CREDENTIALS_NOT_REMOVED, observeSession } from "./channel/session_notices.ts";
import { registerFlags, sessionFlags } from "./commands/flags.ts";
import {
  type CallHandle,
  CallTracker,
  endTickets,
  removeCachedCredentials,
} from "./channel/call_credentials.ts";
import {
  noteModal,
  onStopOrResume,
  processMark,
  quittingWithModal,
  startTerminalGuard,
  terminalGuardStatus,
} from "./keyboard/terminal_guard.ts";
import { terminalGate } from "./keyboard/terminal_gate.ts";
import { tmuxAmongAncestors, tmuxPlace } from "./keyboard/tmux_lock.ts";
import { promptOnTmuxClients } from "./keyboard/tmux_prompt.ts";
import type { Elsewhere } from "./ui/elsewhere.ts";
import { callTheUser } from "./ui/alert.ts";
import { CallOutcomes } from "./channel/call_outcomes.ts";
import { startFailureNotice } from "./channel/start_notice.ts";
import { msg } from "../shared/i18n/locale.ts";

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
  const outcomes = new CallOutcomes();
  let unhookStop: (() => void) | undefined;
  /** A ticket of an ended call may live: no call runs until `sudo -K` works (ADR 0009 §4). */
  let ticketsLeft = false;

  registerCommands(pi, { session: () => session, auditStats: () => audit?.stats() });
  registerFlags(pi);

  pi.on("session_start", (_event, ctx) => {
    if (ctx.mode !== "tui") return;
    starting = start(ctx).finally(() => starting = undefined);
    return starting;
  });

  pi.on("session_shutdown", async (event) => {
    await starting;
    if (event.reason === "quit") quittingWithModal();
    unhookStop?.();
    unhookStop = undefined;
    const s = session;
    session = undefined;
    await s?.close();
    const a = audit;
    audit = undefined;
    await a?.close();
  });

  async function start(ctx: ExtensionContext): Promise<void> {
    // First, so before any tool call: pi non-dumpable, its terminal exclusive.
    await startTerminalGuard();
    const warn = (text: string) => ctx.ui.notify(text, "warning");
    for (const problem of terminalGuardStatus().problems) warn(`pi-sudo-prompt: ${problem}`);
    await session?.close();
    session = undefined;
    await audit?.close();
    audit = undefined;
    const opened = await AuditLog.open();
    if (opened.ok) audit = opened.log;
    else warn(msg.auditUnavailable(opened.reason));
    const flags = sessionFlags(pi, process.env);
    cacheMode = flags.cacheMode;
    // Inside tmux the modal goes to the clients' own terminals (ADR 0009 §1).
    const place = tmuxPlace(process.env);
    const tmuxUnseen = !place && await tmuxAmongAncestors();
    const elsewhere = (recheck: () => Promise<boolean>): Elsewhere | undefined =>
      place
        ? (make, signal) =>
          promptOnTmuxClients(place, {
            make,
            signal,
            recheck,
            notify: (text) => warn(`pi-sudo-prompt: ${text}`),
          })
        : undefined;
    const calling = <T>(title: string, show: () => Promise<T>): Promise<T> => {
      if (flags.quiet) return show();
      const name = ctx.sessionManager.getSessionName();
      const restore = `π - ${name ? `${name} - ` : ""}${basename(ctx.cwd)}`;
      const stop = callTheUser(
        { write: (data) => process.stdout.write(data), setTitle: (t) => ctx.ui.setTitle(t) },
        { title, restore },
        process.env.TMUX !== undefined,
      );
      return show().finally(stop);
    };
    const started = await startSession({
      credentialCache: cacheMode,
      callInProgress: () => calls.inProgress(),
      refuseRiskySudo: flags.refuseRiskySudo,
      gate: terminalGate({ mark: processMark, duringCall: (t) => calls.ranAt(t) }),
      prompter: {
        prompt: (request, signal) =>
          tmuxUnseen ? tmuxUnseenRefusal(warn) : calling(
            msg.sudoCallTitle,
            () => showSudoModal(ctx.ui, request, signal, elsewhere(request.recheck)),
          ),
        promptSecret: (request, signal) =>
          tmuxUnseen ? tmuxUnseenRefusal(warn) : calling(
            msg.secretCallTitle,
            () => showSecretModal(ctx.ui, request, signal, elsewhere(request.recheck)),
          ),
      },
      // The terminal guard erases a modal on screen if pi stops (ADR 0008).
      onEvent: observeSession({
        outcome: (event) => outcomes.note(event),
        notify: warn,
        modalShown: noteModal,
        answered: (ticket) => calls.noteAnswer(ticket),
        record: audit ? sessionAuditSink(audit, "sudo") : undefined,
      }),
    });
    if (!started.ok) return warn(startFailureNotice(started.reason));
    session = started.session;
    unhookStop?.();
    unhookStop = onStopOrResume(() => session?.denyAllNow());
  }

  // pi's own bash tool, rebuilt per call: an override does not get ctx.cwd or the shell settings.
  const prototype = createBashToolDefinition(process.cwd());
  // Every tool call and result, and the model's own text, is drawn without escapes: else it could
  // clear the screen and draw a look-alike of the modal. What runs is unchanged.
  pi.registerToolRenderer((toolName, next) => {
    const slots = next();
    return slots ? inertRenderers(toolName, slots) : undefined;
  });
  pi.registerMarkdownTransformer(cleanMarkdown, { messageTypes: MODEL_TEXT });
  pi.registerTool({
    ...prototype,
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      const settings = SettingsManager.create(ctx.cwd, getAgentDir());
      // A call during start-up waits: its sudo reaches the modal instead of failing without a tty.
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
      const endings = outcomes.open();
      try {
        const result = await tool.execute(toolCallId, params, signal, onUpdate, ctx).catch(
          (e: unknown) => {
            // Aborted or timed out: pi reports the error's text; the endings go with it.
            const lines = outcomes.close(endings);
            if (lines.length === 0 || !(e instanceof Error)) throw e;
            throw new Error(`${e.message}\n${lines.join("\n")}`);
          },
        );
        // A request of this call that ended without a password: the agent hears why.
        const lines = outcomes.close(endings);
        if (lines.length === 0) return result;
        return {
          ...result,
          content: [...result.content, { type: "text", text: lines.join("\n") }],
        };
      } finally {
        outcomes.close(endings);
        await endCall(call, s, ctx);
      }
    },
  });

  /**
   * The end of a tool call or `!` command: if a password was given during it, every sudo ticket
   * ends before its result returns; if one cannot, later calls wait (ADR 0009 §4).
   */
  async function endCall(
    call: CallHandle,
    s: AskpassSession | undefined,
    ctx: ExtensionContext,
  ): Promise<void> {
    if (!calls.end(call) || cacheMode !== "call" || !s) return;
    const ended = await endTickets(s.realSudo, calls.takeHolders());
    if (ended.ok) return;
    if (!ticketsLeft) {
      ctx.ui.notify(msg.credentialsNotRemoved(ended.reason, ended.killed), "warning");
      recordCredentials("not_removed", ended.reason);
    }
    ticketsLeft = true;
  }

  /** Before any call while a ticket may live: `sudo -K` again; the reason to block, if it fails. */
  async function blockedByTickets(): Promise<string | undefined> {
    if (!ticketsLeft) return undefined;
    const removed = await removeCachedCredentials(session?.realSudo);
    if (!removed.ok) return CREDENTIALS_NOT_REMOVED;
    ticketsLeft = false;
    recordCredentials("removed");
    return undefined;
  }

  function recordCredentials(decision: "removed" | "not_removed", reason?: string): void {
    audit?.append({
      time: new Date().toISOString(),
      kind: "sudo",
      event: "credentials",
      decision,
      ...(reason ? { reason } : {}),
    });
  }

  pi.on("tool_call", async () => {
    const reason = await blockedByTickets();
    return reason ? { block: true, reason } : undefined;
  });

  // `!cmd` and `!!cmd`: pi still applies the user's prefix and records the result; we add the env.
  pi.on("user_bash", async (_event, ctx) => {
    await starting; // as in execute()
    const s = session;
    if (!s) return undefined;
    const blocked = await blockedByTickets();
    if (blocked) {
      return { result: { output: blocked, exitCode: 1, cancelled: false, truncated: false } };
    }
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

/** pi in tmux without `TMUX` cannot lock clients; a modal in the pane would take keys via tmux. */
function tmuxUnseenRefusal(warn: (text: string) => void): Promise<{ kind: "cancel" }> {
  warn(msg.tmuxWithoutTmuxVariable);
  return Promise.resolve({ kind: "cancel" });
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
