/**
 * Who holds the other end of an accepted Unix stream connection. `SO_PEERCRED`
 * names the process that called `connect()`, not the holder: a program started
 * as the askpass can connect, keep the socket (in a forked child, across `exec`,
 * or in flight via `SCM_RIGHTS`) and exec the real helper (ADR 0001,
 * Consequences). So the kernel is asked for the peer socket's inode
 * ({@link unixPeerInodeByInode}) and the peer's sockets ({@link socketInodesOf});
 * {@link peerOwnsConnection} is the rule. Nothing here throws.
 *
 * @module
 */
import { libc } from "./libc.ts";
import { readProcLink, readProcText } from "./proc_reader.ts";
import { readDescriptorTable } from "./descriptor_table.mjs";
import { encodeUnixDiagRequest, parseUnixDiagReply } from "./sock_diag.ts";
import { type ReasonOf, reasons, type Result } from "../shared/result.ts";

/**
 * Named reasons a check in this module fails, spelled as the refusals they become.
 * `peer_connection_inherited`: no `O_CLOEXEC`, so it was inherited across `exec`;
 * `connection_owner_unknown`: the kernel could not say (no FFI, no peer named by
 * CONFIG_UNIX_DIAG, an fd table unreadable or past its cap), so it fails closed.
 */
export const SOCKET_PEER_ERRORS = reasons(
  "peer_gone",
  "peer_does_not_hold_connection",
  "peer_holds_connection_twice",
  "peer_connection_inherited",
  "connection_owner_unknown",
);

/** One of the values of {@link SOCKET_PEER_ERRORS}. */
export type SocketPeerError = ReasonOf<typeof SOCKET_PEER_ERRORS>;

/** Default bound on the number of fd entries read from `/proc/<pid>/fd`. */
export const MAX_PEER_FDS = 4096;

// Linux generic values (x86_64, arm64, riscv64, all little-endian); SOCK_* flags
// differ on sparc/mips/alpha, which are refused rather than guessed.
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
const UNKNOWN = fail(SOCKET_PEER_ERRORS.CONNECTION_OWNER_UNKNOWN);
const isPositiveInt = (n: number): boolean => Number.isSafeInteger(n) && n > 0;

let sequence = (Date.now() & 0x7fff_ffff) >>> 0;

/**
 * The peer inode of AF_UNIX socket `inode`, from one exact `SOCK_DIAG_BY_FAMILY`
 * lookup (never a dump). Synchronous but short: the netlink socket is
 * non-blocking and the kernel has queued its answer before `sendto()` returns.
 */
export function unixPeerInodeByInode(
  inode: number,
): Result<{ peerInode: number }, SocketPeerError> {
  const c = libc();
  if (!c || !isPositiveInt(inode) || inode > 0xffff_ffff) return UNKNOWN;
  let nl = -1;
  try {
    nl = c.socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_SOCK_DIAG);
    if (nl < 0) return UNKNOWN;
    sequence = (sequence + 1) >>> 0;
    const seq = sequence;
    const request = encodeUnixDiagRequest(inode, seq);
    const kernel = new Uint8Array(SOCKADDR_NL_LEN); // nl_pid 0: the kernel
    new DataView(kernel.buffer).setUint16(0, AF_NETLINK, true);
    if (c.sendto(nl, request, request.length, 0, kernel, kernel.length) !== request.length) {
      return UNKNOWN;
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
    return UNKNOWN;
  } catch {
    return UNKNOWN;
  } finally {
    if (nl >= 0) c.close(nl);
  }
}

const SOCKET_LINK = /^socket:\[(\d+)\]$/;

/**
 * The socket descriptors of process `pid`, in fd order. More than `cap` are
 * refused, an fd closed meanwhile is skipped, an unreadable link fails it.
 * Needs the same access as reading the process's `environ`.
 */
export async function socketInodesOf(
  pid: number,
  cap: number = MAX_PEER_FDS,
): Promise<Result<{ sockets: { fd: number; inode: number }[] }, SocketPeerError>> {
  if (!isPositiveInt(pid)) return UNKNOWN;
  const table = await readDescriptorTable(`/proc/${pid}/fd`, cap, (l) => SOCKET_LINK.test(l));
  if (!table.ok && table.reason === "gone") return fail(SOCKET_PEER_ERRORS.PEER_GONE);
  if (!table.ok || table.unreadableLink) return UNKNOWN;
  return {
    ok: true,
    sockets: table.kept.map(([fd, link]) => ({ fd, inode: Number(SOCKET_LINK.exec(link)?.[1]) })),
  };
}

/**
 * The rule for the askpass helper: the client end of the connection (accepted
 * end `acceptedInode`) must sit in the fd table of `peerPid` (the `SO_PEERCRED`
 * pid) on exactly one descriptor, with `O_CLOEXEC` set; other sockets are
 * allowed. Why: ADR 0001, Consequences. Also: only the holder can set
 * `O_CLOEXEC` again; Deno dups inherited stdio with `F_DUPFD_CLOEXEC` (which
 * "exactly one" catches); a copy kept by a child forked before the `exec` is
 * refused, as the exec'd peer no longer holds it; holders other than `peerPid`
 * (`pidfd_getfd`, `ptrace`) are out of reach. The inode is recorded at accept,
 * so a recycled descriptor number cannot point the check at another socket.
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
  if (flags === undefined) return UNKNOWN;
  if ((flags & O_CLOEXEC) === 0) return fail(SOCKET_PEER_ERRORS.PEER_CONNECTION_INHERITED);
  return { ok: true };
}

/**
 * The open flags of `pid`'s descriptor `fd`, if it still refers to socket
 * `inode` (fdinfo's `ino:` line, or a second `readlink` on kernels without it);
 * `"gone"` when it now refers to something else or is closed.
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
