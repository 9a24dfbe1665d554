/**
 * The one rule both the root broker and the extension apply before a secret
 * request is shown without the red warning: the allowlist file is safe and
 * its entries match the argv exactly, and the program itself is protected
 * (root-owned, not writable by group/other, in root-owned directories that
 * are not writable by others), so the agent cannot swap the binary behind an
 * approved path.
 *
 * @module
 */
import { lstat } from "node:fs/promises";
import { dirname } from "node:path";
import { ALLOWLIST_PATH } from "./paths.ts";
import { checkAllowlistFile, matchArgv } from "./allowlist.ts";

/** True only when `argv` (program already resolved to its real path) is allowlisted. */
export async function argvIsAllowlisted(argv: readonly string[]): Promise<boolean> {
  const list = await checkAllowlistFile(ALLOWLIST_PATH);
  return list.ok && matchArgv(list.entries, argv) && await isProtectedPath(argv[0]);
}

/**
 * True when `path` (a real path: no symlink in it) is a regular file owned by
 * root without group/other write, and every directory above it is owned by
 * root without group/other write.
 */
export async function isProtectedPath(path: string): Promise<boolean> {
  if (!path.startsWith("/")) return false;
  const file = await lstat(path).catch(() => undefined);
  if (!file?.isFile() || file.uid !== 0 || (file.mode & 0o022) !== 0) return false;
  for (let dir = dirname(path);; dir = dirname(dir)) {
    const d = await lstat(dir).catch(() => undefined);
    if (!d?.isDirectory() || d.uid !== 0 || (d.mode & 0o022) !== 0) return false;
    if (dir === "/") return true;
  }
}
