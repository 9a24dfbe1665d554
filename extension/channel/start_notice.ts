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

/** Where the package's dependencies are installed, and how. */
export interface PackageInstall {
  readonly root: string;
  /** Whether it has a `package-lock.json` (a checkout): `npm ci`, else `npm install`. */
  readonly lockfile: boolean;
}

/** The install facts of the package at `root` (default {@link PACKAGE_ROOT}). */
export function packageInstall(root: string = PACKAGE_ROOT): PackageInstall {
  return { root, lockfile: existsSync(join(root, "package-lock.json")) };
}

/** The command that installs the package's dependencies, deno included. */
export function installCommand(install: PackageInstall): string {
  return install.lockfile ? "npm ci" : "npm install --omit=dev";
}

/** One line for `ctx.ui.notify` when the session did not start. */
export function startFailureNotice(reason: SessionStartError, install: PackageInstall): string {
  const head = msg.disabled(reason);
  if (reason === SESSION_START_ERRORS.DENO_NOT_FOUND) {
    return `${head}: ${msg.denoMissingFix(installCommand(install), install.root)}`;
  }
  return `${head}; ${msg.sudoWillNotPrompt}`;
}
