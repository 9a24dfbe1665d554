/**
 * Doctor check `multiplexer` (ADR 0009): inside tmux, tmux's bindings, aliases, hooks and popups
 * never see the modal's keys; GNU screen's bindings are not bypassed.
 *
 * @module
 */
import { defineCheck } from "../context.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

/** Where keys typed at the modal pass, inside a terminal multiplexer. */
export const multiplexerCheck = defineCheck("multiplexer", msg.multiplexerTitle, (ctx) => {
  const env = ctx.env;
  if (env.STY && !env.TMUX) {
    return Promise.resolve({
      status: "warn" as const,
      detail: msg.multiplexerScreen,
      fix: msg.multiplexerScreenFix,
    });
  }
  if (!env.TMUX) return Promise.resolve({ status: "ok" as const, detail: msg.multiplexerNone });
  return Promise.resolve({
    status: "ok" as const,
    detail: msg.multiplexerTmux,
  });
});
