/**
 * The askpass session server: one per interactive pi session. It owns the
 * private session directory, the listening socket, the session key, the
 * per-session launcher and `sudo` wrapper, and it answers helpers' requests
 * one at a time through a {@link Prompter}.
 *
 * Rules it keeps (SPEC §4, §7): every connection is identified through the
 * kernel before anything is shown; every wait has a deadline; the queue and
 * every buffer are bounded; nothing blocks the event loop; teardown denies
 * whatever is pending and removes every file.
 *
 * @module
 */
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { fstatSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import {
  decodeRequest,
  DENY_REASONS,
  type DenyReason,
  encodeDenied,
  encodeResponse,
  FrameReader,
  importSessionKey,
  MAX_PASSWORD_BYTES,
  newSessionKeyHex,
  type PasswordRequest,
  type ProtocolError,
} from "../askpass/protocol.ts";
import {
  helperArgvPrefix,
  helperEnvironment,
  isSafeFlagPath,
} from "../askpass/helper_permissions.ts";
import { AttemptCounter } from "./attempt_counter.ts";
import { firstExecutable, resolveDenoBinary } from "./deno_binary.ts";
import {
  closeFd,
  getPeerCredentials,
  getPeerPidfd,
  PEER_CREDENTIAL_ERRORS,
  type PeerCredentials,
} from "./peer_credentials.ts";
import {
  currentUid,
  type ExpectedHelper,
  pidfdRefersTo,
  stillRunning,
  type VerifiedRequester,
  VERIFY_REFUSALS,
  type VerifyRefusal,
  verifyRequester,
} from "./peer_verification.ts";
import type { Prompter, PromptOutcome, PromptRequest } from "./prompter.ts";
import {
  chooseRuntimeBase,
  createSessionDir,
  removeSessionDir,
  removeStaleSessionDirs,
} from "./session_dir.ts";
import { launcherScript, sudoShellPrelude, sudoWrapperScript } from "./shell_injection.ts";
import { sanitizePrompt } from "./prompt_text.ts";

/** Default time the human has to answer one request (SPEC §4.6). */
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
} as const;

/** One of the values of {@link SESSION_START_ERRORS}. */
export type SessionStartError = typeof SESSION_START_ERRORS[keyof typeof SESSION_START_ERRORS];

/** Reasons a connection is dropped or refused that are not protocol or verification errors. */
export const CONNECTION_ERRORS = {
  TOO_MANY_CONNECTIONS: "too_many_connections",
  REQUEST_TIMEOUT: "request_timeout",
  REPLAYED_REQUEST: "replayed_request",
  PEER_CLOSED: "peer_closed",
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
    readonly reason: VerifyRefusal | ProtocolError | ConnectionError;
    readonly peerPid?: number;
    readonly requestId?: string;
  }
  | {
    readonly kind: "queued";
    readonly requestId: string;
    readonly sudoArgv: readonly string[];
    readonly attempt: number;
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
  /** Environment for a tool call or `!` command, built on `base`. */
  toolEnvironment(base: Record<string, string | undefined>): Record<string, string>;
  /** Shell text to prepend to a command: the `sudo()` function. Empty without sudo. */
  shellPrelude(): string;
  /** Verified requests currently queued or being answered. */
  pendingCount(): number;
  /** Denies everything pending, closes the socket and removes the directory. */
  close(): Promise<void>;
}

interface Pending {
  readonly request: PasswordRequest;
  readonly requester: VerifiedRequester;
  readonly socket: Socket;
  readonly deadline: number;
  readonly attempt: number;
  readonly abort: AbortController;
  finished: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
}

const SEEN_ID_CAPACITY = 4096;
const LIVENESS_INTERVAL_MS = 200;
const WRITE_GRACE_MS = 1000;

/** Starts a session: directory, key, launcher, wrapper and listening socket. */
export async function startSession(
  options: SessionOptions,
): Promise<{ ok: true; session: AskpassSession } | { ok: false; reason: SessionStartError }> {
  const denoPath = options.denoPath ?? await resolveDenoBinary();
  if (!denoPath) return { ok: false, reason: SESSION_START_ERRORS.DENO_NOT_FOUND };
  let helperPath: string;
  try {
    helperPath = options.helperPath ??
      await realpath(fileURLToPath(new URL("../askpass/helper.ts", import.meta.url)));
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
  if (!imported.ok) throw new Error("generated session key rejected"); // cannot happen
  const key = imported.key;
  const denoDir = join(dir, "deno-cache");
  const binDir = join(dir, "bin");
  const launcherPath = join(dir, "pi-askpass");
  await mkdir(denoDir, { mode: 0o700 });
  await mkdir(binDir, { mode: 0o700 });
  const environment = helperEnvironment({
    denoDir,
    socketPath,
    sessionKeyHex: keyHex,
    deadlineMs: timeoutMs + HELPER_DEADLINE_MARGIN_MS,
  });
  const argvPrefix = helperArgvPrefix(denoPath, helperPath, socketPath);
  await writeFile(launcherPath, launcherScript({ envPath, environment, argvPrefix }), {
    mode: 0o700,
    flag: "wx",
  });
  if (realSudo) {
    await writeFile(join(binDir, "sudo"), sudoWrapperScript(realSudo), {
      mode: 0o700,
      flag: "wx",
    });
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
  const state = new ServerState(options, expected, key, timeoutMs);
  const prelude = realSudo ? sudoShellPrelude(join(binDir, "sudo")) : "";
  state.setPrelude(prelude);
  server.on("connection", (socket) => state.accept(socket));
  server.on(
    "drop",
    () => options.onEvent?.({ kind: "refused", reason: CONNECTION_ERRORS.TOO_MANY_CONNECTIONS }),
  );
  const listening = await listen(server, socketPath);
  if (!listening) {
    await removeSessionDir(dir);
    return { ok: false, reason: SESSION_START_ERRORS.LISTEN_FAILED };
  }
  await chmod(socketPath, 0o600);

  let closed = false;
  const session: AskpassSession = {
    dir,
    socketPath,
    launcherPath,
    binDir,
    realSudo,
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
    async close() {
      if (closed) return;
      closed = true;
      await state.shutdown();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await removeSessionDir(dir);
    },
  };
  return { ok: true, session };
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
  readonly #key: CryptoKey;
  readonly #timeoutMs: number;
  readonly #attempts = new AttemptCounter();
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
    key: CryptoKey,
    timeoutMs: number,
  ) {
    this.#options = options;
    this.#expected = expected;
    this.#key = key;
    this.#timeoutMs = timeoutMs;
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
      void this.#onRequest(socket, body, creds, pidfd, inode).finally(() => body.fill(0));
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
    const decoded = await decodeRequest(this.#key, body);
    if (!decoded.ok) {
      if (pidfd !== undefined) closeFd(pidfd);
      this.#emit({
        kind: "refused",
        reason: decoded.reason,
        peerPid: creds.ok ? creds.creds.pid : undefined,
      });
      socket.destroy();
      return;
    }
    const request = decoded.message;
    const refuse = async (reason: VerifyRefusal | ConnectionError) => {
      if (pidfd !== undefined) closeFd(pidfd);
      this.#emit({
        kind: "refused",
        reason,
        peerPid: creds.ok ? creds.creds.pid : undefined,
        requestId: request.id,
      });
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
    if (inode === undefined) return refuse(VERIFY_REFUSALS.CONNECTION_OWNER_UNKNOWN);
    const verdict = await verifyRequester(this.#expected, creds.creds, pidfd, inode, request);
    if (!verdict.ok) return refuse(verdict.reason);
    if (this.#closing || socket.destroyed) {
      if (pidfd !== undefined) closeFd(pidfd);
      return void socket.destroy();
    }
    const requester = verdict.requester;
    const deny = async (reason: DenyReason) => {
      if (pidfd !== undefined) closeFd(pidfd);
      this.#emit({ kind: "denied", requestId: request.id, reason });
      await this.#reply(socket, await encodeDenied(this.#key, request.id, reason));
    };
    if (this.#queue.length >= (this.#options.queueCapacity ?? 8)) {
      return deny(DENY_REASONS.QUEUE_FULL);
    }
    const attempt = this.#attempts.next(requester.sudo);
    if (attempt > (this.#options.maxAttempts ?? 3)) return deny(DENY_REASONS.ATTEMPTS_EXHAUSTED);

    const entry: Pending = {
      request,
      requester,
      socket,
      deadline: Date.now() + this.#timeoutMs,
      attempt,
      abort: new AbortController(),
      finished: false,
      timer: undefined,
    };
    entry.timer = setTimeout(() => void this.#finish(entry, DENY_REASONS.TIMEOUT), this.#timeoutMs);
    // The helper closing its end means it died (or gave up): stop asking.
    socket.once("close", () => void this.#finish(entry, DENY_REASONS.PROCESS_GONE));
    socket.resume();
    socket.on("data", () => void this.#finish(entry, DENY_REASONS.PROCESS_GONE));
    this.#queue.push(entry);
    this.#emit({ kind: "queued", requestId: request.id, sudoArgv: requester.sudoArgv, attempt });
    this.#startLiveness();
    this.#pump();
  }

  /** Starts the prompter on the head of the queue if nothing is being asked. */
  #pump(): void {
    if (this.#active || this.#closing) return;
    const entry = this.#queue.find((e) => !e.finished);
    if (!entry) return;
    this.#active = entry;
    const request: PromptRequest = {
      requestId: entry.request.id,
      sudoArgv: entry.requester.sudoArgv,
      toolCommand: withoutPrelude(entry.requester.toolCommand, this.#prelude),
      promptText: sanitizePrompt(entry.request.prompt),
      attempt: entry.attempt,
      maxAttempts: this.#options.maxAttempts ?? 3,
      deadline: entry.deadline,
      waiting: () => this.#queue.filter((e) => e !== entry && !e.finished).length,
    };
    this.#emit({ kind: "prompted", requestId: entry.request.id, attempt: entry.attempt });
    let outcome: Promise<PromptOutcome>;
    try {
      outcome = this.#options.prompter.prompt(request, entry.abort.signal);
    } catch {
      outcome = Promise.resolve({ kind: "cancel" });
    }
    outcome.then(
      (o) => this.#onOutcome(entry, o),
      () => this.#finish(entry, DENY_REASONS.CANCELLED),
    );
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
      // Right before the password leaves: still the same helper and sudo?
      const { helper, sudo, helperPidfd } = entry.requester;
      if (!await pidfdRefersTo(helperPidfd, helper.pid) || !await stillRunning([helper, sudo])) {
        return await this.#finish(entry, DENY_REASONS.PROCESS_GONE);
      }
      if (entry.finished) return;
      const frame = await encodeResponse(this.#key, entry.request.id, password);
      password.fill(0);
      if (entry.finished) return void frame.fill(0);
      this.#attempts.recordSubmit(sudo);
      this.#emit({ kind: "answered", requestId: entry.request.id, attempt: entry.attempt });
      await this.#finish(entry, undefined, frame);
    } finally {
      password.fill(0);
    }
  }

  /**
   * Ends a request exactly once: with `frame` (a password response) or a
   * denial for `reason`. Frees its slot and moves the queue on.
   */
  async #finish(entry: Pending, reason: DenyReason | undefined, frame?: Uint8Array): Promise<void> {
    if (entry.finished) {
      frame?.fill(0);
      return;
    }
    entry.finished = true;
    clearTimeout(entry.timer);
    entry.abort.abort();
    if (entry.requester.helperPidfd !== undefined) closeFd(entry.requester.helperPidfd);
    const i = this.#queue.indexOf(entry);
    if (i >= 0) this.#queue.splice(i, 1);
    if (this.#active === entry) this.#active = undefined;
    if (this.#queue.length === 0) this.#stopLiveness();
    if (reason !== undefined) {
      this.#emit({ kind: "denied", requestId: entry.request.id, reason });
      if (!entry.socket.destroyed) {
        void this.#reply(entry.socket, await encodeDenied(this.#key, entry.request.id, reason));
      }
    } else if (frame) {
      await this.#reply(entry.socket, frame);
    }
    queueMicrotask(() => this.#pump());
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
      const { helper, sudo, helperPidfd } = entry.requester;
      const alive = await pidfdRefersTo(helperPidfd, helper.pid) &&
        await stillRunning([helper, sudo]);
      if (!alive) await this.#finish(entry, DENY_REASONS.PROCESS_GONE);
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
    await Promise.all([...this.#queue].map((e) => this.#finish(e, DENY_REASONS.SESSION_CLOSED)));
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

/**
 * Inode of our end of an accepted socket. `fstat` on a socket descriptor
 * touches no disk and cannot block, so it is done synchronously at accept.
 */
function socketInode(fd: number): number | undefined {
  try {
    const st = fstatSync(fd);
    return st.isSocket() && st.ino > 0 ? st.ino : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The file descriptor behind a Node socket. `_handle.fd` is internal to
 * Node but stable for Unix-domain sockets; without it we fail closed.
 */
function socketFd(socket: Socket): number | undefined {
  // deno-lint-ignore no-explicit-any -- reaching into Node's internal handle on purpose
  const fd = (socket as any)._handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : undefined;
}
