/**
 * The warning pi shows when the session cannot start, with the fix when there is
 * one: a missing pinned deno (`deno_not_found`) is fixed by installing this
 * package's dependencies in its own directory.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SESSION_START_ERRORS, type SessionStartError } from "./session_types.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** This package's directory (where `package.json` and `node_modules/` are). */
export const PACKAGE_ROOT: string = fileURLToPath(new URL("../..", import.meta.url));

/**
 * One line for `ctx.ui.notify` when the session did not start. A missing deno's fix installs the
 * dependencies of the package at `root`: `npm ci` in a checkout (it has a `package-lock.json`),
 * else `npm install --omit=dev`.
 */
export function startFailureNotice(reason: SessionStartError, root: string = PACKAGE_ROOT): string {
  const head = msg.disabled(reason);
  if (reason !== SESSION_START_ERRORS.DENO_NOT_FOUND) return `${head}; ${msg.sudoWillNotPrompt}`;
  const lockfile = existsSync(join(root, "package-lock.json"));
  return `${head}: ${msg.denoMissingFix(lockfile ? "npm ci" : "npm install --omit=dev", root)}`;
}
