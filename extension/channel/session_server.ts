/**
 * Folder `extension/channel/`: the askpass channel, from the session directory
 * and shell injection to the verified request and its answer.
 *
 * The askpass session server: one per interactive pi session. It owns the
 * private session directory, the listening socket, the session key, the
 * per-session launcher and `sudo` wrapper, and it answers helpers' requests
 * one at a time through a {@link Prompter}.
 *
 * Rules it keeps (docs/design.md §4, §7): every connection is identified through the
 * kernel before anything is shown; every wait has a deadline; the queue and
 * every buffer are bounded; nothing blocks the event loop; teardown denies
 * whatever is pending and removes every file.
 *
 * @module
 */
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import {
  decodeIncoming,
  DENY_REASONS,
  type DenyReason,
  encodeDenied,
  encodeResponse,
  FrameReader,
  importSessionKey,
  MAX_PASSWORD_BYTES,
  newSessionKeyHex,
  type PasswordRequest,
  PROTOCOL_VERSION,
  type ProtocolError,
  type SecretRequest,
} from "../../askpass/protocol.ts";
import { argvIsAllowlisted, isProtectedPath } from "../../broker/allowlist_policy.ts";
import { BROKER_ROOT, BROKER_VERSION_FILE, ROOT_DENO, ROOT_SOURCES } from "../../broker/paths.ts";
import { HARDENED_HELPER_FILES } from "../../broker/root_files.ts";
import { parseBrokerVersion } from "../../broker/broker_version.ts";
import {
  type ExpectedBroker,
  type VerifiedBroker,
  verifyBroker,
} from "../../kernel/broker_verification.ts";
import {
  helperArgvPrefix,
  helperEnvironment,
  isSafeFlagPath,
} from "../../askpass/helper_permissions.ts";
import { AttemptCounter } from "./attempt_counter.ts";
import { firstExecutable, resolveDenoBinary } from "./deno_binary.ts";
import {
  closeFd,
  getPeerCredentials,
  getPeerPidfd,
  PEER_CREDENTIAL_ERRORS,
  type PeerCredentials,
} from "../../kernel/peer_credentials.ts";
import {
  currentUid,
  type ExpectedHelper,
  pidfdRefersTo,
  type ProcessRef,
  stillRunning,
  type VerifiedRequester,
  VERIFY_REFUSALS,
  type VerifyRefusal,
  verifyRequester,
} from "../../kernel/peer_verification.ts";
import type { Prompter, PromptOutcome } from "./prompter.ts";
import {
  chooseRuntimeBase,
  createSessionDir,
  removeSessionDir,
  removeStaleSessionDirs,
} from "./session_dir.ts";
import {
  launcherScript,
  piSecretRunScript,
  sudoShellPrelude,
  sudoWrapperScript,
} from "./shell_injection.ts";
import { BROKER_REFUSAL_EXIT, piSecretRunArgv } from "../../broker/broker_permissions.ts";
import {
  cachingAllowedNow,
  type CredentialCacheMode,
  credentialDecision,
  type CredentialRefusal,
} from "./credential_policy.ts";
import { sanitizePrompt } from "../ui/prompt_text.ts";
import type { GatePhase, GateVerdict, ModalGate } from "../keyboard/terminal_gate.ts";
import type { TerminalRefusal } from "../keyboard/terminal_holders.ts";
import {
  type PairingGuard,
  pairingGuardFor,
  type PairingLayers,
} from "../pairing/pairing_guard.ts";
import { pairingNotice, type PairingRefusal } from "../pairing/sudo_pairing.ts";
import { PAIRING_CHECK } from "../pairing/root_pairing.ts";
import { warmDenoCache, type WarmupResult, type WarmupRun } from "./deno_warmup.ts";
import { compiledPiSecretRun } from "./pi_secret_run_binary.ts";
import { fdStatSync, socketFd } from "../../kernel/socket_fd.ts";

/** Default time the human has to answer one request (docs/design.md §4.6). */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** The helper's own deadline exceeds the modal's by this margin. */
export const HELPER_DEADLINE_MARGIN_MS = 15_000;

/** Named reasons a session cannot start. */
export const SESSION_START_ERRORS = {
  DENO_NOT_FOUND: "deno_not_found",
  HELPER_NOT_FOUND: "helper_not_found",
  UNSAFE_PATH: "unsafe_path",
  SESSION_DIR: "session_dir",
  LISTEN_FAILED: "listen_failed",
  /** The session's files could not be written (a full disk, a quota): nothing is left behind. */
  SESSION_FILES: "session_files",
} as const;

/** One of the values of {@link SESSION_START_ERRORS}. */
export type SessionStartError = typeof SESSION_START_ERRORS[keyof typeof SESSION_START_ERRORS];

/** Reasons a connection is dropped or refused that are not protocol or verification errors. */
export const CONNECTION_ERRORS = {
  TOO_MANY_CONNECTIONS: "too_many_connections",
  REQUEST_TIMEOUT: "request_timeout",
  REPLAYED_REQUEST: "replayed_request",
  PEER_CLOSED: "peer_closed",
  /** Something unexpected threw while handling the request: refused, fail closed. */
  INTERNAL_ERROR: "internal_error",
} as const;

/** One of the values of {@link CONNECTION_ERRORS}. */
export type ConnectionError = typeof CONNECTION_ERRORS[keyof typeof CONNECTION_ERRORS];

/**
 * What the server reports for the audit log and tests. Never contains a
 * password or typed text.
 */
export type SessionEvent =
  | {
    readonly kind: "refused";
    readonly reason:
      | VerifyRefusal
      | ProtocolError
      | ConnectionError
      | CredentialRefusal
      | TerminalRefusal
      | PairingRefusal;
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
    /** Time spent verifying the peer, in ms. */
    readonly verifyMs: number;
  }
  | { readonly kind: "prompted"; readonly requestId: string; readonly attempt: number }
  | { readonly kind: "answered"; readonly requestId: string; readonly attempt: number }
  | { readonly kind: "denied"; readonly requestId: string; readonly reason: DenyReason };

/** Options of {@link startSession}. */
export interface SessionOptions {
  /** Asks the human; the pi modal in production. */
  readonly prompter: Prompter;
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
  /** Overrides for tests and the hardened mode. */
  readonly denoPath?: string;
  readonly helperPath?: string;
  readonly realSudo?: string;
  /**
   * Hardened mode: `"auto"` (default) uses the root-owned helper installed
   * with the broker when it is there and intact; `false` never does.
   */
  readonly hardened?: "auto" | false;
  /**
   * sudo's credential cache (docs/design.md §2 invariant 3, ADR 0006). `"none"`
   * (default): the wrapper adds `-k` and a request from a sudo without `-k`
   * is refused (`would_cache_credentials`). `"call"`: the wrapper leaves the
   * options alone and such a request is accepted while `callInProgress()`
   * says a call is running; the caller removes the credentials at its end.
   */
  readonly credentialCache?: CredentialCacheMode;
  /** In `"call"` mode: whether a tool call or `!` command is running now (default: no). */
  readonly callInProgress?: () => boolean;
  /**
   * Checked before every modal opens and every `gate.intervalMs` while it is
   * open (the terminal and tmux checks of `terminal_gate.ts`); a closed gate
   * refuses the request, or closes the open modal.
   */
  readonly gate?: ModalGate;
  /** The pairing checks of ADR 0005 (tests switch a layer off to prove the other alone). */
  readonly pairing?: PairingLayers;
  /** Audit hook; must not throw. */
  readonly onEvent?: (event: SessionEvent) => void;
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
   * The warm-up of the session's Deno cache (`deno_warmup.ts`), started with
   * the session and never awaited by it. In hardened mode it warms only
   * `pi-secret-run`: the installer warmed the helper's root-owned cache.
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
  /** Denies everything pending, closes the socket and removes the directory. */
  close(): Promise<void>;
}

/** One verified request in the queue: a sudo password or a broker secret. */
interface Pending {
  readonly id: string;
  readonly kind: "sudo" | "secret";
  readonly socket: Socket;
  readonly deadline: number;
  readonly attempt: number;
  readonly abort: AbortController;
  /** Processes whose death (or a change of start time) ends the request. */
  readonly watched: readonly ProcessRef[];
  /** pidfd of the peer (from SO_PEERPIDFD), checked with `watched[0]`. */
  readonly pidfd: number | undefined;
  /** What the modal shows as the command (sudo's argv, or the broker's). */
  readonly argv: readonly string[];
  /** Opens the modal for this request. */
  readonly ask: (signal: AbortSignal) => Promise<PromptOutcome>;
  /** Called once an answer has been handed over (attempt counting). */
  readonly delivered: () => void;
  finished: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
}

const SEEN_ID_CAPACITY = 4096;
/** An early keyboard check stands for the modal's own only this fresh (the re-check interval). */
const GATE_AHEAD_MAX_AGE_MS = 100;
const LIVENESS_INTERVAL_MS = 200;
const WRITE_GRACE_MS = 1000;

/** Starts a session: directory, key, launcher, wrapper and listening socket. */
export async function startSession(
  options: SessionOptions,
): Promise<{ ok: true; session: AskpassSession } | { ok: false; reason: SessionStartError }> {
  // Hardened mode: a root-owned helper, deno and cache installed by the
  // broker installer, which the agent cannot rewrite (docs/design.md §8.2).
  const root = options.denoPath || options.helperPath || options.hardened === false
    ? undefined
    : await rootOwnedHelper();
  const denoPath = root?.denoPath ?? options.denoPath ?? await resolveDenoBinary();
  if (!denoPath) return { ok: false, reason: SESSION_START_ERRORS.DENO_NOT_FOUND };
  let helperPath: string;
  try {
    helperPath = root?.helperPath ?? options.helperPath ??
      await realpath(fileURLToPath(new URL("../../askpass/helper.ts", import.meta.url)));
  } catch {
    return { ok: false, reason: SESSION_START_ERRORS.HELPER_NOT_FOUND };
  }
  const envPath = await firstExecutable(["/usr/bin/env", "/bin/env"]);
  const realSudo = options.realSudo ?? await firstExecutable(["/usr/bin/sudo", "/bin/sudo"]);
  const base = options.runtimeBase ?? await chooseRuntimeBase();
  await removeStaleSessionDirs(base);
  const made = await createSessionDir(base);
  if (!made.ok) return { ok: false, reason: SESSION_START_ERRORS.SESSION_DIR };
  const dir = made.dir;
  const socketPath = join(dir, "askpass.sock");
  if (
    !envPath || ![denoPath, helperPath, socketPath, dir].every(isSafeFlagPath) ||
    (realSudo !== undefined && !isSafeFlagPath(realSudo))
  ) {
    await removeSessionDir(dir);
    return { ok: false, reason: SESSION_START_ERRORS.UNSAFE_PATH };
  }

  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const keyHex = newSessionKeyHex();
  const imported = await importSessionKey(keyHex);
  if (!imported.ok) { // a fresh key is always well-formed; fail closed all the same
    await removeSessionDir(dir);
    return { ok: false, reason: SESSION_START_ERRORS.SESSION_FILES };
  }
  const key = imported.key;
  const userDenoDir = join(dir, "deno-cache");
  const denoDir = root?.denoDir ?? userDenoDir;
  const binDir = join(dir, "bin");
  const launcherPath = join(dir, "pi-askpass");
  const environment = helperEnvironment({
    denoDir,
    socketPath,
    sessionKeyHex: keyHex,
    deadlineMs: timeoutMs + HELPER_DEADLINE_MARGIN_MS,
  });
  const argvPrefix = helperArgvPrefix(denoPath, helperPath, socketPath);
  const clientEntry = fileURLToPath(new URL("../../broker/pi_secret_run.ts", import.meta.url));
  // `deno task compile`'s binary when it is there and current (docs/compile.md).
  const compiled = await compiledPiSecretRun(fileURLToPath(new URL("../..", import.meta.url)));
  const written = await writeSessionFiles([
    { path: userDenoDir },
    { path: binDir },
    { path: launcherPath, text: launcherScript({ envPath, environment, argvPrefix }) },
    {
      path: join(binDir, "pi-secret-run"),
      text: piSecretRunScript(
        userDenoDir,
        compiled.ok ? [compiled.path] : piSecretRunArgv(denoPath, clientEntry),
      ),
    },
    ...(realSudo
      ? [{
        path: join(binDir, "sudo"),
        text: sudoWrapperScript(realSudo, options.credentialCache ?? "none"),
      }]
      : []),
  ]);
  if (!written) {
    await removeSessionDir(dir);
    return { ok: false, reason: SESSION_START_ERRORS.SESSION_FILES };
  }
  const expected: ExpectedHelper = {
    uid: currentUid(),
    exePath: denoPath,
    argvPrefix,
    environment,
    ownerPid: options.ownerPid ?? process.pid,
  };

  const server = createServer({ allowHalfOpen: false });
  server.maxConnections = options.maxConnections ?? 64;
  const state = new ServerState(
    options,
    expected,
    { socketPath, uid: expected.uid, ownerPid: expected.ownerPid },
    key,
    timeoutMs,
  );
  const prelude = realSudo ? sudoShellPrelude(join(binDir, "sudo")) : "";
  state.setPrelude(prelude);
  server.on("connection", (socket) => state.accept(socket));
  server.on(
    "drop",
    () => options.onEvent?.({ kind: "refused", reason: CONNECTION_ERRORS.TOO_MANY_CONNECTIONS }),
  );
  const listening = await listen(server, socketPath) &&
    await chmod(socketPath, 0o600).then(() => true, () => false);
  if (!listening) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await removeSessionDir(dir);
    return { ok: false, reason: SESSION_START_ERRORS.LISTEN_FAILED };
  }
  // Off the event loop: child processes fill the cache while pi starts up.
  const warmRuns: WarmupRun[] = [
    ...(root ? [] : [{ argv: argvPrefix, expectedCode: 1 }]),
    ...(compiled.ok
      ? []
      : [{ argv: piSecretRunArgv(denoPath, clientEntry), expectedCode: BROKER_REFUSAL_EXIT }]),
  ];
  const warming = warmDenoCache(warmRuns, userDenoDir);

  let closed = false;
  const session: AskpassSession = {
    dir,
    socketPath,
    launcherPath,
    binDir,
    realSudo,
    denoPath,
    helperPath,
    denoDir,
    hardened: root !== undefined,
    warmup: warming.done,
    toolEnvironment(baseEnv) {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined) env[k] = v;
      env.SUDO_ASKPASS = launcherPath;
      env.PI_ASKPASS_SOCKET = socketPath;
      env.PI_ASKPASS_SECRET = keyHex;
      env.PATH = `${binDir}:${baseEnv.PATH ?? "/usr/local/bin:/usr/bin:/bin"}`;
      return env;
    },
    shellPrelude: () => prelude,
    pendingCount: () => state.pendingCount(),
    lastUnverifiedArgv: () => state.lastUnverifiedArgv(),
    async close() {
      if (closed) return;
      closed = true;
      // Killed and reaped before the directory (and its deno-cache) is removed.
      warming.cancel();
      await warming.done;
      await state.shutdown();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await removeSessionDir(dir);
    },
  };
  return { ok: true, session };
}

/**
 * The root-owned helper, deno and cache of hardened mode, when every file
 * the helper runs is root-protected and the installed protocol matches.
 */
async function rootOwnedHelper(): Promise<
  { denoPath: string; helperPath: string; denoDir: string } | undefined
> {
  const helperPath = `${ROOT_SOURCES}/askpass/helper.ts`;
  const files = [
    ROOT_DENO,
    ...HARDENED_HELPER_FILES.map((f) => `${ROOT_SOURCES}/${f}`),
    PAIRING_CHECK, // root confirms the helper's pipe is its sudo's (ADR 0005)
  ];
  for (const f of files) if (!await isProtectedPath(f)) return undefined;
  const version = parseBrokerVersion(await readFile(BROKER_VERSION_FILE, "utf8").catch(() => ""));
  if (version.protocol !== PROTOCOL_VERSION) return undefined;
  return { denoPath: ROOT_DENO, helperPath, denoDir: `${BROKER_ROOT}/deno-cache` };
}

function listen(server: Server, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(path, () => resolve(true));
  });
}

/** Per-session mutable state: connections, the queue, attempts. */
class ServerState {
  readonly #options: SessionOptions;
  readonly #expected: ExpectedHelper;
  readonly #expectedBroker: ExpectedBroker;
  readonly #key: CryptoKey;
  readonly #timeoutMs: number;
  readonly #attempts = new AttemptCounter();
  readonly #pairing: PairingGuard;
  readonly #seenIds = new Set<string>();
  readonly #queue: Pending[] = [];
  readonly #sockets = new Set<Socket>();
  #active: Pending | undefined;
  #prelude = "";
  #liveness: ReturnType<typeof setInterval> | undefined;
  #closing = false;

  constructor(
    options: SessionOptions,
    expected: ExpectedHelper,
    expectedBroker: ExpectedBroker,
    key: CryptoKey,
    timeoutMs: number,
  ) {
    this.#options = options;
    this.#expected = expected;
    this.#expectedBroker = expectedBroker;
    this.#key = key;
    this.#timeoutMs = timeoutMs;
    this.#pairing = pairingGuardFor(options, expected);
  }

  pendingCount(): number {
    return this.#queue.length;
  }

  /** Remembers the shell prelude so the modal can show the command without it. */
  setPrelude(prelude: string): void {
    this.#prelude = prelude;
  }

  /** Handles one new connection: credentials first, then one bounded frame. */
  accept(socket: Socket): void {
    if (this.#closing) return void socket.destroy();
    this.#sockets.add(socket);
    socket.once("close", () => this.#sockets.delete(socket));
    socket.on("error", () => {}); // a reset peer is handled by "close"
    // Take the kernel's word before reading anything the peer sends.
    const fd = socketFd(socket);
    const creds = fd === undefined
      ? { ok: false as const, reason: PEER_CREDENTIAL_ERRORS.NO_SOCKET_FD }
      : getPeerCredentials(fd);
    const pidfd = fd !== undefined && creds.ok ? getPeerPidfd(fd) : undefined;
    const inode = fd !== undefined ? socketInode(fd) : undefined;

    const reader = new FrameReader();
    let settled = false;
    const drop = (reason: ProtocolError | ConnectionError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reader.wipe();
      if (pidfd !== undefined) closeFd(pidfd);
      this.#emit({ kind: "refused", reason, peerPid: creds.ok ? creds.creds.pid : undefined });
      socket.destroy();
    };
    const timer = setTimeout(
      () => drop(CONNECTION_ERRORS.REQUEST_TIMEOUT),
      this.#options.requestTimeoutMs ?? 2000,
    );
    socket.on("data", (chunk: Uint8Array) => {
      if (settled) return;
      const step = reader.push(chunk);
      if (!step.ok) return drop(step.reason);
      if (step.body === undefined) return;
      settled = true;
      clearTimeout(timer);
      socket.pause();
      const body = step.body;
      this.#onRequest(socket, body, creds, pidfd, inode)
        .catch(() => {
          // Fail closed: no answer at all (the helper then gives sudo nothing).
          // The pidfd is not closed here: it may already be, and closing a
          // descriptor number twice could close an unrelated one.
          this.#emit({ kind: "refused", reason: CONNECTION_ERRORS.INTERNAL_ERROR });
          socket.destroy();
        })
        .finally(() => body.fill(0));
    });
    socket.once("close", () => {
      if (!settled) drop(CONNECTION_ERRORS.PEER_CLOSED);
    });
  }

  async #onRequest(
    socket: Socket,
    body: Uint8Array,
    creds: { ok: true; creds: PeerCredentials } | { ok: false; reason: string },
    pidfd: number | undefined,
    inode: number | undefined,
  ): Promise<void> {
    const decoded = await decodeIncoming(this.#key, body);
    const peerPid = creds.ok ? creds.creds.pid : undefined;
    if (!decoded.ok) {
      if (pidfd !== undefined) closeFd(pidfd);
      this.#emit({ kind: "refused", reason: decoded.reason, peerPid });
      socket.destroy();
      return;
    }
    const request = decoded.message;
    const refuse = async (
      reason: VerifyRefusal | ConnectionError | CredentialRefusal | PairingRefusal,
      notice?: string,
    ) => {
      if (pidfd !== undefined) closeFd(pidfd);
      this.#emit({ kind: "refused", reason, peerPid, requestId: request.id, notice });
      await this.#reply(
        socket,
        await encodeDenied(this.#key, request.id, DENY_REASONS.VERIFICATION_FAILED),
      );
    };
    if (this.#seenIds.has(request.id)) return refuse(CONNECTION_ERRORS.REPLAYED_REQUEST);
    this.#rememberId(request.id);
    if (!creds.ok) {
      return refuse(
        creds.reason === PEER_CREDENTIAL_ERRORS.FFI_UNAVAILABLE
          ? VERIFY_REFUSALS.FFI_UNAVAILABLE
          : VERIFY_REFUSALS.PEER_CREDENTIALS_FAILED,
      );
    }
    const started = performance.now();
    let entry: Omit<Pending, "socket" | "deadline" | "abort" | "finished" | "timer" | "pidfd">;
    if (request.type === "password_request") {
      if (inode === undefined) return refuse(VERIFY_REFUSALS.CONNECTION_OWNER_UNKNOWN);
      // The keyboard checks take a few ms (one of them a tmux run, in hardened
      // mode a sudo -n): start them now, beside the kernel, credential and
      // pairing checks, when this will be the next modal. Their verdict is
      // about the terminal, not the requester, so a signed request suffices
      // to start them; one runs at a time, and it counts only if fresh.
      this.#gateAheadStart();
      const verdict = await verifyRequester(this.#expected, creds.creds, pidfd, inode, request);
      if (!verdict.ok) return refuse(verdict.reason);
      // Before any modal: would the password leave a sudo ticket behind? (ADR 0006)
      const cache = credentialDecision(
        verdict.requester.sudoArgv,
        cachingAllowedNow(this.#options),
      );
      if (!cache.ok) return refuse(cache.reason);
      // The password must reach only the sudo the modal shows (ADR 0005).
      const paired = await this.#pairing.admit(request.id, verdict.requester);
      if (!paired.ok) return refuse(paired.reason, pairingNotice(paired));
      entry = this.#sudoEntry(request, verdict.requester);
    } else {
      const verdict = await verifyBroker(this.#expectedBroker, creds.creds, request);
      if (!verdict.ok) return refuse(verdict.reason);
      entry = await this.#secretEntry(request, verdict.verified);
    }
    const verifyMs = performance.now() - started;
    if (this.#closing || socket.destroyed) {
      if (pidfd !== undefined) closeFd(pidfd);
      return void socket.destroy();
    }
    const deny = async (reason: DenyReason) => {
      if (pidfd !== undefined) closeFd(pidfd);
      this.#emit({ kind: "denied", requestId: request.id, reason });
      await this.#reply(socket, await encodeDenied(this.#key, request.id, reason));
    };
    if (this.#queue.length >= (this.#options.queueCapacity ?? 8)) {
      return deny(DENY_REASONS.QUEUE_FULL);
    }
    if (entry.attempt > (this.#options.maxAttempts ?? 3)) {
      return deny(DENY_REASONS.ATTEMPTS_EXHAUSTED);
    }
    if (entry.kind === "secret" && !this.#options.prompter.promptSecret) {
      return deny(DENY_REASONS.NO_INTERACTIVE_UI);
    }
    const pending: Pending = {
      ...entry,
      socket,
      pidfd,
      deadline: Date.now() + this.#timeoutMs,
      abort: new AbortController(),
      finished: false,
      timer: undefined,
    };
    pending.timer = setTimeout(
      () => void this.#finish(pending, DENY_REASONS.TIMEOUT),
      this.#timeoutMs,
    );
    // The peer closing its end means it died (or gave up): stop asking.
    socket.once("close", () => void this.#finish(pending, DENY_REASONS.PROCESS_GONE));
    socket.resume();
    socket.on("data", () => void this.#finish(pending, DENY_REASONS.PROCESS_GONE));
    this.#queue.push(pending);
    this.#emit({
      kind: "queued",
      requestId: request.id,
      request: entry.kind,
      argv: entry.argv,
      attempt: entry.attempt,
      verifyMs,
    });
    this.#startLiveness();
    this.#pump();
  }

  #sudoEntry(request: PasswordRequest, requester: VerifiedRequester) {
    const attempt = this.#attempts.next(requester.sudo);
    return {
      id: request.id,
      kind: "sudo" as const,
      argv: requester.sudoArgv,
      attempt,
      watched: [requester.helper, requester.sudo],
      ask: (signal: AbortSignal) =>
        this.#options.prompter.prompt({
          requestId: request.id,
          sudoArgv: requester.sudoArgv,
          toolCommand: withoutPrelude(requester.toolCommand, this.#prelude),
          promptText: sanitizePrompt(request.prompt),
          attempt,
          maxAttempts: this.#options.maxAttempts ?? 3,
          deadline: this.#deadlineOf(request.id),
          waiting: () => this.#waitingBehind(request.id),
        }, signal),
      delivered: () => this.#attempts.recordSubmit(requester.sudo),
    };
  }

  async #secretEntry(request: SecretRequest, verified: VerifiedBroker) {
    // The broker says whether the argv is allowlisted; check it ourselves too
    // and show the warning unless both agree.
    const allowlisted = request.allowlisted && await argvIsAllowlisted(request.argv);
    return {
      id: request.id,
      kind: "secret" as const,
      argv: request.argv,
      attempt: 1,
      watched: [verified.broker, verified.sudo],
      ask: (signal: AbortSignal) => {
        // Remembered once shown, even if then cancelled (docs/design.md §5, /sudo-prompt allow).
        if (!allowlisted) this.#lastUnverifiedArgv = [...request.argv];
        return this.#options.prompter.promptSecret!({
          requestId: request.id,
          argv: request.argv,
          cwd: request.cwd,
          label: request.label,
          allowlisted,
          deadline: this.#deadlineOf(request.id),
          waiting: () => this.#waitingBehind(request.id),
        }, signal);
      },
      delivered: () => {},
    };
  }

  #lastUnverifiedArgv: readonly string[] | undefined;

  /** The last argv shown without allowlist approval in this session (for `/sudo-prompt allow`). */
  lastUnverifiedArgv(): readonly string[] | undefined {
    return this.#lastUnverifiedArgv;
  }

  #deadlineOf(id: string): number {
    return this.#queue.find((e) => e.id === id)?.deadline ?? Date.now();
  }

  #waitingBehind(id: string): number {
    return this.#queue.filter((e) => e.id !== id && !e.finished).length;
  }

  /** Starts the prompter on the head of the queue if nothing is being asked. */
  #pump(): void {
    if (this.#active || this.#closing) return;
    const entry = this.#queue.find((e) => !e.finished);
    if (!entry) return;
    this.#active = entry;
    const gate = this.#options.gate;
    if (!gate) return this.#open(entry);
    // Nobody else may hold the keyboard: checked before the modal opens…
    void this.#gateCheck(entry, gate, "open").then((ok) => {
      if (!ok || entry.finished) return;
      this.#open(entry);
      // …and again and again while it is open (one check at a time).
      let running = false;
      const timer = setInterval(() => {
        if (entry.finished) return clearInterval(timer);
        if (running) return;
        running = true;
        void this.#gateCheck(entry, gate, "watch").finally(() => running = false);
      }, gate.intervalMs);
      entry.abort.signal.addEventListener("abort", () => clearInterval(timer), { once: true });
    });
  }

  /** A gate check started ahead of the modal it is for ({@link #gateAheadStart}). */
  #gateAhead: { at: number; verdict: Promise<GateVerdict> } | undefined;

  /**
   * Starts the `open` check early, when nothing is asked or queued (so the
   * check cannot disturb an open modal's). One at a time, so a flood of
   * signed requests costs at most one check in flight.
   */
  #gateAheadStart(): void {
    const gate = this.#options.gate;
    if (!gate || this.#active || this.#queue.length > 0 || this.#gateAhead) return;
    const ahead = { at: performance.now(), verdict: gate.check("open") };
    this.#gateAhead = ahead;
    // Forgotten once too old to stand for the state when a modal opens.
    ahead.verdict.catch(() => {}).finally(() =>
      setTimeout(() => {
        if (this.#gateAhead === ahead) this.#gateAhead = undefined;
      }, GATE_AHEAD_MAX_AGE_MS).unref?.()
    );
  }

  /** Runs the gate; a closed gate refuses `entry` (closing its modal). */
  async #gateCheck(entry: Pending, gate: ModalGate, phase: GatePhase): Promise<boolean> {
    let verdict;
    try {
      const ahead = phase === "open" ? this.#gateAhead : undefined;
      if (phase === "open") this.#gateAhead = undefined;
      // An early `open` check counts only if it began less than one
      // re-check interval ago; the re-checks then continue from there.
      verdict = ahead && performance.now() - ahead.at < GATE_AHEAD_MAX_AGE_MS
        ? await ahead.verdict
        : await gate.check(phase);
    } catch {
      verdict = { ok: false as const, reason: undefined, notice: "" };
    }
    if (verdict.ok || entry.finished) return verdict.ok;
    this.#emit({
      kind: "refused",
      reason: verdict.reason ?? CONNECTION_ERRORS.INTERNAL_ERROR,
      requestId: entry.id,
      notice: verdict.notice || undefined,
    });
    await this.#finish(entry, DENY_REASONS.VERIFICATION_FAILED);
    return false;
  }

  /** Opens the modal for the active entry. */
  #open(entry: Pending): void {
    this.#emit({ kind: "prompted", requestId: entry.id, attempt: entry.attempt });
    let outcome: Promise<PromptOutcome>;
    try {
      outcome = entry.ask(entry.abort.signal);
    } catch {
      outcome = Promise.resolve({ kind: "cancel" });
    }
    outcome
      .then((o) => this.#onOutcome(entry, o), () => this.#finish(entry, DENY_REASONS.CANCELLED))
      // An unexpected throw while answering denies the request (fail closed).
      .catch(() => this.#finish(entry, DENY_REASONS.CANCELLED));
  }

  async #onOutcome(entry: Pending, outcome: PromptOutcome): Promise<void> {
    if (outcome.kind !== "submit") return this.#finish(entry, DENY_REASONS.CANCELLED);
    const password = outcome.password;
    try {
      if (entry.finished) return;
      if (
        password.length > MAX_PASSWORD_BYTES ||
        password.some((b) => b === 0x0a || b === 0x0d || b === 0)
      ) {
        return await this.#finish(entry, DENY_REASONS.CANCELLED);
      }
      // Right before the secret leaves: still the same processes?
      if (!await this.#alive(entry)) return await this.#finish(entry, DENY_REASONS.PROCESS_GONE);
      if (entry.finished) return;
      // …and is the helper's pipe still read by the sudo the modal showed? (ADR 0005)
      const paired = entry.kind === "sudo" ? await this.#pairing.confirm(entry.id) : undefined;
      if (paired && !paired.ok) {
        const notice = pairingNotice(paired);
        this.#emit({ kind: "refused", reason: paired.reason, requestId: entry.id, notice });
        return await this.#finish(entry, DENY_REASONS.VERIFICATION_FAILED);
      }
      if (entry.finished) return;
      // …and nobody else took the keyboard since the last periodic check? (ADR 0007)
      const gate = this.#options.gate;
      if (gate && !await this.#gateCheck(entry, gate, "send")) return;
      const frame = await encodeResponse(this.#key, entry.id, password);
      password.fill(0);
      if (entry.finished) return void frame.fill(0);
      entry.delivered();
      this.#emit({ kind: "answered", requestId: entry.id, attempt: entry.attempt });
      await this.#finish(entry, undefined, frame);
    } finally {
      password.fill(0);
    }
  }

  async #alive(entry: Pending): Promise<boolean> {
    return await pidfdRefersTo(entry.pidfd, entry.watched[0].pid) &&
      await stillRunning(entry.watched);
  }

  /**
   * Ends a request exactly once: with `frame` (a password response) or a
   * denial for `reason`. Frees its slot and moves the queue on.
   */
  async #finish(
    entry: Pending,
    reason: DenyReason | undefined,
    frame?: Uint8Array,
  ): Promise<void> {
    if (entry.finished) {
      frame?.fill(0);
      return;
    }
    entry.finished = true;
    clearTimeout(entry.timer);
    entry.abort.abort();
    if (entry.pidfd !== undefined) closeFd(entry.pidfd);
    const i = this.#queue.indexOf(entry);
    if (i >= 0) this.#queue.splice(i, 1);
    if (this.#active === entry) this.#active = undefined;
    if (this.#queue.length === 0) this.#stopLiveness();
    queueMicrotask(() => this.#pump());
    if (reason !== undefined) {
      this.#emit({ kind: "denied", requestId: entry.id, reason });
      await this.#track(this.#deny(entry.socket, entry.id, reason));
    } else if (frame) {
      await this.#track(this.#reply(entry.socket, frame));
    }
  }

  /** Replies still being written; shutdown lets them finish (each bounded). */
  readonly #inFlight = new Set<Promise<void>>();

  #track(reply: Promise<void>): Promise<void> {
    this.#inFlight.add(reply);
    return reply.finally(() => this.#inFlight.delete(reply));
  }

  async #deny(socket: Socket, id: string, reason: DenyReason): Promise<void> {
    if (socket.destroyed) return;
    await this.#reply(socket, await encodeDenied(this.#key, id, reason));
  }

  /** Writes one frame, zeroes it once written, closes; destroys after a grace period. */
  #reply(socket: Socket, frame: Uint8Array): Promise<void> {
    return new Promise((resolve) => {
      if (socket.destroyed) {
        frame.fill(0);
        return resolve();
      }
      const grace = setTimeout(() => socket.destroy(), WRITE_GRACE_MS);
      socket.once("close", () => {
        clearTimeout(grace);
        frame.fill(0);
        resolve();
      });
      socket.end(frame);
    });
  }

  #startLiveness(): void {
    if (this.#liveness) return;
    this.#liveness = setInterval(() => void this.#checkLiveness(), LIVENESS_INTERVAL_MS);
  }

  #stopLiveness(): void {
    clearInterval(this.#liveness);
    this.#liveness = undefined;
  }

  async #checkLiveness(): Promise<void> {
    for (const entry of [...this.#queue]) {
      if (!await this.#alive(entry)) await this.#finish(entry, DENY_REASONS.PROCESS_GONE);
    }
  }

  #rememberId(id: string): void {
    this.#seenIds.add(id);
    if (this.#seenIds.size > SEEN_ID_CAPACITY) {
      this.#seenIds.delete(this.#seenIds.values().next().value as string);
    }
  }

  #emit(event: SessionEvent): void {
    try {
      this.#options.onEvent?.(event);
    } catch {
      // an audit sink must not break the server
    }
  }

  /** Denies everything pending and closes every connection. */
  async shutdown(): Promise<void> {
    this.#closing = true;
    this.#stopLiveness();
    const pending = [...this.#queue].map((e) => this.#finish(e, DENY_REASONS.SESSION_CLOSED));
    // Denials already on their way (a modal cancelled just before) get to
    // arrive too: each write is bounded by WRITE_GRACE_MS.
    await Promise.all([...pending, ...this.#inFlight]);
    for (const s of this.#sockets) s.destroy();
  }
}

/**
 * The tool command as the human wrote it: `[shell, "-c", text]` with our own
 * `sudo()` prelude removed from the front of `text`.
 */
export function withoutPrelude(
  argv: readonly string[] | null,
  prelude: string,
): readonly string[] | null {
  if (!argv || prelude === "" || argv.length < 3 || argv[1] !== "-c") return argv;
  const text = argv[2];
  if (!text.startsWith(prelude + "\n")) return argv;
  return [argv[0], "-c", text.slice(prelude.length + 1), ...argv.slice(3)];
}

/** One file (with `text`) or directory (without) of a new session directory. */
interface SessionFile {
  readonly path: string;
  readonly text?: string;
}

/**
 * Creates the session's directories and scripts (0700, files never
 * overwritten). False when any of them cannot be written, a full disk for
 * example; the caller then removes the whole session directory.
 */
async function writeSessionFiles(files: readonly SessionFile[]): Promise<boolean> {
  try {
    for (const f of files) {
      if (f.text === undefined) await mkdir(f.path, { mode: 0o700 });
      else await writeFile(f.path, f.text, { mode: 0o700, flag: "wx" });
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Inode of our end of an accepted socket. `fstat` on a socket descriptor
 * touches no disk and cannot block, so it is done synchronously at accept.
 */
function socketInode(fd: number): number | undefined {
  const st = fdStatSync(fd);
  return st?.isSocket() && st.ino > 0 ? st.ino : undefined;
}
