/**
 * Doctor check `allowlist`: the `pi-secret-run` allowlist is judged by the
 * very function the broker and the extension apply; what it refuses counts
 * as empty, and the verdict says why and how to fix it.
 *
 * @module
 */
import { lstat } from "node:fs/promises";
import { dirname } from "node:path";
import {
  ALLOWLIST_FILE_REFUSALS,
  type AllowlistFileResult,
  checkAllowlistFile,
} from "../../../broker/allowlist.ts";
import { type Context, defineCheck } from "../context.ts";
import { octal, you } from "../helpers.ts";

/** The allowlist is safe (or absent). */
export const allowlistCheck = defineCheck("allowlist", "allowlist", async (ctx) => {
  const path = ctx.allowlistPath;
  const r = await checkAllowlistFile(path);
  if (r.ok) {
    const n = r.entries.length;
    return {
      status: "ok",
      detail: `${path}: root-owned, not writable by others, ${n} ${n === 1 ? "entry" : "entries"}`,
    };
  }
  if (r.reason === ALLOWLIST_FILE_REFUSALS.MISSING) {
    return {
      status: "info",
      detail: `${path} absent: every pi-secret-run command shows the red warning`,
      fix: "the broker installer creates it (root-owned, commented examples)",
    };
  }
  const { why, fix } = await refusal(ctx, r);
  return { status: "warn", detail: `unsafe: ${why}; the allowlist counts as empty`, fix };
});

type Refused = Extract<AllowlistFileResult, { ok: false }>;

/** Why the file was refused, and the command that fixes it. */
async function refusal(ctx: Context, r: Refused): Promise<{ why: string; fix: string }> {
  const R = ALLOWLIST_FILE_REFUSALS;
  const path = ctx.allowlistPath;
  const st = await lstat(path).catch(() => undefined);
  const chown = `sudo chown root:root ${path} && sudo chmod 0644 ${path}`;
  switch (r.reason) {
    case R.SYMLINK:
      return {
        why: `${path} is a symlink (never followed)`,
        fix: `replace the symlink with a regular root-owned file: sudo cp --remove-destination ` +
          `"$(readlink -f ${path})" ${path}`,
      };
    case R.NOT_REGULAR:
      return {
        why: `${path} is not a regular file`,
        fix: `make ${path} a regular root-owned file (rerun the broker installer)`,
      };
    case R.NOT_ROOT_OWNED:
      return {
        why: st ? `${path} is owned by uid ${st.uid}${you(st.uid, ctx.uid)}, not root` : r.reason,
        fix: chown,
      };
    case R.WRITABLE_BY_OTHERS:
      return {
        why: `${path} is writable by group or others` + (st ? ` (mode ${octal(st.mode)})` : ""),
        fix: chown,
      };
    case R.UNSAFE_PARENT: {
      const dir = r.path ?? dirname(path);
      let why =
        `its directory ${dir} is not a root-owned real directory closed to group/other writes`;
      const d = await lstat(dir).catch(() => undefined);
      if (d) {
        why += ` (uid ${d.uid}, mode ${octal(d.mode)}${d.isSymbolicLink() ? ", symlink" : ""})`;
      }
      return {
        why,
        fix: `sudo chown root:root ${dir} && sudo chmod go-w ${dir} (every directory above ` +
          `${path} must be root-owned and not writable by group/other)`,
      };
    }
    case R.MALFORMED:
      return {
        why: `line ${r.line ?? "?"} is malformed (${r.syntax ?? "syntax"}); ` +
          "one bad line voids the file",
        fix: `fix line ${r.line ?? "?"} of ${path} (sudoedit ${path})`,
      };
    default:
      return { why: `${path}: ${r.reason}`, fix: chown };
  }
}
