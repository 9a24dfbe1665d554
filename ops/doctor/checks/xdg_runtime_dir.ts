/**
 * Doctor check `runtime_dir`: `XDG_RUNTIME_DIR` is a private directory of the user's, and the
 * session socket path built on it (or on the `/tmp` fallback) is one the launcher accepts.
 *
 * @module
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { isSafeFlagPath } from "../../../askpass/helper_permissions.ts";
import { defineCheck } from "../context.ts";
import { octal } from "../helpers.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

/** `sizeof(sun_path) - 1` on Linux: the longest Unix socket path. */
const SUN_PATH_MAX = 107;
const GROUP_OTHER_ANY = 0o077;

/** `XDG_RUNTIME_DIR` usable for the session directory. */
export const xdgRuntimeDirCheck = defineCheck("runtime_dir", "XDG_RUNTIME_DIR", async (ctx) => {
  const xdg = ctx.env.XDG_RUNTIME_DIR;
  let problem: string | undefined;
  let mode = "";
  if (xdg === undefined || xdg === "") problem = msg.xdgNotSet;
  else if (!xdg.startsWith("/")) problem = msg.xdgNotAbsolute(xdg);
  else {
    const st = await lstat(xdg).catch(() => undefined);
    if (!st) problem = msg.xdgMissing(xdg);
    else if (st.isSymbolicLink()) problem = msg.xdgSymlink(xdg);
    else if (!st.isDirectory()) problem = msg.xdgNotDirectory(xdg);
    else if (st.uid !== ctx.uid) problem = msg.xdgNotYours(xdg, st.uid);
    else if ((st.mode & GROUP_OTHER_ANY) !== 0) problem = msg.xdgOpen(xdg, octal(st.mode));
    else mode = msg.xdgMode(octal(st.mode));
  }
  const base = problem || !xdg ? "/tmp" : xdg;
  // What startSession builds: <base>/pi-sudo-prompt-XXXXXX/askpass.sock
  const socketPath = join(base, "pi-sudo-prompt-XXXXXX", "askpass.sock");
  if (!isSafeFlagPath(socketPath)) {
    return {
      status: "fail",
      detail: msg.xdgUnsafeBase(base),
      fix: msg.xdgUnsafeBaseFix,
    };
  }
  if (new TextEncoder().encode(socketPath).length > SUN_PATH_MAX) {
    return {
      status: "fail",
      detail: msg.xdgTooLong(socketPath, SUN_PATH_MAX),
      fix: msg.xdgTooLongFix,
    };
  }
  if (problem) {
    return {
      status: "warn",
      detail: msg.xdgFallback(problem),
      fix: msg.xdgFallbackFix,
    };
  }
  return { status: "ok", detail: msg.xdgOk(String(xdg), mode) };
});
