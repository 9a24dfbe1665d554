/**
 * Doctor check `syslog` (ADR 0004): the copy of the audit log the agent cannot change goes to the
 * system log through `/dev/log`; without that socket (a container) there is no such copy.
 *
 * @module
 */
import { openSyslog, SYSLOG_ERRORS } from "../../../extension/audit/syslog.ts";
import { defineCheck } from "../context.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

/** Whether audit records reach the system log. */
export const syslogCheck = defineCheck("syslog", msg.syslogTitle, (ctx) => {
  // Whether the socket accepts a connection: nothing is sent, nothing waits.
  const status = openSyslog(ctx.syslogPath);
  if (status.ok) {
    status.sink.close();
    return { status: "ok", detail: msg.syslogOk(ctx.syslogPath) };
  }
  const why = status.reason === SYSLOG_ERRORS.NO_SOCKET
    ? msg.syslogNone
    : status.reason === SYSLOG_ERRORS.NOT_A_SOCKET
    ? msg.syslogNotSocket
    : status.reason === SYSLOG_ERRORS.FFI_UNAVAILABLE
    ? msg.syslogNoFfi
    : msg.syslogRefused;
  return {
    status: "warn",
    detail: msg.syslogMissing(ctx.syslogPath, why, status.reason),
    fix: msg.syslogMissingFix,
  };
});
