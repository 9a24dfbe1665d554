/**
 * Doctor check `display` (ADR 0007): on an X11 display any client of the
 * user (the agent can start one) can read every key typed, the modal's
 * included; nothing in a terminal program can stop it.
 *
 * @module
 */
import { defineCheck } from "../context.ts";

/** X11: any client can read the keyboard; Wayland or no display is fine. */
export const displayCheck = defineCheck("display", "X11 keyboard", (ctx) => {
  const env = ctx.env;
  if (env.DISPLAY && !env.WAYLAND_DISPLAY && !env.WAYLAND_SOCKET) {
    return {
      status: "warn",
      detail: `X11 display ${env.DISPLAY}: any X client of yours (the agent can start one) can ` +
        "read every key you type, the modal's included; nothing in a terminal program can stop it",
      fix: "use a Wayland session or a text console for pi, or unset DISPLAY in pi's environment " +
        "if no X program needs it",
    };
  }
  return { status: "ok", detail: "no X11 display in pi's environment" };
});
