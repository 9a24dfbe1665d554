/**
 * The rule the root broker applies before a secret request shows without the red warning: a safe
 * allowlist matches the argv exactly, and the program is protected (root's, in root's
 * directories), so the agent cannot swap the binary behind an approved path. Why pi shows the
 * broker's verdict: ADR 0002, point 3 (amended, issue 35).
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
