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
  MAX_FRAME_BYTES,
  MAX_PASSWORD_BYTES,
  newRequestId,
  PROTOCOL_ERRORS,
  PROTOCOL_VERSION,
  readFrame,
} from "../../../askpass/protocol.ts";

/** Strips the u32 length prefix the way FrameReader does. */
function body(frame: Uint8Array): Uint8Array {
  const r = new FrameReader().push(frame);
  assert.ok(r.ok && r.body);
  return r.body;
}

describe("protocol", () => {
  it("ids are fresh lowercase hex of the right size", () => {
    const ids = new Set(Array.from({ length: 100 }, newRequestId));
    assert.equal(ids.size, 100);
    for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/);
  });

  it("round-trips a request", () => {
    const id = newRequestId();
    const r = decodeRequest(
      body(encodeRequest({ id, prompt: "[sudo] senha para movida: ", pid: 4242 })),
    );
    assert.deepEqual(r, {
      ok: true,
      message: { type: "password_request", id, prompt: "[sudo] senha para movida: ", pid: 4242 },
    });
  });

  it("round-trips a response carrying raw bytes, and a denial", () => {
    const id = newRequestId();
    const pw = new TextEncoder().encode("sǎo😀 pass");
    const r = decodeReply(body(encodeResponse(id, pw)), id);
    assert.ok(r.ok && r.message.type === "password_response");
    assert.deepEqual(r.message.password, pw);
    const d = decodeReply(body(encodeDenied(id, DENY_REASONS.TIMEOUT)), id);
    assert.deepEqual(d, { ok: true, message: { type: "password_denied", id, reason: "timeout" } });
  });

  it("refuses a reply for another request id", () => {
    const frame = encodeDenied(newRequestId(), DENY_REASONS.CANCELLED);
    const r = decodeReply(body(frame), newRequestId());
    assert.deepEqual(r, { ok: false, reason: PROTOCOL_ERRORS.ID_MISMATCH });
  });

  it("refuses a response whose password would break sudo's line", () => {
    const id = newRequestId();
    for (const pw of ["a\nb", "a\rb", "a\0b"]) {
      const r = decodeReply(body(encodeResponse(id, new TextEncoder().encode(pw))), id);
      assert.deepEqual(r, { ok: false, reason: PROTOCOL_ERRORS.PASSWORD_HAS_LINE_BREAK });
    }
    const long = new Uint8Array(MAX_PASSWORD_BYTES + 1).fill(0x61);
    const r = decodeReply(body(encodeResponse(id, long)), id);
    assert.deepEqual(r, { ok: false, reason: PROTOCOL_ERRORS.PASSWORD_TOO_LONG });
  });

  it("refuses prompts over 1 KiB", () => {
    const frame = encodeRequest({ id: newRequestId(), prompt: "x".repeat(1025), pid: 1 });
    assert.deepEqual(decodeRequest(body(frame)), {
      ok: false,
      reason: PROTOCOL_ERRORS.PROMPT_TOO_LONG,
    });
  });

  it("refuses wrong versions, types, extra fields and garbage without throwing", () => {
    const id = newRequestId();
    const good =
      `{"v":${PROTOCOL_VERSION},"type":"password_request","id":"${id}","prompt":"p","pid":1}`;
    const cases: [Uint8Array, string][] = [
      [new Uint8Array(), PROTOCOL_ERRORS.MALFORMED_FRAME],
      [new Uint8Array([0, 50, 1]), PROTOCOL_ERRORS.MALFORMED_FRAME],
      [bodyOf("{nope"), PROTOCOL_ERRORS.MALFORMED_HEADER],
      [bodyOf("[1,2]"), PROTOCOL_ERRORS.MALFORMED_HEADER],
      [new Uint8Array([0, 2, 0xff, 0xfe]), PROTOCOL_ERRORS.MALFORMED_HEADER],
      [
        bodyOf(`{"v":${PROTOCOL_VERSION + 1},"type":"password_request"}`),
        PROTOCOL_ERRORS.UNSUPPORTED_VERSION,
      ],
      // Protocol 4's frame (a MAC after the header): an older peer is told its version is wrong.
      [
        bodyOf(good.replace(`"v":${PROTOCOL_VERSION}`, '"v":4'), new Uint8Array(32)),
        PROTOCOL_ERRORS.UNSUPPORTED_VERSION,
      ],
      [
        bodyOf(`{"v":${PROTOCOL_VERSION},"type":"password_response","id":"${id}"}`),
        PROTOCOL_ERRORS.UNEXPECTED_TYPE,
      ],
      [bodyOf(good.replace("}", ',"x":1}')), PROTOCOL_ERRORS.BAD_FIELD],
      [bodyOf(good.replace(id, "XYZ")), PROTOCOL_ERRORS.BAD_FIELD],
      [bodyOf(good.replace('"pid":1', '"pid":-1')), PROTOCOL_ERRORS.BAD_FIELD],
      [bodyOf(good, new Uint8Array([1])), PROTOCOL_ERRORS.BAD_FIELD],
    ];
    for (const [b, reason] of cases) {
      assert.deepEqual(decodeRequest(b), { ok: false, reason }, new TextDecoder().decode(b));
    }
    // The control: the same layout with a good header decodes.
    assert.deepEqual(decodeRequest(bodyOf(good)), {
      ok: true,
      message: { type: "password_request", id, prompt: "p", pid: 1 },
    });
  });

  it("writes the fields once, in one order: v, type, then the message's own", () => {
    const frame = body(encodeRequest({ id: newRequestId(), prompt: "Password: ", pid: 100 }));
    const headerLength = new DataView(frame.buffer, frame.byteOffset).getUint16(0);
    assert.equal(frame.length, 2 + headerLength, "no payload and nothing after it");
    const header = new TextDecoder().decode(frame.subarray(2, 2 + headerLength));
    assert.deepEqual(Object.keys(JSON.parse(header)), ["v", "type", "id", "prompt", "pid"]);
  });
});

/** `u16 header length | header | payload`, laid out by this test as the module documents it. */
function bodyOf(header: string, payload = new Uint8Array()): Uint8Array<ArrayBuffer> {
  const h = new TextEncoder().encode(header);
  const b = new Uint8Array(2 + h.length + payload.length);
  new DataView(b.buffer).setUint16(0, h.length);
  b.set(h, 2);
  b.set(payload, 2 + h.length);
  return b;
}

describe("FrameReader", () => {
  it("assembles a frame from byte-sized chunks", () => {
    const frame = encodeRequest({ id: newRequestId(), prompt: "p", pid: 7 });
    const reader = new FrameReader();
    let got: Uint8Array | undefined;
    for (const byte of frame) {
      const r = reader.push(new Uint8Array([byte]));
      assert.ok(r.ok);
      got = r.body ?? got;
    }
    assert.ok(got);
    assert.ok(decodeRequest(got).ok);
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
    const frame = encodeResponse(newRequestId(), new TextEncoder().encode("s3cret"));
    const seen: Uint8Array[] = [];
    const read = await readFrame(chunked(frame, 7, seen));
    assert.ok(read.ok);
    assert.deepEqual(read.body, frame.slice(4));
    assert.ok(seen.length > 1 && seen.every((c) => c.every((b) => b === 0)));
  });

  it("a Buffer chunk is copied before it is zeroed", async () => {
    const frame = encodeResponse(newRequestId(), new TextEncoder().encode("s3cret"));
    const { Buffer } = await import("node:buffer");
    const read = await readFrame((async function* () {
      yield Buffer.from(frame);
    })());
    assert.ok(read.ok);
    assert.deepEqual(read.body, frame.slice(4));
  });

  it("closed before a whole frame, or a frame too large: a named failure", async () => {
    const frame = encodeResponse(newRequestId(), new TextEncoder().encode("x"));
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
