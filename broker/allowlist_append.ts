/**
 * `allowlist-append ENTRY` (root, through sudo, from `/sudo-prompt allow`): appends one entry,
 * valid in the very grammar the broker parses (`appendEntryText`), to an allowlist that passes
 * the broker's checks, so an append can never make the list count as empty. It never follows a
 * symlink, never creates the file, and keeps comments, owner and mode. Refusals: one line on
 * stderr, exit status 1.
 *
 * @module
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { ALLOWLIST_PATH } from "./paths.ts";
import { appendEntryText, checkAllowlistFile, formatEntry } from "./allowlist.ts";

/** Why `allowlist-append` refuses (after `allowlist-append: `). */
export const APPEND_REFUSALS = {
  NOT_ROOT: "must run as root",
  USAGE: "usage: allowlist-append 'ENTRY'",
  CONTROL: "control characters (a newline?) in the entry: refusing",
  INVALID: "not one valid allowlist entry",
  FILE: "the allowlist is missing or unsafe (install the broker first): refusing",
  CHANGED: "the allowlist changed while appending: refusing",
} as const;

function die(reason: string): never {
  console.error(`allowlist-append: ${reason}`);
  Deno.exit(1);
}

async function main(): Promise<void> {
  if (Deno.uid() !== 0) die(APPEND_REFUSALS.NOT_ROOT);
  if (Deno.args.length !== 1) die(APPEND_REFUSALS.USAGE);
  const entry = Deno.args[0];
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f]/.test(entry)) die(APPEND_REFUSALS.CONTROL);
  const file = await checkAllowlistFile(ALLOWLIST_PATH);
  if (!file.ok) die(`${APPEND_REFUSALS.FILE} (${file.reason})`);
  const next = appendEntryText(file.text, entry);
  if (!next.ok) die(`${APPEND_REFUSALS.INVALID} (${next.syntax ?? next.reason})`);
  if (file.entries.some((e) => formatEntry(e) === next.line)) {
    console.log(`allowlist-append: already present: ${next.line}`);
    return;
  }
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW;
  const handle = await open(ALLOWLIST_PATH, flags).catch(() => die(APPEND_REFUSALS.FILE));
  try {
    // Still the file that was checked: same size, root's, not writable by others.
    const st = await handle.stat();
    const size = new TextEncoder().encode(file.text).length;
    if (!st.isFile() || st.uid !== 0 || (st.mode & 0o022) !== 0 || st.size !== size) {
      die(APPEND_REFUSALS.CHANGED);
    }
    await handle.write(next.text.slice(file.text.length));
  } finally {
    await handle.close();
  }
  console.log(`allowlist-append: added: ${next.line}`);
}

if (import.meta.main) main().catch(() => die("internal error"));
