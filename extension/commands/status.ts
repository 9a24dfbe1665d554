/**
 * `/sudo-prompt status`: what only pi knows (its version, its session and
 * queue, its terminal, its audit log's system-log copy), around the stored
 * state that `pi-sudo-prompt status` reads in a process of its own (the
 * installed broker, the allowlist, the audit log's last entries).
 *
 * @module
 */
import { PROTOCOL_VERSION } from "../../askpass/protocol.ts";
import { PACKAGE_VERSION } from "../../askpass/version.ts";
import type { AskpassSession } from "../channel/session_server.ts";
import { terminalGuardStatus } from "../keyboard/terminal_guard.ts";

/** What the session's audit log reports of itself (`AuditLog.stats()`). */
export interface AuditStats {
  readonly syslog: string;
  readonly syslogSent: number;
  readonly syslogDropped: number;
}

/**
 * The status panel's lines (plain text). `stored`: the lines of
 * `pi-sudo-prompt status`; `audit`: the session's audit log counts, placed
 * under the stored `audit log:` line, so the system-log line says what this
 * session's copy really did.
 */
export function statusLines(
  session: AskpassSession | undefined,
  stored: readonly string[],
  audit?: AuditStats,
): string[] {
  const lines = [`version ${PACKAGE_VERSION}, protocol ${PROTOCOL_VERSION}`];
  if (session) {
    lines.push(
      `session directory: ${session.dir}`,
      `askpass launcher: ${session.launcherPath}`,
      `queue: ${session.pendingCount()} request(s) pending`,
    );
  } else {
    lines.push("session: not active (not interactive, or it failed to start)");
  }
  const guard = terminalGuardStatus();
  if (guard.started) {
    const tty = guard.ttyPath
      ? `${guard.ttyPath} ${guard.exclusive ? "exclusive" : "NOT exclusive"}` +
        (guard.guardianPid
          ? ` (guardian pid ${guard.guardianPid}${guard.guardianRootOwned ? ", root-owned" : ""})`
          : " (no guardian)")
      : "no terminal";
    lines.push(`keyboard: ${tty}; pi ${guard.nonDumpable ? "non-dumpable" : "DUMPABLE"}`);
  }
  const sink = !audit
    ? "  not open in this session"
    : audit.syslog === "ok"
    ? `  copy in the system log (journalctl -t pi-sudo-prompt): ${audit.syslogSent} sent, ` +
      `${audit.syslogDropped} dropped`
    : `  no copy in the system log: ${audit.syslog.replaceAll("_", " ")}`;
  const at = stored.findIndex((l) => l.startsWith("audit log: "));
  if (at < 0) return [...lines, ...stored, sink];
  return [...lines, ...stored.slice(0, at + 1), sink, ...stored.slice(at + 1)];
}
