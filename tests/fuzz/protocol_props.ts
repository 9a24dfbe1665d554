/**
 * Properties of the askpass wire protocol (`askpass/protocol.ts`). The
 * decoders are held to the protocol's own rules: they never throw, and on
 * any bytes (random, mutated, tampered or built by hand) they accept exactly
 * what an independent reading of the specification accepts
 * ({@link specDecode}: size, version, type, the exact set of header fields,
 * every field check and cap, the payload rules, the expected id), returning
 * exactly the message that reading finds. A request body never decodes as a
 * reply, nor a reply as a request. Round trips are exact and canonical (the
 * encoder writes the documented layout, and a decoded message re-encodes to
 * the same bytes); over-cap values the encoder writes anyway are refused
 * with their named reason; the frame reader reassembles any split and
 * refuses oversized frames without buffering them.
 *
 * @module
 */
import fc from "fast-check";
import {
  type Decoded,
  decodeIncoming,
  decodeReply,
  decodeRequest,
  DENY_REASONS,
  type DenyReason,
  encodeDelivered,
  encodeDenied,
  encodeRequest,
  encodeResponse,
  encodeSecretRequest,
  FrameReader,
  type IncomingRequest,
  MAX_FRAME_BYTES,
  MAX_LABEL_BYTES,
  MAX_PASSWORD_BYTES,
  MAX_PROMPT_BYTES,
  MAX_SECRET_ARGS,
  type PasswordDelivered,
  type PasswordDenied,
  type PasswordRequest,
  type PasswordResponse,
  PROTOCOL_ERRORS,
  PROTOCOL_VERSION,
  type ProtocolError,
  type Reply,
  type SecretRequest,
} from "../../askpass/protocol.ts";
import { checkSync, expect, type FuzzOptions, type FuzzProperty, sameBytes } from "./common.ts";

const utf8 = new TextEncoder();
const LENGTH_PREFIX = 4;
const HEADER_LENGTH = 2;

// --- generators -------------------------------------------------------------

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A request id (32 lowercase hex). */
export const idArb: fc.Arbitrary<string> = fc.uint8Array({ minLength: 16, maxLength: 16 }).map(hex);
const pidArb = fc.oneof(fc.integer({ min: 1, max: 0x3fffffff }), fc.constantFrom(1, 0x3fffffff));
const reasonArb = fc.constantFrom(...Object.values(DENY_REASONS));

/** Characters that JSON.stringify expands most: `\u00XX`, `\"`, `\\`, lone surrogates. */
const JSON_HEAVY = [
  ...Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)),
  '"',
  "\\",
  "\u007f",
  "\u2028",
  "\u2029",
  "\ud800",
  "\udfff",
];
const codeUnitArb = fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n));

/** Large byte arrays that shrink cheaply: a short pattern repeated to a length. */
function bigBytesArb(minLength: number, maxLength: number): fc.Arbitrary<Uint8Array> {
  return fc.tuple(
    fc.integer({ min: minLength, max: maxLength }),
    fc.uint8Array({ minLength: 1, maxLength: 16 }),
  ).map(([n, pattern]) => Uint8Array.from({ length: n }, (_, i) => pattern[i % pattern.length]));
}

/** Keeps whole code points (a lone surrogate counts 3 bytes, as TextEncoder writes it). */
function truncateUtf8(s: string, maxBytes: number): string {
  let out = "";
  let bytes = 0;
  for (const ch of s) {
    const n = utf8.encode(ch).length;
    if (bytes + n > maxBytes) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** Any prompt sudo could pass: ≤ 1024 UTF-8 bytes, no NUL, escape-heavy ones included. */
export const promptArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.string({ unit: "binary", maxLength: 300, size: "max" }),
  fc.string({ unit: "grapheme", maxLength: 200 }),
  fc.string({ unit: codeUnitArb, maxLength: 600 }),
  fc.string({ unit: "binary-ascii", minLength: 900, maxLength: 1100 }),
  fc.string({ unit: fc.constantFrom(...JSON_HEAVY), maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...JSON_HEAVY), minLength: 400, maxLength: 1100 }),
  // The worst case up to the size limit: characters JSON writes as \u00XX, repeated
  // (a length and a short pattern, so a failure shrinks to the exact threshold).
  fc.tuple(
    fc.integer({ min: 0, max: MAX_PROMPT_BYTES }),
    fc.array(fc.constantFrom(...JSON_HEAVY.slice(0, 31)), { minLength: 1, maxLength: 8 }),
  ).map(([n, pattern]) =>
    Array.from({ length: n }, (_, i) => pattern[i % pattern.length]).join("")
  ),
).map((s) => truncateUtf8(s.replaceAll("\0", ""), MAX_PROMPT_BYTES));

/** A password sudo accepts: ≤ 1023 bytes, none of NUL, LF, CR. */
export const passwordArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: MAX_PASSWORD_BYTES }),
  fc.uint8Array({ maxLength: MAX_PASSWORD_BYTES, size: "max" }),
  fc.uint8Array({ minLength: MAX_PASSWORD_BYTES, maxLength: MAX_PASSWORD_BYTES }),
).map((a) => a.map((b) => (b === 0 || b === 0x0a || b === 0x0d ? b + 1 : b)));

/** No NUL, no C0 control character, no DEL: what a secret request's `cwd` may hold after its `/`. */
function withoutControls(s: string): string {
  return Array.from(s).filter((c) => c >= " " && c !== "\u007f").join("");
}

/** One protocol message, exactly as a decoder returns it. */
export type Message = IncomingRequest | Reply;
type MessageType = Message["type"];

const requestArb: fc.Arbitrary<PasswordRequest> = fc.record({
  type: fc.constant("password_request" as const),
  id: idArb,
  prompt: promptArb,
  pid: pidArb,
});
/** Requests with short prompts: frames always fit, whatever the prompt's escapes. */
const smallRequestArb: fc.Arbitrary<PasswordRequest> = fc.record({
  type: fc.constant("password_request" as const),
  id: idArb,
  prompt: fc.string({ unit: "binary", maxLength: 120 }).map((s) => s.replaceAll("\0", "")),
  pid: pidArb,
});
/** One argument of a secret request: short (so 64 of them fit a frame), escape-heavy ones included. */
const argArb = fc.oneof(
  fc.string({ unit: "binary", maxLength: 10 }),
  fc.string({ unit: fc.constantFrom(...JSON_HEAVY), maxLength: 10 }),
).map((s) => s.replaceAll("\0", ""));
/**
 * Any secret request whose frame fits: ≤ 64 arguments of ≤ 10 characters
 * (≤ 63 JSON bytes each), a label of ≤ 256 UTF-8 bytes (≤ 1536 in JSON), an
 * absolute cwd of ≤ 61 characters: under 6.5 KiB in all.
 */
export const secretArb: fc.Arbitrary<SecretRequest> = fc.record({
  type: fc.constant("secret_request" as const),
  id: idArb,
  argv: fc.oneof(
    fc.array(argArb, { minLength: 1, maxLength: MAX_SECRET_ARGS }),
    fc.array(argArb, { minLength: 1, maxLength: MAX_SECRET_ARGS, size: "max" }),
  ),
  label: fc.oneof(
    fc.string({ unit: "binary", maxLength: 300 }),
    fc.string({ unit: fc.constantFrom(...JSON_HEAVY), maxLength: 300 }),
  ).map((s) => truncateUtf8(s.replaceAll("\0", ""), MAX_LABEL_BYTES)),
  cwd: fc.string({ unit: "binary", maxLength: 60 }).map((s) => `/${withoutControls(s)}`),
  allowlisted: fc.boolean(),
  proof: idArb,
  pid: pidArb,
});
const responseArb: fc.Arbitrary<PasswordResponse> = fc.record({
  type: fc.constant("password_response" as const),
  id: idArb,
  password: passwordArb,
});
const deliveredArb: fc.Arbitrary<PasswordDelivered> = fc.record({
  type: fc.constant("password_delivered" as const),
  id: idArb,
});
const deniedArb: fc.Arbitrary<PasswordDenied> = fc.record({
  type: fc.constant("password_denied" as const),
  id: idArb,
  reason: reasonArb,
});
const replyArb: fc.Arbitrary<Reply> = fc.oneof(responseArb, deliveredArb, deniedArb);
/** Any message whose frame fits in MAX_FRAME_BYTES (used where fitting is not the question). */
export const messageArb: fc.Arbitrary<Message> = fc.oneof(
  smallRequestArb,
  secretArb,
  replyArb,
);

/** The complete frame (length prefix included) of `m`, from the product's encoder. */
export function encodeMessage(m: Message): Uint8Array {
  switch (m.type) {
    case "password_request":
      return encodeRequest({ id: m.id, prompt: m.prompt, pid: m.pid });
    case "secret_request":
      return encodeSecretRequest({
        id: m.id,
        argv: m.argv,
        label: m.label,
        cwd: m.cwd,
        allowlisted: m.allowlisted,
        proof: m.proof,
        pid: m.pid,
      });
    case "password_response":
      return encodeResponse(m.id, m.password);
    case "password_delivered":
      return encodeDelivered(m.id);
    case "password_denied":
      return encodeDenied(m.id, m.reason);
  }
}

/** Strips the length prefix without checking it (the decoders get bodies). */
function bodyOf(frame: Uint8Array): Uint8Array {
  return frame.slice(Math.min(LENGTH_PREFIX, frame.length));
}

/** Deep equality of decoded values: plain objects, arrays, byte arrays, primitives. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return a instanceof Uint8Array && b instanceof Uint8Array && sameBytes(a, b);
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((x, i) => sameValue(x, b[i]));
  }
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameValue(ra[k], rb[k]));
  }
  return a === b;
}

/** The same message: same type, the same keys and nothing else, equal values and bytes. */
function sameMessage(a: Message, b: Message): boolean {
  return sameValue(a, b);
}

// --- the specification, read independently of the decoder ---------------------

type FieldCheck = (v: unknown) => boolean;
const LOWER_HEX_32 = /^[0-9a-f]{32}$/;
const isId: FieldCheck = (v) => typeof v === "string" && LOWER_HEX_32.test(v);
const isPid: FieldCheck = (v) =>
  typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 0x3fffffff;
const DENY_REASON_VALUES: readonly unknown[] = Object.values(DENY_REASONS);

/**
 * Every type's fields, in the order the encoder writes them (after `v` and
 * `type`), each with its check as the protocol's documentation states it.
 */
const SPEC_FIELDS: Readonly<Record<MessageType, Readonly<Record<string, FieldCheck>>>> = {
  password_request: {
    id: isId,
    prompt: (v) =>
      typeof v === "string" && utf8.encode(v).length <= MAX_PROMPT_BYTES && !v.includes("\0"),
    pid: isPid,
  },
  secret_request: {
    id: isId,
    argv: (v) =>
      Array.isArray(v) && v.length >= 1 && v.length <= MAX_SECRET_ARGS &&
      v.every((a) => typeof a === "string" && !a.includes("\0")),
    label: (v) =>
      typeof v === "string" && utf8.encode(v).length <= MAX_LABEL_BYTES && !v.includes("\0"),
    cwd: (v) => typeof v === "string" && v.startsWith("/") && withoutControls(v) === v,
    allowlisted: (v) => typeof v === "boolean",
    proof: isId,
    pid: isPid,
  },
  password_response: { id: isId },
  password_delivered: { id: isId },
  password_denied: { id: isId, reason: (v) => DENY_REASON_VALUES.includes(v) },
};
const REQUEST_TYPES: readonly MessageType[] = ["password_request"];
const INCOMING_TYPES: readonly MessageType[] = ["password_request", "secret_request"];
const REPLY_TYPES: readonly MessageType[] = [
  "password_response",
  "password_delivered",
  "password_denied",
];

/** What the specification says of a body: the message it carries, or the rule it breaks. */
type Verdict = { readonly ok: true; readonly message: Message } | {
  readonly ok: false;
  readonly why: string;
};

/**
 * Reads `body` as the protocol documents it: at most MAX_FRAME_BYTES; a u16
 * header length within the body; a UTF-8 JSON object header with `v` exactly
 * PROTOCOL_VERSION, a `type` among `types`, exactly the keys `v`, `type` and
 * that type's fields, each passing its check; an empty payload, except in a
 * `password_response` where it is the password (≤ 1023 bytes, no NUL, CR or
 * LF); and, for a reply, the id `expectedId`.
 */
export function specDecode(
  body: Uint8Array,
  types: readonly MessageType[],
  expectedId?: string,
): Verdict {
  const no = (why: string): Verdict => ({ ok: false, why });
  if (body.length > MAX_FRAME_BYTES) return no("body over MAX_FRAME_BYTES");
  if (body.length < HEADER_LENGTH) return no("no header length");
  const headerEnd = HEADER_LENGTH + ((body[0] << 8) | body[1]);
  if (headerEnd > body.length) return no("header past the body");
  let parsed: unknown;
  try {
    parsed = JSON.parse(
      new TextDecoder("utf-8", { fatal: true }).decode(body.subarray(HEADER_LENGTH, headerEnd)),
    );
  } catch {
    return no("header is not UTF-8 JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return no("header is not an object");
  }
  const header = parsed as Record<string, unknown>;
  if (header.v !== PROTOCOL_VERSION) return no("version");
  const type = header.type;
  if (typeof type !== "string" || !(types as readonly string[]).includes(type)) return no("type");
  const fields = SPEC_FIELDS[type as MessageType];
  const keys = Object.keys(header).sort();
  const wanted = ["v", "type", ...Object.keys(fields)].sort();
  if (keys.length !== wanted.length || keys.some((k, i) => k !== wanted[i])) return no("keys");
  const message: Record<string, unknown> = { type };
  for (const [name, check] of Object.entries(fields)) {
    if (!check(header[name])) return no(`field ${name}`);
    message[name] = header[name];
  }
  const payload = body.slice(headerEnd);
  if (type === "password_response") {
    if (payload.length > MAX_PASSWORD_BYTES) return no("password too long");
    if (payload.some((b) => b === 0 || b === 0x0a || b === 0x0d)) return no("password byte");
    message.password = payload;
  } else if (payload.length !== 0) {
    return no("payload on a message without one");
  }
  if (expectedId !== undefined && header.id !== expectedId) return no("id mismatch");
  return { ok: true, message: message as unknown as Message };
}

/** The header entries the encoder writes for `m`, in its order. */
function canonicalEntries(m: Message): Entry[] {
  const fields = m as unknown as Record<string, unknown>;
  return [
    ["v", PROTOCOL_VERSION],
    ["type", m.type],
    ...Object.keys(SPEC_FIELDS[m.type]).map((name): Entry => [name, fields[name]]),
  ];
}

function payloadOf(m: Message): Uint8Array {
  return m.type === "password_response" ? m.password : new Uint8Array();
}

/** The three decoders, each with the types it may return and whether it checks the id. */
const DECODERS: readonly {
  readonly name: string;
  readonly types: readonly MessageType[];
  readonly checksId: boolean;
  readonly decode: (body: Uint8Array, expectedId: string) => Decoded<Message>;
}[] = [
  {
    name: "decodeRequest",
    types: REQUEST_TYPES,
    checksId: false,
    decode: (body) => decodeRequest(body),
  },
  {
    name: "decodeIncoming",
    types: INCOMING_TYPES,
    checksId: false,
    decode: (body) => decodeIncoming(body),
  },
  {
    name: "decodeReply",
    types: REPLY_TYPES,
    checksId: true,
    decode: (body, id) => decodeReply(body, id),
  },
];

/**
 * Runs every decoder on `body` (a copy each, so a decoder's zeroing cannot
 * reach the others) and checks each against {@link specDecode} (a reply
 * decoder expecting `expectedId`): accepted
 * exactly when the specification accepts, with exactly its message; an
 * accepted message re-encodes to a frame that decodes to it again. Never both
 * a request and a reply. Returns the types accepted.
 */
function checkDecoders(body: Uint8Array, expectedId: string, context: unknown): MessageType[] {
  const accepted: MessageType[] = [];
  for (const decoder of DECODERS) {
    const spec = specDecode(body, decoder.types, decoder.checksId ? expectedId : undefined);
    const d = decoder.decode(body.slice(), expectedId);
    expect(d.ok === spec.ok, `${decoder.name} disagrees with the specification`, {
      decoder: d.ok ? "accepted" : d.reason,
      spec: spec.ok ? "accepted" : spec.why,
      body,
      context,
    });
    if (!d.ok || !spec.ok) continue;
    expect(sameMessage(d.message, spec.message), `${decoder.name} returned another message`, {
      decoded: d.message,
      spec: spec.message,
      context,
    });
    const again = decoder.decode(bodyOf(encodeMessage(d.message)), expectedId);
    expect(again.ok && sameMessage(again.message, d.message), "re-encoding changed a message", {
      decoded: d.message,
      again: again.ok ? again.message : again.reason,
    });
    accepted.push(d.message.type);
  }
  const request = accepted.some((t) => INCOMING_TYPES.includes(t));
  const reply = accepted.some((t) => REPLY_TYPES.includes(t));
  expect(!(request && reply), "one body decoded both as a request and as a reply", context);
  return accepted;
}

// --- mutations ----------------------------------------------------------------

/** A byte-level edit of a frame; positions are taken modulo the current length. */
export type Mutation =
  | { readonly op: "flip"; readonly at: number; readonly bit: number }
  | { readonly op: "set"; readonly at: number; readonly value: number }
  | { readonly op: "insert"; readonly at: number; readonly bytes: Uint8Array }
  | { readonly op: "delete"; readonly at: number; readonly count: number }
  | { readonly op: "truncate"; readonly at: number }
  | { readonly op: "copy"; readonly from: number; readonly at: number; readonly count: number };

/** Bytes that matter to JSON and to hex ids, so inserts and sets hit something. */
const interestingByte = fc.oneof(
  fc.integer({ min: 0, max: 255 }),
  fc.constantFrom(...utf8.encode(' "\\:,{}[]0123456789abcdefABCDEF-+.eEnul\t\n')),
);
export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    op: fc.constant("flip" as const),
    at: fc.nat(),
    bit: fc.integer({ min: 0, max: 7 }),
  }),
  fc.record({ op: fc.constant("set" as const), at: fc.nat(), value: interestingByte }),
  fc.record({
    op: fc.constant("insert" as const),
    at: fc.nat(),
    bytes: fc.array(interestingByte, { minLength: 1, maxLength: 8 }).map((a) => Uint8Array.from(a)),
  }),
  fc.record({
    op: fc.constant("delete" as const),
    at: fc.nat(),
    count: fc.integer({ min: 1, max: 16 }),
  }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({
    op: fc.constant("copy" as const),
    from: fc.nat(),
    at: fc.nat(),
    count: fc.integer({ min: 1, max: 40 }),
  }),
);

/**
 * Applies `mutations` to a copy of `frame`. With `fixLengths`, the u32 body
 * length and the u16 header length are then recomputed (following inserts
 * and deletes inside the header), so the edit reaches the JSON and field
 * checks instead of stopping at the framing.
 */
export function mutate(
  frame: Uint8Array,
  mutations: readonly Mutation[],
  fixLengths: boolean,
): Uint8Array {
  const bytes = Array.from(frame);
  const headerStart = LENGTH_PREFIX + HEADER_LENGTH;
  let headerLength = frame.length >= headerStart
    ? new DataView(frame.buffer, frame.byteOffset).getUint16(LENGTH_PREFIX)
    : 0;
  for (const m of mutations) {
    if (m.op === "insert") {
      const at = m.at % (bytes.length + 1);
      bytes.splice(at, 0, ...m.bytes);
      if (at > headerStart && at < headerStart + headerLength) headerLength += m.bytes.length;
      continue;
    }
    if (bytes.length === 0) continue;
    const at = m.at % bytes.length;
    switch (m.op) {
      case "flip":
        bytes[at] ^= 1 << m.bit;
        break;
      case "set":
        bytes[at] = m.value;
        break;
      case "delete": {
        const count = Math.min(m.count, bytes.length - at);
        const lo = Math.max(at, headerStart);
        const hi = Math.min(at + count, headerStart + headerLength);
        if (hi > lo) headerLength -= hi - lo;
        bytes.splice(at, count);
        break;
      }
      case "truncate":
        bytes.length = at;
        break;
      case "copy": {
        const from = m.from % bytes.length;
        const chunk = bytes.slice(from, from + m.count);
        for (let i = 0; i < chunk.length && at + i < bytes.length; i++) bytes[at + i] = chunk[i];
        break;
      }
    }
  }
  const out = Uint8Array.from(bytes);
  if (fixLengths && out.length >= headerStart) {
    const view = new DataView(out.buffer);
    view.setUint32(0, out.length - LENGTH_PREFIX);
    view.setUint16(LENGTH_PREFIX, Math.max(0, Math.min(0xffff, headerLength)));
  }
  return out;
}

// --- header tampering (structure-aware) ---------------------------------------

type Entry = readonly [string, unknown];
/** A structural edit of the JSON header (or the payload) of a real frame. */
export type Tamper =
  | { readonly op: "set"; readonly field: string; readonly value: unknown }
  | { readonly op: "delete"; readonly field: string }
  | { readonly op: "append"; readonly field: string; readonly value: unknown }
  | { readonly op: "reverse" }
  | { readonly op: "payload"; readonly bytes: Uint8Array }
  | { readonly op: "payload_byte"; readonly at: number; readonly value: number };

const MESSAGE_TYPES: readonly MessageType[] = [...INCOMING_TYPES, ...REPLY_TYPES];
const FIELDS = [
  "v",
  "type",
  "id",
  "prompt",
  "pid",
  "argv",
  "label",
  "cwd",
  "allowlisted",
  "proof",
  "reason",
  "password",
  "__proto__",
  "constructor",
  "",
];
const tamperValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  idArb,
  pidArb,
  fc.constantFrom(0, -1, 1.5, 0x40000000, 1e300, 4, 6, "5", true, false, null, [], "/", "tmp"),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(...MESSAGE_TYPES),
  reasonArb,
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 }),
);
const fieldArb = fc.constantFrom(...FIELDS);
/**
 * A different but well-formed value for a field, or another type: the
 * result may be a valid message, and then the decoders must return exactly it.
 */
const validFieldChangeArb: fc.Arbitrary<Tamper> = fc.oneof(
  idArb.map((value) => ({ op: "set" as const, field: "id", value })),
  idArb.map((value) => ({ op: "set" as const, field: "proof", value })),
  pidArb.map((value) => ({ op: "set" as const, field: "pid", value })),
  fc.string({ unit: "binary", maxLength: 40 }).map((value) => ({
    op: "set" as const,
    field: "prompt",
    value: value.replaceAll("\0", ""),
  })),
  fc.array(argArb, { minLength: 1, maxLength: 4 }).map((value) => ({
    op: "set" as const,
    field: "argv",
    value,
  })),
  fc.boolean().map((value) => ({ op: "set" as const, field: "allowlisted", value })),
  reasonArb.map((value) => ({ op: "set" as const, field: "reason", value })),
  fc.constantFrom(...MESSAGE_TYPES).map((value) => ({
    op: "set" as const,
    field: "type",
    value,
  })),
);
export const tamperArb: fc.Arbitrary<Tamper> = fc.oneof(
  { weight: 3, arbitrary: validFieldChangeArb },
  fc.record({ op: fc.constant("set" as const), field: fieldArb, value: tamperValueArb }),
  fc.record({ op: fc.constant("delete" as const), field: fieldArb }),
  fc.record({ op: fc.constant("append" as const), field: fieldArb, value: tamperValueArb }),
  fc.record({ op: fc.constant("reverse" as const) }),
  fc.record({ op: fc.constant("payload" as const), bytes: fc.uint8Array({ maxLength: 64 }) }),
  fc.record({
    op: fc.constant("payload_byte" as const),
    at: fc.nat(),
    value: fc.integer({ min: 1, max: 255 }),
  }),
);

function splitFrame(frame: Uint8Array): { entries: Entry[]; payload: Uint8Array } {
  const headerLength = new DataView(frame.buffer, frame.byteOffset).getUint16(LENGTH_PREFIX);
  const start = LENGTH_PREFIX + HEADER_LENGTH;
  const json = new TextDecoder().decode(frame.subarray(start, start + headerLength));
  return {
    entries: Object.entries(JSON.parse(json) as Record<string, unknown>),
    payload: frame.slice(start + headerLength),
  };
}

/** Serialises entries in order (duplicates and `__proto__` kept as written), then the payload. */
function buildFrame(entries: readonly Entry[], payload: Uint8Array): Uint8Array {
  const json = `{${
    entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")
  }}`;
  const header = utf8.encode(json);
  const frame = new Uint8Array(LENGTH_PREFIX + HEADER_LENGTH + header.length + payload.length);
  const view = new DataView(frame.buffer);
  view.setUint32(0, frame.length - LENGTH_PREFIX);
  view.setUint16(LENGTH_PREFIX, Math.min(header.length, 0xffff));
  frame.set(header, LENGTH_PREFIX + HEADER_LENGTH);
  frame.set(payload, LENGTH_PREFIX + HEADER_LENGTH + header.length);
  return frame;
}

function tamper(frame: Uint8Array, tampers: readonly Tamper[]): Uint8Array {
  let { entries, payload } = splitFrame(frame);
  for (const t of tampers) {
    switch (t.op) {
      case "set":
        entries = entries.some(([k]) => k === t.field)
          ? entries.map(([k, v]) => (k === t.field ? [k, t.value] : [k, v]))
          : [...entries, [t.field, t.value]];
        break;
      case "delete":
        entries = entries.filter(([k]) => k !== t.field);
        break;
      case "append":
        entries = [...entries, [t.field, t.value]];
        break;
      case "reverse":
        entries = [...entries].reverse();
        break;
      case "payload":
        payload = t.bytes;
        break;
      case "payload_byte":
        if (payload.length > 0) {
          payload = payload.slice();
          payload[t.at % payload.length] = t.value;
        }
        break;
    }
  }
  return buildFrame(entries, payload);
}

// --- properties ---------------------------------------------------------------

/**
 * Arbitrary bytes (≤ 5000) as a body: no decoder throws, and each accepts
 * exactly what the specification accepts (for random bytes, in practice
 * nothing).
 */
export function decodeRandomBytes(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(
      idArb,
      fc.oneof(
        fc.uint8Array({ maxLength: 5000 }),
        fc.uint8Array({ maxLength: 5000, size: "max" }),
        // A plausible header length and a JSON-ish start, so the JSON parser gets input.
        fc.tuple(
          fc.integer({ min: 0, max: 600 }),
          fc.string({ unit: "binary", maxLength: 600, size: "medium" }),
        ).map(
          ([n, s]) => {
            const text = utf8.encode(`{${s}`);
            const body = new Uint8Array(HEADER_LENGTH + text.length);
            new DataView(body.buffer).setUint16(0, Math.min(n, text.length));
            body.set(text, HEADER_LENGTH);
            return body;
          },
        ),
      ),
      (id, body) => {
        checkDecoders(body, id, "random bytes");
      },
    ),
    options,
  );
}

/**
 * Headers written by hand rather than by the encoder. A valid message's
 * fields in any order, with its payload: the receiver's decoders accept it
 * and return exactly that message (field order is not part of the message).
 * Headers of any shape (random fields and values, with or without a valid
 * `v`, `type` and `id`, any payload): decoded exactly as the specification
 * reads them, never a throw.
 */
export function decodeHandBuiltHeaders(options: FuzzOptions): Promise<void> {
  const reorderedArb = messageArb.chain((m) => {
    const entries = canonicalEntries(m);
    return fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length })
      .map((shuffled) => ({ shape: "reordered" as const, m, entries: shuffled }));
  });
  const anyShapeArb = fc.record({
    shape: fc.constant("any" as const),
    id: idArb,
    v: fc.boolean(),
    type: fc.option(fc.constantFrom(...MESSAGE_TYPES)),
    withId: fc.boolean(),
    entries: fc.array(fc.tuple(fieldArb, tamperValueArb), { maxLength: 8 }),
    payload: fc.oneof(fc.constant(new Uint8Array()), fc.uint8Array({ maxLength: 64 })),
  });
  return checkSync(
    fc.property(fc.oneof(reorderedArb, anyShapeArb), (built) => {
      if (built.shape === "reordered") {
        const { m, entries } = built;
        const body = bodyOf(buildFrame(entries, payloadOf(m)));
        const accepted = checkDecoders(body, m.id, { message: m, entries });
        expect(accepted.includes(m.type), "a valid hand-built header was refused", {
          message: m,
          entries,
        });
        return;
      }
      const entries: Entry[] = [
        ...(built.v ? [["v", PROTOCOL_VERSION] as Entry] : []),
        ...(built.type !== null ? [["type", built.type] as Entry] : []),
        ...(built.withId ? [["id", built.id] as Entry] : []),
        ...built.entries,
      ];
      checkDecoders(bodyOf(buildFrame(entries, built.payload)), built.id, entries);
    }),
    options,
  );
}

/**
 * Flipped, set, inserted, deleted, copied and truncated bytes of a real
 * frame: the decoders never throw, and whatever they accept (through the
 * FrameReader or as a raw body) is a message the specification accepts,
 * exactly as it reads it. An edit may well yield another valid message.
 */
export function decodeMutatedFrames(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(
      messageArb,
      fc.array(mutationArb, { minLength: 1, maxLength: 4 }),
      fc.boolean(),
      (m, mutations, fixLengths) => {
        const frame = encodeMessage(m);
        const original = checkDecoders(bodyOf(frame), m.id, { message: m });
        expect(original.includes(m.type), "the unmutated frame must decode", m);
        const mutated = mutate(frame, mutations, fixLengths);
        const bodies = [bodyOf(mutated)];
        const read = new FrameReader().push(mutated.slice());
        if (read.ok && read.body) bodies.push(read.body);
        for (const body of bodies) checkDecoders(body, m.id, { message: m, mutations });
      },
    ),
    options,
  );
}

/**
 * The header of a real frame re-serialised with fields set (to valid or
 * invalid values), deleted, duplicated or reordered, or a new payload:
 * accepted exactly when the result is a valid message, and then as exactly
 * that message, whatever the original was.
 */
export function decodeTamperedHeaders(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(
      messageArb,
      fc.array(tamperArb, { minLength: 1, maxLength: 3 }),
      (m, tampers) => {
        const frame = tamper(encodeMessage(m), tampers);
        checkDecoders(bodyOf(frame), m.id, { message: m, tampers });
      },
    ),
    options,
  );
}

/**
 * Encodes `m` and checks the round trip: the frame is exactly the documented
 * layout (`v`, `type`, then the type's fields in order, as JSON, then the
 * payload); the FrameReader returns its body; each decoder for `m`'s type
 * returns exactly `m`, which re-encodes to the same bytes (canonical); every
 * other decoder refuses it as `unexpected_type`; a reply for another id is
 * refused as `id_mismatch`.
 */
function checkRoundTrip(m: Message, otherId: string): void {
  const frame = encodeMessage(m);
  expect(
    sameBytes(frame, buildFrame(canonicalEntries(m), payloadOf(m))),
    "the encoder left the documented layout",
    m,
  );
  const read = new FrameReader().push(frame.slice());
  expect(read.ok && read.body !== undefined, "FrameReader refused an encoded message", {
    reason: read.ok ? "incomplete" : read.reason,
    promptUtf8Bytes: m.type === "password_request" ? utf8.encode(m.prompt).length : 0,
    frameBytes: frame.length,
    message: m,
  });
  const body = read.ok && read.body ? read.body : new Uint8Array();
  for (const decoder of DECODERS) {
    const d = decoder.decode(body.slice(), m.id);
    if (decoder.types.includes(m.type)) {
      expect(d.ok && sameMessage(d.message, m), `${decoder.name} changed the message`, {
        result: d.ok ? d.message : d.reason,
        message: m,
      });
      if (d.ok) {
        expect(sameBytes(encodeMessage(d.message), frame), "re-encoding gave other bytes", m);
      }
    } else {
      expect(
        !d.ok && d.reason === PROTOCOL_ERRORS.UNEXPECTED_TYPE,
        `${decoder.name} did not refuse a ${m.type}`,
        d.ok ? d.message : d.reason,
      );
    }
  }
  if (REPLY_TYPES.includes(m.type) && otherId !== m.id) {
    const wrong = decodeReply(body.slice(), otherId);
    expect(!wrong.ok && wrong.reason === PROTOCOL_ERRORS.ID_MISMATCH, "accepted another id");
  }
}

/**
 * Request round trip through the FrameReader: any prompt of ≤ 1024 UTF-8
 * bytes without NUL (the helper's own limit), any id and pid, fits a frame
 * and comes back exactly from `decodeRequest` and `decodeIncoming`.
 */
export function roundTripRequest(options: FuzzOptions): Promise<void> {
  return checkSync(fc.property(requestArb, (m) => checkRoundTrip(m, m.id)), options);
}

/** Secret request round trip: back exactly from `decodeIncoming`, refused by the others. */
export function roundTripSecretRequest(options: FuzzOptions): Promise<void> {
  return checkSync(fc.property(secretArb, (m) => checkRoundTrip(m, m.id)), options);
}

/** Response, delivery and denial round trips; another expected id, or a request decoder, refuses them. */
export function roundTripReply(options: FuzzOptions): Promise<void> {
  return checkSync(fc.property(replyArb, idArb, checkRoundTrip), options);
}

type OverCap =
  | { readonly case: "long_prompt"; readonly prompt: string }
  | { readonly case: "nul_prompt"; readonly prompt: string }
  | { readonly case: "long_password"; readonly password: Uint8Array }
  | { readonly case: "line_break_password"; readonly password: Uint8Array }
  | { readonly case: "bad_pid"; readonly pid: number }
  | { readonly case: "bad_id"; readonly id: string }
  | { readonly case: "bad_secret_field"; readonly field: string; readonly value: unknown }
  | { readonly case: "bad_reason"; readonly reason: string }
  | { readonly case: "bad_version"; readonly v: unknown };

const secretFieldArb = (field: string, value: fc.Arbitrary<unknown>) =>
  value.map((v) => ({ case: "bad_secret_field" as const, field, value: v }));

const overCapArb: fc.Arbitrary<OverCap> = fc.oneof(
  fc.record({
    case: fc.constant("long_prompt" as const),
    // Printable ASCII (one byte, at most two in JSON): over the prompt cap, within the frame cap.
    prompt: fc.string({
      unit: "grapheme-ascii",
      minLength: MAX_PROMPT_BYTES + 1,
      maxLength: 1900,
    }),
  }),
  fc.record({
    case: fc.constant("long_prompt" as const),
    // 1024 < UTF-8 bytes, but few characters (3- and 4-byte code points).
    prompt: fc.string({
      unit: fc.constantFrom("\u20ac", "\u{1f600}", "\uffff", "a"),
      maxLength: 700,
    }).map((s) => (utf8.encode(s).length > MAX_PROMPT_BYTES ? s : s + "\u20ac".repeat(342))),
  }),
  fc.record({
    case: fc.constant("nul_prompt" as const),
    prompt: fc.tuple(fc.string({ maxLength: 100 }), fc.string({ maxLength: 100 })).map(([a, b]) =>
      `${a}\0${b}`
    ),
  }),
  fc.record({
    case: fc.constant("long_password" as const),
    password: fc.uint8Array({ minLength: MAX_PASSWORD_BYTES + 1, maxLength: 3000, min: 0x20 }),
  }),
  fc.record({
    case: fc.constant("line_break_password" as const),
    password: fc.tuple(
      passwordArb,
      fc.nat(),
      fc.constantFrom(0, 0x0a, 0x0d),
    ).map(([p, at, bad]) => {
      const short = p.slice(0, MAX_PASSWORD_BYTES - 1);
      const i = at % (short.length + 1);
      return Uint8Array.from([...short.slice(0, i), bad, ...short.slice(i)]);
    }),
  }),
  fc.record({
    case: fc.constant("bad_pid" as const),
    pid: fc.oneof(
      fc.constantFrom(0, -1, 0x40000000, 1.5, Number.NaN, Infinity, -0.5, 2 ** 53),
      fc.double().filter((d) => !(Number.isInteger(d) && d > 0 && d <= 0x3fffffff)),
    ),
  }),
  fc.record({
    case: fc.constant("bad_id" as const),
    id: fc.oneof(
      idArb.map((s) => s.toUpperCase()).filter((s) => /[A-F]/.test(s)),
      fc.string({ maxLength: 40 }).filter((s) => !/^[0-9a-f]{32}$/.test(s)),
      idArb.map((s) => `${s}0`),
    ),
  }),
  secretFieldArb(
    "argv",
    fc.oneof(
      fc.constantFrom([], [1], ["a", null], "ls", null),
      fc.array(fc.string({ maxLength: 3 }), { minLength: MAX_SECRET_ARGS + 1, maxLength: 80 }),
      fc.tuple(fc.array(argArb, { maxLength: 4 }), fc.string({ maxLength: 6 }), fc.string())
        .map(([args, a, b]) => [...args, `${a}\0${b}`]),
    ),
  ),
  secretFieldArb(
    "label",
    fc.oneof(
      fc.string({ unit: "grapheme-ascii", minLength: MAX_LABEL_BYTES + 1, maxLength: 400 }),
      fc.tuple(fc.string({ maxLength: 50 }), fc.string({ maxLength: 50 })).map(([a, b]) =>
        `${a}\0${b}`
      ),
      fc.constantFrom(null, 7, ["x"]),
    ),
  ),
  secretFieldArb(
    "cwd",
    fc.oneof(
      fc.constantFrom("", "tmp", "./x", "/a\nb", "/a\u007f", "/\0", "/x\ty", null),
      fc.string({ maxLength: 20 }).filter((s) => !s.startsWith("/")),
      fc.tuple(
        fc.string({ maxLength: 10 }),
        fc.integer({ min: 0, max: 0x1f }),
        fc.string({ maxLength: 10 }),
      ).map(([a, c, b]) => `/${a}${String.fromCharCode(c)}${b}`),
    ),
  ),
  secretFieldArb(
    "proof",
    fc.oneof(
      idArb.map((s) => s.toUpperCase()).filter((s) => /[A-F]/.test(s)),
      idArb.map((s) => s.slice(1)),
      fc.constantFrom(null, 0, ""),
    ),
  ),
  secretFieldArb("allowlisted", fc.constantFrom(0, 1, "true", null, [])),
  fc.record({
    case: fc.constant("bad_reason" as const),
    reason: fc.string({ maxLength: 20 }).filter((s) => !DENY_REASON_VALUES.includes(s)),
  }),
  fc.record({
    case: fc.constant("bad_version" as const),
    v: fc.oneof(
      fc.integer().filter((n) => n !== PROTOCOL_VERSION),
      fc.constantFrom(PROTOCOL_VERSION - 1, PROTOCOL_VERSION + 1, `${PROTOCOL_VERSION}`, null),
      fc.constantFrom(PROTOCOL_VERSION + 0.5, [PROTOCOL_VERSION], true),
    ),
  }),
);

const OVER_CAP_REASON: Record<OverCap["case"], ProtocolError> = {
  long_prompt: PROTOCOL_ERRORS.PROMPT_TOO_LONG,
  nul_prompt: PROTOCOL_ERRORS.PROMPT_TOO_LONG,
  long_password: PROTOCOL_ERRORS.PASSWORD_TOO_LONG,
  line_break_password: PROTOCOL_ERRORS.PASSWORD_HAS_LINE_BREAK,
  bad_pid: PROTOCOL_ERRORS.BAD_FIELD,
  bad_id: PROTOCOL_ERRORS.BAD_FIELD,
  bad_secret_field: PROTOCOL_ERRORS.BAD_FIELD,
  bad_reason: PROTOCOL_ERRORS.BAD_FIELD,
  bad_version: PROTOCOL_ERRORS.UNSUPPORTED_VERSION,
};

/** The receiver's decode of the frame the encoder writes for `c` (a hand-built one for a version). */
function decodeOverCap(c: OverCap, id: string, pid: number): Decoded<Message> {
  switch (c.case) {
    case "long_password":
    case "line_break_password":
      return decodeReply(bodyOf(encodeResponse(id, c.password)), id);
    case "bad_reason":
      return decodeReply(bodyOf(encodeDenied(id, c.reason as DenyReason)), id);
    case "bad_version": {
      const entries = canonicalEntries({ type: "password_delivered", id }).slice(1);
      return decodeReply(bodyOf(buildFrame([["v", c.v], ...entries], new Uint8Array())), id);
    }
    case "bad_secret_field": {
      const base = {
        id,
        argv: ["/usr/bin/true"],
        label: "a label",
        cwd: "/",
        allowlisted: false,
        proof: id,
        pid,
      };
      const request = { ...base, [c.field]: c.value } as unknown as Omit<SecretRequest, "type">;
      return decodeIncoming(bodyOf(encodeSecretRequest(request)));
    }
    default: {
      const request = {
        id: c.case === "bad_id" ? c.id : id,
        prompt: c.case === "long_prompt" || c.case === "nul_prompt" ? c.prompt : "Password: ",
        pid: c.case === "bad_pid" ? c.pid : pid,
      };
      return decodeIncoming(bodyOf(encodeRequest(request)));
    }
  }
}

/**
 * The encoder checks nothing, so the decoders alone enforce the caps:
 * over-long or NUL-carrying prompts, over-long or line-breaking passwords,
 * bad pids and ids, bad secret-request fields, unknown denial reasons and any
 * other version are refused with their named reason.
 */
export function capsOnEncodedFrames(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(idArb, pidArb, overCapArb, (id, pid, c) => {
      const d = decodeOverCap(c, id, pid);
      expect(!d.ok && d.reason === OVER_CAP_REASON[c.case], "over-cap value not refused as named", {
        case: c.case,
        result: d.ok ? "accepted" : d.reason,
      });
    }),
    options,
  );
}

/** Cut points → chunks (copies, so the reader's wiping cannot touch the source). */
function chunksAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let at = 0;
  for (const p of points) {
    chunks.push(bytes.slice(at, p));
    at = p;
  }
  chunks.push(bytes.slice(at));
  return chunks;
}

/** Any split of a valid frame (empty chunks included) yields the same body, then trailing bytes fail. */
export function frameReaderSplits(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(
      messageArb,
      fc.array(fc.nat(), { maxLength: 16 }),
      (m, cuts) => {
        const frame = encodeMessage(m);
        const expected = frame.slice(LENGTH_PREFIX);
        const reader = new FrameReader();
        let received = 0;
        for (const chunk of chunksAt(frame, cuts)) {
          if (received === frame.length) break; // only empty chunks are left
          received += chunk.length;
          const r = reader.push(chunk);
          if (received < frame.length) {
            expect(r.ok && r.body === undefined, "a body or error before the frame was complete");
          } else {
            expect(r.ok && r.body !== undefined && sameBytes(r.body, expected), "wrong body");
          }
        }
        const after = reader.push(new Uint8Array([0]));
        expect(!after.ok && after.reason === PROTOCOL_ERRORS.TRAILING_BYTES, "byte after frame");
      },
    ),
    options,
  );
}

/**
 * A declared length over MAX_FRAME_BYTES is refused by the very push that
 * completes the length prefix (so no more than that one chunk is buffered),
 * and the reader stays closed afterwards.
 */
export function frameReaderOversize(options: FuzzOptions): Promise<void> {
  return checkSync(
    fc.property(
      fc.oneof(
        fc.integer({ min: MAX_FRAME_BYTES + 1, max: 0xffffffff }),
        fc.constantFrom(MAX_FRAME_BYTES + 1, 0xffffffff),
      ),
      fc.oneof(fc.uint8Array({ maxLength: 64 }), bigBytesArb(0, 6000)),
      fc.array(fc.nat(), { maxLength: 12 }),
      (declared, rest, cuts) => {
        const stream = new Uint8Array(LENGTH_PREFIX + rest.length);
        new DataView(stream.buffer).setUint32(0, declared);
        stream.set(rest, LENGTH_PREFIX);
        const reader = new FrameReader();
        let received = 0;
        let refused = false;
        for (const chunk of chunksAt(stream, cuts)) {
          received += chunk.length;
          const r = reader.push(chunk);
          if (refused) {
            expect(!r.ok, "the reader accepted bytes after refusing");
          } else if (received < LENGTH_PREFIX) {
            expect(r.ok && r.body === undefined, "refused before the length was known");
          } else {
            expect(!r.ok && r.reason === PROTOCOL_ERRORS.FRAME_TOO_LARGE, "oversize not refused", {
              declared,
              received,
            });
            refused = true;
          }
        }
      },
    ),
    options,
  );
}

/**
 * Any byte stream in any chunks: while the reader waits for more it has
 * received at most prefix + MAX_FRAME_BYTES bytes; a body it returns has the
 * declared length and the streamed bytes; after a result every push fails.
 */
export function frameReaderBounded(options: FuzzOptions): Promise<void> {
  const streamArb = fc.oneof(
    fc.uint8Array({ maxLength: 64 }),
    bigBytesArb(0, 9000),
    fc.tuple(
      fc.oneof(fc.integer({ min: 0, max: MAX_FRAME_BYTES }), fc.constantFrom(0, MAX_FRAME_BYTES)),
      fc.oneof(fc.uint8Array({ maxLength: 64 }), bigBytesArb(0, 9000)),
    ).map(
      ([declared, rest]) => {
        const s = new Uint8Array(LENGTH_PREFIX + rest.length);
        new DataView(s.buffer).setUint32(0, declared);
        s.set(rest, LENGTH_PREFIX);
        return s;
      },
    ),
  );
  return checkSync(
    fc.property(streamArb, fc.array(fc.nat(), { maxLength: 16 }), (stream, cuts) => {
      const reader = new FrameReader();
      let received = 0;
      let finished = false;
      for (const chunk of chunksAt(stream, cuts)) {
        received += chunk.length;
        const r = reader.push(chunk);
        if (finished) {
          expect(!r.ok, "the reader accepted bytes after its result");
          continue;
        }
        if (r.ok && r.body === undefined) {
          expect(received <= LENGTH_PREFIX + MAX_FRAME_BYTES, "buffered past the cap", received);
          continue;
        }
        finished = true;
        const declared = stream.length >= LENGTH_PREFIX
          ? new DataView(stream.buffer, stream.byteOffset).getUint32(0)
          : -1;
        if (!r.ok) {
          if (r.reason === PROTOCOL_ERRORS.FRAME_TOO_LARGE) {
            expect(declared > MAX_FRAME_BYTES, "refused a frame within the cap", declared);
          } else {
            expect(r.reason === PROTOCOL_ERRORS.TRAILING_BYTES, "unexpected reason", r.reason);
            expect(received > LENGTH_PREFIX + declared, "trailing bytes without any", received);
          }
        }
        if (r.ok && r.body) {
          expect(declared <= MAX_FRAME_BYTES, "returned an oversized body");
          expect(received === LENGTH_PREFIX + declared, "body with trailing bytes", received);
          expect(
            sameBytes(r.body, stream.subarray(LENGTH_PREFIX, LENGTH_PREFIX + declared)),
            "body differs from the streamed bytes",
          );
        }
      }
    }),
    options,
  );
}

/** The protocol suite, in registry form. */
export const PROTOCOL_PROPERTIES: readonly FuzzProperty[] = [
  {
    name: "protocol: random bytes decode only as the specification reads them",
    ciRuns: 300,
    longRuns: 20000,
    run: decodeRandomBytes,
  },
  {
    name: "protocol: hand-built headers decode exactly as the specification reads them",
    ciRuns: 300,
    longRuns: 20000,
    run: decodeHandBuiltHeaders,
  },
  {
    name: "protocol: mutated frames decode only as the specification reads them",
    ciRuns: 400,
    longRuns: 30000,
    run: decodeMutatedFrames,
  },
  {
    name: "protocol: tampered headers decode only as the specification reads them",
    ciRuns: 300,
    longRuns: 20000,
    run: decodeTamperedHeaders,
  },
  {
    name: "protocol: request round trip (any prompt ≤ 1024 bytes)",
    ciRuns: 200,
    longRuns: 10000,
    run: roundTripRequest,
  },
  {
    name: "protocol: secret request round trip",
    ciRuns: 200,
    longRuns: 10000,
    run: roundTripSecretRequest,
  },
  { name: "protocol: reply round trip", ciRuns: 200, longRuns: 10000, run: roundTripReply },
  {
    name: "protocol: caps hold on encoded frames",
    ciRuns: 200,
    longRuns: 10000,
    run: capsOnEncodedFrames,
  },
  {
    name: "frame reader: any split yields the same body",
    ciRuns: 200,
    longRuns: 10000,
    run: frameReaderSplits,
  },
  {
    name: "frame reader: oversize refused at the length prefix",
    ciRuns: 400,
    longRuns: 20000,
    run: frameReaderOversize,
  },
  {
    name: "frame reader: never buffers past the cap",
    ciRuns: 400,
    longRuns: 20000,
    run: frameReaderBounded,
  },
];
