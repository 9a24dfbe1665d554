/**
 * The queue of verified requests: turns (one modal at a time), what ends a
 * request from outside (deadline, peer gone, liveness, teardown), the keyboard
 * gate's checks, and the one reply or denial. One request's steps: `request.ts`.
 *
 * @module
 */
import type { Socket } from "node:net";
import { DENY_REASONS, type DenyReason, encodeDenied } from "../../askpass/protocol.ts";
import {
  pidfdRefersTo,
  readStat,
  stillRunning,
  tracerOf,
  VERIFY_REFUSALS,
} from "../../kernel/peer_verification.ts";
import type { GatePhase, GateVerdict, ModalGate } from "../keyboard/terminal_gate.ts";
import type { PeerConnection } from "./peer_connection.ts";
import {
  type Admitted,
  CONNECTION_ERRORS,
  type Pending,
  type RefusalReason,
  type SessionEvent,
  type SessionSettings,
} from "./session_types.ts";
import { Keepalives } from "./keepalives.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** An early keyboard check stands for the modal's own only this fresh (the re-check interval). */
const GATE_AHEAD_MAX_AGE_MS = 100;
const LIVENESS_INTERVAL_MS = 200;
const WRITE_GRACE_MS = 1000;

/** The notice of a request refused because its helper is traced (by `tracer`, when known). */
export function tracedNotice(tracer: number | undefined): string {
  return msg.helperTraced(tracer === undefined ? "" : msg.byProcess(tracer));
}

/** The queue and its turns; one per session. */
export class ModalQueue {
  readonly #options: SessionSettings;
  readonly #queue: Pending[] = [];
  /** The request whose turn it is (its modal may be open). */
  #active: Pending | undefined;
  /** Requests waiting for their turn ({@link turn}). */
  readonly #turns = new Map<Pending, (ok: boolean) => void>();
  #liveness: ReturnType<typeof setInterval> | undefined;
  #closing = false;

  constructor(options: SessionSettings) {
    this.#options = options;
  }

  /** True once {@link shutdown} has begun: nothing new is accepted. */
  get closing(): boolean {
    return this.#closing;
  }

  /** Verified requests queued or being answered. */
  pendingCount(): number {
    return this.#queue.length;
  }

  /** Queues a verified request, denied at its deadline or when its peer closes or sends more. */
  enqueue(
    entry: Admitted,
    connection: PeerConnection,
    timeoutMs: number,
    queued: SessionEvent,
  ): Pending {
    const pending: Pending = {
      ...entry,
      connection,
      deadline: Date.now() + timeoutMs,
      abort: new AbortController(),
      timer: undefined,
    };
    pending.timer = setTimeout(() => void this.finish(pending, DENY_REASONS.TIMEOUT), timeoutMs);
    const { socket } = connection;
    socket.once("close", () => void this.finish(pending, DENY_REASONS.PROCESS_GONE));
    socket.resume();
    socket.on("data", () => void this.finish(pending, DENY_REASONS.PROCESS_GONE));
    if (entry.kind === "sudo") this.#keepalives.add(socket);
    this.#queue.push(pending);
    this.emit(queued);
    this.#liveness ??= setInterval(() => void this.#checkLiveness(), LIVENESS_INTERVAL_MS);
    this.#pump();
    return pending;
  }

  /** Resolves true when it is `entry`'s turn to ask, false if it ended before. */
  turn(entry: Pending): Promise<boolean> {
    if (entry.connection.ended) return Promise.resolve(false);
    if (this.#active === entry) return Promise.resolve(true);
    return new Promise((resolve) => this.#turns.set(entry, resolve));
  }

  /** Gives the turn to the first request still open, if nobody has it. */
  #pump(): void {
    if (this.#active || this.#closing) return;
    const entry = this.#queue.find((e) => !e.connection.ended);
    if (!entry) return;
    this.#active = entry;
    this.#endWait(entry, true);
  }

  #endWait(entry: Pending, ok: boolean): void {
    const waiting = this.#turns.get(entry);
    this.#turns.delete(entry);
    waiting?.(ok);
  }

  /** Checks the keyboard again and again while `entry`'s modal is open (one check at a time). */
  watchGate(entry: Pending): void {
    const gate = this.#options.gate;
    if (!gate) return;
    let running = false;
    const timer = setInterval(() => {
      if (entry.connection.ended) return clearInterval(timer);
      if (running) return;
      running = true;
      void this.#gateCheck(entry, gate, "watch").finally(() => running = false);
    }, gate.intervalMs);
    entry.abort.signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  }

  /** The keyboard gate for `entry` now (ADR 0007); false when it was refused. True with no gate. */
  gate(entry: Pending, phase: "open" | "send"): Promise<boolean> {
    const gate = this.#options.gate;
    return gate ? this.#gateCheck(entry, gate, phase) : Promise.resolve(true);
  }

  /** A gate check started ahead of the modal it is for ({@link gateAheadStart}). */
  #gateAhead: { at: number; verdict: Promise<GateVerdict> } | undefined;

  /**
   * Starts the `open` check early, only when nothing is asked or queued (not to disturb an
   * open modal's), one at a time (a flood of forged requests costs one check in flight).
   */
  gateAheadStart(): void {
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
    // A check that throws is a closed gate with no reason of its own.
    const check = (run: () => Promise<GateVerdict>) =>
      new Promise<GateVerdict>((r) => r(run()))
        .catch(() => ({ ok: false, reason: undefined, notice: "" }) as const);
    const ahead = phase === "open" ? this.#gateAhead : undefined;
    if (phase === "open") this.#gateAhead = undefined;
    // An early check counts only if fresh; the re-checks continue from there.
    const verdict = ahead && performance.now() - ahead.at < GATE_AHEAD_MAX_AGE_MS
      ? await check(() => ahead.verdict)
      : await check(() => gate.check(phase));
    if (verdict.ok) entry.unchecked.gate = verdict.unchecked ?? [];
    if (verdict.ok || entry.connection.ended) return verdict.ok;
    const reason = verdict.reason ?? CONNECTION_ERRORS.INTERNAL_ERROR;
    await this.refuse(entry, reason, verdict.notice || undefined);
    return false;
  }

  /** A check failed: a named refusal, then a denial (its modal closes). */
  async refuse(entry: Pending, reason: RefusalReason, notice?: string): Promise<void> {
    this.emit({ kind: "refused", reason, requestId: entry.id, notice });
    await this.finish(entry, DENY_REASONS.VERIFICATION_FAILED);
  }

  /** Whether the processes `entry` waits on are still the ones verified. */
  async alive(entry: Pending): Promise<boolean> {
    return await pidfdRefersTo(entry.connection.pidfd, entry.watched[0].pid) &&
      await stillRunning(entry.watched);
  }

  /** Ends a request exactly once: with `frame` or a denial for `reason` (and the human's reply). */
  async finish(
    entry: Pending,
    reason: DenyReason | undefined,
    frame?: Uint8Array,
    reply?: string,
  ): Promise<void> {
    // Out of the queue in any case; answered only by the first end.
    const first = entry.connection.end();
    clearTimeout(entry.timer);
    // The reason tells the modal why it closes (a closing session is no withdrawal).
    entry.abort.abort(reason);
    const i = this.#queue.indexOf(entry);
    if (i >= 0) this.#queue.splice(i, 1);
    if (this.#active === entry) this.#active = undefined;
    this.#endWait(entry, false);
    if (this.#queue.length === 0) this.#stopLiveness();
    queueMicrotask(() => this.#pump());
    if (!first) return void frame?.fill(0);
    if (reason !== undefined) {
      this.emit({ kind: "denied", requestId: entry.id, reason, ...(reply ? { reply } : {}) });
      const { socket } = entry.connection;
      if (!socket.destroyed) await this.#track(this.reply(socket, encodeDenied(entry.id, reason)));
    } else if (frame) {
      await this.#track(this.reply(entry.connection.socket, frame));
    }
  }

  /** Replies still being written; shutdown lets them finish (each bounded). */
  readonly #inFlight = new Set<Promise<void>>();

  #track(reply: Promise<void>): Promise<void> {
    this.#inFlight.add(reply);
    return reply.finally(() => this.#inFlight.delete(reply));
  }

  /** Helper connections that hear a keepalive until their reply (ADR 0008). */
  readonly #keepalives = new Keepalives();

  /** Writes one frame, zeroes it once written, closes; destroys after a grace period. */
  reply(socket: Socket, frame: Uint8Array): Promise<void> {
    this.#keepalives.remove(socket);
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

  #stopLiveness(): void {
    clearInterval(this.#liveness);
    this.#liveness = undefined;
  }

  async #checkLiveness(): Promise<void> {
    for (const entry of [...this.#queue]) {
      if (await this.alive(entry)) continue;
      // A traced helper sits in tracing stop ("t") while its tracer is slow: if still the
      // same helper (start time), it is named traced (as at the handover), not gone.
      const helper = entry.watched[0];
      const stat = entry.kind === "sudo" ? await readStat(helper.pid) : undefined;
      const tracer = stat?.startTime === helper.startTime && stat.state === "t"
        ? await tracerOf(helper.pid)
        : 0;
      if (!tracer || entry.connection.ended) await this.finish(entry, DENY_REASONS.PROCESS_GONE);
      else await this.refuse(entry, VERIFY_REFUSALS.HELPER_TRACED, tracedNotice(tracer));
    }
  }

  /** When the request `id` is denied automatically (now, once it is gone). */
  deadlineOf(id: string): number {
    return this.#queue.find((e) => e.id === id)?.deadline ?? Date.now();
  }

  /** How many other requests wait beside `id`. */
  waitingBehind(id: string): number {
    return this.#queue.filter((e) => e.id !== id && !e.connection.ended).length;
  }

  /** Reports `event` to the session's hook. */
  emit(event: SessionEvent): void {
    try {
      this.#options.onEvent?.(event);
    } catch { /* an audit sink must not break the server */ }
  }

  /** Ends every request synchronously, for when pi stops and nothing asynchronous would run. */
  denyAllNow(reason: DenyReason): void {
    for (const entry of [...this.#queue]) {
      if (!entry.connection.end()) continue;
      clearTimeout(entry.timer);
      entry.abort.abort(reason);
      this.#keepalives.remove(entry.connection.socket);
      entry.connection.socket.destroy();
      this.emit({ kind: "denied", requestId: entry.id, reason });
    }
    for (const entry of [...this.#turns.keys()]) this.#endWait(entry, false);
    this.#queue.length = 0;
    this.#active = undefined;
    this.#stopLiveness();
  }

  /** Denies everything pending; replies already on their way may arrive. */
  async shutdown(): Promise<void> {
    this.#closing = true;
    this.#stopLiveness();
    this.#keepalives.stop();
    const pending = [...this.#queue].map((e) => this.finish(e, DENY_REASONS.SESSION_CLOSED));
    // Denials already on their way arrive too: each write is bounded by WRITE_GRACE_MS.
    await Promise.all([...pending, ...this.#inFlight]);
  }
}
