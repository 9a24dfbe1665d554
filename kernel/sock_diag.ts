/**
 * The bytes of one `NETLINK_SOCK_DIAG` exchange: the request for the peer of
 * one AF_UNIX socket, and the reply read back into a peer inode. Pure
 * (`socket_peer.ts` does the I/O), so the parser can be tested with crafted
 * buffers a live kernel would never produce on demand. Linux generic layouts,
 * little-endian like every architecture `socket_peer.ts` supports.
 *
 * @module
 */

/** `AF_UNIX`: the family asked about (`sdiag_family`) and checked in the reply. */
export const AF_UNIX = 1;
/** `nlmsg_type` of a netlink error (or acknowledgement) message. */
export const NLMSG_ERROR = 0x02;
/** `nlmsg_type` that ends a multi-part netlink answer. */
export const NLMSG_DONE = 0x03;
/** `nlmsg_type` of both the request and each `unix_diag_msg` answer. */
export const SOCK_DIAG_BY_FAMILY = 20;
/** `rtattr` type that carries the peer's inode in a `unix_diag_msg`. */
export const UNIX_DIAG_PEER = 2;
/** Size of `struct nlmsghdr`. */
export const NLMSG_HDRLEN = 16;
/** Size of `struct unix_diag_msg`, the body before its attributes. */
export const UNIX_DIAG_MSG_LEN = 16;

/**
 * One reply datagram's answer: the peer inode; `undefined`, a definite "no"
 * (an error, no peer attribute, the end, a malformed message); or `"ignore"`
 * when nothing in it is ours (another sequence number): read the next one.
 */
export type UnixDiagAnswer = number | undefined | "ignore";

/**
 * `nlmsghdr` + `unix_diag_req` asking for the peer of socket `inode`, tagged
 * `seq`. An exact lookup (no `NLM_F_DUMP`), not a list of every socket.
 */
export function encodeUnixDiagRequest(inode: number, seq: number): Uint8Array {
  const NLM_F_REQUEST = 0x01;
  const UDIAG_SHOW_PEER = 0x04;
  const UNIX_DIAG_REQ_LEN = 24; // struct unix_diag_req
  const msg = new Uint8Array(NLMSG_HDRLEN + UNIX_DIAG_REQ_LEN);
  const v = new DataView(msg.buffer);
  v.setUint32(0, msg.length, true); // nlmsg_len
  v.setUint16(4, SOCK_DIAG_BY_FAMILY, true); // nlmsg_type
  v.setUint16(6, NLM_F_REQUEST, true); // nlmsg_flags: no NLM_F_DUMP, an exact lookup
  v.setUint32(8, seq, true); // nlmsg_seq; nlmsg_pid (12) stays 0
  const r = NLMSG_HDRLEN;
  v.setUint8(r + 0, AF_UNIX); // sdiag_family; sdiag_protocol (r + 1) and the pad (r + 2) stay 0
  v.setUint32(r + 4, 0xffff_ffff, true); // udiag_states: any
  v.setUint32(r + 8, inode, true); // udiag_ino
  v.setUint32(r + 12, UDIAG_SHOW_PEER, true); // udiag_show
  v.setUint32(r + 16, 0xffff_ffff, true); // udiag_cookie[0]: INET_DIAG_NOCOOKIE
  v.setUint32(r + 20, 0xffff_ffff, true); // udiag_cookie[1]
  return msg;
}

/**
 * Reads one reply datagram to {@link encodeUnixDiagRequest}`(inode, seq)`.
 * Messages with another `seq` are skipped; an impossible length (whoever it is
 * for) or a diag message about another socket ends the read with a "no".
 */
export function parseUnixDiagReply(data: Uint8Array, inode: number, seq: number): UnixDiagAnswer {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let off = 0;
  while (off + NLMSG_HDRLEN <= data.length) {
    const len = v.getUint32(off, true);
    const type = v.getUint16(off + 4, true);
    const msgSeq = v.getUint32(off + 8, true);
    if (len < NLMSG_HDRLEN || off + len > data.length) return undefined;
    if (msgSeq === seq) {
      if (type === NLMSG_ERROR || type === NLMSG_DONE) return undefined;
      if (type === SOCK_DIAG_BY_FAMILY) return peerFromDiagMessage(v, off, len, inode);
    }
    off += align4(len);
  }
  return "ignore";
}

/** The `UNIX_DIAG_PEER` attribute of one `unix_diag_msg`, checked to be about `inode`. */
function peerFromDiagMessage(v: DataView, off: number, len: number, inode: number) {
  const body = off + NLMSG_HDRLEN;
  const end = off + len;
  if (body + UNIX_DIAG_MSG_LEN > end) return undefined;
  if (v.getUint8(body) !== AF_UNIX || v.getUint32(body + 4, true) !== inode) return undefined;
  let attr = body + UNIX_DIAG_MSG_LEN;
  while (attr + 4 <= end) {
    const rtaLen = v.getUint16(attr, true);
    const rtaType = v.getUint16(attr + 2, true);
    if (rtaLen < 4 || attr + rtaLen > end) return undefined;
    if (rtaType === UNIX_DIAG_PEER) {
      if (rtaLen < 8) return undefined;
      const peer = v.getUint32(attr + 4, true);
      return peer > 0 ? peer : undefined;
    }
    attr += align4(rtaLen);
  }
  return undefined;
}

const align4 = (n: number): number => (n + 3) & ~3;
