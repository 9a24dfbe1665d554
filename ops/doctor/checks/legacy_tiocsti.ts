/**
 * Doctor check `legacy_tiocsti`: `dev.tty.legacy_tiocsti`, which decides
 * whether a process sharing pi's terminal can type into the modal.
 *
 * @module
 */
import { join } from "node:path";
import { defineCheck } from "../context.ts";
import { oneLine, readSmall } from "../helpers.ts";

/** `dev.tty.legacy_tiocsti`: 1 warns, 0 is fine, missing (kernel < 6.2) is info. */
export const legacyTiocstiCheck = defineCheck("legacy_tiocsti", "legacy_tiocsti", async (ctx) => {
  const path = join(ctx.procRoot, "sys", "dev", "tty", "legacy_tiocsti");
  const value = (await readSmall(path))?.trim();
  if (value === undefined) {
    return {
      status: "info",
      detail: "dev.tty.legacy_tiocsti missing (kernel < 6.2): TIOCSTI is always allowed; pi's " +
        "bash tool runs commands in a new session without pi's terminal",
    };
  }
  if (value === "1") {
    return {
      status: "warn",
      detail: "dev.tty.legacy_tiocsti=1: a process that shares pi's terminal can type into the " +
        "modal (pi's bash tool detaches, but other programs you start may not)",
      fix: "sudo sysctl dev.tty.legacy_tiocsti=0 (persist it in /etc/sysctl.d/)",
    };
  }
  if (value === "0") {
    return { status: "ok", detail: "dev.tty.legacy_tiocsti=0: no typing into ttys" };
  }
  return {
    status: "warn",
    detail: `dev.tty.legacy_tiocsti has an unknown value: ${oneLine(value)}`,
    fix: "sudo sysctl dev.tty.legacy_tiocsti=0",
  };
});
