/**
 * The compiled `pi-secret-run` (docs/compile.md): a session's `bin/pi-secret-run`
 * runs it instead of `deno run` when it is a regular executable file not older than
 * its sources (a `git pull` after the build makes it stale). The client is not
 * trusted either way: broker and pi verify through the kernel (docs/permissions.md).
 *
 * @module
 */
import { constants } from "node:fs";
import { access, lstat } from "node:fs/promises";
import { join } from "node:path";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";

/** Where `deno task compile` writes the binary, relative to the package root. */
export const COMPILED_PI_SECRET_RUN = "dist/pi-secret-run";

/** The local modules compiled into the binary; a unit test compares this list with `deno info`. */
export const PI_SECRET_RUN_SOURCES: readonly string[] = [
  "askpass/helper_permissions.ts",
  "askpass/protocol.ts",
  "broker/broker_permissions.ts",
  "broker/paths.ts",
  "broker/broker_version.ts",
  "broker/pi_secret_run.ts",
];

/** Why the compiled binary is not used (`stale`: older than one of its sources). */
export const COMPILED_BINARY_REFUSALS = reasons(
  "absent",
  "not_regular_file",
  "not_executable",
  "stale",
);

/** The compiled `pi-secret-run` under `packageRoot` if usable, else why not. */
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
