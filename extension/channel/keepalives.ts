/**
 * Keepalives (ADR 0008): four zero bytes to each waiting helper about every
 * {@link KEEPALIVE_INTERVAL_MS} from queueing to answer; a helper that stops hearing
 * them gives up, so a stopped or frozen pi never hangs a tool call.
 *
 * @module
 */
import type { Socket } from "node:net";
import { KEEPALIVE, KEEPALIVE_INTERVAL_MS } from "../../askpass/protocol.ts";

/** The waiting helper connections of one session, and their one timer. */
export class Keepalives {
  readonly #waiting = new Set<Socket>();
  #timer: ReturnType<typeof setInterval> | undefined;

  /** `socket` hears a keepalive now and on every tick until {@link remove} or its close. */
  add(socket: Socket): void {
    if (socket.destroyed || this.#waiting.has(socket)) return;
    this.#waiting.add(socket);
    socket.once("close", () => this.remove(socket));
    ping(socket);
    this.#timer ??= setInterval(() => {
      for (const s of this.#waiting) ping(s);
    }, KEEPALIVE_INTERVAL_MS);
  }

  /** `socket` is answered (or gone): no more keepalives; the timer stops with the last. */
  remove(socket: Socket): void {
    this.#waiting.delete(socket);
    if (this.#waiting.size === 0) this.stop();
  }

  /** Stops the timer (the session ends). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

function ping(socket: Socket): void {
  // A helper that does not read gets no more than a few bytes queued.
  if (!socket.destroyed && socket.writable && socket.writableLength < 64) socket.write(KEEPALIVE);
}
