/**
 * This process's real uid, in one place. A function, not a constant, so the
 * module stays importable where `process.getuid` is absent (it answers -1,
 * which matches no file owner and no peer).
 *
 * @module
 */
import process from "node:process";

/** Our real uid, or -1 where the platform has none. */
export function ownUid(): number {
  return process.getuid?.() ?? -1;
}
