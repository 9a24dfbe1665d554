/**
 * Doctor check `allowlist`: the `pi-secret-run` allowlist, judged by the very function the broker
 * and the extension apply; what it refuses counts as empty.
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
import { msg } from "../../../shared/i18n/tools_locale.ts";

/** The allowlist is safe (or absent). */
export const allowlistCheck = defineCheck("allowlist", "allowlist", async (ctx) => {
  const path = ctx.allowlistPath;
  const r = await checkAllowlistFile(path);
  if (r.ok) {
    const n = r.entries.length;
    return {
      status: "ok",
      detail: msg.allowlistOk(path, n),
    };
  }
  if (r.reason === ALLOWLIST_FILE_REFUSALS.MISSING) {
    return {
      status: "info",
      detail: msg.allowlistAbsent(path),
      fix: msg.allowlistAbsentFix,
    };
  }
  const { why, fix } = await refusal(ctx, r);
  return { status: "warn", detail: msg.allowlistUnsafeDetail(why), fix };
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
        why: msg.allowlistSymlink(path),
        fix: msg.allowlistSymlinkFix(path),
      };
    case R.NOT_REGULAR:
      return {
        why: msg.ownNotRegular(path),
        fix: msg.allowlistNotRegularFix(path),
      };
    case R.NOT_ROOT_OWNED:
      return {
        why: st ? msg.ownOwnedBy(path, st.uid, you(st.uid, ctx.uid)) : r.reason,
        fix: chown,
      };
    case R.WRITABLE_BY_OTHERS:
      return {
        why: msg.allowlistWritable(path) + (st ? msg.allowlistMode(octal(st.mode)) : ""),
        fix: chown,
      };
    case R.UNSAFE_PARENT: {
      const dir = r.path ?? dirname(path);
      let why = msg.allowlistParent(dir);
      const d = await lstat(dir).catch(() => undefined);
      if (d) {
        const link = d.isSymbolicLink() ? msg.allowlistParentSymlink : "";
        why += msg.allowlistParentFacts(d.uid, octal(d.mode), link);
      }
      return { why, fix: msg.allowlistParentFix(dir, path) };
    }
    case R.MALFORMED:
      return {
        why: msg.allowlistMalformed(String(r.line ?? "?"), r.syntax ?? msg.allowlistSyntax),
        fix: msg.allowlistMalformedFix(String(r.line ?? "?"), path),
      };
    default:
      return { why: `${path}: ${r.reason}`, fix: chown };
  }
}
