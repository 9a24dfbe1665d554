/**
 * Bounded, asynchronous reads of `/proc` files for the peer verification.
 * Every read has a byte cap, so a hostile process with a huge environment or
 * argv costs bounded memory, and nothing here blocks pi's event loop.
 *
 * @module
 */
import { open, readlink, stat } from "node:fs/promises";
import type { Stats } from "node:fs";
import { errnoCode } from "../shared/errno.ts";

/** Default cap for `cmdline`/`environ`; larger files are refused, not truncated. */
export const PROC_READ_CAP = 64 * 1024;

/** Reads at most `cap` bytes of `path`; `undefined` if missing, unreadable or larger. */
export async function readProcFile(
  path: string,
  cap = PROC_READ_CAP,
): Promise<Uint8Array | undefined> {
  const handle = await open(path, "r").catch(() => undefined);
  if (!handle) return undefined;
  try {
    const buf = new Uint8Array(cap + 1);
    let total = 0;
    while (total <= cap) {
      const { bytesRead } = await handle.read(buf, total, buf.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    return total > cap ? undefined : buf.slice(0, total);
  } catch {
    return undefined;
  } finally {
    // Not awaited: the bytes are read, and waiting for the close would add a
    // thread-pool round trip to each read between a request and its modal.
    void handle.close().catch(() => {});
  }
}

/** Reads a small `/proc` text file (`stat`, `status`, `comm`) as UTF-8. */
export async function readProcText(path: string, cap = 8 * 1024): Promise<string | undefined> {
  const bytes = await readProcFile(path, cap);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}

/**
 * `readlink` that returns `undefined` instead of throwing, or `gone` (if given)
 * for a vanished link: a closed descriptor is told apart from an unreadable one.
 */
export async function readProcLink<G = undefined>(
  path: string,
  gone?: G,
): Promise<string | G | undefined> {
  return await readlink(path).catch((e) => errnoCode(e) === "ENOENT" ? gone : undefined);
}

/** `stat` (following the magic link) that returns `undefined` instead of throwing. */
export async function statProcPath(path: string): Promise<Stats | undefined> {
  return await stat(path).catch(() => undefined);
}
