/**
 * `pi-sudo-prompt audit verify [path]`: checks each session's hash chain in the log and in
 * `path.1`; exit 0 when intact or no log yet, 1 when broken or unreadable, 2 on a usage error.
 * `audit tail [n] [path]`: the last `n` lines, control and bidi characters escaped so argv
 * cannot drive the terminal.
 *
 * @module
 */
import { lstat } from "node:fs/promises";
import process from "node:process";
import { parseArgs } from "node:util";
import { defaultAuditPath, escapeUnsafe } from "../extension/audit/entry.ts";
import { readAuditTail, verifyAuditChain } from "../extension/audit/verify.ts";
import { errnoCode } from "../shared/errno.ts";
import { msg } from "../shared/i18n/tools_locale.ts";

/**
 * True when neither `path` nor `path.1` exists; anything else there (a dangling symlink, an
 * unreadable file) is for {@link verifyAuditChain}.
 */
async function noLogYet(path: string): Promise<boolean> {
  for (const p of [path, `${path}.1`]) {
    if (await lstat(p).then(() => true, (e) => errnoCode(e) !== "ENOENT")) return false;
  }
  return true;
}

async function verify(args: string[]): Promise<number> {
  if (args.length > 1) return usage();
  const path = args[0] ?? defaultAuditPath();
  if (await noLogYet(path)) {
    say(msg.auditNoLog(path));
    return 0;
  }
  const r = await verifyAuditChain(path);
  if (!r.ok) {
    fail(
      msg.auditBroken(r.reason, r.line > 0 ? msg.auditFileLine(r.file, r.line) : r.file, r.detail),
    );
    return 1;
  }
  say(msg.auditOk(r.lines, r.sessions, r.files.length));
  return 0;
}

async function tail(args: string[]): Promise<number> {
  const counted = /^\d+$/.test(args[0] ?? "");
  const n = counted ? Number(args[0]) : 20;
  const rest = counted ? args.slice(1) : args;
  if (rest.length > 1 || n < 1 || n > 1000) return usage();
  const path = rest[0] ?? defaultAuditPath();
  const r = await readAuditTail(path, n);
  if (!r.ok) {
    fail(msg.auditTailUnreadable(r.reason, path));
    return 1;
  }
  for (const line of r.lines) say(line);
  return 0;
}

function say(line: string): void {
  process.stdout.write(escapeUnsafe(line) + "\n");
}

function fail(line: string): void {
  process.stderr.write(`audit: ${escapeUnsafe(line)}\n`);
}

function usage(): number {
  fail(msg.auditUsage);
  return 2;
}

async function main(argv: string[]): Promise<number> {
  let positionals: string[];
  try {
    ({ positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true }));
  } catch {
    return usage(); // an option: none is defined
  }
  const [command, ...args] = positionals;
  if (command === "verify") return await verify(args);
  if (command === "tail") return await tail(args);
  return usage();
}

process.stdout.on("error", () => process.exit(process.exitCode ?? 0)); // e.g. `| head`
process.exitCode = await main(process.argv.slice(2)).catch((e) => {
  fail(msg.auditError(e instanceof Error ? e.message : String(e)));
  return 1;
});
