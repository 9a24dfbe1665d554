/**
 * `pi-sudo-prompt status`: what `/sudo-prompt status` shows that is stored on disk, one line each.
 * `/sudo-prompt status` runs it in a process of its own, so the allowlist parser and the audit
 * reader never load into pi; pi adds what only it knows.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import process from "node:process";
import { PROTOCOL_VERSION } from "../askpass/protocol.ts";
import { sanitizeUntrusted } from "../askpass/prompt_text.ts";
import { checkAllowlistFile } from "../broker/allowlist.ts";
import { parseBrokerVersion } from "../broker/broker_version.ts";
import { ALLOWLIST_PATH, BROKER_VERSION_FILE } from "../broker/paths.ts";
import { defaultAuditPath } from "../extension/audit/entry.ts";
import { readAuditTail } from "../extension/audit/verify.ts";
import { msg } from "../shared/i18n/tools_locale.ts";

/** The stored state's lines: broker, allowlist, a blank line, the audit log and its tail. */
async function storedStatusLines(): Promise<string[]> {
  const lines: string[] = [];
  const broker = await readFile(BROKER_VERSION_FILE, "utf8").catch(() => undefined);
  if (broker === undefined) lines.push(msg.statusBrokerMissing);
  else {
    const { version = "?", protocol = "?" } = parseBrokerVersion(broker);
    lines.push(
      protocol === PROTOCOL_VERSION
        ? msg.statusBroker(version, String(protocol))
        : msg.statusBrokerDiffers(version, String(protocol)),
    );
  }
  const allow = await checkAllowlistFile(ALLOWLIST_PATH);
  lines.push(
    allow.ok
      ? msg.statusAllowlist(allow.entries.length)
      : msg.statusAllowlistRefused(allow.reason.replaceAll("_", " ")),
  );
  const auditPath = defaultAuditPath();
  const tail = await readAuditTail(auditPath, 10);
  lines.push("", `${msg.statusAuditLog}: ${auditPath}`);
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

if (process.argv.length > 2) {
  console.error("usage: pi-sudo-prompt status");
  process.exitCode = 2;
} else {
  for (const line of await storedStatusLines()) console.log(line);
}
