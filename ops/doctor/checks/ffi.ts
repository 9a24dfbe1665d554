/**
 * Doctor check `ffi`: koffi loads, and a real `SO_PEERCRED` and `NETLINK_SOCK_DIAG` round trip
 * over a temporary Unix socket works; without them every request is refused (fail closed).
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
import { unixPeerInodeByInode } from "../../../kernel/socket_peer.ts";
import { ownUid } from "../../../shared/own_uid.ts";
import { defineCheck, type Finding } from "../context.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

/** koffi loads; a real `SO_PEERCRED` and `SOCK_DIAG` round trip works. */
export const ffiCheck = defineCheck("ffi", msg.ffiTitle, async (ctx) => {
  if (!peerCredentialsAvailable()) {
    return {
      status: "fail",
      detail: msg.ffiNoKoffi,
      fix: msg.ffiNoKoffiFix,
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
    return roundTrip(serverSide, client);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  }
});

/** The verdict on a connected pair: this process on both ends. */
function roundTrip(serverSide: Socket, client: Socket): Finding {
  const fd = socketFd(serverSide);
  if (fd === undefined) {
    return {
      status: "fail",
      detail: msg.ffiNoFd,
      fix: msg.ffiNoFdFix,
    };
  }
  const creds = getPeerCredentials(fd);
  const me = ownUid();
  if (!creds.ok) {
    return {
      status: "fail",
      detail: msg.ffiPeercredFailed(creds.reason),
      fix: msg.ffiReport,
    };
  }
  if (creds.creds.pid !== process.pid || creds.creds.uid !== me) {
    return {
      status: "fail",
      detail: msg.ffiWrongPeer(creds.creds.pid, creds.creds.uid, process.pid, me),
      fix: msg.ffiReport,
    };
  }
  const pidfd = getPeerPidfd(fd);
  if (pidfd !== undefined) closeFd(pidfd);
  const pidfdNote = pidfd !== undefined ? msg.ffiPidfdYes : msg.ffiPidfdNo;
  const peer = unixPeerInodeByInode(fdStatSync(fd)?.ino ?? 0);
  const clientFd = socketFd(client);
  const clientIno = clientFd === undefined ? undefined : fdStatSync(clientFd)?.ino;
  if (!peer.ok || peer.peerInode !== clientIno) {
    return {
      status: "fail",
      detail: msg.ffiNoSockDiag(peer.ok ? "" : ` (${peer.reason})`),
      fix: msg.ffiNoSockDiagFix,
    };
  }
  return {
    status: "ok",
    detail: msg.ffiOk(pidfdNote),
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
    timer = setTimeout(() => reject(new Error(msg.ffiTimedOut(what, ms))), ms);
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}
