/**
 * The askpass wire protocol, runtime-neutral. One connection, one exchange: a request, then
 * `password_delivered` (pi wrote into sudo's pipe itself), `password_response` (the password,
 * only where pi cannot take the pipe) or `password_denied`, and both sides close.
 * Frame, big-endian: `u32 body length | u16 header length | header (UTF-8 JSON) | payload`. The
 * header holds `v`, `type` and the fields in {@link MESSAGE_FIELDS}; the payload carries only a
 * response's secret, as bytes both ends can zero.
 * Nothing is signed: the agent could read any key both ends hold (ADR 0001, amendment of
 * protocol 5); `kernel/peer_verification.ts` decides who gets a password, and the broker checks
 * the socket's owner. Decoding never throws: failures name one of {@link PROTOCOL_ERRORS}.
 *
 * @module
 */

/** Protocol version; both ends must agree exactly. */
export const PROTOCOL_VERSION = 5;
/** Hex characters in a request id (128 bits). */
export const REQUEST_ID_HEX_LENGTH = 32;
/** sudo's prompt as passed in argv[1]; larger prompts are refused. */
export const MAX_PROMPT_BYTES = 1024;
/** sudo reads at most 1023 bytes of an askpass reply (SUDO_CONV_REPL_MAX). */
export const MAX_PASSWORD_BYTES = 1023;
/** Largest frame body: JSON spells a control byte in 6, so a 1 KiB prompt can take ~6 KiB. */
export const MAX_FRAME_BYTES = 8192;
const LENGTH_PREFIX_BYTES = 4;
const HEADER_LENGTH_BYTES = 2;

/** Named reasons a frame or message is rejected. */
export const PROTOCOL_ERRORS = {
  FRAME_TOO_LARGE: "frame_too_large",
  TRAILING_BYTES: "trailing_bytes",
  MALFORMED_FRAME: "malformed_frame",
  MALFORMED_HEADER: "malformed_header",
  UNSUPPORTED_VERSION: "unsupported_version",
  UNEXPECTED_TYPE: "unexpected_type",
  BAD_FIELD: "bad_field",
  PROMPT_TOO_LONG: "prompt_too_long",
  PASSWORD_TOO_LONG: "password_too_long",
  PASSWORD_HAS_LINE_BREAK: "password_has_line_break",
  ID_MISMATCH: "id_mismatch",
} as const;

/** One of the values of {@link PROTOCOL_ERRORS}. */
export type ProtocolError = typeof PROTOCOL_ERRORS[keyof typeof PROTOCOL_ERRORS];

/** Why the server refused to hand out a password; sent to the helper. */
export const DENY_REASONS = {
  CANCELLED: "cancelled",
  TIMEOUT: "timeout",
  VERIFICATION_FAILED: "verification_failed",
  PROCESS_GONE: "process_gone",
  QUEUE_FULL: "queue_full",
  ATTEMPTS_EXHAUSTED: "attempts_exhausted",
  SESSION_CLOSED: "session_closed",
  NO_INTERACTIVE_UI: "no_interactive_ui",
  /** pi was stopped (SIGTSTP, SIGSTOP) while the request waited. */
  PI_STOPPED: "pi_stopped",
} as const;

/** One of the values of {@link DENY_REASONS}. */
export type DenyReason = typeof DENY_REASONS[keyof typeof DENY_REASONS];

const DENY_REASON_SET: ReadonlySet<string> = new Set(Object.values(DENY_REASONS));

/** Sent by the helper: sudo wants a password and shows `prompt`. */
export interface PasswordRequest {
  readonly type: "password_request";
  readonly id: string;
  readonly prompt: string;
  /** The helper's own pid, as it claims; the server compares it with SO_PEERCRED. */
  readonly pid: number;
}

/**
 * Sent by the root broker (`pi-secret-run`): a program wants a secret on its stdin. `argv` is
 * what the broker will run (real program path); `label` is the agent's, unverified; `proof` names
 * the root-owned file the broker created in `/run/pi-sudo-prompt`.
 */
export interface SecretRequest {
  readonly type: "secret_request";
  readonly id: string;
  readonly argv: readonly string[];
  readonly label: string;
  /** The directory the program starts in: the caller's real cwd, entered as the caller. */
  readonly cwd: string;
  readonly allowlisted: boolean;
  readonly proof: string;
  readonly pid: number;
}

/** Either request a peer can send. */
export type IncomingRequest = PasswordRequest | SecretRequest;

/** Most arguments a secret request may carry. */
export const MAX_SECRET_ARGS = 64;
/** Longest label, in UTF-8 bytes. */
export const MAX_LABEL_BYTES = 256;

/** Sent by the server: the password to hand to sudo, as bytes. */
export interface PasswordResponse {
  readonly type: "password_response";
  readonly id: string;
  readonly password: Uint8Array;
}

/** Sent by the server: no password for this request, and why. */
export interface PasswordDenied {
  readonly type: "password_denied";
  readonly id: string;
  readonly reason: DenyReason;
}

/** Sent by the server: pi wrote the password into sudo's pipe itself (ADR 0008). */
export interface PasswordDelivered {
  readonly type: "password_delivered";
  readonly id: string;
}

/** Any answer the server can give. */
export type Reply = PasswordResponse | PasswordDelivered | PasswordDenied;

/** A typed decode result: never an exception. */
export type Decoded<T> =
  | { readonly ok: true; readonly message: T }
  | { readonly ok: false; readonly reason: ProtocolError };

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** A fresh random 128-bit request id as lowercase hex. */
export function newRequestId(): string {
  return bytesToHex(crypto.getRandomValues(new Uint8Array(REQUEST_ID_HEX_LENGTH / 2)));
}

/**
 * Every message's fields, in encoding order; decoders accept exactly these (with `v` and `type`).
 * A check returns `true`, `false` (`bad_field`) or a more precise reason.
 */
const MESSAGE_FIELDS = {
  password_request: { id: isRequestId, prompt: checkPrompt, pid: isPid },
  secret_request: {
    id: isRequestId,
    argv: isSecretArgv,
    label: checkLabel,
    cwd: isCwd,
    allowlisted: (v: unknown) => typeof v === "boolean",
    proof: (v: unknown) => typeof v === "string" && /^[0-9a-f]{32}$/.test(v),
    pid: isPid,
  },
  password_response: { id: isRequestId },
  password_delivered: { id: isRequestId },
  password_denied: {
    id: isRequestId,
    reason: (v: unknown) => typeof v === "string" && DENY_REASON_SET.has(v),
  },
} as const satisfies Record<string, Record<string, (v: unknown) => boolean | ProtocolError>>;

type MessageType = keyof typeof MESSAGE_FIELDS;

type Message = IncomingRequest | Reply;

/** Encodes a request into a complete frame (length prefix included). */
export function encodeRequest(request: Omit<PasswordRequest, "type">): Uint8Array {
  return encodeMessage({ type: "password_request", ...request });
}

/** Encodes a secret request (the broker's side). */
export function encodeSecretRequest(request: Omit<SecretRequest, "type">): Uint8Array {
  return encodeMessage({ type: "secret_request", ...request });
}

/** Encodes a response carrying a secret. The caller still owns and zeroes `password`. */
export function encodeResponse(id: string, password: Uint8Array): Uint8Array {
  return encodeMessage({ type: "password_response", id, password });
}

/** Encodes a `password_delivered`: the password is already in sudo's pipe. */
export function encodeDelivered(id: string): Uint8Array {
  return encodeMessage({ type: "password_delivered", id });
}

/** Encodes a denial. */
export function encodeDenied(id: string, reason: DenyReason): Uint8Array {
  return encodeMessage({ type: "password_denied", id, reason });
}

/** Decodes and checks a request frame body (without the length prefix). */
export function decodeRequest(body: Uint8Array): Decoded<PasswordRequest> {
  return decodeMessage<PasswordRequest>(body, ["password_request"]);
}

/** Decodes a helper's `password_request` or the broker's `secret_request`. */
export function decodeIncoming(body: Uint8Array): Decoded<IncomingRequest> {
  return decodeMessage<IncomingRequest>(body, ["password_request", "secret_request"]);
}

/** Decodes the reply to request `expectedId`; a returned password is a buffer the caller zeroes. */
export function decodeReply(body: Uint8Array, expectedId: string): Decoded<Reply> {
  const types = ["password_response", "password_delivered", "password_denied"] as const;
  const decoded = decodeMessage<Reply>(body, types);
  if (decoded.ok && decoded.message.id !== expectedId) {
    if (decoded.message.type === "password_response") decoded.message.password.fill(0);
    return fail(PROTOCOL_ERRORS.ID_MISMATCH);
  }
  return decoded;
}

/**
 * A frame of length 0, sent to a waiting helper while pi runs. A helper that hears none for
 * {@link KEEPALIVE_SILENCE_MS} gives up, so a stopped pi never hangs the tool call (ADR 0008).
 */
export const KEEPALIVE: Uint8Array = new Uint8Array(4);
/** How often the server sends {@link KEEPALIVE}. */
export const KEEPALIVE_INTERVAL_MS = 500;
/** Silence after which the helper stops waiting. */
export const KEEPALIVE_SILENCE_MS = 6000;

/**
 * Reads one frame from a stream. The size cap applies as soon as the prefix is known, so a peer
 * cannot make it buffer more than {@link MAX_FRAME_BYTES} plus one chunk; bytes after the frame
 * are an error. With `keepalives`, {@link KEEPALIVE}s before the frame are skipped.
 */
export class FrameReader {
  #chunks: Uint8Array[] = [];
  #received = 0;
  #expected = -1;
  #done = false;
  readonly #keepalives: boolean;

  constructor(options: { keepalives?: boolean } = {}) {
    this.#keepalives = options.keepalives === true;
  }

  /**
   * Adds a chunk. Returns the frame body once complete, `undefined` while
   * more bytes are needed, or a failure.
   */
  push(
    chunk: Uint8Array,
  ): { ok: true; body: Uint8Array | undefined } | { ok: false; reason: ProtocolError } {
    if (this.#done) return fail(PROTOCOL_ERRORS.TRAILING_BYTES);
    this.#chunks.push(chunk);
    this.#received += chunk.length;
    while (this.#expected < 0 && this.#received >= LENGTH_PREFIX_BYTES) {
      const head = concat(this.#chunks, this.#received);
      this.#chunks = [head];
      this.#expected = new DataView(head.buffer, head.byteOffset).getUint32(0);
      if (this.#expected === 0 && this.#keepalives) {
        this.#chunks = [head.slice(LENGTH_PREFIX_BYTES)];
        head.fill(0);
        this.#received -= LENGTH_PREFIX_BYTES;
        this.#expected = -1;
        continue;
      }
      if (this.#expected > MAX_FRAME_BYTES) return this.#reject(PROTOCOL_ERRORS.FRAME_TOO_LARGE);
    }
    if (this.#expected < 0 || this.#received < LENGTH_PREFIX_BYTES + this.#expected) {
      if (this.#received > LENGTH_PREFIX_BYTES + MAX_FRAME_BYTES) {
        return this.#reject(PROTOCOL_ERRORS.FRAME_TOO_LARGE);
      }
      return { ok: true, body: undefined };
    }
    if (this.#received > LENGTH_PREFIX_BYTES + this.#expected) {
      return this.#reject(PROTOCOL_ERRORS.TRAILING_BYTES);
    }
    const all = concat(this.#chunks, this.#received);
    const body = all.slice(LENGTH_PREFIX_BYTES);
    this.wipe();
    all.fill(0);
    this.#done = true;
    return { ok: true, body };
  }

  /** Zeroes and drops any buffered bytes. */
  wipe(): void {
    for (const c of this.#chunks) c.fill(0);
    this.#chunks = [];
  }

  #reject(reason: ProtocolError): { ok: false; reason: ProtocolError } {
    this.wipe();
    this.#done = true;
    return fail(reason);
  }
}

/**
 * One frame from a connection's `chunks`, or `"closed"` when the peer closed first. Each chunk is
 * copied, then zeroed, so no copy of the frame stays in the caller's buffers.
 */
export async function readFrame(
  chunks: AsyncIterable<Uint8Array>,
  options: { keepalives?: boolean } = {},
): Promise<{ ok: true; body: Uint8Array } | { ok: false; reason: ProtocolError | "closed" }> {
  const reader = new FrameReader(options);
  try {
    for await (const chunk of chunks) {
      // A copy (`Buffer#slice` would be a view): the chunk is zeroed next.
      const step = reader.push(new Uint8Array(chunk));
      chunk.fill(0);
      if (!step.ok) return step;
      if (step.body) return { ok: true, body: step.body };
    }
  } catch {
    // a reset connection ends the frame like a close
  }
  reader.wipe();
  return { ok: false, reason: "closed" };
}

type Header = Record<string, unknown>;

/** Header (fields in {@link MESSAGE_FIELDS} order), then the payload. */
function encodeMessage(message: Message): Uint8Array {
  const fields = message as unknown as Header;
  const header: Header = { v: PROTOCOL_VERSION, type: message.type };
  for (const name of Object.keys(MESSAGE_FIELDS[message.type])) header[name] = fields[name];
  const payload = message.type === "password_response" ? message.password : new Uint8Array(0);
  const headerBytes = encoder.encode(JSON.stringify(header));
  const bodyLength = HEADER_LENGTH_BYTES + headerBytes.length + payload.length;
  const frame = new Uint8Array(LENGTH_PREFIX_BYTES + bodyLength);
  const view = new DataView(frame.buffer);
  view.setUint32(0, bodyLength);
  view.setUint16(LENGTH_PREFIX_BYTES, headerBytes.length);
  frame.set(headerBytes, LENGTH_PREFIX_BYTES + HEADER_LENGTH_BYTES);
  frame.set(payload, LENGTH_PREFIX_BYTES + HEADER_LENGTH_BYTES + headerBytes.length);
  return frame;
}

/** Decodes a body into one of `types`, or the first refusal: size, JSON, version, type, fields. */
function decodeMessage<T extends Message>(
  body: Uint8Array,
  types: readonly T["type"][],
): Decoded<T> {
  if (body.length > MAX_FRAME_BYTES) return fail(PROTOCOL_ERRORS.FRAME_TOO_LARGE);
  if (body.length < HEADER_LENGTH_BYTES) return fail(PROTOCOL_ERRORS.MALFORMED_FRAME);
  const headerLength = new DataView(body.buffer, body.byteOffset, body.length).getUint16(0);
  const payloadStart = HEADER_LENGTH_BYTES + headerLength;
  if (payloadStart > body.length) return fail(PROTOCOL_ERRORS.MALFORMED_FRAME);
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(body.subarray(HEADER_LENGTH_BYTES, payloadStart)));
  } catch {
    return fail(PROTOCOL_ERRORS.MALFORMED_HEADER);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return fail(PROTOCOL_ERRORS.MALFORMED_HEADER);
  }
  const header = parsed as Header;
  if (header.v !== PROTOCOL_VERSION) return fail(PROTOCOL_ERRORS.UNSUPPORTED_VERSION);
  const type = header.type;
  if (typeof type !== "string" || !(types as readonly string[]).includes(type)) {
    return fail(PROTOCOL_ERRORS.UNEXPECTED_TYPE);
  }
  const checks: Record<string, (v: unknown) => boolean | ProtocolError> =
    MESSAGE_FIELDS[type as MessageType];
  if (!hasExactKeys(header, ["v", "type", ...Object.keys(checks)])) {
    return fail(PROTOCOL_ERRORS.BAD_FIELD);
  }
  const message: Header = { type };
  for (const [name, check] of Object.entries(checks)) {
    const verdict = check(header[name]);
    if (verdict !== true) return fail(verdict === false ? PROTOCOL_ERRORS.BAD_FIELD : verdict);
    message[name] = header[name];
  }
  const payload = body.slice(payloadStart);
  if (type !== "password_response") {
    if (payload.length !== 0) return fail(PROTOCOL_ERRORS.BAD_FIELD);
  } else {
    const problem = passwordProblem(payload);
    if (problem) {
      payload.fill(0);
      return fail(problem);
    }
    message.password = payload;
  }
  return { ok: true, message: message as unknown as T };
}

function checkPrompt(v: unknown): boolean | ProtocolError {
  if (typeof v !== "string") return false;
  return encoder.encode(v).length > MAX_PROMPT_BYTES || v.includes("\0")
    ? PROTOCOL_ERRORS.PROMPT_TOO_LONG
    : true;
}

function checkLabel(v: unknown): boolean {
  return typeof v === "string" && encoder.encode(v).length <= MAX_LABEL_BYTES && !v.includes("\0");
}

function isCwd(v: unknown): boolean {
  // deno-lint-ignore no-control-regex -- control characters are exactly what is refused
  return typeof v === "string" && v.startsWith("/") && !/[\x00-\x1f\x7f]/.test(v);
}

function isSecretArgv(v: unknown): boolean {
  return Array.isArray(v) && v.length > 0 && v.length <= MAX_SECRET_ARGS &&
    v.every((a) => typeof a === "string" && !a.includes("\0"));
}

/** Why `password` cannot be sent (too long, a line break or NUL), or `undefined`. */
export function passwordProblem(password: Uint8Array): ProtocolError | undefined {
  if (password.length > MAX_PASSWORD_BYTES) return PROTOCOL_ERRORS.PASSWORD_TOO_LONG;
  if (password.some((b) => b === 0x0a || b === 0x0d || b === 0)) {
    return PROTOCOL_ERRORS.PASSWORD_HAS_LINE_BREAK;
  }
  return undefined;
}

function hasExactKeys(header: Header, keys: readonly string[]): boolean {
  return Object.keys(header).length === keys.length && keys.every((k) => Object.hasOwn(header, k));
}

function isRequestId(v: unknown): v is string {
  return typeof v === "string" && new RegExp(`^[0-9a-f]{${REQUEST_ID_HEX_LENGTH}}$`).test(v);
}

function isPid(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v > 0 && v <= 0x3fffffff;
}

function fail(reason: ProtocolError): { ok: false; reason: ProtocolError } {
  return { ok: false, reason };
}

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function bytesToHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}
