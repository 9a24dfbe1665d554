/**
 * Maps the session server's {@link SessionEvent}s (never a reply's typed text) to
 * {@link AuditEntry}s for the audit log, which knows nothing of the server.
 *
 * @module
 */
import type { AuditEntry, AuditKind } from "../audit/entry.ts";
import type { SessionEvent } from "./session_server.ts";

/** Maps one session event to an audit entry, copying only declared fields of the right types. */
export function auditEntryFromSessionEvent(
  event: SessionEvent,
  kind: AuditKind,
  now: Date,
): AuditEntry {
  const time = now.toISOString();
  const head = { time, kind, event: event.kind };
  const reason = "reason" in event && typeof event.reason === "string"
    ? { reason: event.reason }
    : {};
  switch (event.kind) {
    case "refused":
      return {
        ...head,
        ...(typeof event.requestId === "string" ? { requestId: event.requestId } : {}),
        ...(typeof event.peerPid === "number" ? { peerPid: event.peerPid } : {}),
        decision: "refused",
        ...reason,
      };
    case "queued":
      return {
        time,
        kind: event.request === "sudo" || event.request === "secret" ? event.request : kind,
        event: "queued",
        requestId: event.requestId,
        argv: Array.isArray(event.argv) ? [...event.argv] : [],
        attempt: event.attempt,
        timings: typeof event.verifyMs === "number" ? { verifyMs: event.verifyMs } : {},
      };
    case "prompted":
      return { ...head, requestId: event.requestId, attempt: event.attempt };
    case "answered":
      return {
        ...head,
        requestId: event.requestId,
        decision: "answered",
        attempt: event.attempt,
        ...(event.writer === "pi" ? { reason: "pi_wrote_pipe" } : {}),
        ...(event.writer === "helper" ? { reason: `helper_wrote_pipe:${event.fallback}` } : {}),
      };
    case "denied":
      return { ...head, requestId: event.requestId, decision: "denied", ...reason };
    default:
      // Unknown kind: record that it happened, nothing of it.
      return { time, kind, event: "unknown" };
  }
}

/**
 * An `onEvent` hook appending each event to `log`, with timings (`queuedMs`: queued →
 * prompted, `totalMs`: queued → end, `promptMs`: prompted → end). Tracks at most 1024 open
 * requests; never throws.
 */
export function sessionAuditSink(
  log: { append(entry: AuditEntry): boolean },
  kind: AuditKind,
  options: { readonly now?: () => Date; readonly clock?: () => number } = {},
): (event: SessionEvent) => void {
  const now = options.now ?? (() => new Date());
  const clock = options.clock ?? (() => performance.now());
  const open = new Map<string, { queuedAt: number; kind: AuditKind; promptedAt?: number }>();
  return (event) => {
    try {
      const id = "requestId" in event ? event.requestId : undefined;
      const o = typeof id === "string" ? open.get(id) : undefined;
      const t = clock();
      let entry = auditEntryFromSessionEvent(event, o?.kind ?? kind, now());
      let timings: Record<string, number> | undefined;
      if (event.kind === "queued" && typeof id === "string") {
        open.delete(id);
        open.set(id, { queuedAt: t, kind: entry.kind });
        if (open.size > 1024) open.delete(open.keys().next().value as string);
      } else if (event.kind === "prompted" && o) {
        o.promptedAt = t;
        timings = { queuedMs: t - o.queuedAt };
      } else if ((event.kind === "answered" || event.kind === "denied") && o) {
        open.delete(id as string);
        timings = { totalMs: t - o.queuedAt };
        if (o.promptedAt !== undefined) timings.promptMs = t - o.promptedAt;
      }
      if (timings) entry = { ...entry, timings: { ...entry.timings, ...timings } };
      log.append(entry);
    } catch { /* the audit sink must never break the server */ }
  };
}
