/**
 * `/sudo-prompt status`: what only pi knows (session, queue, terminal, the syslog copy), around
 * the stored state that `pi-sudo-prompt status` reads in its own process.
 * @module
 */
import { PROTOCOL_VERSION } from "../../askpass/protocol.ts";
import { PACKAGE_VERSION } from "../../askpass/version.ts";
import type { AskpassSession } from "../channel/session_server.ts";
import { terminalGuardStatus } from "../keyboard/terminal_guard.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** What the session's audit log reports of itself (`AuditLog.stats()`). */
export interface AuditStats {
  readonly syslog: string;
  readonly syslogSent: number;
  readonly syslogDropped: number;
}

/**
 * The status panel's lines: pi's own, then `stored` (from `pi-sudo-prompt status`) with this
 * session's syslog counts under its `audit log:` line.
 */
export function statusLines(
  session: AskpassSession | undefined,
  stored: readonly string[],
  audit?: AuditStats,
): string[] {
  const lines = [msg.statusVersion(PACKAGE_VERSION, PROTOCOL_VERSION)];
  if (session) {
    lines.push(
      msg.statusSessionDir(session.dir),
      msg.statusLauncher(session.launcherPath),
      msg.statusQueue(session.pendingCount()),
    );
  } else {
    lines.push(msg.statusNoSession);
  }
  const guard = terminalGuardStatus();
  if (guard.started) {
    const tty = guard.ttyPath
      ? (guard.exclusive
        ? msg.statusExclusive(guard.ttyPath)
        : msg.statusNotExclusive(guard.ttyPath)) +
        (guard.guardianPid
          ? (guard.guardianRootOwned
            ? msg.statusRootGuardian(guard.guardianPid)
            : msg.statusGuardian(guard.guardianPid))
          : msg.statusNoGuardian)
      : msg.statusNoTerminal;
    lines.push(guard.nonDumpable ? msg.statusKeyboard(tty) : msg.statusKeyboardDumpable(tty));
  }
  const sink = !audit
    ? msg.statusAuditNotOpen
    : audit.syslog === "ok"
    ? msg.statusSyslogCopy(audit.syslogSent, audit.syslogDropped)
    : msg.statusNoSyslogCopy(audit.syslog.replaceAll("_", " "));
  // `pi-sudo-prompt status` runs with pi's environment: its heading is in the same language.
  const at = stored.findIndex((l) => l.startsWith(`${msg.statusAuditLog}: `));
  if (at < 0) return [...lines, ...stored, sink];
  return [...lines, ...stored.slice(0, at + 1), sink, ...stored.slice(at + 1)];
}
