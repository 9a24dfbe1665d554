/**
 * The session server's public shapes (options, session, events, named reasons),
 * apart so that the channel's parts share them without importing the server.
 *
 * @module
 */
import type { TicketHolder } from "./call_credentials.ts";
import type { DenyReason, ProtocolError } from "../../askpass/protocol.ts";
import type { VerifyRefusal } from "../../kernel/peer_verification.ts";
import type { PipeHandoverError } from "../../kernel/sudo_pipe.ts";
import type { TerminalRefusal } from "../keyboard/terminal_holders.ts";
import type { ModalGate } from "../keyboard/terminal_gate.ts";
import type { PairingRefusal } from "../pairing/sudo_pairing.ts";
import type { CredentialCacheMode, CredentialRefusal } from "./credential_policy.ts";
import type { WarmupResult } from "./deno_warmup.ts";
import type { RootRunRefusal } from "./root_program.ts";
import type { Prompter, PromptOutcome, UncheckedProcess } from "../../askpass/prompter.ts";
import type { ProcessRef } from "../../kernel/peer_verification.ts";
import type { PeerConnection } from "./peer_connection.ts";
import { type ReasonOf, reasons } from "../../shared/result.ts";

/** Default time the human has to answer one request (docs/design.md §4.6). */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** The helper's own deadline exceeds the modal's by this margin. */
export const HELPER_DEADLINE_MARGIN_MS = 15_000;

/** Why a session cannot start (`session_files`: e.g. a full disk; nothing is left behind). */
export const SESSION_START_ERRORS = reasons(
  "deno_not_found",
  "helper_not_found",
  "unsafe_path",
  "session_dir",
  "listen_failed",
  "session_files",
);

/** One of the values of {@link SESSION_START_ERRORS}. */
export type SessionStartError = ReasonOf<typeof SESSION_START_ERRORS>;

/** Connection refusals beside protocol and verification ones (`internal_error`: fail closed). */
export const CONNECTION_ERRORS = reasons(
  "too_many_connections",
  "request_timeout",
  "replayed_request",
  "peer_closed",
  "internal_error",
);

/** One of the values of {@link CONNECTION_ERRORS}. */
export type ConnectionError = ReasonOf<typeof CONNECTION_ERRORS>;

/** Every named reason a request is refused with (each has advice: `refusal_advice.ts`). */
export type RefusalReason =
  | VerifyRefusal
  | ProtocolError
  | ConnectionError
  | CredentialRefusal
  | TerminalRefusal
  | PairingRefusal
  | RootRunRefusal
  | PipeHandoverError;

/**
 * What the server reports for the audit log and tests. Never a password; the only typed text
 * is a decline's `reply`, which goes to the call's result and never to the audit log.
 */
export type SessionEvent =
  | {
    readonly kind: "refused";
    readonly reason: RefusalReason;
    readonly peerPid?: number;
    readonly requestId?: string;
    /** One line for the human: what was found and what to do (never a secret). */
    readonly notice?: string;
  }
  | {
    readonly kind: "queued";
    readonly requestId: string;
    /** A sudo password (askpass helper) or a secret (`pi-secret-run` broker). */
    readonly request: "sudo" | "secret";
    /** sudo's argv, or the argv the broker will run. */
    readonly argv: readonly string[];
    readonly attempt: number;
    readonly verifyMs: number;
  }
  | { readonly kind: "prompted"; readonly requestId: string; readonly attempt: number }
  | {
    readonly kind: "answered";
    readonly requestId: string;
    readonly attempt: number;
    /** Who wrote into sudo's pipe: the helper when pi could not (`fallback` says why; ADR 0008). */
    readonly writer?: "pi" | "helper";
    readonly fallback?: PipeHandoverError;
    /** The process the sudo's ticket is keyed to, when this sudo may leave one (ADR 0009 §4). */
    readonly ticket?: TicketHolder;
  }
  | {
    readonly kind: "denied";
    readonly requestId: string;
    readonly reason: DenyReason;
    /** The human's reply to the agent on declining: for the call's result, never the audit log. */
    readonly reply?: string;
  };

/** What the extension decides for its session: the only options it passes. */
export interface SessionOptions {
  readonly prompter: Prompter;
  /** sudo's credential cache, `"none"` by default ({@link CredentialCacheMode}, ADR 0006). */
  readonly credentialCache?: CredentialCacheMode;
  /** In `"call"` mode: whether a tool call or `!` command is running now (default: no). */
  readonly callInProgress?: () => boolean;
  /** Refuse (`risky_sudo`) instead of warning in red (`root_program.ts`). Default: warn. */
  readonly refuseRiskySudo?: boolean;
  /** Keyboard checks before every modal and while it is open; a closed gate refuses the request. */
  readonly gate?: ModalGate;
  /** Audit hook; must not throw. */
  readonly onEvent?: (event: SessionEvent) => void;
}

/**
 * Limits and paths only tests and the bench change; no security check can be switched
 * off here. The extension passes none, and {@link startSession} takes them as a second
 * argument, so none can ride in with the options.
 */
export interface SessionTuning {
  /** The pi process whose commands may ask (default: this process). */
  readonly ownerPid?: number;
  /** Time to answer one request, from its arrival (default 120 s). */
  readonly timeoutMs?: number;
  /** Attempts sudo allows (default 3, sudo's `passwd_tries`). */
  readonly maxAttempts?: number;
  /** Verified requests that may wait at once, the active one included (default 8). */
  readonly queueCapacity?: number;
  /** Connections open at once before new ones are dropped (default 64). */
  readonly maxConnections?: number;
  /** Deadline for a connection to deliver its request frame (default 2 s). */
  readonly requestTimeoutMs?: number;
  /** Where session directories go (default `$XDG_RUNTIME_DIR`, else `/tmp`). */
  readonly runtimeBase?: string;
  /** Another deno, helper or sudo than the ones found. */
  readonly denoPath?: string;
  readonly helperPath?: string;
  readonly realSudo?: string;
  /** `"auto"` (default): the root-owned helper of the broker when intact; `false`: never. */
  readonly hardened?: "auto" | false;
}

/** Options and tuning together, as the session's parts read them. */
export type SessionSettings = SessionOptions & SessionTuning;

/** The tuning, then only the options' own fields: a limit or path in the options has no effect. */
export function sessionSettings(options: SessionOptions, tuning: SessionTuning): SessionSettings {
  // Every option named (a new one fails to compile until copied here), nothing else.
  const own: { [K in keyof Required<SessionOptions>]: SessionOptions[K] } = {
    prompter: options.prompter,
    credentialCache: options.credentialCache,
    callInProgress: options.callInProgress,
    refuseRiskySudo: options.refuseRiskySudo,
    gate: options.gate,
    onEvent: options.onEvent,
  };
  return { ...tuning, ...own };
}

/** A running session. */
export interface AskpassSession {
  readonly dir: string;
  readonly socketPath: string;
  readonly launcherPath: string;
  /** Private directory prepended to `PATH`; holds the `sudo` wrapper. */
  readonly binDir: string;
  /** The real sudo the wrapper and function call, if sudo is installed. */
  readonly realSudo: string | undefined;
  /** The deno binary and helper the launcher runs, and the helper's cache. */
  readonly denoPath: string;
  readonly helperPath: string;
  readonly denoDir: string;
  /** True when the helper, deno and cache are the root-owned installed copies. */
  readonly hardened: boolean;
  /**
   * The Deno cache warm-up (`deno_warmup.ts`), never awaited by the session. Hardened
   * mode warms only `pi-secret-run`: the installer warmed the helper's root-owned cache.
   */
  readonly warmup: Promise<WarmupResult>;
  /** Environment for a tool call or `!` command, built on `base`. */
  toolEnvironment(base: Record<string, string | undefined>): Record<string, string>;
  /** Shell text to prepend to a command: the `sudo()` function. Empty without sudo. */
  shellPrelude(): string;
  /** Verified requests currently queued or being answered. */
  pendingCount(): number;
  /** The last argv shown with the red "not allowlisted" warning in this session. */
  lastUnverifiedArgv(): readonly string[] | undefined;
  /**
   * Denies everything pending at once, closing each helper's connection so its sudo
   * gets no password: pi is about to stop, or runs again after a stop (docs/adr/0008).
   */
  denyAllNow(): void;
  /** Denies everything pending, closes the socket and removes the directory. */
  close(): Promise<void>;
}

/** One verified request in the queue: a sudo password or a broker secret. */
export interface Pending {
  readonly id: string;
  readonly kind: "sudo" | "secret";
  /** The helper's (or broker's) connection: its socket and pidfd, answered once. */
  readonly connection: PeerConnection;
  readonly deadline: number;
  readonly attempt: number;
  readonly abort: AbortController;
  /** Processes whose death (or a change of start time) ends the request. */
  readonly watched: readonly ProcessRef[];
  /** A sudo request: inode of the verified sudo pipe on the helper's stdout (pi writes into it). */
  readonly pipeInode: number | undefined;
  /** What the modal shows as the command (sudo's argv, or the broker's). */
  readonly argv: readonly string[];
  /** Opens the modal; `recheck` runs the keyboard gate now (a locked tmux client's, ADR 0009). */
  readonly ask: (signal: AbortSignal, recheck: () => Promise<boolean>) => Promise<PromptOutcome>;
  /** Called once an answer has been handed over (attempt counting). */
  readonly delivered: () => void;
  /** The process this sudo's ticket would be keyed to, when it may leave one (ADR 0009 §4). */
  readonly ticket?: TicketHolder;
  /** Processes the checks could not clear, named in the modal (issue 20): pairing's, gate's. */
  readonly unchecked: { pairing: readonly UncheckedProcess[]; gate: readonly UncheckedProcess[] };
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** A verified request, before it has a place in the queue. */
export type Admitted = Omit<Pending, "connection" | "deadline" | "abort" | "timer">;
