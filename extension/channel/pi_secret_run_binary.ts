/**
 * The compiled `pi-secret-run` (`deno task compile`, `broker/compile.sh`):
 * when `dist/pi-secret-run` is there, a regular executable file, and not
 * older than any source compiled into it, a session's `bin/pi-secret-run`
 * runs it instead of `deno run` with the pinned flags (same client, same
 * permissions, baked in at compile time). A binary older than its sources
 * (a `git pull` after the build) is stale and not used.
 *
 * The client is not trusted either way: the broker and pi verify through the
 * kernel, never through what runs `sudo -n` (docs/permissions.md).
 *
 * @module
 */
import { constants } from "node:fs";
import { access, lstat } from "node:fs/promises";
import { join } from "node:path";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";

/** Where `deno task compile` writes the binary, relative to the package root. */
export const COMPILED_PI_SECRET_RUN = "dist/pi-secret-run";

/**
 * The local modules compiled into the binary (`broker/pi_secret_run.ts` and
 * its imports), relative to the package root; a unit test compares this list
 * with `deno info`.
 */
export const PI_SECRET_RUN_SOURCES: readonly string[] = [
  "askpass/helper_permissions.ts",
  "askpass/protocol.ts",
  "broker/broker_permissions.ts",
  "broker/paths.ts",
  "broker/broker_version.ts",
  "broker/pi_secret_run.ts",
];

/**
 * Why the compiled binary is not used:
 * - `absent`: nothing at {@link COMPILED_PI_SECRET_RUN} (never compiled, or the build was skipped).
 * - `not_regular_file`: a symlink, a directory or anything else that is not a regular file.
 * - `not_executable`
 * - `stale`: older than one of {@link PI_SECRET_RUN_SOURCES}.
 */
export const COMPILED_BINARY_REFUSALS = reasons(
  "absent",
  "not_regular_file",
  "not_executable",
  "stale",
);

/**
 * The compiled `pi-secret-run` of the package at `packageRoot` (absolute),
 * if it exists, is a regular file (not a symlink) this user may execute, and
 * is not older than its sources; else why not. A missing source does not
 * count against it.
 */
export async function compiledPiSecretRun(
  packageRoot: string,
): Promise<Result<{ path: string }, ReasonOf<typeof COMPILED_BINARY_REFUSALS>>> {
  const path = join(packageRoot, COMPILED_PI_SECRET_RUN);
  const { ABSENT, NOT_REGULAR_FILE, NOT_EXECUTABLE, STALE } = COMPILED_BINARY_REFUSALS;
  const binary = await lstat(path).catch(() => undefined);
  if (!binary) return { ok: false, reason: ABSENT };
  if (!binary.isFile()) return { ok: false, reason: NOT_REGULAR_FILE };
  if (!await access(path, constants.X_OK).then(() => true, () => false)) {
    return { ok: false, reason: NOT_EXECUTABLE };
  }
  for (const source of PI_SECRET_RUN_SOURCES) {
    const st = await lstat(join(packageRoot, source)).catch(() => undefined);
    if (st && st.mtimeMs > binary.mtimeMs) return { ok: false, reason: STALE };
  }
  return { ok: true, path };
}
