/**
 * Doctor check `legacy_tiocsti`: whether a process sharing pi's terminal can type into the modal.
 *
 * @module
 */
import { join } from "node:path";
import { defineCheck } from "../context.ts";
import { oneLine, readSmall } from "../helpers.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

/** `dev.tty.legacy_tiocsti`: 1 warns, 0 is fine, missing (kernel < 6.2) is info. */
export const legacyTiocstiCheck = defineCheck("legacy_tiocsti", "legacy_tiocsti", async (ctx) => {
  const path = join(ctx.procRoot, "sys", "dev", "tty", "legacy_tiocsti");
  const value = (await readSmall(path))?.trim();
  if (value === undefined) {
    return {
      status: "info",
      detail: msg.tiocstiMissing,
    };
  }
  if (value === "1") {
    return {
      status: "warn",
      detail: msg.tiocstiOn,
      fix: msg.tiocstiOnFix,
    };
  }
  if (value === "0") {
    return { status: "ok", detail: msg.tiocstiOff };
  }
  return {
    status: "warn",
    detail: msg.tiocstiUnknown(oneLine(value)),
    fix: "sudo sysctl dev.tty.legacy_tiocsti=0",
  };
});
