/**
 * Each new connection to the session socket: the kernel's word on the peer first
 * (SO_PEERCRED, the pidfd, our socket's inode), then one bounded frame for
 * `request.ts`. Anything else is refused with a named reason, before any modal.
 *
 * @module
 */
import type { Socket } from "node:net";
import { FrameReader, type ProtocolError } from "../../askpass/protocol.ts";
import { readRequester } from "../../kernel/peer_verification.ts";
import { AttemptCounter } from "./attempt_counter.ts";
import type { ModalQueue } from "./modal_queue.ts";
import { PeerConnection } from "./peer_connection.ts";
import {
  type EarlyReads,
  type RequestContext,
  serveRequest,
  type SessionParts,
} from "./request.ts";
import { CONNECTION_ERRORS, type ConnectionError, type SessionSettings } from "./session_types.ts";

/** Accepts connections for one session and hands verified requests to its queue. */
export class ConnectionIntake {
  readonly #context: RequestContext;
  readonly #options: SessionSettings;
  readonly #queue: ModalQueue;
  readonly #sockets = new Set<Socket>();

  constructor(parts: SessionParts) {
    this.#context = { ...parts, attempts: new AttemptCounter(), seenIds: new Set() };
    [this.#options, this.#queue] = [parts.settings, parts.queue];
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
      serveRequest(this.#context, connection, body, early)
        .catch(() => {
          // Fail closed: no answer (the helper gives sudo nothing). The socket goes
          // in any case, and a queued request leaves the queue as it closes.
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
   * Starts the verification's reads at accept (docs/design.md §4.5); once they show
   * the pinned deno, the keyboard check and the /proc walk start too (one of each at a time).
   */
  #startReads(connection: PeerConnection): EarlyReads {
    const arrivedAt = performance.now();
    const { creds, inode } = connection;
    if (!creds.ok || inode === undefined) return { arrivedAt };
    const reading = readRequester(this.#context.expected, creds.creds, inode);
    reading.reads.catch(() => {}); // judged, a failure handled, when a request arrives
    reading.pinned.then((pinned) => {
      if (!pinned || connection.ended || this.#queue.closing) return;
      this.#queue.gateAheadStart();
      // After the gate's check began, so that one walk serves both (kernel/proc_walk.ts).
      this.#context.pairing.prefetch(arrivedAt);
    }, () => {});
    return { arrivedAt, reading };
  }

  /** The last argv shown without allowlist approval in this session (for `/sudo-prompt allow`). */
  lastUnverifiedArgv(): readonly string[] | undefined {
    return this.#context.lastUnverifiedArgv;
  }
}
