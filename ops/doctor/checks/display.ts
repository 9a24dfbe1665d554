/**
 * Doctor check `display` (ADR 0007): on X11 any client of the user (the agent can start one) can
 * read every key typed, the modal's included; no terminal program can stop it.
 *
 * @module
 */
import { defineCheck } from "../context.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

/** X11: any client can read the keyboard; Wayland or no display is fine. */
export const displayCheck = defineCheck("display", msg.displayTitle, (ctx) => {
  const env = ctx.env;
  if (env.DISPLAY && !env.WAYLAND_DISPLAY && !env.WAYLAND_SOCKET) {
    return {
      status: "warn",
      detail: msg.displayX11(env.DISPLAY),
      fix: msg.displayX11Fix,
    };
  }
  return { status: "ok", detail: msg.displayOk };
});
