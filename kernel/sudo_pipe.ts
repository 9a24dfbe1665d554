/**
 * pi writes the password into sudo's pipe itself, so the helper, which the
 * agent could trace, never holds it: `pidfd_getfd` of the helper's stdout,
 * checked to be the verified pipe, then one non-blocking `write` (ADR 0008).
 * `EPERM` (Yama 2, 3) and `ENOSYS` (before 5.6) mean the helper writes (the
 * old path); any other failure denies. Nothing here waits on pi's event loop.
 *
 * @module
 */
import { libc } from "./libc.ts";
import { pidfdOpen } from "./peer_credentials.ts";
import { isSudoPipe } from "./peer_verification.ts";
import { fdStatSync } from "./socket_fd.ts";
import { type ReasonOf, reasons } from "../shared/result.ts";

/**
 * Named outcomes of a handover that did not write the password. After the first two (Yama 2/3 or
 * an LSM; a kernel before 5.6, or no FFI) the helper writes it ({@link FALLBACK_REASONS}).
 */
export const PIPE_HANDOVER_ERRORS = reasons(
  "pidfd_getfd_not_permitted",
  "pidfd_getfd_unsupported",
  "helper_gone",
  "helper_pipe_changed",
  "pipe_write_failed",
);

/** One of the values of {@link PIPE_HANDOVER_ERRORS}. */
export type PipeHandoverError = ReasonOf<typeof PIPE_HANDOVER_ERRORS>;

/** The failures after which the helper may still write the password (the old path). */
export const FALLBACK_REASONS: ReadonlySet<PipeHandoverError> = new Set([
  PIPE_HANDOVER_ERRORS.PIDFD_GETFD_NOT_PERMITTED,
  PIPE_HANDOVER_ERRORS.PIDFD_GETFD_UNSUPPORTED,
]);

const SYS_PIDFD_GETFD = 438;
const F_GETFL = 3;
const F_SETFL = 4;
const O_NONBLOCK = 0o4000;
const EPERM = 1;
const ENOSYS = 38;

/** The helper to write through: its pidfd if one is held, else its pid (a pidfd is opened). */
export interface PipeTarget {
  readonly pidfd: number | undefined;
  readonly pid: number;
  /** Inode of the helper's stdout when it was verified. */
  readonly pipeInode: number;
}

/**
 * Writes `secret` and a newline into the helper's stdout, which must still be the
 * verified sudo pipe. The caller owns (and zeroes) `secret`; the line built here is zeroed.
 */
export function writeIntoSudoPipe(
  target: PipeTarget,
  secret: Uint8Array,
): { ok: true } | { ok: false; reason: PipeHandoverError } {
  const c = libc();
  if (!c) return { ok: false, reason: PIPE_HANDOVER_ERRORS.PIDFD_GETFD_UNSUPPORTED };
  const opened = target.pidfd === undefined ? pidfdOpen(target.pid) : undefined;
  if (opened?.ok === false) return { ok: false, reason: openFailure(opened.errno ?? 0) };
  const pidfd = opened?.ok ? opened.fd : target.pidfd!;
  let fd = -1;
  try {
    fd = c.syscall(SYS_PIDFD_GETFD, "int", pidfd, "int", 1, "unsigned int", 0);
    if (fd < 0) return { ok: false, reason: openFailure(c.errno()) };
    const st = fdStatSync(fd);
    if (!isSudoPipe(st) || st.ino !== target.pipeInode) {
      return { ok: false, reason: PIPE_HANDOVER_ERRORS.HELPER_PIPE_CHANGED };
    }
    // A full pipe must not stall pi: EAGAIN instead of a wait. The flag is on
    // the open file the helper shares, which writes nothing after this.
    const flags = c.fcntl(fd, F_GETFL, 0);
    if (flags < 0 || c.fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      return { ok: false, reason: PIPE_HANDOVER_ERRORS.PIPE_WRITE_FAILED };
    }
    const line = new Uint8Array(secret.length + 1);
    try {
      line.set(secret);
      line[secret.length] = 0x0a;
      // At most 1024 bytes to a pipe: one write below PIPE_BUF is atomic.
      const n = c.write(fd, line, line.length);
      if (n !== line.length) return { ok: false, reason: PIPE_HANDOVER_ERRORS.PIPE_WRITE_FAILED };
    } finally {
      line.fill(0);
    }
    return { ok: true };
  } finally {
    if (fd >= 0) c.close(fd);
    if (opened) c.close(pidfd);
  }
}

function openFailure(errno: number): PipeHandoverError {
  if (errno === EPERM) return PIPE_HANDOVER_ERRORS.PIDFD_GETFD_NOT_PERMITTED;
  if (errno === ENOSYS) return PIPE_HANDOVER_ERRORS.PIDFD_GETFD_UNSUPPORTED;
  return PIPE_HANDOVER_ERRORS.HELPER_GONE;
}
