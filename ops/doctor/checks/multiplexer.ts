/**
 * Doctor check `multiplexer` (ADR 0009): inside tmux the modal is drawn on
 * each client's own terminal while tmux is locked, so tmux's bindings,
 * aliases, hooks and popups never see the keys; what that cannot cover is
 * said here. GNU screen's bindings are not bypassed.
 *
 * @module
 */
import { defineCheck } from "../context.ts";

/** Where keys typed at the modal pass, inside a terminal multiplexer. */
export const multiplexerCheck = defineCheck("multiplexer", "terminal multiplexer", (ctx) => {
  const env = ctx.env;
  if (env.STY && !env.TMUX) {
    return Promise.resolve({
      status: "warn" as const,
      detail: "inside GNU screen: keys typed at the modal pass through screen, whose key " +
        "bindings any process of yours can change to record them",
      fix: "run pi outside screen, or inside tmux (where pi takes your terminal from tmux)",
    });
  }
  if (!env.TMUX) return Promise.resolve({ status: "ok" as const, detail: "not inside tmux" });
  return Promise.resolve({
    status: "ok" as const,
    detail: "inside tmux: the password box is drawn on your tmux client's own terminal while " +
      "tmux is locked, so no tmux binding, alias, hook or popup sees the keys. Not covered: a " +
      "control-mode client (iTerm2's tmux integration) gets no box, and an outer tmux around " +
      "your client (nested tmux) still sees the keys",
  });
});
