/**
 * Who holds the other end of an accepted Unix stream connection.
 *
 * `SO_PEERCRED` names the process that called `connect()`, not the process
 * that holds the socket now: a program started as the askpass can connect
 * first, keep the socket (in a forked child, across `exec`, or in flight via
 * `SCM_RIGHTS`) and then exec the real helper, which from then on looks
 * exactly right. This module closes that gap by asking the kernel two
 * questions:
 *
 * 1. Which socket is the other end of our accepted socket? `NETLINK_SOCK_DIAG`
 *    with `UDIAG_SHOW_PEER` answers with its inode ({@link unixPeerInode}).
 * 2. Which sockets does the peer process hold? `/proc/<pid>/fd` links of the
 *    form `socket:[inode]` ({@link socketInodesOf}), and `/proc/<pid>/fdinfo`
 *    for the descriptor flags.
 *
 * {@link peerOwnsConnection} is the rule that fits the real Deno helper (its
 * documentation says why). A stricter "exactly one socket in the whole
 * table" rule does not work: the Deno runtime holds a private socketpair of
 * its own, and under pi its stderr is a socketpair too; the tests keep it as
 * a counterexample.
 *
 * The netlink query runs through libc with koffi on a non-blocking socket:
 * the kernel answers inside `sendto()`, so `recv(MSG_DONTWAIT)` never waits.
 * The request and reply bytes are built and parsed in `./sock_diag.ts`.
 * The `/proc` reads are asynchronous and bounded. Nothing here throws.
 *
 * @module
 */
import { libc } from "./libc.ts";
import { readProcLink, readProcText } from "./proc_reader.ts";
import { fdStatSync } from "./socket_fd.ts";
import { readDescriptorTable } from "./descriptor_table.mjs";
import { encodeUnixDiagRequest, parseUnixDiagReply } from "./sock_diag.ts";
import { type ReasonOf, reasons, type Result } from "../shared/result.ts";

/**
 * Named reasons a check in this module fails:
 * - `ffi_unavailable`: koffi or libc is not usable here, or the architecture is not supported.
 * - `invalid_argument`: a pid or inode argument is not a positive integer.
 * - `not_a_socket`: the descriptor is closed or is not a socket.
 * - `peer_inode_unavailable`: the kernel did not name a peer: not a connected Unix socket, peer gone, no CONFIG_UNIX_DIAG.
 * - `peer_gone`: `/proc/<pid>` no longer exists.
 * - `peer_fds_unreadable`: `/proc/<pid>/fd` (or an entry of it) could not be read.
 * - `peer_fd_table_too_large`: the peer holds more descriptors than the cap; refused rather than scanned.
 * - `peer_does_not_hold_connection`: the peer's fd table does not contain the client end of this connection.
 * - `peer_holds_connection_twice`: the client end sits on more than one descriptor of the peer (a `dup`).
 * - `peer_connection_inherited`: the client end's descriptor lacks `O_CLOEXEC`: it was inherited across `exec`.
 */
export const SOCKET_PEER_ERRORS = reasons(
  "ffi_unavailable",
  "invalid_argument",
  "not_a_socket",
  "peer_inode_unavailable",
  "peer_gone",
  "peer_fds_unreadable",
  "peer_fd_table_too_large",
  "peer_does_not_hold_connection",
  "peer_holds_connection_twice",
  "peer_connection_inherited",
);

/** One of the values of {@link SOCKET_PEER_ERRORS}. */
export type SocketPeerError = ReasonOf<typeof SOCKET_PEER_ERRORS>;

/** Inode of a connected socket and of the socket at its other end. */
export interface UnixPeerInodes {
  /** Inode of the local socket (the `N` of its `socket:[N]` link). */
  readonly inode: number;
  /** Inode of the peer socket, as reported by `UNIX_DIAG_PEER`. */
  readonly peerInode: number;
}

/** One socket descriptor in a process's fd table. */
export interface SocketFd {
  /** The descriptor number in that process. */
  readonly fd: number;
  /** The socket's inode (`socket:[inode]`). */
  readonly inode: number;
}

/** Default bound on the number of fd entries read from `/proc/<pid>/fd`. */
export const MAX_PEER_FDS = 4096;

// Linux generic values (x86_64, arm64, riscv64). SOCK_* flags differ on
// sparc/mips/alpha, which are refused rather than guessed; all three
// supported architectures are little-endian.
const AF_NETLINK = 16;
const SOCK_DGRAM = 2;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;
const NETLINK_SOCK_DIAG = 4;
const MSG_DONTWAIT = 0x40;
const SOCKADDR_NL_LEN = 12; // struct sockaddr_nl
const RECV_BUFFER_BYTES = 8192;
const MAX_RECV_CALLS = 4;
const O_CLOEXEC = 0o2000000;

const fail = (reason: SocketPeerError) => ({ ok: false as const, reason });
const isPositiveInt = (n: number): boolean => Number.isSafeInteger(n) && n > 0;

let sequence = (Date.now() & 0x7fff_ffff) >>> 0;

/**
 * The inode of the socket at the other end of the AF_UNIX socket with inode
 * `inode`, from one `SOCK_DIAG_BY_FAMILY` request (an exact lookup, never a
 * dump). Synchronous but short: the netlink socket is non-blocking and the
 * kernel has queued its answer before `sendto()` returns.
 */
export function unixPeerInodeByInode(
  inode: number,
): Result<{ peerInode: number }, SocketPeerError> {
  if (!isPositiveInt(inode) || inode > 0xffff_ffff) {
    return fail(SOCKET_PEER_ERRORS.INVALID_ARGUMENT);
  }
  const c = libc();
  if (!c) return fail(SOCKET_PEER_ERRORS.FFI_UNAVAILABLE);
  let nl = -1;
  try {
    nl = c.socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_SOCK_DIAG);
    if (nl < 0) return fail(SOCKET_PEER_ERRORS.PEER_INODE_UNAVAILABLE);
    sequence = (sequence + 1) >>> 0;
    const seq = sequence;
    const request = encodeUnixDiagRequest(inode, seq);
    const kernel = new Uint8Array(SOCKADDR_NL_LEN); // nl_pid 0: the kernel
    new DataView(kernel.buffer).setUint16(0, AF_NETLINK, true);
    if (c.sendto(nl, request, request.length, 0, kernel, kernel.length) !== request.length) {
      return fail(SOCKET_PEER_ERRORS.PEER_INODE_UNAVAILABLE);
    }
    const buf = new Uint8Array(RECV_BUFFER_BYTES);
    for (let i = 0; i < MAX_RECV_CALLS; i++) {
      const n = c.recv(nl, buf, buf.length, MSG_DONTWAIT);
      if (n <= 0) break; // EAGAIN: no (further) answer queued
      const answer = parseUnixDiagReply(buf.subarray(0, n), inode, seq);
      if (answer === "ignore") continue;
      if (answer === undefined) break;
      return { ok: true, peerInode: answer };
    }
    return fail(SOCKET_PEER_ERRORS.PEER_INODE_UNAVAILABLE);
  } catch {
    return fail(SOCKET_PEER_ERRORS.FFI_UNAVAILABLE);
  } finally {
    if (nl >= 0) c.close(nl);
  }
}

/**
 * Inode of our connected AF_UNIX stream socket `acceptedFd` (by `fstat`) and
 * of the socket at its other end (by `NETLINK_SOCK_DIAG`). For a socket
 * accepted from a listener, `peerInode` is the client's end: the inode that
 * appears as `socket:[peerInode]` in the fd table of whoever holds it.
 */
export function unixPeerInode(acceptedFd: number): Result<UnixPeerInodes, SocketPeerError> {
  const valid = Number.isSafeInteger(acceptedFd) && acceptedFd >= 0;
  const st = valid ? fdStatSync(acceptedFd) : undefined;
  if (!st || !st.isSocket() || !isPositiveInt(st.ino)) return fail(SOCKET_PEER_ERRORS.NOT_A_SOCKET);
  const peer = unixPeerInodeByInode(st.ino);
  if (!peer.ok) return peer;
  return { ok: true, inode: st.ino, peerInode: peer.peerInode };
}

const SOCKET_LINK = /^socket:\[(\d+)\]$/;

/**
 * The socket descriptors in the fd table of process `pid`, from the
 * `socket:[N]` links of `/proc/<pid>/fd`, in fd order, read by the one
 * descriptor-table reader (`descriptor_table.mjs`). More than `cap` entries
 * are refused; an fd closed while the table is being read is skipped; a link
 * that cannot be read fails it. Needs the same access as reading the
 * process's `environ`.
 */
export async function socketInodesOf(
  pid: number,
  cap: number = MAX_PEER_FDS,
): Promise<Result<{ sockets: SocketFd[] }, SocketPeerError>> {
  if (!isPositiveInt(pid)) return fail(SOCKET_PEER_ERRORS.INVALID_ARGUMENT);
  const table = await readDescriptorTable(`/proc/${pid}/fd`, cap, (l) => SOCKET_LINK.test(l));
  if (!table.ok) {
    if (table.reason === "gone") return fail(SOCKET_PEER_ERRORS.PEER_GONE);
    if (table.reason === "too_many") return fail(SOCKET_PEER_ERRORS.PEER_FD_TABLE_TOO_LARGE);
  }
  if (!table.ok || table.unreadableLink) return fail(SOCKET_PEER_ERRORS.PEER_FDS_UNREADABLE);
  return {
    ok: true,
    sockets: table.kept.map(([fd, link]) => ({ fd, inode: Number(SOCKET_LINK.exec(link)?.[1]) })),
  };
}

/**
 * The rule for the askpass helper: ok only if the client end of the
 * connection whose accepted end has inode `acceptedInode` sits in the fd table of `peerPid`
 * (the `SO_PEERCRED` pid) on exactly one descriptor, and that descriptor has
 * `O_CLOEXEC` set. Other sockets of the peer are allowed.
 *
 * Why this is enough: a descriptor that crossed `execve` has `O_CLOEXEC`
 * clear, and only the holder itself can set it again; Deno creates each of
 * its sockets with `SOCK_CLOEXEC` and duplicates inherited stdio with
 * `F_DUPFD_CLOEXEC` (which the "exactly once" part catches). So the client
 * end was made by the peer after its last `exec`: by the helper, not by a
 * program that connected and then exec'd it. A copy kept by a forked child
 * before the `exec` is refused because the exec'd peer no longer holds the
 * socket at all. Holders that are not `peerPid` (via `pidfd_getfd` or
 * `ptrace`) are out of reach of this check.
 *
 * The server records that inode when it accepts, so a descriptor number
 * recycled later cannot point the check at another socket.
 */
export async function peerOwnsConnection(
  acceptedInode: number,
  peerPid: number,
): Promise<Result<Record<never, never>, SocketPeerError>> {
  const peer = unixPeerInodeByInode(acceptedInode);
  if (!peer.ok) return peer;
  const held = await socketInodesOf(peerPid);
  if (!held.ok) return held;
  const mine = held.sockets.filter((s) => s.inode === peer.peerInode);
  if (mine.length === 0) return fail(SOCKET_PEER_ERRORS.PEER_DOES_NOT_HOLD_CONNECTION);
  if (mine.length > 1) return fail(SOCKET_PEER_ERRORS.PEER_HOLDS_CONNECTION_TWICE);
  const flags = await fdFlags(peerPid, mine[0].fd, peer.peerInode);
  if (flags === "gone") return fail(SOCKET_PEER_ERRORS.PEER_DOES_NOT_HOLD_CONNECTION);
  if (flags === undefined) return fail(SOCKET_PEER_ERRORS.PEER_FDS_UNREADABLE);
  if ((flags & O_CLOEXEC) === 0) return fail(SOCKET_PEER_ERRORS.PEER_CONNECTION_INHERITED);
  return { ok: true };
}

/**
 * The open flags of descriptor `fd` of `pid` from `/proc/<pid>/fdinfo/<fd>`,
 * provided the descriptor still refers to socket `inode` (checked through the
 * `ino:` line, or a second `readlink` on kernels without it). `"gone"` when
 * the descriptor now refers to something else or is closed.
 */
async function fdFlags(
  pid: number,
  fd: number,
  inode: number,
): Promise<number | "gone" | undefined> {
  const info = await readProcText(`/proc/${pid}/fdinfo/${fd}`, 4096);
  if (info === undefined) {
    return await readProcLink(`/proc/${pid}/fd/${fd}`, "gone") === undefined ? undefined : "gone";
  }
  const flags = /^flags:\s+([0-7]+)$/m.exec(info);
  if (!flags) return undefined;
  const ino = /^ino:\s+(\d+)$/m.exec(info);
  if (ino) return Number(ino[1]) === inode ? parseInt(flags[1], 8) : "gone";
  const link = await readProcLink(`/proc/${pid}/fd/${fd}`, "closed");
  if (link === undefined) return undefined;
  return link === `socket:[${inode}]` ? parseInt(flags[1], 8) : "gone";
}
