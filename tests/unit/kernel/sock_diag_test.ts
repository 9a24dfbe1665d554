/**
 * Unit tests of `kernel/sock_diag.ts`: the `SOCK_DIAG_BY_FAMILY` request
 * bytes, and the reply parser fed crafted netlink datagrams (a normal reply,
 * truncated and garbage ones, `NLMSG_ERROR` with `ENOENT`, `NLMSG_DONE`,
 * messages of other requests). The live kernel exchange is tested in
 * tests/integration/kernel/socket_peer_test.ts.
 *
 * Run: node --test tests/unit/kernel/sock_diag_test.ts, or deno test -A.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  AF_UNIX,
  encodeUnixDiagRequest,
  NLMSG_DONE,
  NLMSG_ERROR,
  NLMSG_HDRLEN,
  parseUnixDiagReply,
  SOCK_DIAG_BY_FAMILY,
  UNIX_DIAG_MSG_LEN,
  UNIX_DIAG_PEER,
} from "../../../kernel/sock_diag.ts";

const INODE = 123456;
const PEER = 654321;
const SEQ = 0x1234_5678;
const ENOENT = 2;
const UNIX_DIAG_NAME = 0;
const SOCK_STREAM = 1;
const TCP_ESTABLISHED = 1;

const align4 = (n: number): number => (n + 3) & ~3;

/** One netlink message: `nlmsghdr` followed by `payload`, padded to 4 bytes. */
function nlmsg(type: number, seq: number, payload: Uint8Array, flags = 0): Uint8Array {
  const len = NLMSG_HDRLEN + payload.length;
  const msg = new Uint8Array(align4(len));
  const v = new DataView(msg.buffer);
  v.setUint32(0, len, true);
  v.setUint16(4, type, true);
  v.setUint16(6, flags, true);
  v.setUint32(8, seq, true);
  v.setUint32(12, 0, true);
  msg.set(payload, NLMSG_HDRLEN);
  return msg;
}

/** One `rtattr`: length, type, then `data`, padded to 4 bytes. */
function rtattr(type: number, data: Uint8Array): Uint8Array {
  const len = 4 + data.length;
  const a = new Uint8Array(align4(len));
  const v = new DataView(a.buffer);
  v.setUint16(0, len, true);
  v.setUint16(2, type, true);
  a.set(data, 4);
  return a;
}

function u32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
}

/** `unix_diag_msg` about socket `inode` followed by `attrs`. */
function diagBody(inode: number, attrs: Uint8Array[], family = AF_UNIX): Uint8Array {
  const head = new Uint8Array(UNIX_DIAG_MSG_LEN);
  const v = new DataView(head.buffer);
  v.setUint8(0, family); // udiag_family
  v.setUint8(1, SOCK_STREAM); // udiag_type
  v.setUint8(2, TCP_ESTABLISHED); // udiag_state
  v.setUint32(4, inode, true); // udiag_ino
  v.setUint32(8, 0xabcd, true); // udiag_cookie[0]
  v.setUint32(12, 0, true); // udiag_cookie[1]
  return concat(head, ...attrs);
}

/** The `NLMSG_ERROR` payload: a negative errno, then the request's header. */
function errorBody(errno: number, seq: number): Uint8Array {
  const original = encodeUnixDiagRequest(INODE, seq).subarray(0, NLMSG_HDRLEN);
  return concat(u32(-errno >>> 0), original);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** A normal kernel reply: the diag message with a name and the peer attribute. */
function normalReply(seq = SEQ, inode = INODE, peer = PEER): Uint8Array {
  const name = rtattr(UNIX_DIAG_NAME, new TextEncoder().encode("\0abc")); // unpadded length 8
  return nlmsg(
    SOCK_DIAG_BY_FAMILY,
    seq,
    diagBody(inode, [name, rtattr(UNIX_DIAG_PEER, u32(peer))]),
  );
}

describe("encodeUnixDiagRequest", () => {
  it("builds one nlmsghdr + unix_diag_req: an exact lookup of the peer of one inode", () => {
    const msg = encodeUnixDiagRequest(INODE, SEQ);
    assert.equal(msg.length, 40);
    const v = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
    assert.equal(v.getUint32(0, true), 40); // nlmsg_len
    assert.equal(v.getUint16(4, true), SOCK_DIAG_BY_FAMILY);
    assert.equal(v.getUint16(6, true), 0x01); // NLM_F_REQUEST, no NLM_F_DUMP
    assert.equal(v.getUint32(8, true), SEQ);
    assert.equal(v.getUint32(12, true), 0); // nlmsg_pid
    assert.equal(v.getUint8(16), AF_UNIX);
    assert.equal(v.getUint8(17), 0); // sdiag_protocol
    assert.equal(v.getUint32(20, true), 0xffff_ffff); // udiag_states: any
    assert.equal(v.getUint32(24, true), INODE); // udiag_ino
    assert.equal(v.getUint32(28, true), 0x04); // UDIAG_SHOW_PEER
    assert.equal(v.getUint32(32, true), 0xffff_ffff); // INET_DIAG_NOCOOKIE
    assert.equal(v.getUint32(36, true), 0xffff_ffff);
  });

  it("carries the full 32-bit range of inode and sequence number", () => {
    const v = new DataView(encodeUnixDiagRequest(0xffff_ffff, 0xffff_fffe).buffer);
    assert.equal(v.getUint32(24, true), 0xffff_ffff);
    assert.equal(v.getUint32(8, true), 0xffff_fffe);
  });
});

describe("parseUnixDiagReply", () => {
  it("returns the peer inode from a normal reply", () => {
    assert.equal(parseUnixDiagReply(normalReply(), INODE, SEQ), PEER);
  });

  it("reads a reply that does not start at byte 0 of its buffer", () => {
    const reply = normalReply();
    const buf = new Uint8Array(reply.length + 8);
    buf.set(reply, 8);
    assert.equal(parseUnixDiagReply(buf.subarray(8), INODE, SEQ), PEER);
  });

  it("skips messages of other requests before ours", () => {
    const other = nlmsg(NLMSG_ERROR, SEQ - 1, errorBody(ENOENT, SEQ - 1));
    const stale = normalReply(SEQ + 1, INODE, 999);
    assert.equal(parseUnixDiagReply(concat(other, stale, normalReply()), INODE, SEQ), PEER);
  });

  it("ignores a datagram with nothing of our request in it", () => {
    assert.equal(parseUnixDiagReply(normalReply(SEQ + 1), INODE, SEQ), "ignore");
    assert.equal(parseUnixDiagReply(nlmsg(NLMSG_DONE, 7, u32(0)), INODE, SEQ), "ignore");
    assert.equal(parseUnixDiagReply(new Uint8Array(0), INODE, SEQ), "ignore");
    // Shorter than one nlmsghdr: no message to read at all.
    assert.equal(parseUnixDiagReply(new Uint8Array(NLMSG_HDRLEN - 1), INODE, SEQ), "ignore");
  });

  it("NLMSG_ERROR with ENOENT (no such socket) is a definite no", () => {
    const reply = nlmsg(NLMSG_ERROR, SEQ, errorBody(ENOENT, SEQ));
    assert.equal(parseUnixDiagReply(reply, INODE, SEQ), undefined);
  });

  it("NLMSG_DONE is a definite no", () => {
    assert.equal(parseUnixDiagReply(nlmsg(NLMSG_DONE, SEQ, u32(0)), INODE, SEQ), undefined);
  });

  it("a truncated reply is a definite no", () => {
    const reply = normalReply();
    for (const n of [NLMSG_HDRLEN, NLMSG_HDRLEN + 4, NLMSG_HDRLEN + UNIX_DIAG_MSG_LEN, 40]) {
      assert.equal(parseUnixDiagReply(reply.subarray(0, n), INODE, SEQ), undefined, `at ${n}`);
    }
    assert.equal(parseUnixDiagReply(reply.subarray(0, reply.length - 1), INODE, SEQ), undefined);
  });

  it("garbage is a definite no, never a peer", () => {
    // nlmsg_len smaller than the header itself.
    const tiny = normalReply();
    new DataView(tiny.buffer).setUint32(0, 8, true);
    assert.equal(parseUnixDiagReply(tiny, INODE, SEQ), undefined);
    // nlmsg_len far past the end of the datagram.
    const huge = normalReply();
    new DataView(huge.buffer).setUint32(0, 0xffff_fff0, true);
    assert.equal(parseUnixDiagReply(huge, INODE, SEQ), undefined);
    // Deterministic pseudo-random bytes: whatever they say, no peer comes out.
    let x = 0x2545_f491;
    for (let round = 0; round < 200; round++) {
      const junk = new Uint8Array(16 + (round % 64));
      for (let i = 0; i < junk.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        junk[i] = x & 0xff;
      }
      const got = parseUnixDiagReply(junk, INODE, SEQ);
      assert.ok(got === undefined || got === "ignore", `round ${round}: ${got}`);
    }
  });

  it("a diag message about another socket or family is a definite no", () => {
    assert.equal(parseUnixDiagReply(normalReply(SEQ, INODE + 1), INODE, SEQ), undefined);
    const inet = nlmsg(
      SOCK_DIAG_BY_FAMILY,
      SEQ,
      diagBody(INODE, [rtattr(UNIX_DIAG_PEER, u32(PEER))], 2 /* AF_INET */),
    );
    assert.equal(parseUnixDiagReply(inet, INODE, SEQ), undefined);
  });

  it("no usable UNIX_DIAG_PEER attribute is a definite no", () => {
    const cases: Record<string, Uint8Array[]> = {
      "no attributes": [],
      "only a name": [rtattr(UNIX_DIAG_NAME, new TextEncoder().encode("/tmp/s"))],
      "peer inode 0": [rtattr(UNIX_DIAG_PEER, u32(0))],
      "peer attribute too short": [rtattr(UNIX_DIAG_PEER, new Uint8Array(0))],
    };
    for (const [what, attrs] of Object.entries(cases)) {
      const reply = nlmsg(SOCK_DIAG_BY_FAMILY, SEQ, diagBody(INODE, attrs));
      assert.equal(parseUnixDiagReply(reply, INODE, SEQ), undefined, what);
    }
    // An attribute length that runs past the end of its message.
    const body = diagBody(INODE, [rtattr(UNIX_DIAG_PEER, u32(PEER))]);
    new DataView(body.buffer).setUint16(UNIX_DIAG_MSG_LEN, 64, true);
    assert.equal(parseUnixDiagReply(nlmsg(SOCK_DIAG_BY_FAMILY, SEQ, body), INODE, SEQ), undefined);
    // An attribute length below the rtattr header.
    const bad = diagBody(INODE, [rtattr(UNIX_DIAG_PEER, u32(PEER))]);
    new DataView(bad.buffer).setUint16(UNIX_DIAG_MSG_LEN, 2, true);
    assert.equal(parseUnixDiagReply(nlmsg(SOCK_DIAG_BY_FAMILY, SEQ, bad), INODE, SEQ), undefined);
  });

  it("the first message of ours decides: a peer after our NLMSG_ERROR is not read", () => {
    const reply = concat(nlmsg(NLMSG_ERROR, SEQ, errorBody(ENOENT, SEQ)), normalReply());
    assert.equal(parseUnixDiagReply(reply, INODE, SEQ), undefined);
  });
});
