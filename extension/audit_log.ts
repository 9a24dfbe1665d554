/**
 * The append-only audit log (SPEC §6): one JSON line per step of every
 * password request, in `$XDG_STATE_HOME/pi-sudo-prompt/audit.jsonl` (falling
 * back to `~/.local/state/pi-sudo-prompt/audit.jsonl`).
 *
 * ## What a line holds
 *
 * Only the fields of {@link AuditEntry} (time, request id, kind, event, peer
 * pid, sudo's argv, decision, reason, attempt, timings) plus `seq` and
 * `prev`. Never a password and never anything the human typed: the session
 * server's {@link SessionEvent}s carry no typed text, the mapping
 * {@link auditEntryFromSessionEvent} copies listed fields only, and
 * {@link AuditLog.append} copies listed fields only again, so an unexpected
 * field on an object cannot reach the file. sudo's argv is kept as it is (it
 * is visible to every user in `/proc` anyway) but capped, so a hostile argv
 * cannot bloat the log: at most {@link MAX_ARGV_ELEMENTS} elements and
 * {@link MAX_ARGV_BYTES} bytes of JSON text, with `argvTruncated` recording the
 * original size when it was cut. Every line stays well under 16 KiB.
 *
 * ## The hash chain
 *
 * Every line is a JSON object `{"seq":…,"time":…,"kind":…,"event":…,…,"prev":…}`
 * where `prev` is the hex SHA-256 of the previous line's exact bytes (without
 * its newline) and `seq` counts lines, continuing across rotations. The first
 * line of a brand-new log is `{"kind":"log","event":"started",…}` with
 * `seq` 0 and `prev` {@link GENESIS_PREV} (64 zeros). The first line of a file
 * started by rotation is `{"kind":"log","event":"rotated",…}` whose `prev` is
 * the hash of the last line of the file that was rotated away (now
 * `audit.jsonl.1`). {@link verifyAuditChain} therefore detects:
 *
 * - an edited line (the next line's `prev` no longer matches);
 * - a deleted, inserted, duplicated or reordered line anywhere but the end;
 * - lines removed from the START: the first line must be a `started` line
 *   (seq 0, zero `prev`) or a `rotated` line; when the rotated files are
 *   verified too, a `rotated` line must chain onto the older file's last line;
 * - a line cut short (`partial_line`) or not JSON (`bad_json`).
 *
 * What a hash chain alone cannot detect:
 *
 * - Truncating the END: the remaining prefix is a perfectly valid chain.
 *   That is what the head file is for (below), within its limits.
 * - A rewrite by someone who can write the file: there is no secret, so
 *   whoever can edit the log (the same user, or root) can recompute every
 *   `prev` after an edit, or append forged lines with correct hashes. The
 *   chain catches accidents, careless edits and naive tampering; it is not a
 *   signature. A secret key would not help either, since it would have to be
 *   readable by the same user.
 * - Deleting whole rotated files: retention does that by design, so the
 *   oldest file kept may start with a `rotated` line whose predecessor is
 *   gone, and the verifier reads `audit.jsonl.1`, `.2`, … only up to the
 *   first missing one.
 *
 * ## The head file
 *
 * After every batch of writes the log replaces `audit.jsonl.head` (atomic
 * rename) with `{"seq":N,"hash":H}`: the seq and hash of the last line
 * written. The verifier reports `truncated_end` when the log ends before seq
 * N and `head_mismatch` when line N's hash is not H (the last line was edited,
 * or the end was cut and new lines appended). On open, the log compares the
 * head with the file's end and writes a `head_mismatch` line into the chain
 * when they disagree, so the evidence survives the head being rewritten. The
 * head file sits in the same directory and can be rewritten as easily as the
 * log: it catches accidental truncation, a restore from an old copy and
 * `head -n`-style edits, not a determined same-user attacker. A crash between
 * writing lines and writing the head leaves the head behind the log, which
 * is fine (the head only promises "at least this far").
 *
 * ## Never blocking pi
 *
 * {@link AuditLog.append} is synchronous and O(1): it copies and caps the
 * entry and puts it in a bounded in-memory queue ({@link DEFAULT_QUEUE_CAPACITY}
 * entries). A single asynchronous writer drains the queue in batches with
 * `fs.promises` (append mode) and Web Crypto hashing. When the queue is full
 * the entry is dropped and counted, and one `{"kind":"log","event":"dropped",
 * "dropped":N}` line is written where the dropped entries would have been.
 * A write error drops the batch (counted the same way): whatever part of it
 * reached the file is cut off again, and the writer re-reads the file's end
 * before writing again. A file found ending in a partial line (a crash
 * mid-write) is kept as evidence: it is rotated away as it is (so verifying
 * it reports `partial_line`) and the new file chains onto its last complete
 * line with a `rotated` line marked `damagedTail`. When the file would grow past
 * `maxBytes` (default 1 MiB) it is renamed to `audit.jsonl.1` (older ones
 * shift to `.2`, `.3`; {@link DEFAULT_KEEP} are kept) and a new file starts.
 *
 * Several pi sessions may share the log: each batch is written holding a lock
 * file, and a writer that finds the file changed by another continues the
 * chain from the file's real end (see {@link AuditLog}).
 *
 * Runtime-neutral: `node:` built-ins and Web Crypto only.
 *
 * @module
 */
import { constants } from "node:fs";
import { chmod, type FileHandle, lstat, mkdir, open, rename, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import process from "node:process";
import type { SessionEvent } from "./session_server.ts";

/** The `format` field of a log's `started` line. */
export const AUDIT_FORMAT = "pi-sudo-prompt-audit/1";
/** `prev` of the first line of a brand-new log: 64 zeros. */
export const GENESIS_PREV = "0".repeat(64);
/** Size at which the file is rotated (bytes). */
export const DEFAULT_MAX_BYTES = 1024 * 1024;
/** Rotated files kept (`audit.jsonl.1` … `audit.jsonl.3`). */
export const DEFAULT_KEEP = 3;
/** Entries waiting to be written before new ones are dropped. */
export const DEFAULT_QUEUE_CAPACITY = 1000;
/** Most argv elements kept in one line. */
export const MAX_ARGV_ELEMENTS = 256;
/** Most bytes of JSON text (UTF-8, quotes and commas included) spent on argv in one line. */
export const MAX_ARGV_BYTES = 4096;
/** Longest line the verifier and the tail reader accept. */
export const MAX_LINE_BYTES = 64 * 1024;
/** Suffix of the head file next to the log. */
export const HEAD_SUFFIX = ".head";
/** Suffix of the lock file writers hold while appending. */
export const LOCK_SUFFIX = ".lock";

const MAX_FIELD_CHARS = 128;
const MAX_TIMINGS = 8;
const MAX_TIMING_KEY_CHARS = 32;
const BATCH_LINES = 64;
const LOCK_WAIT_MS = 2000;
const LOCK_STALE_MS = 10_000;
const TAIL_WINDOW = 64 * 1024;
const MAX_ROTATED_SCAN = 100;
const MAX_NOTICES = 100;
const HASH_RE = /^[0-9a-f]{64}$/;
const ISO_TIME_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/;
const encoder = new TextEncoder();

/** Whose request a line is about: a sudo password or a secret (SPEC §8). */
export type AuditKind = "sudo" | "secret";

/** How much of argv a line left out. */
export interface ArgvTruncation {
  /** Number of elements of the original argv. */
  readonly elements: number;
  /** Total length of the original argv's elements, in UTF-16 code units. */
  readonly chars: number;
}

/**
 * One audit entry: what {@link AuditLog.append} takes. Nothing here is ever
 * typed text: the session server never reports any, and only these fields
 * are copied into a line.
 */
export interface AuditEntry {
  /** ISO 8601 time of the event. */
  readonly time: string;
  /** The request's random id (hex), when the event belongs to a request. */
  readonly requestId?: string;
  /** sudo password or secret request. */
  readonly kind: AuditKind;
  /** What happened: "refused", "queued", "prompted", "answered", "denied", … */
  readonly event: string;
  /** Process id of the peer that connected, for refusals. */
  readonly peerPid?: number;
  /** sudo's argv as read from `/proc` (capped, see {@link MAX_ARGV_BYTES}). */
  readonly argv?: readonly string[];
  /** Set when argv was cut to fit. */
  readonly argvTruncated?: ArgvTruncation;
  /** "refused", "denied" or "answered" for the events that end a request. */
  readonly decision?: string;
  /** Which check refused it, or why it was denied. */
  readonly reason?: string;
  /** 1-based attempt number for this sudo process. */
  readonly attempt?: number;
  /** Durations in milliseconds, e.g. `queuedMs`, `promptMs`, `totalMs`. */
  readonly timings?: Readonly<Record<string, number>>;
}

/** The fields an {@link AuditEntry} may have; nothing else reaches the file. */
export const AUDIT_ENTRY_FIELDS: readonly string[] = [
  "time",
  "kind",
  "event",
  "requestId",
  "peerPid",
  "argv",
  "argvTruncated",
  "decision",
  "reason",
  "attempt",
  "timings",
];

/** The log's own lines: start, rotation, drops and a head that did not match. */
export interface AuditLogNote {
  readonly time: string;
  readonly kind: "log";
  readonly event: "started" | "rotated" | "dropped" | "head_mismatch";
  /** On `started`: {@link AUDIT_FORMAT}. */
  readonly format?: string;
  /** On `dropped`: entries lost (queue full or write errors). */
  readonly dropped?: number;
  /** On `rotated`: the previous file ended in a partial or unreadable line. */
  readonly damagedTail?: boolean;
  /** On `head_mismatch`: what the head file said. */
  readonly headSeq?: number;
  readonly headHash?: string;
}

/** One parsed line of the file. */
export type AuditRecord = (AuditEntry | AuditLogNote) & {
  readonly seq: number;
  readonly prev: string;
};

/** Named reasons {@link AuditLog.open} fails. */
export const AUDIT_OPEN_ERRORS = {
  /** The directory could not be created. */
  DIR_CREATE_FAILED: "audit_dir_create_failed",
  /** The directory is a symlink, not ours, or writable by others. */
  DIR_UNSAFE: "audit_dir_unsafe",
  /** The log path is a symlink, not a regular file, or not ours. */
  FILE_UNSAFE: "audit_file_unsafe",
  /** The file could not be opened, read or rotated. */
  OPEN_FAILED: "audit_open_failed",
  /** The first line could not be written. */
  WRITE_FAILED: "audit_write_failed",
} as const;

/** One of the values of {@link AUDIT_OPEN_ERRORS}. */
export type AuditOpenError = typeof AUDIT_OPEN_ERRORS[keyof typeof AUDIT_OPEN_ERRORS];

/** Named reasons {@link verifyAuditChain} rejects a log. */
export const AUDIT_VERIFY_ERRORS = {
  /** The file is missing, a symlink, not a regular file or unreadable. */
  UNREADABLE: "unreadable",
  /** A line is not UTF-8 JSON object text. */
  BAD_JSON: "bad_json",
  /** A line is JSON but lacks `seq`, `prev`, `time`, `kind` or `event`. */
  BAD_RECORD: "bad_record",
  /** A line's `prev` is not the hash of the line before it (or the first line is no start). */
  BROKEN_CHAIN: "broken_chain",
  /** A line chains correctly but its `seq` is not one more than the previous line's. */
  BAD_SEQUENCE: "bad_sequence",
  /** The last line has no newline: cut short (a crash mid-write, or truncation). */
  PARTIAL_LINE: "partial_line",
  /** A line is longer than {@link MAX_LINE_BYTES}. */
  LINE_TOO_LONG: "line_too_long",
  /** The log ends before the line the head file records. */
  TRUNCATED_END: "truncated_end",
  /** The line the head file records has another hash, or the head file is malformed. */
  HEAD_MISMATCH: "head_mismatch",
} as const;

/** One of the values of {@link AUDIT_VERIFY_ERRORS}. */
export type AuditVerifyError = typeof AUDIT_VERIFY_ERRORS[keyof typeof AUDIT_VERIFY_ERRORS];

/** A line the log wrote about itself that a reader should see (drops, head mismatch). */
export interface AuditNotice {
  readonly file: string;
  readonly line: number;
  readonly event: string;
  readonly detail: string;
}

/** Result of {@link verifyAuditChain}. `line` numbers are 1-based within `file`. */
export type AuditVerifyResult =
  | {
    readonly ok: true;
    /** Lines checked, all files together. */
    readonly lines: number;
    /** Files checked, oldest first. */
    readonly files: readonly string[];
    readonly firstSeq: number | undefined;
    readonly lastSeq: number | undefined;
    /** Hash of the last line (the next line's `prev`). */
    readonly lastHash: string;
    /** Whether the end was checked against the head file. */
    readonly headChecked: boolean;
    /** `dropped` and `head_mismatch` lines, at most 100. */
    readonly notices: readonly AuditNotice[];
  }
  | {
    readonly ok: false;
    readonly reason: AuditVerifyError;
    readonly file: string;
    readonly line: number;
    readonly detail: string;
  };

/** Options of {@link AuditLog.open}. */
export interface AuditLogOptions {
  /** Rotate when the file would grow past this many bytes (default 1 MiB). */
  readonly maxBytes?: number;
  /** Rotated files kept, at least 1 (default 3). */
  readonly keep?: number;
  /** Entries that may wait for the writer (default 1000). */
  readonly queueCapacity?: number;
  /** Clock for the log's own lines and for entries without a valid time. */
  readonly now?: () => Date;
}

/** Counters of an {@link AuditLog}. */
export interface AuditLogStats {
  /** Entries waiting in the queue. */
  readonly queued: number;
  /** Lines written, the log's own lines included. */
  readonly written: number;
  /** Entries dropped: queue full, or lost to a write error. */
  readonly dropped: number;
  /** Entries refused because their `kind` or `event` was not valid. */
  readonly invalid: number;
  /** Failed writes (and failed re-opens). */
  readonly writeErrors: number;
  /** Rotations done. */
  readonly rotations: number;
}

/**
 * Where the audit log lives: `$XDG_STATE_HOME/pi-sudo-prompt/audit.jsonl`
 * when `XDG_STATE_HOME` is an absolute path, else
 * `$HOME/.local/state/pi-sudo-prompt/audit.jsonl`.
 */
export function defaultAuditPath(
  env: Record<string, string | undefined> = process.env,
): string {
  const xdg = env.XDG_STATE_HOME;
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  const base = xdg && isAbsolute(xdg) ? xdg : join(home, ".local", "state");
  return join(base, "pi-sudo-prompt", "audit.jsonl");
}

/**
 * Maps one session-server event to an audit entry, copying only the listed
 * fields (never a field the event type does not declare). `kind` is used
 * unless the event says itself (a "queued" event's `request`). `timings` are
 * attached as given (plus a "queued" event's `verifyMs`);
 * {@link sessionAuditSink} computes them.
 */
export function auditEntryFromSessionEvent(
  event: SessionEvent,
  kind: AuditKind,
  now: Date,
  timings?: Readonly<Record<string, number>>,
): AuditEntry {
  const time = now.toISOString();
  const t = timings ? { timings } : {};
  switch (event.kind) {
    case "refused":
      return {
        time,
        kind,
        event: "refused",
        ...(typeof event.requestId === "string" ? { requestId: event.requestId } : {}),
        ...(typeof event.peerPid === "number" ? { peerPid: event.peerPid } : {}),
        decision: "refused",
        ...(typeof event.reason === "string" ? { reason: event.reason } : {}),
        ...t,
      };
    case "queued":
      // Defensive about shapes: only listed fields, of the right types, are kept.
      return {
        time,
        kind: event.request === "sudo" || event.request === "secret" ? event.request : kind,
        event: "queued",
        requestId: event.requestId,
        argv: Array.isArray(event.argv) ? [...event.argv] : [],
        attempt: event.attempt,
        timings: typeof event.verifyMs === "number"
          ? { ...timings, verifyMs: event.verifyMs }
          : { ...timings },
      };
    case "prompted":
      return {
        time,
        kind,
        event: "prompted",
        requestId: event.requestId,
        attempt: event.attempt,
        ...t,
      };
    case "answered":
      return {
        time,
        kind,
        event: "answered",
        requestId: event.requestId,
        decision: "answered",
        attempt: event.attempt,
        ...t,
      };
    case "denied":
      return {
        time,
        kind,
        event: "denied",
        requestId: event.requestId,
        decision: "denied",
        ...(typeof event.reason === "string" ? { reason: event.reason } : {}),
        ...t,
      };
    default:
      // An event kind this module does not know: record that it happened, nothing of it.
      return { time, kind, event: "unknown" };
  }
}

/** Options of {@link sessionAuditSink}. */
export interface AuditSinkOptions {
  /** Wall clock for `time` (default `new Date()`). */
  readonly now?: () => Date;
  /** Monotonic milliseconds for timings (default `performance.now()`). */
  readonly clock?: () => number;
}

/**
 * An `onEvent` hook for {@link SessionEvent}s that appends to `log`. `kind`
 * is the default; a request's kind from its "queued" event is used for its
 * later events. Adds timings: `queuedMs` (queued → prompted) on "prompted"; `totalMs` (queued →
 * end) and `promptMs` (prompted → end) on "answered" and "denied". Tracks at
 * most 1024 open requests. Never throws.
 */
export function sessionAuditSink(
  log: Pick<AuditLog, "append">,
  kind: AuditKind,
  options: AuditSinkOptions = {},
): (event: SessionEvent) => void {
  const now = options.now ?? (() => new Date());
  const clock = options.clock ?? (() => performance.now());
  const open = new Map<string, { queuedAt: number; kind: AuditKind; promptedAt?: number }>();
  return (event) => {
    try {
      let timings: Record<string, number> | undefined;
      const id = "requestId" in event ? event.requestId : undefined;
      const t = clock();
      let entry = auditEntryFromSessionEvent(event, open.get(id ?? "")?.kind ?? kind, now());
      if (event.kind === "queued" && typeof id === "string") {
        open.delete(id);
        open.set(id, { queuedAt: t, kind: entry.kind });
        if (open.size > 1024) open.delete(open.keys().next().value as string);
      } else if (event.kind === "prompted" && typeof id === "string") {
        const o = open.get(id);
        if (o) {
          o.promptedAt = t;
          timings = { queuedMs: t - o.queuedAt };
        }
      } else if ((event.kind === "answered" || event.kind === "denied") && typeof id === "string") {
        const o = open.get(id);
        if (o) {
          open.delete(id);
          timings = { totalMs: t - o.queuedAt };
          if (o.promptedAt !== undefined) timings.promptMs = t - o.promptedAt;
        }
      }
      if (timings) entry = { ...entry, timings: { ...entry.timings, ...timings } };
      log.append(entry);
    } catch {
      // the audit sink must never break the server
    }
  };
}

/**
 * The entry as it will be written: only the {@link AUDIT_ENTRY_FIELDS}, in a
 * fixed order; a field of the wrong type is left out (never stringified);
 * strings capped at 128 characters, argv capped (see {@link MAX_ARGV_BYTES}),
 * numbers finite, `time` ISO 8601 (else `fallbackTime`). Returns undefined
 * when `kind` is not "sudo" or "secret" (so the log's own `kind: "log"` lines
 * cannot be forged through it) or `event` is not a non-empty string.
 */
export function normalizeAuditEntry(entry: AuditEntry, fallbackTime: Date): AuditEntry | undefined {
  if (entry === null || typeof entry !== "object") return undefined;
  const kind = entry.kind;
  if (kind !== "sudo" && kind !== "secret") return undefined;
  const event = capString(entry.event);
  if (!event) return undefined;
  const time = typeof entry.time === "string" && ISO_TIME_RE.test(entry.time)
    ? entry.time
    : fallbackTime.toISOString();
  const out: Record<string, unknown> = { time, kind, event };
  const requestId = capString(entry.requestId);
  if (requestId !== undefined) out.requestId = requestId;
  if (isCount(entry.peerPid)) out.peerPid = entry.peerPid;
  if (Array.isArray(entry.argv)) {
    const capped = capArgv(entry.argv);
    out.argv = capped.argv;
    if (capped.truncated) out.argvTruncated = capped.truncated;
  }
  const decision = capString(entry.decision);
  if (decision !== undefined) out.decision = decision;
  const reason = capString(entry.reason);
  if (reason !== undefined) out.reason = reason;
  if (isCount(entry.attempt)) out.attempt = entry.attempt;
  const timings = capTimings(entry.timings);
  if (timings) out.timings = timings;
  return out as unknown as AuditEntry;
}

function capString(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  return value.length <= MAX_FIELD_CHARS ? value : cutUtf16(value, MAX_FIELD_CHARS) + "…";
}

/** The first `n` UTF-16 units of `s`, without splitting a surrogate pair. */
function cutUtf16(s: string, n: number): string {
  const code = s.charCodeAt(n - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function capTimings(value: unknown): Record<string, number> | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const out: Record<string, number> = {};
  let n = 0;
  for (const key of Object.keys(value)) {
    if (n >= MAX_TIMINGS) break;
    const v = (value as Record<string, unknown>)[key];
    if (key.length > MAX_TIMING_KEY_CHARS || typeof v !== "number" || !Number.isFinite(v)) continue;
    out[key] = Math.round(v * 10) / 10;
    n++;
  }
  return n > 0 ? out : undefined;
}

/** Bytes of `s` as JSON string text, without the quotes. */
function jsonBytes(s: string): number {
  return encoder.encode(JSON.stringify(s)).length - 2;
}

function capArgv(argv: readonly unknown[]): { argv: string[]; truncated?: ArgvTruncation } {
  const out: string[] = [];
  let budget = MAX_ARGV_BYTES - 2; // the brackets
  let cut = false;
  for (let i = 0; i < argv.length; i++) {
    const el = typeof argv[i] === "string" ? argv[i] as string : "";
    if (typeof argv[i] !== "string") cut = true;
    if (i >= MAX_ARGV_ELEMENTS || budget < 3) {
      cut = true;
      break;
    }
    // quotes and comma: 3 bytes; one UTF-16 unit is at most 6 bytes of JSON text
    if (el.length * 6 <= budget - 3) {
      out.push(el);
      budget -= jsonBytes(el) + 3;
      continue;
    }
    // Long element: measure it character by character, at most `budget` steps.
    let prefix = "";
    let room = budget - 3;
    let complete = true;
    for (const ch of el) {
      const c = jsonBytes(ch);
      if (c > room) {
        complete = false;
        break;
      }
      prefix += ch;
      room -= c;
    }
    out.push(prefix);
    budget = room;
    if (!complete) {
      cut = true;
      break;
    }
  }
  if (!cut) return { argv: out };
  let chars = 0;
  for (const el of argv) chars += typeof el === "string" ? el.length : 0;
  return { argv: out, truncated: { elements: argv.length, chars } };
}

/** The exact text of one line (without its newline). */
function serialize(seq: number, body: AuditEntry | AuditLogNote, prev: string): string {
  return JSON.stringify({ seq, ...body, prev });
}

/** Hex SHA-256 of `bytes`. */
async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/** `seq` of a line, if it is one of ours. */
function seqOf(line: Uint8Array): number | undefined {
  try {
    const rec = JSON.parse(new TextDecoder().decode(line));
    return isCount(rec?.seq) ? rec.seq : undefined;
  } catch {
    return undefined;
  }
}

type QueueItem =
  | { readonly body: AuditEntry | AuditLogNote }
  | { dropped: number };

type Tail =
  | { readonly kind: "empty" }
  | { readonly kind: "complete"; readonly line: Uint8Array }
  | { readonly kind: "damaged"; readonly line: Uint8Array | undefined };

/**
 * The audit log writer. Create with {@link AuditLog.open}; call
 * {@link AuditLog.append} from anywhere (it never blocks and never throws),
 * {@link AuditLog.flush} to wait for the queue to reach the disk, and
 * {@link AuditLog.close} at session end.
 *
 * Several writers (two pi sessions, say) may share one log: each batch is
 * written holding `audit.jsonl.lock` (created with `O_EXCL`, holding our
 * pid; waited for asynchronously, at most 2 s, and broken when its holder is
 * dead or it is older than 10 s), and before writing, the writer checks that
 * the file is still the one it has open and has the size it expects; if not
 * (another writer appended or rotated), it re-reads the end and continues
 * the chain from there.
 */
export class AuditLog {
  /** Path of the current log file. */
  readonly path: string;
  readonly #maxBytes: number;
  readonly #keep: number;
  readonly #capacity: number;
  readonly #now: () => Date;
  #handle: FileHandle | undefined;
  #size = 0;
  #fileLines = 0;
  #seq = 0;
  #prev = GENESIS_PREV;
  #queue: QueueItem[] = [];
  #entries = 0;
  #carriedDrops = 0;
  #needSync = true;
  #loadError: AuditOpenError | undefined;
  #kickScheduled = false;
  #writing: Promise<void> | undefined;
  #closed = false;
  #written = 0;
  #dropped = 0;
  #invalid = 0;
  #writeErrors = 0;
  #rotations = 0;

  private constructor(path: string, options: AuditLogOptions) {
    this.path = path;
    this.#maxBytes = Math.max(1024, options.maxBytes ?? DEFAULT_MAX_BYTES);
    this.#keep = Math.max(1, Math.floor(options.keep ?? DEFAULT_KEEP));
    this.#capacity = Math.max(1, Math.floor(options.queueCapacity ?? DEFAULT_QUEUE_CAPACITY));
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Opens (creating if needed) the log at `path` (default
   * {@link defaultAuditPath}): the directory is created 0700 and must be a
   * real directory owned by us and not writable by others (it is tightened to
   * 0700); the file is opened with `O_NOFOLLOW`, created 0600, and must be a
   * regular file owned by us. The end of an existing file is read to continue
   * its chain; a file ending in a partial line is rotated away and a new file
   * started. Resolves once the log's first line, if any, is written.
   */
  static async open(
    path: string = defaultAuditPath(),
    options: AuditLogOptions = {},
  ): Promise<{ ok: true; log: AuditLog } | { ok: false; reason: AuditOpenError }> {
    const log = new AuditLog(path, options);
    await log.#writeBatch([]);
    if (log.#needSync || log.#writeErrors > 0) {
      await log.#closeHandle();
      return { ok: false, reason: log.#loadError ?? AUDIT_OPEN_ERRORS.WRITE_FAILED };
    }
    return { ok: true, log };
  }

  /**
   * Queues one entry; returns at once. False when the entry was dropped
   * (queue full: counted, and recorded by a `dropped` line), invalid, or the
   * log is closed. Only the {@link AUDIT_ENTRY_FIELDS} of `entry` are kept.
   */
  append(entry: AuditEntry): boolean {
    try {
      if (this.#closed) return false;
      if (this.#entries >= this.#capacity) {
        const last = this.#queue.at(-1);
        if (last && "dropped" in last) last.dropped++;
        else this.#queue.push({ dropped: 1 });
        this.#dropped++;
        return false;
      }
      const body = normalizeAuditEntry(entry, this.#now());
      if (!body) {
        this.#invalid++;
        return false;
      }
      this.#queue.push({ body });
      this.#entries++;
      this.#kick();
      return true;
    } catch {
      return false;
    }
  }

  /** Resolves when everything queued so far has been written (or dropped on error). */
  async flush(): Promise<void> {
    while (this.#queue.length > 0 || this.#writing) {
      this.#startDrain();
      await this.#writing;
    }
  }

  /** Stops accepting entries, writes what is queued and closes the file. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
    await this.#closeHandle();
  }

  /** Counters: queued, written, dropped, invalid, write errors, rotations. */
  stats(): AuditLogStats {
    return {
      queued: this.#entries,
      written: this.#written,
      dropped: this.#dropped,
      invalid: this.#invalid,
      writeErrors: this.#writeErrors,
      rotations: this.#rotations,
    };
  }

  #kick(): void {
    if (this.#kickScheduled || this.#writing) return;
    this.#kickScheduled = true;
    queueMicrotask(() => {
      this.#kickScheduled = false;
      this.#startDrain();
    });
  }

  #startDrain(): void {
    if (this.#writing || this.#queue.length === 0) return;
    this.#writing = this.#drain().catch(() => {}).finally(() => {
      this.#writing = undefined;
      // Entries appended during the writer's last await.
      if (this.#queue.length > 0) this.#kick();
    });
  }

  /** The single writer: takes batches off the queue until it is empty. */
  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const items = this.#queue.splice(0, BATCH_LINES);
      for (const item of items) if ("body" in item) this.#entries--;
      await this.#writeBatch(items);
    }
  }

  /**
   * Writes one batch holding the lock: re-reads the file's end first when
   * another writer changed it (or after an error), and updates the head file
   * when nothing more is queued.
   */
  async #writeBatch(batch: QueueItem[]): Promise<void> {
    let items = batch;
    const failed = (reason: AuditOpenError) => {
      this.#loadError = reason;
      this.#needSync = true;
      this.#writeErrors++;
      this.#loseItems(items);
      this.#loseItems(this.#queue.splice(0)); // retried on the next append, not in a loop
    };
    if (this.#needSync) {
      // Before taking the lock: never create anything in a directory we would refuse.
      const unsafe = await this.#prepareDir();
      if (unsafe) return failed(unsafe);
    }
    const locked = await this.#lock();
    try {
      if (this.#needSync || !await this.#fileUnchanged()) {
        await this.#closeHandle();
        const loaded = await this.#load();
        if (typeof loaded === "string") return failed(loaded);
        this.#needSync = false;
        items = [...loaded, ...items];
      }
      const done = { count: 0 };
      try {
        await this.#writeItems(items, done);
      } catch {
        this.#writeErrors++;
        this.#needSync = true;
        // Remove whatever part of the failed write reached the file (we hold the lock).
        await this.#handle?.truncate(this.#size).catch(() => {});
        this.#loseItems(items.slice(done.count));
        return;
      }
      if (this.#queue.length === 0) {
        try {
          await this.#writeHead();
        } catch {
          this.#writeErrors++;
        }
      }
    } finally {
      if (locked) await this.#unlock();
    }
  }

  /** Items that will never be written: counted, and reported by the next `dropped` line. */
  #loseItems(items: readonly QueueItem[]): void {
    for (const item of items) {
      if ("body" in item) {
        if (item.body.kind !== "log") {
          this.#carriedDrops++;
          this.#dropped++;
        }
      } else {
        this.#carriedDrops += item.dropped; // already counted when dropped
      }
    }
    this.#entries = this.#queue.reduce((n, i) => n + ("body" in i ? 1 : 0), 0);
  }

  /** Writes `items` in order, rotating when the file would outgrow its limit. */
  async #writeItems(items: readonly QueueItem[], done: { count: number }): Promise<void> {
    let lines: string[] = [];
    let bytes = 0;
    let seq = this.#seq;
    let prev = this.#prev;
    let pendingItems = 0;
    const commit = async () => {
      if (lines.length === 0) return;
      await this.#handle!.appendFile(lines.join(""));
      this.#size += bytes;
      this.#fileLines += lines.length;
      this.#written += lines.length;
      this.#seq = seq;
      this.#prev = prev;
      done.count += pendingItems;
      lines = [];
      bytes = 0;
      pendingItems = 0;
    };
    for (const item of items) {
      const body: AuditEntry | AuditLogNote = "body" in item ? item.body : {
        time: this.#now().toISOString(),
        kind: "log",
        event: "dropped",
        dropped: item.dropped,
      };
      let text = serialize(seq, body, prev);
      let encoded = encoder.encode(text);
      if (
        this.#fileLines + lines.length > 1 &&
        this.#size + bytes + encoded.length + 1 > this.#maxBytes
      ) {
        await commit();
        await this.#rotate();
        seq = this.#seq;
        prev = this.#prev;
        text = serialize(seq, body, prev);
        encoded = encoder.encode(text);
      }
      lines.push(text + "\n");
      bytes += encoded.length + 1;
      pendingItems++;
      prev = await sha256Hex(encoded);
      seq++;
    }
    await commit();
  }

  /** Renames the current file to `.1` (shifting older ones) and starts a new one. */
  async #rotate(): Promise<void> {
    await this.#closeHandle();
    await this.#shiftFiles();
    const opened = await this.#openFile();
    if (typeof opened === "string") throw new Error(opened);
    this.#handle = opened.handle;
    this.#size = opened.size;
    this.#fileLines = 0;
    this.#rotations++;
    const text = serialize(this.#seq, {
      time: this.#now().toISOString(),
      kind: "log",
      event: "rotated",
    }, this.#prev);
    const encoded = encoder.encode(text);
    await this.#handle.appendFile(text + "\n");
    this.#size += encoded.length + 1;
    this.#fileLines++;
    this.#written++;
    this.#seq++;
    this.#prev = await sha256Hex(encoded);
  }

  async #shiftFiles(): Promise<void> {
    for (let i = this.#keep - 1; i >= 1; i--) {
      try {
        await rename(`${this.path}.${i}`, `${this.path}.${i + 1}`);
      } catch (e) {
        if ((e as { code?: string }).code !== "ENOENT") throw e;
      }
    }
    await rename(this.path, `${this.path}.1`);
  }

  /** Opens the current file safely; returns the handle and its size. */
  async #openFile(): Promise<{ handle: FileHandle; size: number } | AuditOpenError> {
    let handle: FileHandle;
    try {
      handle = await open(
        this.path,
        constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW |
          constants.O_NONBLOCK,
        0o600,
      );
    } catch (e) {
      return (e as { code?: string }).code === "ELOOP"
        ? AUDIT_OPEN_ERRORS.FILE_UNSAFE
        : AUDIT_OPEN_ERRORS.OPEN_FAILED;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile() || st.uid !== ownUid()) {
        await handle.close();
        return AUDIT_OPEN_ERRORS.FILE_UNSAFE;
      }
      if ((st.mode & 0o077) !== 0) await handle.chmod(0o600);
      return { handle, size: st.size };
    } catch {
      await handle.close().catch(() => {});
      return AUDIT_OPEN_ERRORS.OPEN_FAILED;
    }
  }

  /** Whether the path still names our open file, at the size we wrote. */
  async #fileUnchanged(): Promise<boolean> {
    if (!this.#handle) return false;
    try {
      const [named, ours] = await Promise.all([lstat(this.path), this.#handle.stat()]);
      return named.ino === ours.ino && named.dev === ours.dev && ours.size === this.#size;
    } catch {
      return false;
    }
  }

  /**
   * Creates the directory (0700) if needed and checks it: a real directory,
   * ours, not writable by others; tightens it to 0700.
   */
  async #prepareDir(): Promise<AuditOpenError | undefined> {
    const dir = dirname(this.path);
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
    } catch {
      return AUDIT_OPEN_ERRORS.DIR_CREATE_FAILED;
    }
    try {
      const st = await lstat(dir);
      if (!st.isDirectory() || st.uid !== ownUid() || (st.mode & 0o022) !== 0) {
        return AUDIT_OPEN_ERRORS.DIR_UNSAFE;
      }
      if ((st.mode & 0o077) !== 0) await chmod(dir, 0o700);
      return undefined;
    } catch {
      return AUDIT_OPEN_ERRORS.DIR_UNSAFE;
    }
  }

  /**
   * Checks the directory, opens the file and continues its chain (or starts
   * one). Returns the log's own lines to write first (a start or rotation
   * line, a head mismatch, entries lost to an earlier error), or why it
   * cannot. Called holding the lock.
   */
  async #load(): Promise<QueueItem[] | AuditOpenError> {
    const unsafe = await this.#prepareDir();
    if (unsafe) return unsafe;
    const opened = await this.#openFile();
    if (typeof opened === "string") return opened;
    this.#handle = opened.handle;
    this.#size = opened.size;
    const head = await readHead(this.path + HEAD_SUFFIX);
    try {
      const tail = await readTail(opened.handle, opened.size);
      const time = this.#now().toISOString();
      let note: AuditLogNote | undefined;
      if (tail.kind === "complete") {
        this.#prev = await sha256Hex(tail.line);
        this.#seq = (seqOf(tail.line) ?? -1) + 1;
        this.#fileLines = 2; // at least a start line and one more: rotation may happen
      } else if (tail.kind === "empty") {
        this.#fileLines = 0;
        const before = await rotatedTail(`${this.path}.1`);
        if (before) {
          this.#prev = await sha256Hex(before);
          this.#seq = (seqOf(before) ?? -1) + 1;
          note = { time, kind: "log", event: "rotated" };
        } else {
          this.#prev = GENESIS_PREV;
          this.#seq = 0;
          note = { time, kind: "log", event: "started", format: AUDIT_FORMAT };
        }
      } else {
        // Cut short by a crash (or edited): keep it as evidence, start a new file.
        this.#prev = tail.line ? await sha256Hex(tail.line) : GENESIS_PREV;
        this.#seq = tail.line ? (seqOf(tail.line) ?? -1) + 1 : 0;
        await this.#closeHandle();
        await this.#shiftFiles();
        const fresh = await this.#openFile();
        if (typeof fresh === "string") return fresh;
        this.#handle = fresh.handle;
        this.#size = fresh.size;
        this.#fileLines = 0;
        this.#rotations++;
        note = { time, kind: "log", event: "rotated", damagedTail: true };
      }
      const lastSeq = this.#seq - 1;
      const lastHash = this.#prev;
      const first: QueueItem[] = note ? [{ body: note }] : [];
      if (head && (head.seq > lastSeq || (head.seq === lastSeq && head.hash !== lastHash))) {
        first.push({
          body: {
            time,
            kind: "log",
            event: "head_mismatch",
            headSeq: head.seq,
            headHash: head.hash,
          },
        });
      }
      if (this.#carriedDrops > 0) {
        first.push({ dropped: this.#carriedDrops });
        this.#carriedDrops = 0;
      }
      return first;
    } catch {
      return AUDIT_OPEN_ERRORS.OPEN_FAILED;
    }
  }

  async #writeHead(): Promise<void> {
    const headPath = this.path + HEAD_SUFFIX;
    const tmp = `${headPath}.tmp`;
    const handle = await open(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW |
        constants.O_NONBLOCK,
      0o600,
    );
    try {
      await handle.writeFile(JSON.stringify({ seq: this.#seq - 1, hash: this.#prev }) + "\n");
    } finally {
      await handle.close();
    }
    await rename(tmp, headPath);
  }

  /**
   * Takes the lock file, waiting asynchronously (never blocking the loop).
   * False when it could not (waited too long, or cannot create it): the
   * batch is then written anyway, and the size check catches most races.
   */
  async #lock(): Promise<boolean> {
    const lockPath = this.path + LOCK_SUFFIX;
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let delay = 1;; delay = Math.min(delay * 2, 50)) {
      try {
        const h = await open(
          lockPath,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          0o600,
        );
        try {
          await h.writeFile(`${process.pid}\n`);
        } finally {
          await h.close();
        }
        return true;
      } catch (e) {
        if ((e as { code?: string }).code !== "EEXIST") return false;
      }
      if (await lockIsStale(lockPath)) {
        await unlink(lockPath).catch(() => {});
        continue;
      }
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  async #unlock(): Promise<void> {
    await unlink(this.path + LOCK_SUFFIX).catch(() => {});
  }

  async #closeHandle(): Promise<void> {
    const h = this.#handle;
    this.#handle = undefined;
    if (h) await h.close().catch(() => {});
  }
}

/** A lock whose holder is gone, or that is older than any batch takes. */
async function lockIsStale(path: string): Promise<boolean> {
  try {
    const st = await lstat(path);
    if (Date.now() - st.mtimeMs > LOCK_STALE_MS) return true;
    const handle = await openForReading(path);
    if (!handle) return false;
    let text: string;
    try {
      const buf = new Uint8Array(32);
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      text = new TextDecoder().decode(buf.subarray(0, bytesRead)).trim();
    } finally {
      await handle.close().catch(() => {});
    }
    const pid = Number(text);
    if (!/^\d+$/.test(text) || pid <= 0) return false; // being written right now
    try {
      process.kill(pid, 0);
      return false;
    } catch (e) {
      return (e as { code?: string }).code === "ESRCH";
    }
  } catch {
    return false;
  }
}

function ownUid(): number {
  return process.getuid?.() ?? -1;
}

/** The last line of an open file: complete, none, or damaged (partial / too long). */
async function readTail(handle: FileHandle, size: number): Promise<Tail> {
  if (size === 0) return { kind: "empty" };
  const len = Math.min(size, TAIL_WINDOW);
  const buf = new Uint8Array(len);
  const { bytesRead } = await handle.read(buf, 0, len, size - len);
  const b = buf.subarray(0, bytesRead);
  const whole = bytesRead === size;
  const lastNl = b.lastIndexOf(0x0a);
  if (lastNl === b.length - 1) {
    const start = lastNl > 0 ? b.lastIndexOf(0x0a, lastNl - 1) : -1;
    if (start < 0 && !whole) return { kind: "damaged", line: undefined };
    return { kind: "complete", line: b.slice(start + 1, lastNl) };
  }
  if (lastNl < 0) return { kind: "damaged", line: undefined };
  const start = lastNl > 0 ? b.lastIndexOf(0x0a, lastNl - 1) : -1;
  if (start < 0 && !whole) return { kind: "damaged", line: undefined };
  return { kind: "damaged", line: b.slice(start + 1, lastNl) };
}

/** The last complete line of a rotated file, if it is ours and readable. */
async function rotatedTail(path: string): Promise<Uint8Array | undefined> {
  const handle = await openForReading(path);
  if (!handle) return undefined;
  try {
    const st = await handle.stat();
    const tail = await readTail(handle, st.size);
    return tail.kind === "complete" ? tail.line : undefined;
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Opens a regular file of ours for reading, without following a symlink or blocking on a FIFO. */
async function openForReading(path: string): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = await handle.stat();
    if (st.isFile()) return handle;
  } catch {
    // fall through
  }
  await handle.close().catch(() => {});
  return undefined;
}

/** The head file: `{seq, hash}`, undefined when missing, "bad" when malformed. */
async function readHead(path: string): Promise<{ seq: number; hash: string } | undefined> {
  const r = await readHeadStrict(path);
  return r === "bad" ? undefined : r;
}

async function readHeadStrict(
  path: string,
): Promise<{ seq: number; hash: string } | undefined | "bad"> {
  const handle = await openForReading(path);
  if (!handle) return undefined;
  try {
    const buf = new Uint8Array(512);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    const v = JSON.parse(new TextDecoder().decode(buf.subarray(0, bytesRead)));
    if (isCount(v?.seq) && typeof v?.hash === "string" && HASH_RE.test(v.hash)) {
      return { seq: v.seq, hash: v.hash };
    }
    return "bad";
  } catch {
    return "bad";
  } finally {
    await handle.close().catch(() => {});
  }
}

type LinePiece = { readonly bytes: Uint8Array; readonly terminated: boolean } | "too_long";

/** The lines of a file as exact bytes, each at most `maxLine` bytes. */
async function* fileLines(handle: FileHandle, maxLine: number): AsyncGenerator<LinePiece> {
  const chunk = new Uint8Array(64 * 1024);
  let carry: Uint8Array[] = [];
  let carryLen = 0;
  let position = 0;
  const take = (last: Uint8Array): Uint8Array => {
    const out = new Uint8Array(carryLen + last.length);
    let at = 0;
    for (const c of carry) {
      out.set(c, at);
      at += c.length;
    }
    out.set(last, at);
    carry = [];
    carryLen = 0;
    return out;
  };
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0 || nl >= bytesRead) break;
      if (carryLen + nl - start > maxLine) return yield "too_long";
      yield { bytes: take(chunk.subarray(start, nl)), terminated: true };
      start = nl + 1;
    }
    if (start < bytesRead) {
      carry.push(chunk.slice(start, bytesRead));
      carryLen += bytesRead - start;
      if (carryLen > maxLine) return yield "too_long";
    }
  }
  if (carryLen > 0) yield { bytes: take(new Uint8Array(0)), terminated: false };
}

/** The rotated files of `path` that exist, oldest first (`.N` … `.1`). */
async function rotatedFiles(path: string): Promise<string[]> {
  const found: string[] = [];
  for (let i = 1; i <= MAX_ROTATED_SCAN; i++) {
    try {
      await lstat(`${path}.${i}`);
      found.push(`${path}.${i}`);
    } catch {
      break;
    }
  }
  return found.reverse();
}

/** Options of {@link verifyAuditChain}. */
export interface AuditVerifyOptions {
  /** Also verify `path.1` … `path.N` and the links between files (default true). */
  readonly rotated?: boolean;
  /** Check the end against `path.head` when it exists (default true). */
  readonly head?: boolean;
}

/**
 * Verifies the hash chain of the log at `path` (and, by default, its rotated
 * files, oldest first, and the head file). Returns the first line that fails
 * a check: for an edited line that is the line AFTER it (whose `prev` no
 * longer matches); for a deleted line, the line that now takes its place; for
 * lines removed from the start, line 1; for swapped lines, the first of the
 * two. Truncation of the end is found only through the head file. Run while
 * a writer is appending, the last line may be seen half-written
 * (`partial_line`): verify again.
 */
export async function verifyAuditChain(
  path: string,
  options: AuditVerifyOptions = {},
): Promise<AuditVerifyResult> {
  const files = options.rotated === false ? [path] : [...await rotatedFiles(path), path];
  const head = options.head === false ? undefined : await readHeadStrict(path + HEAD_SUFFIX);
  const fail = (reason: AuditVerifyError, file: string, line: number, detail: string) =>
    ({ ok: false, reason, file, line, detail }) as const;
  if (head === "bad") {
    return fail(AUDIT_VERIFY_ERRORS.HEAD_MISMATCH, path + HEAD_SUFFIX, 1, "head file malformed");
  }
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const notices: AuditNotice[] = [];
  let expectedPrev: string | undefined;
  let expectedSeq = 0;
  let firstSeq: number | undefined;
  let total = 0;
  let headSeen: { hash: string; file: string; line: number } | undefined;
  let lastFile = path;
  let lastLineNo = 0;
  for (const file of files) {
    const handle = await openForReading(file);
    if (!handle) {
      return fail(
        AUDIT_VERIFY_ERRORS.UNREADABLE,
        file,
        0,
        "missing, a symlink, not a regular file, or unreadable",
      );
    }
    let lineNo = 0;
    try {
      for await (const piece of fileLines(handle, MAX_LINE_BYTES)) {
        lineNo++;
        if (piece === "too_long") {
          return fail(
            AUDIT_VERIFY_ERRORS.LINE_TOO_LONG,
            file,
            lineNo,
            `longer than ${MAX_LINE_BYTES} bytes`,
          );
        }
        if (!piece.terminated) {
          return fail(AUDIT_VERIFY_ERRORS.PARTIAL_LINE, file, lineNo, "last line has no newline");
        }
        let rec: Record<string, unknown>;
        try {
          rec = JSON.parse(decoder.decode(piece.bytes));
        } catch {
          return fail(AUDIT_VERIFY_ERRORS.BAD_JSON, file, lineNo, "not JSON");
        }
        if (rec === null || typeof rec !== "object" || Array.isArray(rec)) {
          return fail(AUDIT_VERIFY_ERRORS.BAD_JSON, file, lineNo, "not a JSON object");
        }
        const { seq, prev, time, kind, event } = rec;
        if (
          !isCount(seq) || typeof prev !== "string" || !HASH_RE.test(prev) ||
          typeof time !== "string" || typeof event !== "string" ||
          (kind !== "sudo" && kind !== "secret" && kind !== "log")
        ) {
          return fail(AUDIT_VERIFY_ERRORS.BAD_RECORD, file, lineNo, "missing or invalid fields");
        }
        if (expectedPrev === undefined) {
          if (kind === "log" && event === "started") {
            if (prev !== GENESIS_PREV) {
              return fail(AUDIT_VERIFY_ERRORS.BROKEN_CHAIN, file, lineNo, "start line has a prev");
            }
            if (seq !== 0) {
              return fail(AUDIT_VERIFY_ERRORS.BAD_SEQUENCE, file, lineNo, "start line seq not 0");
            }
          } else if (!(kind === "log" && event === "rotated")) {
            return fail(
              AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
              file,
              lineNo,
              "first line is not the start of a log: lines before it were removed",
            );
          }
          firstSeq = seq;
        } else {
          if (prev !== expectedPrev) {
            const where = lineNo === 1 ? "the previous file's last line" : `line ${lineNo - 1}`;
            const detail = `prev is not the hash of ${where}: ` + (
              seq === expectedSeq
                ? `${where} was changed`
                : seq > expectedSeq
                ? `${seq - expectedSeq} line(s) missing (or moved) before this one`
                : "lines reordered or duplicated"
            );
            return fail(AUDIT_VERIFY_ERRORS.BROKEN_CHAIN, file, lineNo, detail);
          }
          if (seq !== expectedSeq) {
            return fail(
              AUDIT_VERIFY_ERRORS.BAD_SEQUENCE,
              file,
              lineNo,
              `seq ${seq}, expected ${expectedSeq}`,
            );
          }
        }
        expectedPrev = await sha256Hex(piece.bytes);
        expectedSeq = seq + 1;
        total++;
        if (head && seq === head.seq) headSeen = { hash: expectedPrev, file, line: lineNo };
        if (kind === "log" && (event === "dropped" || event === "head_mismatch")) {
          if (notices.length < MAX_NOTICES) {
            notices.push({
              file,
              line: lineNo,
              event,
              detail: event === "dropped"
                ? `${rec.dropped} entries dropped (queue full or write error)`
                : `on open, the log's end did not match the head file (seq ${rec.headSeq})`,
            });
          }
        }
      }
    } catch {
      return fail(AUDIT_VERIFY_ERRORS.UNREADABLE, file, lineNo, "read error");
    } finally {
      await handle.close().catch(() => {});
    }
    lastFile = file;
    lastLineNo = lineNo;
  }
  const lastSeq = expectedPrev === undefined ? undefined : expectedSeq - 1;
  let headChecked = false;
  if (head) {
    if (lastSeq === undefined || head.seq > lastSeq) {
      return fail(
        AUDIT_VERIFY_ERRORS.TRUNCATED_END,
        lastFile,
        lastLineNo + 1,
        `log ends at seq ${lastSeq ?? "(none)"} but the head file records seq ${head.seq}: ` +
          "lines were removed from the end",
      );
    }
    if (firstSeq !== undefined && head.seq >= firstSeq) {
      if (headSeen?.hash !== head.hash) {
        return fail(
          AUDIT_VERIFY_ERRORS.HEAD_MISMATCH,
          headSeen?.file ?? lastFile,
          headSeen?.line ?? lastLineNo,
          `line with seq ${head.seq} differs from the one the head file records`,
        );
      }
      headChecked = true;
    }
  }
  return {
    ok: true,
    lines: total,
    files,
    firstSeq,
    lastSeq,
    lastHash: expectedPrev ?? GENESIS_PREV,
    headChecked,
    notices,
  };
}

/**
 * The last `n` lines (at most 1000) of the log file at `path`, as text, for
 * `audit tail`. Reads at most `n` × 16 KiB from the end.
 */
export async function readAuditTail(
  path: string,
  n: number,
): Promise<{ ok: true; lines: string[] } | { ok: false; reason: AuditVerifyError }> {
  const count = Math.max(1, Math.min(1000, Math.floor(n)));
  const handle = await openForReading(path);
  if (!handle) return { ok: false, reason: AUDIT_VERIFY_ERRORS.UNREADABLE };
  try {
    const st = await handle.stat();
    const len = Math.min(st.size, count * 16 * 1024);
    const buf = new Uint8Array(len);
    const { bytesRead } = await handle.read(buf, 0, len, st.size - len);
    let text = new TextDecoder().decode(buf.subarray(0, bytesRead));
    if (len < st.size) text = text.slice(text.indexOf("\n") + 1); // drop a cut first line
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    return { ok: true, lines: lines.slice(-count) };
  } catch {
    return { ok: false, reason: AUDIT_VERIFY_ERRORS.UNREADABLE };
  } finally {
    await handle.close().catch(() => {});
  }
}
