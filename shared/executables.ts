/**
 * Where programs are: the deno binary the askpass launcher pins (`@deno/<os>-<arch>-glibc/deno`,
 * as a real path because `/proc/<pid>/exe` shows one), and the first executable of absolute paths.
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
      // not there or not executable: the next one
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
