/**
 * Where programs are: the deno binary that the askpass launcher pins (the
 * platform package that the `deno` npm dependency installs,
 * `@deno/<os>-<arch>-glibc/deno`, resolved to its real path because
 * `/proc/<pid>/exe` shows the real path), and the first executable among
 * absolute paths (sudo, tmux, env).
 *
 * @module
 */
import { access, realpath } from "node:fs/promises";
import { constants } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import process from "node:process";

/** Absolute real path of the pinned deno binary, or `undefined` if not installed. */
export async function resolveDenoBinary(): Promise<string | undefined> {
  const require = createRequire(import.meta.url);
  for (const pkg of [`@deno/${process.platform}-${process.arch}-glibc`, "deno"]) {
    try {
      const candidate = join(dirname(require.resolve(`${pkg}/package.json`)), "deno");
      await access(candidate, constants.X_OK);
      return await realpath(candidate);
    } catch {
      // not installed under that name, or not executable: try the next one
    }
  }
  return undefined;
}

/** The first executable among absolute `paths`, or `undefined`. */
export async function firstExecutable(paths: readonly string[]): Promise<string | undefined> {
  for (const p of paths) {
    if (await access(p, constants.X_OK).then(() => true, () => false)) return p;
  }
  return undefined;
}
