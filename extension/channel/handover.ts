/**
 * The last step of a sudo request (ADR 0008): pi writes the password into sudo's
 * pipe itself and the helper only hears it is done; only where pi cannot take the
 * pipe does the helper get the password to write. A traced helper gets neither.
 *
 * @module
 */
import { encodeDelivered, encodeResponse } from "../../askpass/protocol.ts";
import { tracerOf, VERIFY_REFUSALS } from "../../kernel/peer_verification.ts";
import { FALLBACK_REASONS, writeIntoSudoPipe } from "../../kernel/sudo_pipe.ts";
import { type ModalQueue, tracedNotice } from "./modal_queue.ts";
import type { Pending, SessionEvent } from "./session_types.ts";

/** Hands `password` (the caller zeroes it) to the sudo of `entry`. */
export async function handOver(
  entry: Pending,
  password: Uint8Array,
  queue: ModalQueue,
): Promise<void> {
  const helper = entry.watched[0];
  const tracer = await tracerOf(helper.pid);
  if (tracer !== 0) return queue.refuse(entry, VERIFY_REFUSALS.HELPER_TRACED, tracedNotice(tracer));
  // Encoded before the write, so that nothing awaits between the write and
  // the end of the request (a liveness check must not deny it meanwhile).
  const done = encodeDelivered(entry.id);
  if (entry.connection.ended || entry.pipeInode === undefined) return;
  const written = writeIntoSudoPipe(
    { pidfd: entry.connection.pidfd, pid: helper.pid, pipeInode: entry.pipeInode },
    password,
  );
  if (written.ok) {
    entry.delivered();
    queue.emit({
      kind: "answered",
      requestId: entry.id,
      attempt: entry.attempt,
      writer: "pi",
      ticket: entry.ticket,
    });
    return await queue.finish(entry, undefined, done);
  }
  if (!FALLBACK_REASONS.has(written.reason)) return queue.refuse(entry, written.reason);
  await replyWithPassword(entry, password, queue, { writer: "helper", fallback: written.reason });
}

/** Sends `password` in the reply (a secret, or a pipe pi cannot take), zeroing it and the frame. */
export async function replyWithPassword(
  entry: Pending,
  password: Uint8Array,
  queue: ModalQueue,
  how?: Pick<Extract<SessionEvent, { kind: "answered" }>, "writer" | "fallback">,
): Promise<void> {
  const frame = encodeResponse(entry.id, password);
  password.fill(0);
  if (entry.connection.ended) return void frame.fill(0);
  entry.delivered();
  queue.emit({
    kind: "answered",
    requestId: entry.id,
    attempt: entry.attempt,
    ticket: entry.ticket,
    ...how,
  });
  await queue.finish(entry, undefined, frame);
}
