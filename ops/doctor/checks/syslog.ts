/**
 * Doctor check `syslog` (ADR 0004): the audit log is a file of the user's,
 * which the agent can rewrite; the copy it cannot change goes to the system
 * log through `/dev/log`, where sudo logs too. Without that socket (a
 * container, no journald or rsyslog) there is no such copy.
 *
 * @module
 */
import { SYSLOG_ERRORS, syslogSocketStatus } from "../../../extension/audit/syslog.ts";
import { defineCheck } from "../context.ts";

/** Whether audit records reach the system log. */
export const syslogCheck = defineCheck("syslog", "system log", (ctx) => {
  const status = syslogSocketStatus(ctx.syslogPath);
  if (status.ok) {
    return {
      status: "ok",
      detail: `${status.path} takes the audit records (journalctl -t pi-sudo-prompt), ` +
        "where sudo logs too and the agent cannot change them",
    };
  }
  const why = status.reason === SYSLOG_ERRORS.NO_SOCKET
    ? "there is none"
    : status.reason === SYSLOG_ERRORS.NOT_A_SOCKET
    ? "it is not a socket"
    : status.reason === SYSLOG_ERRORS.FFI_UNAVAILABLE
    ? "koffi FFI does not load"
    : "nothing accepts a connection on it";
  return {
    status: "warn",
    detail: `no system-log copy of the audit log: ${status.path}: ${why} (${status.reason}); ` +
      "the audit file alone is yours, so the agent could rewrite it",
    fix: "run a syslog daemon (systemd-journald or rsyslog) that serves /dev/log",
  };
});
