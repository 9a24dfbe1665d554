/**
 * Whether only root can change a file: the test behind hardened mode's root-owned copies, the
 * broker's allowlisted programs and the root checks pi runs through sudo. Runtime-neutral.
 *
 * @module
 */
import { lstat } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * True when `path` (a real path: no symlink in it) is a root-owned regular file and every
 * directory above it is root's, all without group/other write.
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
