import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  decodeReply,
  decodeRequest,
  DENY_REASONS,
  encodeDenied,
  encodeRequest,
  encodeResponse,
  FrameReader,
  importSessionKey,
  MAX_FRAME_BYTES,
  MAX_PASSWORD_BYTES,
  newRequestId,
  newSessionKeyHex,
  PROTOCOL_ERRORS,
  PROTOCOL_VERSION,
  readFrame,
} from "../../../askpass/protocol.ts";

async function key(hex = newSessionKeyHex()): Promise<CryptoKey> {
  const k = await importSessionKey(hex);
  assert.ok(k.ok);
  return k.key;
}

/** Strips the u32 length prefix the way FrameReader does. */
function body(frame: Uint8Array): Uint8Array {
  const r = new FrameReader().push(frame);
  assert.ok(r.ok && r.body);
  return r.body;
}

describe("protocol", () => {
  it("ids and keys are fresh lowercase hex of the right size", () => {
    const ids = new Set(Array.from({ length: 100 }, newRequestId));
    assert.equal(ids.size, 100);
    for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/);
    assert.match(newSessionKeyHex(), /^[0-9a-f]{64}$/);
  });

  it("rejects malformed session keys", async () => {
    for (const bad of ["", "00", "G".repeat(64), "A".repeat(64), "0".repeat(63), "0".repeat(66)]) {
      const r = await importSessionKey(bad);
      assert.deepEqual(r, { ok: false, reason: PROTOCOL_ERRORS.BAD_SESSION_KEY });
    }
  });

  it("round-trips a request", async () => {
    const k = await key();
    const id = newRequestId();
    const r = await decodeRequest(
      k,
      body(await encodeRequest(k, { id, prompt: "[sudo] senha para movida: ", pid: 4242 })),
    );
    assert.deepEqual(r, {
      ok: true,
      message: { type: "password_request", id, prompt: "[sudo] senha para movida: ", pid: 4242 },
    });
  });

  it("round-trips a response carrying raw bytes, and a denial", async () => {
    const k = await key();
    const id = newRequestId();
    const pw = new TextEncoder().encode("sǎo😀 pass");
    const r = await decodeReply(k, body(await encodeResponse(k, id, pw)), id);
    assert.ok(r.ok && r.message.type === "password_response");
    assert.deepEqual(r.message.password, pw);
    const d = await decodeReply(k, body(await encodeDenied(k, id, DENY_REASONS.TIMEOUT)), id);
    assert.deepEqual(d, { ok: true, message: { type: "password_denied", id, reason: "timeout" } });
  });

  it("refuses a request signed with another key", async () => {
    const frame = await encodeRequest(await key(), { id: newRequestId(), prompt: "p", pid: 1 });
    const r = await decodeRequest(await key(), body(frame));
    assert.deepEqual(r, { ok: false, reason: PROTOCOL_ERRORS.BAD_SIGNATURE });
  });

  it("refuses a tampered field even with the right key", async () => {
    const k = await key();
    const frame = await encodeRequest(k, { id: newRequestId(), prompt: "Password: ", pid: 100 });
    const at = new TextDecoder("latin1").decode(frame).indexOf('"pid":100');
    assert.ok(at > 0);
    const tampered = frame.slice();
    tampered[at + 6] = "2".charCodeAt(0); // same length, different pid
    const r = await decodeRequest(k, body(tampered));
    assert.deepEqual(r, { ok: false, reason: PROTOCOL_ERRORS.BAD_SIGNATURE });
  });

  it("refuses a reply for another request id", async () => {
    const k = await key();
    const frame = await encodeDenied(k, newRequestId(), DENY_REASONS.CANCELLED);
    const r = await decodeReply(k, body(frame), newRequestId());
    assert.deepEqual(r, { ok: false, reason: PROTOCOL_ERRORS.ID_MISMATCH });
  });

  it("refuses a response whose password would break sudo's line", async () => {
    const k = await key();
    const id = newRequestId();
    for (const pw of ["a\nb", "a\rb", "a\0b"]) {
      const r = await decodeReply(
        k,
        body(await encodeResponse(k, id, new TextEncoder().encode(pw))),
        id,
      );
      assert.deepEqual(r, { ok: false, reason: PROTOCOL_ERRORS.PASSWORD_HAS_LINE_BREAK });
    }
    const long = new Uint8Array(MAX_PASSWORD_BYTES + 1).fill(0x61);
    const r = await decodeReply(k, body(await encodeResponse(k, id, long)), id);
    assert.deepEqual(r, { ok: false, reason: PROTOCOL_ERRORS.PASSWORD_TOO_LONG });
  });

  it("refuses prompts over 1 KiB", async () => {
    const k = await key();
    const frame = await encodeRequest(k, { id: newRequestId(), prompt: "x".repeat(1025), pid: 1 });
    assert.deepEqual(await decodeRequest(k, body(frame)), {
      ok: false,
      reason: PROTOCOL_ERRORS.PROMPT_TOO_LONG,
    });
  });

  it("refuses wrong versions, types, extra fields and garbage without throwing", async () => {
    const k = await key();
    const id = newRequestId();
    const good =
      `{"v":${PROTOCOL_VERSION},"type":"password_request","id":"${id}","prompt":"p","pid":1}`;
    const cases: [Uint8Array, string][] = [
      [new Uint8Array(), PROTOCOL_ERRORS.MALFORMED_FRAME],
      [new Uint8Array([0, 50, 1]), PROTOCOL_ERRORS.MALFORMED_FRAME],
      [await signedBody(k, "{nope"), PROTOCOL_ERRORS.MALFORMED_HEADER],
      [await signedBody(k, "[1,2]"), PROTOCOL_ERRORS.MALFORMED_HEADER],
      [new Uint8Array([0, 2, 0xff, 0xfe]), PROTOCOL_ERRORS.MALFORMED_HEADER],
      [
        await signedBody(k, `{"v":${PROTOCOL_VERSION + 1},"type":"password_request"}`),
        PROTOCOL_ERRORS.UNSUPPORTED_VERSION,
      ],
      // Protocol 3's layout (the MAC in the header, none after the payload):
      // an older peer is told its version is wrong, not that it forged.
      [
        unsignedBody(
          `{"v":3,"type":"password_request","id":"${id}","prompt":"p","pid":1,"mac":"${
            "0".repeat(64)
          }"}`,
        ),
        PROTOCOL_ERRORS.UNSUPPORTED_VERSION,
      ],
      [
        await signedBody(k, `{"v":${PROTOCOL_VERSION},"type":"password_response","id":"${id}"}`),
        PROTOCOL_ERRORS.UNEXPECTED_TYPE,
      ],
      [await signedBody(k, good.replace("}", ',"x":1}')), PROTOCOL_ERRORS.BAD_FIELD],
      [
        await signedBody(k, good.replace("}", `,"mac":"${"0".repeat(64)}"}`)),
        PROTOCOL_ERRORS.BAD_FIELD,
      ],
      [await signedBody(k, good.replace(id, "XYZ")), PROTOCOL_ERRORS.BAD_FIELD],
      [await signedBody(k, good.replace('"pid":1', '"pid":-1')), PROTOCOL_ERRORS.BAD_FIELD],
      [await signedBody(k, good, new Uint8Array([1])), PROTOCOL_ERRORS.BAD_FIELD],
      // Right shape, no room for a MAC, a MAC of zeros, a MAC by another key.
      [unsignedBody(good), PROTOCOL_ERRORS.MALFORMED_FRAME],
      [unsignedBody(good, new Uint8Array(32)), PROTOCOL_ERRORS.BAD_SIGNATURE],
      [await signedBody(await key(), good), PROTOCOL_ERRORS.BAD_SIGNATURE],
    ];
    for (const [b, reason] of cases) {
      assert.deepEqual(
        await decodeRequest(k, b),
        { ok: false, reason },
        new TextDecoder().decode(b),
      );
    }
    // The control: the same helper signs a good header that decodes.
    assert.deepEqual(await decodeRequest(k, await signedBody(k, good)), {
      ok: true,
      message: { type: "password_request", id, prompt: "p", pid: 1 },
    });
  });

  it("the MAC covers the bytes sent: the same fields spelled otherwise, with the original MAC, are refused", async () => {
    const k = await key();
    const id = newRequestId();
    const frame = body(await encodeRequest(k, { id, prompt: "Password: ", pid: 100 }));
    const headerLength = new DataView(frame.buffer, frame.byteOffset).getUint16(0);
    const header = new TextDecoder().decode(frame.subarray(2, 2 + headerLength));
    const mac = new Uint8Array(frame.subarray(frame.length - 32));
    // A space after a colon and the keys in another order: the same JSON value.
    for (
      const respelled of [
        header.replace('"pid":100', '"pid": 100'),
        JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(header)).reverse())),
        header.replace('"prompt":"Password: "', '"prompt":"Password\\u003a "'),
      ]
    ) {
      assert.deepEqual(JSON.parse(respelled), JSON.parse(header));
      assert.deepEqual(await decodeRequest(k, unsignedBody(respelled, mac)), {
        ok: false,
        reason: PROTOCOL_ERRORS.BAD_SIGNATURE,
      }, respelled);
    }
    // The encoder writes the fields once, in one order: v, type, then the message's own.
    assert.deepEqual(Object.keys(JSON.parse(header)), ["v", "type", "id", "prompt", "pid"]);
  });
});

/** A body laid out as the module documents it, signed by this test with HMAC-SHA256 itself. */
async function signedBody(
  k: CryptoKey,
  header: string,
  payload = new Uint8Array(),
): Promise<Uint8Array> {
  const unsigned = unsignedBody(header, payload);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, unsigned));
  const out = new Uint8Array(unsigned.length + mac.length);
  out.set(unsigned);
  out.set(mac, unsigned.length);
  return out;
}

/** `u16 header length | header | tail`, without a MAC of its own. */
function unsignedBody(header: string, tail = new Uint8Array()): Uint8Array<ArrayBuffer> {
  const h = new TextEncoder().encode(header);
  const b = new Uint8Array(2 + h.length + tail.length);
  new DataView(b.buffer).setUint16(0, h.length);
  b.set(h, 2);
  b.set(tail, 2 + h.length);
  return b;
}

describe("FrameReader", () => {
  it("assembles a frame from byte-sized chunks", async () => {
    const k = await key();
    const frame = await encodeRequest(k, { id: newRequestId(), prompt: "p", pid: 7 });
    const reader = new FrameReader();
    let got: Uint8Array | undefined;
    for (const byte of frame) {
      const r = reader.push(new Uint8Array([byte]));
      assert.ok(r.ok);
      got = r.body ?? got;
    }
    assert.ok(got);
    assert.ok((await decodeRequest(k, got)).ok);
  });

  it("rejects a declared length over the cap before buffering it", () => {
    const head = new Uint8Array(4);
    new DataView(head.buffer).setUint32(0, MAX_FRAME_BYTES + 1);
    assert.deepEqual(new FrameReader().push(head), {
      ok: false,
      reason: PROTOCOL_ERRORS.FRAME_TOO_LARGE,
    });
  });

  it("rejects bytes after the frame (one message per connection)", () => {
    const frame = new Uint8Array([0, 0, 0, 1, 9, 9]);
    assert.deepEqual(new FrameReader().push(frame), {
      ok: false,
      reason: PROTOCOL_ERRORS.TRAILING_BYTES,
    });
    const reader = new FrameReader();
    assert.ok(reader.push(new Uint8Array([0, 0, 0, 1, 9])).ok);
    assert.deepEqual(reader.push(new Uint8Array([1])), {
      ok: false,
      reason: PROTOCOL_ERRORS.TRAILING_BYTES,
    });
  });
});

describe("readFrame (the helper's and the broker's read loop)", () => {
  /** `bytes` in chunks of `size`, each a fresh buffer kept for inspection. */
  function chunked(bytes: Uint8Array, size: number, seen: Uint8Array[]): AsyncIterable<Uint8Array> {
    return (async function* () {
      for (let i = 0; i < bytes.length; i += size) {
        const chunk = bytes.slice(i, i + size);
        seen.push(chunk);
        yield chunk;
      }
    })();
  }

  it("reads a frame split in small chunks and zeroes every chunk", async () => {
    const k = await key();
    const frame = await encodeResponse(k, newRequestId(), new TextEncoder().encode("s3cret"));
    const seen: Uint8Array[] = [];
    const read = await readFrame(chunked(frame, 7, seen));
    assert.ok(read.ok);
    assert.deepEqual(read.body, frame.slice(4));
    assert.ok(seen.length > 1 && seen.every((c) => c.every((b) => b === 0)));
  });

  it("a Buffer chunk is copied before it is zeroed", async () => {
    const k = await key();
    const frame = await encodeResponse(k, newRequestId(), new TextEncoder().encode("s3cret"));
    const { Buffer } = await import("node:buffer");
    const read = await readFrame((async function* () {
      yield Buffer.from(frame);
    })());
    assert.ok(read.ok);
    assert.deepEqual(read.body, frame.slice(4));
  });

  it("closed before a whole frame, or a frame too large: a named failure", async () => {
    const k = await key();
    const frame = await encodeResponse(k, newRequestId(), new TextEncoder().encode("x"));
    assert.deepEqual(await readFrame(chunked(frame.slice(0, 10), 4, [])), {
      ok: false,
      reason: "closed",
    });
    const huge = new Uint8Array(8);
    new DataView(huge.buffer).setUint32(0, MAX_FRAME_BYTES + 1);
    assert.deepEqual(await readFrame(chunked(huge, 8, [])), {
      ok: false,
      reason: PROTOCOL_ERRORS.FRAME_TOO_LARGE,
    });
    const failing = (async function* () {
      yield frame.slice(0, 3);
      throw new Error("ECONNRESET");
    })();
    assert.deepEqual(await readFrame(failing), { ok: false, reason: "closed" });
  });
});
