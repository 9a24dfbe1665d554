/**
 * The `code` of a failed system call (`"ENOENT"`, `"EACCES"` …) from
 * whatever a `node:fs` / `node:net` call threw, in one place: callers decide
 * on the code, never on the message.
 *
 * @module
 */

/** The errno name carried by `e`, or `undefined` when `e` carries none. */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e && typeof e.code === "string"
    ? e.code
    : undefined;
}
