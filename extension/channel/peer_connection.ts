/**
 * One accepted connection, as the kernel described its peer at `accept`
 * (`SO_PEERCRED`, `SO_PEERPIDFD`, our socket's inode), and the one owner of that
 * pidfd. It is answered once: {@link PeerConnection.end} closes the pidfd then and
 * never again (closing a descriptor number twice could close an unrelated one).
 *
 * @module
 */
import type { Socket } from "node:net";
import {
  closeFd,
  getPeerCredentials,
  getPeerPidfd,
  PEER_CREDENTIAL_ERRORS,
  type PeerCredentials,
} from "../../kernel/peer_credentials.ts";
import { fdStatSync, socketFd } from "../../kernel/socket_fd.ts";
import type { Result } from "../../shared/result.ts";

/** See the module comment. */
export class PeerConnection {
  readonly socket: Socket;
  /** What `SO_PEERCRED` said, or why it could not be read. */
  readonly creds: Result<{ creds: PeerCredentials }, string>;
  /** Inode of our end of the socket (the socket checks compare it, never a descriptor number). */
  readonly inode: number | undefined;
  #pidfd: number | undefined;
  #ended = false;

  /** Takes the kernel's word on the peer of `socket`, before anything it sends is read. */
  constructor(socket: Socket) {
    this.socket = socket;
    const fd = socketFd(socket);
    this.creds = fd === undefined
      ? { ok: false, reason: PEER_CREDENTIAL_ERRORS.NO_SOCKET_FD }
      : getPeerCredentials(fd);
    this.#pidfd = fd !== undefined && this.creds.ok ? getPeerPidfd(fd) : undefined;
    // `fstat` on a socket touches no disk and cannot block.
    const st = fd === undefined ? undefined : fdStatSync(fd);
    this.inode = st?.isSocket() && st.ino > 0 ? st.ino : undefined;
  }

  /** The peer's pid as the kernel saw it at `connect`. */
  get peerPid(): number | undefined {
    return this.creds.ok ? this.creds.creds.pid : undefined;
  }

  /** The peer's pidfd, until the connection ends. */
  get pidfd(): number | undefined {
    return this.#pidfd;
  }

  /** True once {@link end} has been called. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Ends the request, closing the pidfd; true only the first time, when the caller answers. */
  end(): boolean {
    if (this.#ended) return false;
    this.#ended = true;
    if (this.#pidfd !== undefined) closeFd(this.#pidfd);
    this.#pidfd = undefined;
    return true;
  }
}
