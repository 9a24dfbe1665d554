/**
 * `pi-sudo-prompt allowlist suggest|check`: the steps of `/sudo-prompt allow` that need the
 * allowlist's grammar, in a process of their own so the parser never loads into pi. Prints one
 * line of JSON, `{"ok":true,"line":…}` or `{"ok":false,"message":…}`; exit 2 on bad arguments.
 *
 * @module
 */
import process from "node:process";
import { checkAllowlistFile, checkShape, suggestShape } from "../broker/allowlist.ts";
import { ALLOWLIST_PATH } from "../broker/paths.ts";
import { msg } from "../shared/i18n/tools_locale.ts";

const USAGE = "usage: pi-sudo-prompt allowlist suggest ARGV_JSON | allowlist check LINE ARGV_JSON";

/** The argv a request showed, as JSON: a non-empty array of strings. */
function parseArgv(text: string | undefined): string[] | undefined {
  try {
    const v: unknown = JSON.parse(text ?? "");
    return Array.isArray(v) && v.length > 0 && v.every((a) => typeof a === "string")
      ? v
      : undefined;
  } catch {
    return undefined;
  }
}

async function answer(args: readonly string[]): Promise<Record<string, unknown> | undefined> {
  const [sub, ...rest] = args;
  if (sub === "suggest" && rest.length === 1) {
    const argv = parseArgv(rest[0]);
    if (!argv) return undefined;
    const file = await checkAllowlistFile(ALLOWLIST_PATH);
    if (!file.ok) {
      const why = file.reason.replaceAll("_", " ");
      return { ok: false, message: msg.allowlistUnsafe(ALLOWLIST_PATH, why) };
    }
    const s = suggestShape(argv);
    return s.ok
      ? { ok: true, line: s.line }
      : { ok: false, message: msg.allowlistNoEntry(s.reason) };
  }
  if (sub === "check" && rest.length === 2) {
    const argv = parseArgv(rest[1]);
    if (!argv) return undefined;
    const c = checkShape(rest[0], argv);
    return c.ok
      ? { ok: true, line: c.line }
      : { ok: false, message: msg.allowlistNoMatch(c.reason) };
  }
  return undefined;
}

const result = await answer(process.argv.slice(2));
if (result) console.log(JSON.stringify(result));
else {
  console.error(USAGE);
  process.exitCode = 2;
}
