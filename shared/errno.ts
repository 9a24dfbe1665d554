/**
 * The `code` (`"ENOENT"` …) of what a `node:fs` / `node:net` call threw: callers decide on the
 * code, never on the message.
 * @module
 */

/** The errno name carried by `e`, or `undefined` when `e` carries none. */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e && typeof e.code === "string"
    ? e.code
    : undefined;
}
