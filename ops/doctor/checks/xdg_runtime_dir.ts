/**
 * Doctor check `runtime_dir`: whether `XDG_RUNTIME_DIR` is a private
 * directory of the user's, and whether the session socket path built on it
 * (or on the `/tmp` fallback) is one the launcher accepts.
 *
 * @module
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { isSafeFlagPath } from "../../../askpass/helper_permissions.ts";
import { defineCheck } from "../context.ts";
import { octal } from "../helpers.ts";

/** `sizeof(sun_path) - 1` on Linux: the longest Unix socket path. */
const SUN_PATH_MAX = 107;
/** Group and other permission bits. */
const GROUP_OTHER_ANY = 0o077;

/** `XDG_RUNTIME_DIR` usable for the session directory. */
export const xdgRuntimeDirCheck = defineCheck("runtime_dir", "XDG_RUNTIME_DIR", async (ctx) => {
  const xdg = ctx.env.XDG_RUNTIME_DIR;
  let problem: string | undefined;
  let mode = "";
  if (xdg === undefined || xdg === "") problem = "not set";
  else if (!xdg.startsWith("/")) problem = `${xdg} is not an absolute path`;
  else {
    const st = await lstat(xdg).catch(() => undefined);
    if (!st) problem = `${xdg} does not exist`;
    else if (st.isSymbolicLink()) problem = `${xdg} is a symlink`;
    else if (!st.isDirectory()) problem = `${xdg} is not a directory`;
    else if (st.uid !== ctx.uid) problem = `${xdg} is owned by uid ${st.uid}, not by you`;
    else if ((st.mode & GROUP_OTHER_ANY) !== 0) {
      problem = `${xdg} has mode ${octal(st.mode)}: group or others have access`;
    } else mode = `mode ${octal(st.mode)}`;
  }
  const base = problem || !xdg ? "/tmp" : xdg;
  // What startSession will build: <base>/pi-sudo-prompt-XXXXXX/askpass.sock
  const socketPath = join(base, "pi-sudo-prompt-XXXXXX", "askpass.sock");
  if (!isSafeFlagPath(socketPath)) {
    return {
      status: "fail",
      detail: `session directory base ${base} has characters the launcher refuses ` +
        "(space, comma, quotes): the extension will not start",
      fix: "set XDG_RUNTIME_DIR to a plain path such as /run/user/$(id -u)",
    };
  }
  if (new TextEncoder().encode(socketPath).length > SUN_PATH_MAX) {
    return {
      status: "fail",
      detail: `${socketPath} is longer than a Unix socket path may be (${SUN_PATH_MAX} bytes)`,
      fix: "set XDG_RUNTIME_DIR to a shorter path such as /run/user/$(id -u)",
    };
  }
  if (problem) {
    return {
      status: "warn",
      detail: `XDG_RUNTIME_DIR ${problem}: falling back to a private mkdtemp directory under /tmp`,
      fix: "log in through systemd-logind (pam_systemd) so /run/user/$(id -u) exists, or export " +
        "XDG_RUNTIME_DIR to a directory of yours with mode 0700",
    };
  }
  return { status: "ok", detail: `${xdg}: a private directory of yours (${mode})` };
});
