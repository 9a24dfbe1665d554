/**
 * The one rule the root broker applies before a secret request is shown
 * without the red warning: the allowlist file is safe and its entries match
 * the argv exactly, and the program itself is protected (root-owned, not
 * writable by group/other, in root-owned directories that are not writable
 * by others), so the agent cannot swap the binary behind an approved path.
 * pi shows the broker's verdict: it has verified the broker through the
 * kernel, and the broker is root running root-owned files.
 *
 * @module
 */
import { ALLOWLIST_PATH } from "./paths.ts";
import { checkAllowlistFile, matchArgv } from "./allowlist.ts";
import { isProtectedPath } from "./protected_path.ts";

/** True only when `argv` (program already resolved to its real path) is allowlisted. */
export async function argvIsAllowlisted(argv: readonly string[]): Promise<boolean> {
  const list = await checkAllowlistFile(ALLOWLIST_PATH);
  return list.ok && matchArgv(list.entries, argv) && await isProtectedPath(argv[0]);
}
