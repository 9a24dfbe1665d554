/**
 * Where the guardian and the lock keeper run from. Both are exempt from the
 * holder scans, so in hardened mode they run only root-owned deno, sources and
 * cache, which the agent cannot change (ADR 0008, 0009), and only when the
 * broker was installed from this package's version (ADR 0009, issue 36).
 *
 * @module
 */
import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { resolveDenoBinary } from "../../shared/executables.ts";
import { isProtectedPath } from "../../broker/protected_path.ts";
import { BROKER_ROOT, BROKER_VERSION_FILE, ROOT_DENO, ROOT_SOURCES } from "../../broker/paths.ts";
import { parseBrokerVersion } from "../../broker/broker_version.ts";
import { PACKAGE_VERSION } from "../../askpass/version.ts";

/** Where one entry point runs from. */
export interface EntrySource {
  readonly deno: string;
  /** The entry point's real path. */
  readonly path: string;
  readonly denoDir: string;
  readonly rootOwned: boolean;
}

let packageCache: Promise<string> | undefined;

function processCache(): Promise<string> {
  packageCache ??= mkdtemp(join(tmpdir(), "pi-sudo-prompt-deno-")).then((dir) => {
    process.once("exit", () => void rm(dir, { recursive: true, force: true }).catch(() => {}));
    return dir;
  });
  return packageCache;
}

/**
 * The source of `entry`, which imports exactly `files` (the entry included, as
 * the installer copies them): root-owned when every one is root-protected.
 */
export async function entrySource(
  entry: string,
  files: readonly string[],
): Promise<EntrySource | undefined> {
  const root = [ROOT_DENO, ...files.map((f) => `${ROOT_SOURCES}/${f}`)];
  const installed = await readFile(BROKER_VERSION_FILE, "utf8").then(parseBrokerVersion, () => ({
    version: undefined,
  }));
  if (
    installed.version === PACKAGE_VERSION &&
    (await Promise.all(root.map(isProtectedPath))).every(Boolean)
  ) {
    return {
      deno: ROOT_DENO,
      path: `${ROOT_SOURCES}/${entry}`,
      denoDir: `${BROKER_ROOT}/deno-cache`,
      rootOwned: true,
    };
  }
  const deno = await resolveDenoBinary();
  if (!deno) return undefined;
  const path = await realpath(fileURLToPath(new URL(`../../${entry}`, import.meta.url)));
  return { deno, path, denoDir: await processCache(), rootOwned: false };
}

/** The libc pi has mapped: an entry point may load exactly that file (`--allow-ffi`). */
export function libcPath(): string | undefined {
  try {
    const maps = readFileSync("/proc/self/maps", "utf8");
    return /\s(\/\S*\/libc\.so\.6)$/m.exec(maps)?.[1];
  } catch {
    return undefined;
  }
}
