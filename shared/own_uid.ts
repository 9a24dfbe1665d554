/**
 * This process's real uid; a function so the module loads where `process.getuid` is absent.
 * @module
 */
import process from "node:process";

/** Our real uid, or -1 (no file owner, no peer) where the platform has none. */
export function ownUid(): number {
  return process.getuid?.() ?? -1;
}
