/**
 * The audit copy the agent cannot change: the system log through `/dev/log`, where sudo logs too
 * (ADR 0004). Node has no Unix datagram sockets: libc through koffi, one non-blocking `send()`.
 * @module
 */
import { statSync } from "node:fs";
import process from "node:process";
import { libc } from "../../kernel/libc.ts";
import type { Result } from "../../shared/result.ts";

/** The system's syslog socket. */
export const SYSLOG_PATH = "/dev/log";
/** The tag of every record: `journalctl -t pi-sudo-prompt`. */
export const SYSLOG_TAG = "pi-sudo-prompt";
/** Severities: refusals are warnings, the rest info (facility authpriv, as sudo). */
export const SYSLOG_SEVERITY = { WARNING: 4, INFO: 6 } as const;

/** Why there is no syslog copy: nothing there (a container), not a socket, no FFI, no server. */
export const SYSLOG_ERRORS = {
  NO_SOCKET: "syslog_socket_missing",
  NOT_A_SOCKET: "syslog_not_a_socket",
  FFI_UNAVAILABLE: "ffi_unavailable",
  CONNECT_FAILED: "syslog_connect_failed",
} as const;
/** One of the values of {@link SYSLOG_ERRORS}. */
export type SyslogError = typeof SYSLOG_ERRORS[keyof typeof SYSLOG_ERRORS];

/** A connected syslog socket. `send` never waits: false when it dropped the line. */
export interface SyslogSink {
  send(line: string, severity?: number): boolean;
  stats(): { readonly sent: number; readonly dropped: number };
  close(): void;
}

const [AF_UNIX, SOCK_DGRAM, SOCK_NONBLOCK, SOCK_CLOEXEC] = [1, 2, 0o4000, 0o2000000];
const [MSG_DONTWAIT, MSG_NOSIGNAL, ENOTCONN, ECONNREFUSED] = [0x40, 0x4000, 107, 111];
const LOG_AUTHPRIV = 10 << 3;
const encoder = new TextEncoder();
/** Connects to the syslog socket at `path` (a `stat`, a `connect()`: no wait); never throws. */
export function openSyslog(path: string = SYSLOG_PATH): Result<{ sink: SyslogSink }, SyslogError> {
  try {
    if (!statSync(path).isSocket()) return { ok: false, reason: SYSLOG_ERRORS.NOT_A_SOCKET };
  } catch {
    return { ok: false, reason: SYSLOG_ERRORS.NO_SOCKET };
  }
  const c = libc();
  if (!c) return { ok: false, reason: SYSLOG_ERRORS.FFI_UNAVAILABLE };
  const name = encoder.encode(path); // sockaddr_un: family (little-endian), path, NUL
  const addr = Uint8Array.of(AF_UNIX, 0, ...name, 0);
  let fd = -1;
  try {
    if (name.length > 107 || name.includes(0)) throw path;
    fd = c.socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.connect(fd, addr, addr.length) !== 0) throw path;
  } catch {
    if (fd >= 0) c.close(fd);
    return { ok: false, reason: SYSLOG_ERRORS.CONNECT_FAILED };
  }
  let [sent, dropped, open] = [0, 0, true];
  const trySend = (msg: Uint8Array, again: boolean): boolean => {
    if (c.send(fd, msg, msg.length, MSG_DONTWAIT | MSG_NOSIGNAL) === msg.length) return true;
    const e = c.errno(); // EAGAIN: the daemon is behind, dropped. Gone (restarted): reconnect once.
    return again && (e === ECONNREFUSED || e === ENOTCONN) &&
      c.connect(fd, addr, addr.length) === 0 && trySend(msg, false);
  };
  const send = (line: string, severity: number = SYSLOG_SEVERITY.INFO): boolean => {
    const d = new Date().toString(); // RFC 3164, as syslog(3): <PRI>Mmm dd hh:mm:ss tag[pid]: text
    const stamp = d.slice(4, 10) + d.slice(15, 24);
    const msg = encoder.encode(
      `<${LOG_AUTHPRIV | severity}>${stamp} ${SYSLOG_TAG}[${process.pid}]: ${line}`,
    );
    try { // at most rsyslog's default 8 KiB
      if (open && msg.length <= 8192 && trySend(msg, true)) return (sent++, true);
    } catch { /* dropped */ }
    return (dropped++, false);
  };
  const close = () => {
    if (open) c.close(fd);
    open = false;
  };
  return { ok: true, sink: { send, stats: () => ({ sent, dropped }), close } };
}
