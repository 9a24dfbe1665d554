/**
 * `pi-sudo-prompt audit` (`deno task audit` in a checkout): checks and shows the audit log.
 *
 * - `audit verify [path]`: verifies the hash chain of the log
 *   (default {@link defaultAuditPath}), its rotated files and its head file.
 *   Exit 0 when intact, or when there is no log yet (nothing at the path,
 *   no rotated file, no head file: "no audit log yet"); 1 when broken or
 *   unreadable; 2 on a usage error.
 * - `audit tail [n] [path]`: the last `n` lines (default 20), one
 *   per line, as JSON with every control and bidi character escaped so argv
 *   cannot drive the terminal.
 *
 * Errors are one line on stderr, never a stack trace. Runs under Node ≥ 22.19,
 * through `bin/pi-sudo-prompt.mjs`.
 *
 * @module
 */
import { lstat } from "node:fs/promises";
import process from "node:process";
import { defaultAuditPath, HEAD_SUFFIX, readAuditTail, verifyAuditChain } from "./audit_log.ts";

const USAGE = "usage: pi-sudo-prompt audit verify [path] | pi-sudo-prompt audit tail [n] [path]";

// C0/C1 controls, DEL, bidi controls and line/paragraph separators.
// deno-lint-ignore no-control-regex -- escaping control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/**
 * `text` with every unsafe character written as `\uXXXX`. Inside a JSON
 * string that is the same string, so a line stays valid, faithful JSON.
 */
function escapeForTerminal(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * True when pi has never written a log at `path`: neither the file, nor its
 * first rotated file, nor its head file exists. Anything else there (a
 * dangling symlink, an unreadable file) is for {@link verifyAuditChain}.
 */
async function noLogYet(path: string): Promise<boolean> {
  for (const p of [path, `${path}.1`, path + HEAD_SUFFIX]) {
    try {
      await lstat(p);
      return false;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") return false;
    }
  }
  return true;
}

async function verify(args: string[]): Promise<number> {
  if (args.length > 1) return usage();
  const path = args[0] ?? defaultAuditPath();
  if (await noLogYet(path)) {
    say(
      `audit: no audit log yet (looked for ${path}); pi creates it when an interactive session starts with this extension`,
    );
    return 0;
  }
  const r = await verifyAuditChain(path);
  if (!r.ok) {
    const where = r.line > 0 ? `${r.file} line ${r.line}` : r.file;
    fail(`${r.reason} at ${where}: ${r.detail}`);
    return 1;
  }
  for (const n of r.notices) say(`audit: note: ${n.file} line ${n.line}: ${n.detail}`);
  const seqs = r.lastSeq === undefined ? "empty" : `seq ${r.firstSeq}..${r.lastSeq}`;
  const end = r.headChecked
    ? "end matches the head file"
    : "end not checked (no head file): truncation of the end would not show";
  say(`audit: ok: ${r.lines} lines (${seqs}) in ${r.files.length} file(s); ${end}`);
  return 0;
}

async function tail(args: string[]): Promise<number> {
  let n = 20;
  let rest = args;
  if (rest.length > 0 && /^\d+$/.test(rest[0])) {
    n = Number(rest[0]);
    rest = rest.slice(1);
  }
  if (rest.length > 1 || n < 1 || n > 1000) return usage();
  const path = rest[0] ?? defaultAuditPath();
  const r = await readAuditTail(path, n);
  if (!r.ok) {
    fail(`${r.reason}: ${path}: missing, a symlink, not a regular file, or unreadable`);
    return 1;
  }
  for (const line of r.lines) say(line);
  return 0;
}

function say(line: string): void {
  process.stdout.write(escapeForTerminal(line) + "\n");
}

function fail(line: string): void {
  process.stderr.write(`audit: ${escapeForTerminal(line)}\n`);
}

function usage(): number {
  fail(USAGE);
  return 2;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === "verify") return await verify(args);
  if (command === "tail") return await tail(args);
  return usage();
}

process.stdout.on("error", () => process.exit(process.exitCode ?? 0)); // e.g. `| head`
try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  fail(`error: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}
