/**
 * Each new connection to the session socket: the kernel's word on the peer
 * first (SO_PEERCRED, the pidfd, our socket's inode), which starts the
 * verification's reads of `/proc`; then one bounded frame, then the
 * judgement of a helper or of the broker, the credential policy (ADR 0006)
 * and the pairing (ADR 0005). Only then is the request handed to the
 * {@link ModalQueue}. Anything else is refused with a named reason, before
 * any modal.
 *
 * @module
 */
import type { Socket } from "node:net";
import {
  decodeIncoming,
  DENY_REASONS,
  type DenyReason,
  encodeDenied,
  FrameReader,
  type PasswordRequest,
  type ProtocolError,
  type SecretRequest,
} from "../../askpass/protocol.ts";
import { type ExpectedBroker, type VerifiedBroker, verifyBroker } from "./broker_verification.ts";
import { PEER_CREDENTIAL_ERRORS } from "../../kernel/peer_credentials.ts";
import {
  type ExpectedHelper,
  judgeRequester,
  readRequester,
  type RequesterReading,
  type VerifiedRequester,
  VERIFY_REFUSALS,
} from "../../kernel/peer_verification.ts";
import { agentCanTraceAnyProcess } from "../../kernel/yama.ts";
import type { PairingGuard } from "../pairing/pairing_guard.ts";
import { processRefusalNotice } from "./refusal_advice.ts";
import { ROOT_RUN_REFUSALS, rootRunWarnings } from "./root_program.ts";
import { ticketHolderOf } from "./call_credentials.ts";
import { sanitizePrompt } from "../../askpass/prompt_text.ts";
import type { UncheckedProcess } from "../../askpass/prompter.ts";
import { AttemptCounter } from "./attempt_counter.ts";
import { cachingAllowedNow, credentialDecision } from "./credential_policy.ts";
import type { ModalQueue } from "./modal_queue.ts";
import { PeerConnection } from "./peer_connection.ts";
import {
  CONNECTION_ERRORS,
  type ConnectionError,
  type Pending,
  type RefusalReason,
  type SessionEvent,
  type SessionSettings,
} from "./session_types.ts";

/** Request ids remembered against replay (the oldest is forgotten first). */
const SEEN_ID_CAPACITY = 4096;

/** What a session's intake is made of (one session's settings, queue and pairing guard). */
export interface IntakeParts {
  readonly settings: SessionSettings;
  /** The helper the session pins, and the broker it expects. */
  readonly expected: ExpectedHelper;
  readonly expectedBroker: ExpectedBroker;
  /** Time to answer one request, from its arrival. */
  readonly timeoutMs: number;
  readonly queue: ModalQueue;
  readonly pairing: PairingGuard;
  /** The shell prelude, removed from the command the modal shows. */
  readonly prelude: string;
}

/** When a connection was accepted (`performance.now()`), and the reads of its peer started then. */
type EarlyReads = { arrivedAt: number; reading?: RequesterReading };

/** Accepts connections for one session and hands verified requests to its queue. */
export class ConnectionIntake {
  readonly #parts: IntakeParts;
  readonly #options: SessionSettings;
  readonly #queue: ModalQueue;
  readonly #attempts = new AttemptCounter();
  readonly #seenIds = new Set<string>();
  readonly #sockets = new Set<Socket>();

  constructor(parts: IntakeParts) {
    [this.#parts, this.#options, this.#queue] = [parts, parts.settings, parts.queue];
  }

  /** Closes every connection still open (after the queue has denied what it held). */
  destroyAll(): void {
    for (const s of this.#sockets) s.destroy();
  }

  /** Handles one new connection: credentials first, then one bounded frame. */
  accept(socket: Socket): void {
    if (this.#queue.closing) return void socket.destroy();
    this.#sockets.add(socket);
    socket.once("close", () => this.#sockets.delete(socket));
    socket.on("error", () => {}); // a reset peer is handled by "close"
    // Take the kernel's word before reading anything the peer sends.
    const connection = new PeerConnection(socket);
    const early = this.#startReads(connection);
    const reader = new FrameReader();
    let settled = false;
    const drop = (reason: ProtocolError | ConnectionError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reader.wipe();
      if (!connection.end()) return;
      this.#queue.emit({ kind: "refused", reason, peerPid: connection.peerPid });
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
      this.#onRequest(connection, body, early)
        .catch(() => {
          // Fail closed: no answer at all (the helper then gives sudo nothing).
          // Ended here once (reported once); the socket goes in any case, and
          // a request the queue holds then leaves it as its socket closes.
          if (connection.end()) {
            this.#queue.emit({ kind: "refused", reason: CONNECTION_ERRORS.INTERNAL_ERROR });
          }
          socket.destroy();
        })
        .finally(() => body.fill(0));
    });
    socket.once("close", () => {
      if (!settled) drop(CONNECTION_ERRORS.PEER_CLOSED);
    });
  }

  /**
   * The verification's reads need only the kernel's word on the peer: they
   * start at accept, while the helper signs its request, and are judged once
   * it is here. Once they show the pinned deno with our uids, the keyboard
   * checks and the walk of /proc start too (one of each at a time; the gate's
   * verdict counts only if fresh when the modal opens).
   */
  #startReads(connection: PeerConnection): EarlyReads {
    const arrivedAt = performance.now();
    const { creds, inode } = connection;
    if (!creds.ok || inode === undefined) return { arrivedAt };
    const reading = readRequester(this.#parts.expected, creds.creds, inode);
    reading.reads.catch(() => {}); // judged, a failure handled, when a request arrives
    reading.pinned.then((pinned) => {
      if (!pinned || connection.ended || this.#queue.closing) return;
      this.#queue.gateAheadStart();
      // After the gate's check began, so that one walk serves both (kernel/proc_walk.ts).
      this.#parts.pairing.prefetch(arrivedAt);
    }, () => {});
    return { arrivedAt, reading };
  }

  async #onRequest(connection: PeerConnection, body: Uint8Array, early: EarlyReads) {
    const { socket, creds, inode, peerPid } = connection;
    const decoded = decodeIncoming(body);
    if (!decoded.ok) {
      if (!connection.end()) return;
      this.#queue.emit({ kind: "refused", reason: decoded.reason, peerPid });
      return void socket.destroy();
    }
    const request = decoded.message;
    // Ends the request once: reports `event`, then answers with a denial for `reason`.
    const end = async (event: SessionEvent, reason: DenyReason) => {
      if (!connection.end()) return;
      this.#queue.emit(event);
      await this.#queue.reply(socket, encodeDenied(request.id, reason));
    };
    const refuse = (reason: RefusalReason, notice?: string) =>
      end(
        { kind: "refused", reason, peerPid, requestId: request.id, notice },
        DENY_REASONS.VERIFICATION_FAILED,
      );
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
    let entry: Omit<Pending, "connection" | "deadline" | "abort" | "timer">;
    if (request.type === "password_request") {
      if (inode === undefined || !early.reading) {
        return refuse(VERIFY_REFUSALS.CONNECTION_OWNER_UNKNOWN);
      }
      // A peer that was not yet the pinned deno when it connected is read
      // again now (it may have exec'd since: the checks then name why).
      const reading = await early.reading.pinned
        ? early.reading
        : readRequester(this.#parts.expected, creds.creds, inode);
      const verdict = await judgeRequester(
        this.#parts.expected,
        creds.creds,
        connection.pidfd,
        reading,
        request,
      );
      if (!verdict.ok) return refuse(verdict.reason);
      // Before any modal: would the password leave a sudo ticket behind? (ADR 0006)
      const cache = credentialDecision(
        verdict.requester.sudoArgv,
        cachingAllowedNow(this.#options),
      );
      if (!cache.ok) return refuse(cache.reason);
      // The password must reach only the sudo the modal shows (ADR 0005);
      // beside it, what the sudo may run that its argv does not show.
      const [paired, warnings] = await Promise.all([
        this.#parts.pairing.admit(request.id, verdict.requester, early.arrivedAt),
        rootRunWarnings(verdict.requester.sudoArgv),
      ]);
      if (!paired.ok) return refuse(paired.reason, processRefusalNotice(paired));
      if (warnings.length > 0 && this.#options.refuseRiskySudo) {
        const risky = { reason: ROOT_RUN_REFUSALS.RISKY_SUDO, pid: verdict.requester.sudo.pid };
        return refuse(risky.reason, processRefusalNotice(risky));
      }
      entry = this.#sudoEntry(request, verdict.requester, paired.unchecked ?? [], {
        covers: cache.createsTicket ? "call" : "sudo",
        warnings,
      });
      // The process its ticket would be keyed to: the call's end ends it (ADR 0009 §4).
      if (cache.createsTicket) {
        entry = { ...entry, ticket: await ticketHolderOf(verdict.requester.sudo.pid) };
      }
    } else {
      const verdict = await verifyBroker(this.#parts.expectedBroker, creds.creds, request);
      if (!verdict.ok) return refuse(verdict.reason);
      entry = await this.#secretEntry(request, verdict.verified);
    }
    const verifyMs = performance.now() - started;
    if (this.#queue.closing || socket.destroyed) {
      connection.end();
      return void socket.destroy();
    }
    const deny = (reason: DenyReason) =>
      end({ kind: "denied", requestId: request.id, reason }, reason);
    if (this.#queue.pendingCount() >= (this.#options.queueCapacity ?? 8)) {
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
      connection,
      deadline: Date.now() + this.#parts.timeoutMs,
      abort: new AbortController(),
      timer: undefined,
    };
    pending.timer = setTimeout(
      () => void this.#queue.finish(pending, DENY_REASONS.TIMEOUT),
      this.#parts.timeoutMs,
    );
    // The peer closing its end means it died (or gave up): stop asking.
    socket.once("close", () => void this.#queue.finish(pending, DENY_REASONS.PROCESS_GONE));
    socket.resume();
    socket.on("data", () => void this.#queue.finish(pending, DENY_REASONS.PROCESS_GONE));
    // From now until its reply, a helper hears that pi is alive (ADR 0008).
    if (entry.kind === "sudo") this.#queue.keepAlive(socket);
    this.#queue.enqueue(pending, {
      kind: "queued",
      requestId: request.id,
      request: entry.kind,
      argv: entry.argv,
      attempt: entry.attempt,
      verifyMs,
    });
  }

  #sudoEntry(
    request: PasswordRequest,
    requester: VerifiedRequester,
    pairing: readonly UncheckedProcess[],
    approval: { readonly covers: "call" | "sudo"; readonly warnings: readonly string[] },
  ) {
    const attempt = this.#attempts.next(requester.sudo);
    const unchecked = { pairing, gate: [] as readonly UncheckedProcess[] };
    return {
      unchecked,
      id: request.id,
      kind: "sudo" as const,
      argv: requester.sudoArgv,
      pipeInode: requester.pipeInode,
      attempt,
      watched: [requester.helper, requester.sudo],
      ask: (signal: AbortSignal, recheck: () => Promise<boolean>) =>
        this.#options.prompter.prompt({
          requestId: request.id,
          sudoArgv: requester.sudoArgv,
          toolCommand: withoutPrelude(requester.toolCommand, this.#parts.prelude),
          promptText: sanitizePrompt(request.prompt),
          attempt,
          maxAttempts: this.#options.maxAttempts ?? 3,
          deadline: this.#queue.deadlineOf(request.id),
          waiting: () => this.#queue.waitingBehind(request.id),
          unchecked: () => [...unchecked.pairing, ...unchecked.gate],
          recheck,
          ...approval,
        }, signal),
      delivered: () => this.#attempts.recordSubmit(requester.sudo),
    };
  }

  async #secretEntry(request: SecretRequest, verified: VerifiedBroker) {
    // The verified broker (root, from root-owned files) says whether the argv
    // is allowlisted; reading the file again here would only repeat it.
    const allowlisted = request.allowlisted;
    const traceable = await agentCanTraceAnyProcess();
    return {
      id: request.id,
      kind: "secret" as const,
      argv: request.argv,
      pipeInode: undefined,
      unchecked: { pairing: [], gate: [] },
      attempt: 1,
      watched: [verified.broker, verified.sudo],
      ask: (signal: AbortSignal, recheck: () => Promise<boolean>) => {
        // Remembered once shown, even if then cancelled (docs/design.md §5, /sudo-prompt allow).
        if (!allowlisted) this.#lastUnverifiedArgv = [...request.argv];
        return this.#options.prompter.promptSecret!({
          requestId: request.id,
          argv: request.argv,
          cwd: request.cwd,
          label: request.label,
          allowlisted,
          traceable,
          recheck,
          deadline: this.#queue.deadlineOf(request.id),
          waiting: () => this.#queue.waitingBehind(request.id),
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

  #rememberId(id: string): void {
    this.#seenIds.add(id);
    if (this.#seenIds.size > SEEN_ID_CAPACITY) {
      this.#seenIds.delete(this.#seenIds.values().next().value as string);
    }
  }
}

/**
 * The tool command as the human wrote it: `[shell, "-c", text]` with our own
 * `sudo()` prelude removed from the front of `text`.
 */
function withoutPrelude(argv: readonly string[] | null, prelude: string): readonly string[] | null {
  if (!argv || prelude === "" || argv.length < 3 || argv[1] !== "-c") return argv;
  const text = argv[2];
  if (!text.startsWith(prelude + "\n")) return argv;
  return [argv[0], "-c", text.slice(prelude.length + 1), ...argv.slice(3)];
}
