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

/** Architectures whose `SO_PEERCRED` layout the peer-credential code knows. */
const SUPPORTED_ARCHES: ReadonlySet<string> = new Set(["x64", "arm64", "riscv64"]);

/** Linux, a supported architecture, and `/proc` mounted. */
export const platformCheck = defineCheck("platform", "Linux and /proc", async (ctx) => {
  if (ctx.platform !== "linux") {
    return {
      status: "fail",
      detail: `platform is ${ctx.platform}: pi-sudo-prompt needs Linux (/proc, SO_PEERCRED)`,
      fix: "use pi on Linux; on other systems sudo keeps failing without a terminal",
    };
  }
  if (!SUPPORTED_ARCHES.has(ctx.arch)) {
    return {
      status: "fail",
      detail:
        `architecture ${ctx.arch} is not supported (SO_PEERCRED differs): requests are refused`,
      fix: "use x86_64, arm64 or riscv64",
    };
  }
  const statPath = join(ctx.procRoot, "self", "stat");
  const text = await readSmall(statPath);
  if (text === undefined || !/^\d+ \(/.test(text)) {
    return {
      status: "fail",
      detail: `${statPath} is not readable: /proc is not mounted here`,
      fix: "mount procfs (mount -t proc proc /proc); every request is refused without it",
    };
  }
  return {
    status: "ok",
    detail: `Linux ${oneLine(release())} ${ctx.arch}, ${ctx.procRoot} mounted`,
  };
});
