/**
 * Doctor check `platform`: Linux, a supported architecture, and `/proc`
 * mounted; without them every request is refused.
 *
 * @module
 */
import { release } from "node:os";
import { join } from "node:path";
import { defineCheck } from "../context.ts";
import { oneLine, readSmall } from "../helpers.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

/** Architectures whose `SO_PEERCRED` layout the peer-credential code knows. */
const SUPPORTED_ARCHES: ReadonlySet<string> = new Set(["x64", "arm64", "riscv64"]);

/** Linux, a supported architecture, and `/proc` mounted. */
export const platformCheck = defineCheck("platform", msg.platformTitle, async (ctx) => {
  if (ctx.platform !== "linux") {
    return {
      status: "fail",
      detail: msg.platformNotLinux(ctx.platform),
      fix: msg.platformNotLinuxFix,
    };
  }
  if (!SUPPORTED_ARCHES.has(ctx.arch)) {
    return {
      status: "fail",
      detail: msg.platformArch(ctx.arch),
      fix: msg.platformArchFix,
    };
  }
  const statPath = join(ctx.procRoot, "self", "stat");
  const text = await readSmall(statPath);
  if (text === undefined || !/^\d+ \(/.test(text)) {
    return {
      status: "fail",
      detail: msg.platformNoProc(statPath),
      fix: msg.platformNoProcFix,
    };
  }
  return {
    status: "ok",
    detail: msg.platformOk(oneLine(release()), ctx.arch, ctx.procRoot),
  };
});
