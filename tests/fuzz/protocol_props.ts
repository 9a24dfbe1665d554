/**
 * Properties of the askpass wire protocol (`askpass/protocol.ts`): the
 * decoders never throw and never accept anything but the exact message that
 * was signed with the session key; caps hold even on validly signed frames;
 * round trips are exact; the frame reader reassembles any split and refuses
 * oversized frames without buffering them.
 *
 * @module
 */
import fc from "fast-check";
import {
  type Decoded,
  decodeReply,
  decodeRequest,
  DENY_REASONS,
  type DenyReason,
  encodeDenied,
  encodeRequest,
  encodeResponse,
  FrameReader,
  importSessionKey,
  MAX_FRAME_BYTES,
  MAX_PASSWORD_BYTES,
  MAX_PROMPT_BYTES,
  type PasswordRequest,
  PROTOCOL_ERRORS,
  PROTOCOL_VERSION,
  type ProtocolError,
  type Reply,
} from "../../askpass/protocol.ts";
import {
  checkAsync,
  checkSync,
  expect,
  type FuzzOptions,
  type FuzzProperty,
  sameBytes,
} from "./common.ts";

const utf8 = new TextEncoder();
const LENGTH_PREFIX = 4;
const HEADER_LENGTH = 2;
/** The HMAC-SHA256 at the end of every body. */
const MAC_BYTES = 32;

// --- generators -------------------------------------------------------------

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A session key as the extension hands it to the helper (64 lowercase hex). */
export const keyHexArb: fc.Arbitrary<string> = fc.uint8Array({ minLength: 32, maxLength: 32 })
  .map(hex);
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

/** One protocol message, as the test knows it (the expected decode). */
export type Message =
  | { readonly kind: "request"; readonly id: string; readonly prompt: string; readonly pid: number }
  | { readonly kind: "response"; readonly id: string; readonly password: Uint8Array }
  | { readonly kind: "denied"; readonly id: string; readonly reason: DenyReason };

const requestArb: fc.Arbitrary<Message> = fc.record({
  kind: fc.constant("request" as const),
  id: idArb,
  prompt: promptArb,
  pid: pidArb,
});
const replyArb: fc.Arbitrary<Message> = fc.oneof(
  fc.record({ kind: fc.constant("response" as const), id: idArb, password: passwordArb }),
  fc.record({ kind: fc.constant("denied" as const), id: idArb, reason: reasonArb }),
);
/** Requests with short prompts: frames always fit, whatever the prompt's escapes. */
const smallRequestArb: fc.Arbitrary<Message> = fc.record({
  kind: fc.constant("request" as const),
  id: idArb,
  prompt: fc.string({ unit: "binary", maxLength: 120 }).map((s) => s.replaceAll("\0", "")),
  pid: pidArb,
});
/** Any message whose frame fits in MAX_FRAME_BYTES (used where fitting is not the question). */
export const messageArb: fc.Arbitrary<Message> = fc.oneof(smallRequestArb, replyArb);

async function keyOf(hexKey: string): Promise<CryptoKey> {
  const k = await importSessionKey(hexKey);
  if (!k.ok) throw new Error(`importSessionKey refused a generated key: ${k.reason}`);
  return k.key;
}

/** The complete frame (length prefix included) of `m`. */
export function encodeMessage(key: CryptoKey, m: Message): Promise<Uint8Array> {
  switch (m.kind) {
    case "request":
      return encodeRequest(key, { id: m.id, prompt: m.prompt, pid: m.pid });
    case "response":
      return encodeResponse(key, m.id, m.password);
    case "denied":
      return encodeDenied(key, m.id, m.reason);
  }
}

/** Decodes `body` with the decoder the receiver of `m` would use. */
function decodeAs(
  key: CryptoKey,
  body: Uint8Array,
  m: Message,
): Promise<Decoded<PasswordRequest | Reply>> {
  return m.kind === "request" ? decodeRequest(key, body) : decodeReply(key, body, m.id);
}

/** The decoder for the other direction, which must never accept `m`'s frames. */
function decodeOtherDirection(
  key: CryptoKey,
  body: Uint8Array,
  m: Message,
): Promise<Decoded<PasswordRequest | Reply>> {
  return m.kind === "request" ? decodeReply(key, body, m.id) : decodeRequest(key, body);
}

function sameMessage(m: Message, d: PasswordRequest | Reply): boolean {
  if (d.id !== m.id) return false;
  switch (m.kind) {
    case "request":
      return d.type === "password_request" && d.prompt === m.prompt && d.pid === m.pid &&
        Object.keys(d).length === 4;
    case "response":
      return d.type === "password_response" && sameBytes(d.password, m.password) &&
        Object.keys(d).length === 3;
    case "denied":
      return d.type === "password_denied" && d.reason === m.reason && Object.keys(d).length === 3;
  }
}

function describeMessage(m: Message): unknown {
  return m.kind === "response" ? { ...m, password: Array.from(m.password) } : m;
}

/** Strips the length prefix without checking it (the decoders get bodies). */
function bodyOf(frame: Uint8Array): Uint8Array {
  return frame.slice(Math.min(LENGTH_PREFIX, frame.length));
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

/** Bytes that matter to JSON and to the MAC's hex, so inserts and sets hit something. */
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
 * and deletes inside the header), so the edit reaches the JSON and MAC
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
/** A structural edit of the JSON header (or the payload), keeping the original MAC. */
export type Tamper =
  | { readonly op: "set"; readonly field: string; readonly value: unknown }
  | { readonly op: "delete"; readonly field: string }
  | { readonly op: "append"; readonly field: string; readonly value: unknown }
  | { readonly op: "reverse" }
  | { readonly op: "payload"; readonly bytes: Uint8Array }
  | { readonly op: "payload_byte"; readonly at: number; readonly value: number };

const FIELDS = [
  "v",
  "type",
  "id",
  "prompt",
  "pid",
  "mac",
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
  fc.constantFrom(0, -1, 1.5, 0x40000000, 1e300, 2, "1", true, null),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("password_request", "password_response", "password_denied"),
  reasonArb,
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map(hex),
);
const fieldArb = fc.constantFrom(...FIELDS);
/** A different but well-formed value for a signed field: only the MAC can catch it. */
const validFieldChangeArb: fc.Arbitrary<Tamper> = fc.oneof(
  idArb.map((value) => ({ op: "set" as const, field: "id", value })),
  pidArb.map((value) => ({ op: "set" as const, field: "pid", value })),
  fc.string({ unit: "binary", maxLength: 40 }).map((value) => ({
    op: "set" as const,
    field: "prompt",
    value: value.replaceAll("\0", ""),
  })),
  reasonArb.map((value) => ({ op: "set" as const, field: "reason", value })),
  fc.constantFrom("password_request", "password_response", "password_denied").map((value) => ({
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

function splitFrame(
  frame: Uint8Array,
): { entries: Entry[]; payload: Uint8Array; mac: Uint8Array } {
  const headerLength = new DataView(frame.buffer, frame.byteOffset).getUint16(LENGTH_PREFIX);
  const start = LENGTH_PREFIX + HEADER_LENGTH;
  const json = new TextDecoder().decode(frame.subarray(start, start + headerLength));
  return {
    entries: Object.entries(JSON.parse(json) as Record<string, unknown>),
    payload: frame.slice(start + headerLength, frame.length - MAC_BYTES),
    mac: frame.slice(frame.length - MAC_BYTES),
  };
}

/**
 * Serialises entries in order (duplicates and `__proto__` kept as written),
 * then the payload and `mac` (a forger's, or the original one kept).
 */
function buildFrame(entries: readonly Entry[], payload: Uint8Array, mac: Uint8Array): Uint8Array {
  const json = `{${
    entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")
  }}`;
  const header = utf8.encode(json);
  const frame = new Uint8Array(
    LENGTH_PREFIX + HEADER_LENGTH + header.length + payload.length + mac.length,
  );
  const view = new DataView(frame.buffer);
  view.setUint32(0, frame.length - LENGTH_PREFIX);
  view.setUint16(LENGTH_PREFIX, Math.min(header.length, 0xffff));
  frame.set(header, LENGTH_PREFIX + HEADER_LENGTH);
  frame.set(payload, LENGTH_PREFIX + HEADER_LENGTH + header.length);
  frame.set(mac, LENGTH_PREFIX + HEADER_LENGTH + header.length + payload.length);
  return frame;
}

function tamper(frame: Uint8Array, tampers: readonly Tamper[]): Uint8Array {
  const split = splitFrame(frame);
  let { entries, payload } = split;
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
  return buildFrame(entries, payload, split.mac);
}

// --- properties ---------------------------------------------------------------

/** Arbitrary bytes (≤ 5000) as a body: never a throw, never an acceptance. */
export function decodeRandomBytes(options: FuzzOptions): Promise<void> {
  return checkAsync(
    fc.asyncProperty(
      keyHexArb,
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
      async (keyHex, id, body) => {
        const key = await keyOf(keyHex);
        const req = await decodeRequest(key, body);
        const rep = await decodeReply(key, body, id);
        expect(!req.ok && !rep.ok, "random bytes were accepted as a signed message");
      },
    ),
    options,
  );
}

/** A well-formed header for `m` (every field valid, this version): only its MAC is forged. */
function forgedEntries(m: Message): Entry[] {
  const v = PROTOCOL_VERSION;
  switch (m.kind) {
    case "request":
      return [["v", v], ["type", "password_request"], ["id", m.id], ["prompt", m.prompt], [
        "pid",
        m.pid,
      ]];
    case "response":
      return [["v", v], ["type", "password_response"], ["id", m.id]];
    case "denied":
      return [["v", v], ["type", "password_denied"], ["id", m.id], ["reason", m.reason]];
  }
}

/**
 * Forged frames, never accepted and never a throw: well-formed headers with
 * a made-up MAC, and headers of any shape (random fields and values).
 */
export function decodeForgedHeaders(options: FuzzOptions): Promise<void> {
  const macArb = fc.oneof(
    fc.uint8Array({ minLength: MAC_BYTES, maxLength: MAC_BYTES }),
    fc.constantFrom(new Uint8Array(MAC_BYTES), new Uint8Array(MAC_BYTES).fill(0xff)),
  );
  const forgedArb = fc.oneof(
    fc.tuple(messageArb, macArb).map(([m, mac]) => ({
      id: m.id,
      entries: forgedEntries(m),
      payload: m.kind === "response" ? m.password : new Uint8Array(),
      mac,
    })),
    fc.record({
      id: idArb,
      entries: fc.array(fc.tuple(fieldArb, tamperValueArb), { maxLength: 8 }),
      payload: fc.uint8Array({ maxLength: 64 }),
      mac: macArb,
    }).chain((f) =>
      fc.boolean().map((withId) => ({
        ...f,
        entries: withId ? [["id", f.id] as Entry, ...f.entries] : f.entries,
      }))
    ),
  );
  return checkAsync(
    fc.asyncProperty(keyHexArb, forgedArb, async (keyHex, forged) => {
      const key = await keyOf(keyHex);
      const body = bodyOf(buildFrame(forged.entries, forged.payload, forged.mac));
      const req = await decodeRequest(key, body);
      const rep = await decodeReply(key, body, forged.id);
      expect(!req.ok && !rep.ok, "a forged header was accepted", forged.entries);
    }),
    options,
  );
}

/**
 * Flipped, set, inserted, deleted, copied and truncated bytes of a real
 * frame: the decoders never throw, and whatever they accept (through the
 * FrameReader or as a raw body) is exactly the message that was signed.
 */
export function decodeMutatedFrames(options: FuzzOptions): Promise<void> {
  return checkAsync(
    fc.asyncProperty(
      keyHexArb,
      messageArb,
      fc.array(mutationArb, { minLength: 1, maxLength: 4 }),
      fc.boolean(),
      async (keyHex, m, mutations, fixLengths) => {
        const key = await keyOf(keyHex);
        const frame = await encodeMessage(key, m);
        const original = await decodeAs(key, bodyOf(frame), m);
        expect(original.ok, "the unmutated frame must decode", describeMessage(m));
        const mutated = mutate(frame, mutations, fixLengths);
        const bodies = [bodyOf(mutated)];
        const read = new FrameReader().push(mutated.slice());
        if (read.ok && read.body) bodies.push(read.body);
        for (const body of bodies) {
          const d = await decodeAs(key, body, m);
          if (d.ok) {
            expect(sameMessage(m, d.message), "a changed message was accepted", {
              original: describeMessage(m),
              mutations,
            });
          }
          const other = await decodeOtherDirection(key, body, m);
          expect(!other.ok, "a frame was accepted by the decoder of the other direction");
        }
      },
    ),
    options,
  );
}

/**
 * The header of a real frame re-serialised with fields set, deleted,
 * duplicated or reordered (or a new payload), keeping the original MAC: any
 * accepted result is exactly the signed message.
 */
export function decodeTamperedHeaders(options: FuzzOptions): Promise<void> {
  return checkAsync(
    fc.asyncProperty(
      keyHexArb,
      messageArb,
      fc.array(tamperArb, { minLength: 1, maxLength: 3 }),
      async (keyHex, m, tampers) => {
        const key = await keyOf(keyHex);
        const frame = tamper(await encodeMessage(key, m), tampers);
        const d = await decodeAs(key, bodyOf(frame), m);
        if (d.ok) {
          expect(sameMessage(m, d.message), "a tampered header was accepted", {
            original: describeMessage(m),
            tampers,
          });
        }
      },
    ),
    options,
  );
}

/** A frame signed with another session key is never accepted. */
export function decodeWrongKey(options: FuzzOptions): Promise<void> {
  return checkAsync(
    fc.asyncProperty(
      keyHexArb,
      keyHexArb,
      fc.oneof(requestArb, replyArb),
      async (signer, verifier, m) => {
        fc.pre(signer !== verifier);
        const frame = await encodeMessage(await keyOf(signer), m);
        const d = await decodeAs(await keyOf(verifier), bodyOf(frame), m);
        expect(!d.ok, "a frame signed with another key was accepted", describeMessage(m));
      },
    ),
    options,
  );
}

/**
 * Request round trip through the FrameReader: any prompt of ≤ 1024 UTF-8
 * bytes without NUL (the helper's own limit), any id and pid.
 */
export function roundTripRequest(options: FuzzOptions): Promise<void> {
  return checkAsync(
    fc.asyncProperty(keyHexArb, requestArb, async (keyHex, m) => {
      const key = await keyOf(keyHex);
      const frame = await encodeMessage(key, m);
      const read = new FrameReader().push(frame.slice());
      expect(read.ok && read.body !== undefined, "FrameReader refused an encoded request", {
        reason: read.ok ? "incomplete" : read.reason,
        promptUtf8Bytes: m.kind === "request" ? utf8.encode(m.prompt).length : 0,
        frameBytes: frame.length,
        message: m,
      });
      const body = read.ok && read.body ? read.body : new Uint8Array();
      const d = await decodeRequest(key, body);
      expect(d.ok && sameMessage(m, d.message), "request round trip changed the message", {
        result: d.ok ? d.message : d.reason,
        message: m,
      });
    }),
    options,
  );
}

/** Response and denial round trips; another expected id, or the request decoder, refuses them. */
export function roundTripReply(options: FuzzOptions): Promise<void> {
  return checkAsync(
    fc.asyncProperty(keyHexArb, replyArb, idArb, async (keyHex, m, otherId) => {
      const key = await keyOf(keyHex);
      const frame = await encodeMessage(key, m);
      const read = new FrameReader().push(frame.slice());
      expect(read.ok && read.body !== undefined, "FrameReader refused an encoded reply");
      const body = read.ok && read.body ? read.body : new Uint8Array();
      const d = await decodeReply(key, body, m.id);
      expect(d.ok && sameMessage(m, d.message), "reply round trip changed the message", {
        result: d.ok ? (d.message.type === "password_response" ? "password" : d.message) : d.reason,
        message: describeMessage(m),
      });
      if (otherId !== m.id) {
        const wrong = await decodeReply(key, body, otherId);
        expect(!wrong.ok && wrong.reason === PROTOCOL_ERRORS.ID_MISMATCH, "accepted another id");
      }
      expect(!(await decodeRequest(key, body)).ok, "a reply was accepted as a request");
    }),
    options,
  );
}

type OverCap =
  | { readonly case: "long_prompt"; readonly prompt: string }
  | { readonly case: "nul_prompt"; readonly prompt: string }
  | { readonly case: "long_password"; readonly password: Uint8Array }
  | { readonly case: "line_break_password"; readonly password: Uint8Array }
  | { readonly case: "bad_pid"; readonly pid: number }
  | { readonly case: "bad_id"; readonly id: string };

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
);

const OVER_CAP_REASON: Record<OverCap["case"], ProtocolError> = {
  long_prompt: PROTOCOL_ERRORS.PROMPT_TOO_LONG,
  nul_prompt: PROTOCOL_ERRORS.PROMPT_TOO_LONG,
  long_password: PROTOCOL_ERRORS.PASSWORD_TOO_LONG,
  line_break_password: PROTOCOL_ERRORS.PASSWORD_HAS_LINE_BREAK,
  bad_pid: PROTOCOL_ERRORS.BAD_FIELD,
  bad_id: PROTOCOL_ERRORS.BAD_FIELD,
};

/**
 * Caps hold on validly signed frames: over-long or NUL-carrying prompts,
 * over-long or line-breaking passwords, bad pids and ids are refused with
 * their named reason (the signature does not make a value acceptable).
 */
export function capsOnSignedFrames(options: FuzzOptions): Promise<void> {
  return checkAsync(
    fc.asyncProperty(keyHexArb, idArb, pidArb, overCapArb, async (keyHex, id, pid, c) => {
      const key = await keyOf(keyHex);
      let d: Decoded<PasswordRequest | Reply>;
      if (c.case === "long_password" || c.case === "line_break_password") {
        d = await decodeReply(key, bodyOf(await encodeResponse(key, id, c.password)), id);
      } else {
        const request = {
          id: c.case === "bad_id" ? c.id : id,
          prompt: c.case === "long_prompt" || c.case === "nul_prompt" ? c.prompt : "Password: ",
          pid: c.case === "bad_pid" ? c.pid : pid,
        };
        d = await decodeRequest(key, bodyOf(await encodeRequest(key, request)));
      }
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
  return checkAsync(
    fc.asyncProperty(
      keyHexArb,
      messageArb,
      fc.array(fc.nat(), { maxLength: 16 }),
      async (keyHex, m, cuts) => {
        const frame = await encodeMessage(await keyOf(keyHex), m);
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
    name: "protocol: random bytes never decode",
    ciRuns: 300,
    longRuns: 20000,
    run: decodeRandomBytes,
  },
  {
    name: "protocol: forged headers never decode",
    ciRuns: 300,
    longRuns: 20000,
    run: decodeForgedHeaders,
  },
  {
    name: "protocol: mutated frames decode only to the signed message",
    ciRuns: 400,
    longRuns: 30000,
    run: decodeMutatedFrames,
  },
  {
    name: "protocol: tampered headers decode only to the signed message",
    ciRuns: 300,
    longRuns: 20000,
    run: decodeTamperedHeaders,
  },
  {
    name: "protocol: another key's signature is refused",
    ciRuns: 200,
    longRuns: 10000,
    run: decodeWrongKey,
  },
  {
    name: "protocol: request round trip (any prompt ≤ 1024 bytes)",
    ciRuns: 200,
    longRuns: 10000,
    run: roundTripRequest,
  },
  { name: "protocol: reply round trip", ciRuns: 200, longRuns: 10000, run: roundTripReply },
  {
    name: "protocol: caps hold on signed frames",
    ciRuns: 200,
    longRuns: 10000,
    run: capsOnSignedFrames,
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
