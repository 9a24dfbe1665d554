/**
 * `/sudo-prompt status`: where the session lives, which helper and broker
 * are in use, the queue, the allowlist state, and the last audit entries.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import { PROTOCOL_VERSION } from "../../askpass/protocol.ts";
import { PACKAGE_VERSION } from "../../askpass/version.ts";
import { checkAllowlistFile } from "../../broker/allowlist.ts";
import { ALLOWLIST_PATH, BROKER_VERSION_FILE } from "../../broker/paths.ts";
import { defaultAuditPath } from "../audit/entry.ts";
import { readAuditTail } from "../audit/verify.ts";
import type { AskpassSession } from "../channel/session_server.ts";
import { sanitizeUntrusted } from "../../askpass/prompt_text.ts";
import { terminalGuardStatus } from "../keyboard/terminal_guard.ts";
import { parseBrokerVersion } from "../../broker/broker_version.ts";

/** What the session's audit log reports of itself (`AuditLog.stats()`). */
export interface AuditStats {
  readonly syslog: string;
  readonly syslogSent: number;
  readonly syslogDropped: number;
}

/**
 * The status panel's lines (plain text). `audit`: the session's audit log
 * counts, so the system-log line says what this session's copy really did.
 */
export async function statusLines(
  session: AskpassSession | undefined,
  audit?: AuditStats,
): Promise<string[]> {
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
  const broker = await readFile(BROKER_VERSION_FILE, "utf8").catch(() => undefined);
  if (broker === undefined) lines.push("broker: not installed (/sudo-prompt install-broker)");
  else {
    const { version = "?", protocol = "?" } = parseBrokerVersion(broker);
    const match = protocol === PROTOCOL_VERSION ? "matches" : "DIFFERS: reinstall it";
    lines.push(`broker: version ${version}, protocol ${protocol} (${match})`);
  }
  const allow = await checkAllowlistFile(ALLOWLIST_PATH);
  lines.push(
    allow.ok
      ? `allowlist: ${allow.entries.length} entr${allow.entries.length === 1 ? "y" : "ies"}`
      : `allowlist: ${allow.reason.replaceAll("_", " ")} (counts as empty)`,
  );
  const auditPath = defaultAuditPath();
  const tail = await readAuditTail(auditPath, 10);
  lines.push(
    "",
    `audit log: ${auditPath}`,
    !audit
      ? "  not open in this session"
      : audit.syslog === "ok"
      ? `  copy in the system log (journalctl -t pi-sudo-prompt): ${audit.syslogSent} sent, ` +
        `${audit.syslogDropped} dropped`
      : `  no copy in the system log: ${audit.syslog.replaceAll("_", " ")}`,
  );
  if (!tail.ok) lines.push(`  (${tail.reason.replaceAll("_", " ")})`);
  else lines.push(...tail.lines.map((l) => `  ${summarizeAuditLine(l)}`));
  return lines;
}

/** One audit line as `time kind event decision reason argv`, for the panel. */
function summarizeAuditLine(line: string): string {
  try {
    const e = JSON.parse(line);
    const argv = Array.isArray(e.argv) ? ` ${e.argv.join(" ")}` : "";
    const why = e.reason ? ` (${e.reason})` : "";
    // argv is whatever the agent ran: strip escapes before it reaches the terminal.
    return sanitizeUntrusted(`${e.time ?? ""} ${e.kind ?? ""} ${e.event ?? ""}${why}${argv}`, 300);
  } catch {
    return sanitizeUntrusted(line, 200);
  }
}
