/**
 * One audit line (ADR 0004): `{"sid","seq","time","kind","event",…,"prev"}`, `prev` the SHA-256
 * of the session's previous line. Only listed fields of the right types are kept: no typed text.
 * @module
 */
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import process from "node:process";

/** The `format` of a session's `started` line. */
export const AUDIT_FORMAT = "pi-sudo-prompt-audit/2";
/** `prev` of a session's first line. */
export const GENESIS_PREV = "0".repeat(64);
/** Most argv elements, and bytes of argv JSON text, kept in one line. */
export const MAX_ARGV = { ELEMENTS: 256, BYTES: 4096 } as const;

const ISO_TIME_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/;
// deno-lint-ignore no-control-regex -- C0/C1 and bidi controls, separators: escaping them is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
const encoder = new TextEncoder();

/** Whose request a line is about: a sudo password or a secret. */
export type AuditKind = "sudo" | "secret";

/** One entry, as `audit_events.ts` maps a session event; `timings` in ms. */
export interface AuditEntry {
  readonly time: string;
  readonly kind: AuditKind;
  readonly event: string;
  readonly requestId?: string;
  readonly peerPid?: number;
  readonly argv?: readonly string[];
  readonly argvTruncated?: { readonly elements: number; readonly chars: number };
  readonly decision?: string;
  readonly reason?: string;
  readonly attempt?: number;
  readonly timings?: Readonly<Record<string, number>>;
}

/** `$XDG_STATE_HOME/pi-sudo-prompt/audit.jsonl` if absolute, else under `~/.local/state`. */
export function defaultAuditPath(env: Record<string, string | undefined> = process.env): string {
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  const xdg = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : "";
  return join(xdg || join(home, ".local", "state"), "pi-sudo-prompt", "audit.jsonl");
}

/**
 * The entry as written: listed fields of the right types, strings cut at 128 characters, argv at
 * {@link MAX_ARGV}. Undefined unless `event` is set and `kind` is "sudo" or "secret" (no forged
 * `log` lines).
 */
export function normalizeAuditEntry(entry: AuditEntry, fallbackTime: Date): AuditEntry | undefined {
  const { kind, time, timings: t } = entry;
  const event = capString(entry.event);
  if ((kind !== "sudo" && kind !== "secret") || !event) return undefined;
  const timings = Object.entries(t && typeof t === "object" && !Array.isArray(t) ? t : {})
    .filter(([k, v]) => k.length <= 32 && typeof v === "number" && Number.isFinite(v))
    .slice(0, 8).map(([k, v]) => [k, Math.round(v * 10) / 10]);
  return { // undefined fields vanish in JSON.stringify
    time: typeof time === "string" && ISO_TIME_RE.test(time) ? time : fallbackTime.toISOString(),
    kind,
    event,
    requestId: capString(entry.requestId),
    peerPid: isCount(entry.peerPid) ? entry.peerPid : undefined,
    ...(Array.isArray(entry.argv) ? capArgv(entry.argv) : {}),
    decision: capString(entry.decision),
    reason: capString(entry.reason),
    attempt: isCount(entry.attempt) ? entry.attempt : undefined,
    timings: timings.length > 0 ? Object.fromEntries(timings) : undefined,
  };
}

/** A line's exact text (no newline): JSON with every control escaped, so plain bytes. */
export function serializeRecord(sid: string, seq: number, body: object, prev: string): string {
  return escapeUnsafe(JSON.stringify({ sid, seq, ...body, prev }));
}

/** `text` with every control, bidi control and separator written `\uXXXX`. */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Hex SHA-256 of a line (text as UTF-8). */
export function sha256Hex(line: string | Uint8Array): string {
  return createHash("sha256").update(line).digest("hex");
}

/** A non-negative safe integer. */
export function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function capString(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const end = /[\ud800-\udbff]/.test(value[127]) ? 127 : 128; // whole surrogate pairs
  return value.length <= 128 ? value : value.slice(0, end) + "…";
}

function jsonBytes(s: string): number {
  return encoder.encode(JSON.stringify(s)).length - 2;
}

function capArgv(argv: readonly unknown[]): Pick<AuditEntry, "argv" | "argvTruncated"> {
  const out: string[] = [];
  let room = MAX_ARGV.BYTES - 2; // the brackets
  for (const value of argv.slice(0, MAX_ARGV.ELEMENTS)) {
    const el = typeof value === "string" ? value : "";
    let kept = "";
    room -= 3; // quotes and comma; then the element whole if it fits, else by character
    for (const ch of el.length <= room && jsonBytes(el) <= room ? [el] : el) {
      if (jsonBytes(ch) > room) break;
      [kept, room] = [kept + ch, room - jsonBytes(ch)];
    }
    out.push(kept);
    if (kept !== el || room < 3) break;
  }
  if (out.length === argv.length && out.every((s, i) => s === argv[i])) return { argv: out };
  const chars = argv.reduce<number>((n, el) => n + (typeof el === "string" ? el.length : 0), 0);
  return { argv: out, argvTruncated: { elements: argv.length, chars } };
}
