/**
 * Kernel-verified identity of the peer of a Unix socket: `SO_PEERCRED` (pid,
 * uid, gid as of `connect()`) and, where the kernel has it, `SO_PEERPIDFD` (a
 * pidfd, immune to PID reuse), through libc (Node has neither). Without FFI
 * every function reports {@link PEER_CREDENTIAL_ERRORS.FFI_UNAVAILABLE} and
 * the caller fails closed.
 *
 * @module
 */
import { libc } from "./libc.ts";
import { type ReasonOf, reasons, type Result } from "../shared/result.ts";

/** Named reasons a credential lookup fails. */
export const PEER_CREDENTIAL_ERRORS = reasons(
  "ffi_unavailable",
  "no_socket_fd",
  "getsockopt_failed",
);

/** One of the values of {@link PEER_CREDENTIAL_ERRORS}. */
export type PeerCredentialError = ReasonOf<typeof PEER_CREDENTIAL_ERRORS>;

/** What the kernel says about the peer. */
export interface PeerCredentials {
  readonly pid: number;
  readonly uid: number;
  readonly gid: number;
}

const SOL_SOCKET = 1;
// Linux generic values (x86_64, arm64, riscv64); ppc/sparc/mips differ and
// are refused below rather than guessed.
const SO_PEERCRED = 17;
const SO_PEERPIDFD = 77;
const SYS_PIDFD_OPEN = 434; // the same number on every architecture

/** True when kernel peer credentials can be read in this process. */
export function peerCredentialsAvailable(): boolean {
  return libc() !== null;
}

/** `SO_PEERCRED` of a connected Unix socket's descriptor, as `socketFd` gives it. */
export function getPeerCredentials(
  fd: number,
): Result<{ creds: PeerCredentials }, PeerCredentialError> {
  const c = libc();
  if (!c) return { ok: false, reason: PEER_CREDENTIAL_ERRORS.FFI_UNAVAILABLE };
  const out = new Uint8Array(12);
  const len = [12];
  if (c.getsockopt(fd, SOL_SOCKET, SO_PEERCRED, out, len) !== 0 || len[0] !== 12) {
    return { ok: false, reason: PEER_CREDENTIAL_ERRORS.GETSOCKOPT_FAILED };
  }
  const view = new DataView(out.buffer);
  const creds = {
    pid: view.getInt32(0, true),
    uid: view.getUint32(4, true),
    gid: view.getUint32(8, true),
  };
  if (creds.pid <= 0) return { ok: false, reason: PEER_CREDENTIAL_ERRORS.GETSOCKOPT_FAILED };
  return { ok: true, creds };
}

/**
 * `SO_PEERPIDFD` of a connected socket: a pidfd for the process that called
 * `connect()`, or `undefined` when the kernel (< 6.5) or FFI lacks it. The
 * caller owns the descriptor and must {@link closeFd} it.
 */
export function getPeerPidfd(fd: number): number | undefined {
  const c = libc();
  if (!c) return undefined;
  const out = new Uint8Array(4);
  const len = [4];
  if (c.getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, out, len) !== 0 || len[0] !== 4) return undefined;
  const pidfd = new DataView(out.buffer).getInt32(0, true);
  return pidfd >= 0 ? pidfd : undefined;
}

/**
 * `pidfd_open(pid, 0)`: a descriptor that names this process and no later
 * one with its pid. On failure, the errno (`ESRCH`: gone; `ENOSYS`: an old
 * kernel); `undefined` errno when FFI is missing.
 */
export function pidfdOpen(
  pid: number,
): { readonly ok: true; readonly fd: number } | { readonly ok: false; readonly errno?: number } {
  const c = libc();
  if (!c) return { ok: false };
  const fd = c.syscall(SYS_PIDFD_OPEN, "int", pid, "unsigned int", 0);
  return fd >= 0 ? { ok: true, fd } : { ok: false, errno: c.errno() };
}

/** Closes a descriptor obtained from this module. */
export function closeFd(fd: number): void {
  libc()?.close(fd);
}
