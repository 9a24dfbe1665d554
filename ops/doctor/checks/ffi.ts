/**
 * Doctor check `ffi`: koffi loads, and a real `SO_PEERCRED` and
 * `NETLINK_SOCK_DIAG` round trip over a temporary Unix socket works. Without
 * them every password request is refused (fail closed).
 *
 * @module
 */
import type { EventEmitter } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import process from "node:process";
import {
  closeFd,
  getPeerCredentials,
  getPeerPidfd,
  peerCredentialsAvailable,
} from "../../../kernel/peer_credentials.ts";
import { fdStatSync, socketFd } from "../../../kernel/socket_fd.ts";
import { unixPeerInode } from "../../../kernel/socket_peer.ts";
import { ownUid } from "../../../shared/own_uid.ts";
import { defineCheck, type Finding } from "../context.ts";

/** koffi loads; a real `SO_PEERCRED` and `SOCK_DIAG` round trip works. */
export const ffiCheck = defineCheck("ffi", "FFI peer creds", async (ctx) => {
  if (!peerCredentialsAvailable()) {
    return {
      status: "fail",
      detail: "koffi FFI does not load here: every password request is refused (fail closed)",
      fix: "run npm ci in the package (koffi ships prebuilt binaries for x64, arm64, riscv64)",
    };
  }
  const dir = await mkdtemp(join(ctx.tmpBase, "pi-sudo-doctor-"));
  const socketPath = join(dir, "s");
  const server = createServer();
  const sockets: Socket[] = [];
  try {
    const listening = settled(server, "listening");
    server.listen(socketPath);
    await withDeadline(listening, ctx.commandTimeoutMs, "listen");
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    const client = connect(socketPath);
    sockets.push(client);
    await withDeadline(settled(client, "connect"), ctx.commandTimeoutMs, "connect");
    const serverSide = await withDeadline(accepted, ctx.commandTimeoutMs, "accept");
    sockets.push(serverSide);
    return await roundTrip(serverSide, client);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  }
});

/** The verdict on a connected pair: this process on both ends. */
async function roundTrip(serverSide: Socket, client: Socket): Promise<Finding> {
  const fd = socketFd(serverSide);
  if (fd === undefined) {
    return {
      status: "fail",
      detail: "no file descriptor behind a Node socket: requests refused",
      fix: "use the Node that pi ships with (≥ 22); requests fail closed",
    };
  }
  const creds = getPeerCredentials(fd);
  const me = ownUid();
  if (!creds.ok) {
    return {
      status: "fail",
      detail: `SO_PEERCRED failed (${creds.reason}): every request is refused`,
      fix: "report this kernel/architecture; requests fail closed",
    };
  }
  if (creds.creds.pid !== process.pid || creds.creds.uid !== me) {
    return {
      status: "fail",
      detail: `SO_PEERCRED returned pid ${creds.creds.pid} uid ${creds.creds.uid}, expected ` +
        `pid ${process.pid} uid ${me}`,
      fix: "report this kernel/architecture; requests fail closed",
    };
  }
  const pidfd = getPeerPidfd(fd);
  if (pidfd !== undefined) closeFd(pidfd);
  const pidfdNote = pidfd !== undefined ? "SO_PEERPIDFD yes" : "SO_PEERPIDFD no (kernel < 6.5)";
  const peer = await unixPeerInode(fd);
  const clientFd = socketFd(client);
  const clientIno = clientFd === undefined ? undefined : fdStatSync(clientFd)?.ino;
  if (!peer.ok || peer.peerInode !== clientIno) {
    return {
      status: "fail",
      detail: "NETLINK_SOCK_DIAG did not name the peer socket" +
        (peer.ok ? "" : ` (${peer.reason})`) + ": every request is refused (fail closed)",
      fix: "use a kernel with CONFIG_UNIX_DIAG (the feature behind ss -x)",
    };
  }
  return {
    status: "ok",
    detail: `koffi loads; SO_PEERCRED round trip gave our pid and uid; SOCK_DIAG named the ` +
      `peer socket; ${pidfdNote}`,
  };
}

/** `event` resolves, an `error` first rejects (the listener stays: a later error is swallowed). */
function settled(emitter: EventEmitter, event: string): Promise<void> {
  return new Promise((resolve, reject) => {
    emitter.once(event, () => resolve());
    emitter.once("error", reject);
  });
}

function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<T>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}
