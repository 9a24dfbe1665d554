/**
 * Doctor check `multiplexer` (ADR 0007): inside tmux, no printable key is
 * bound in a table where pi's keys are typed (a binding could record the
 * password), and the keys reach pi's pane (focus, mode, popups: issue 21);
 * GNU screen's bindings cannot be checked. What tmux 3.3 does not show at
 * all, `command-prompt` and `display-menu` over pi's pane, is said in the
 * finding.
 *
 * @module
 */
import { checkTmuxKeyTables } from "../../../extension/keyboard/multiplexer_keys.ts";
import { defineCheck } from "../context.ts";

/** tmux key tables: no printable key bound where pi's keys are typed. */
export const multiplexerCheck = defineCheck("multiplexer", "tmux key tables", async (ctx) => {
  const env = ctx.env;
  if (env.STY && !env.TMUX) {
    return {
      status: "warn",
      detail: "inside GNU screen: its key bindings are not checked, and any process of yours can " +
        "change them to record keys",
      fix: "run pi outside screen, or inside tmux (whose bindings are checked)",
    };
  }
  if (!env.TMUX) return { status: "ok", detail: "not inside tmux" };
  const v = await checkTmuxKeyTables(env);
  /** tmux 3.3 has no format that tells whether a prompt or a menu is open on a client. */
  const unseen = "; tmux cannot show whether a command prompt or a menu is open over pi " +
    "(command-prompt, display-menu): type your password only into the modal, whose input shows " +
    "only •";
  if (v.ok) {
    return {
      status: "ok",
      detail: `tmux: no printable key is bound where you type, and the keys reach pi${unseen}`,
    };
  }
  if (v.reason === "focus") {
    return {
      status: "ok",
      detail: `tmux: keys typed now go to ${v.keys[0]} (a modal waits until they reach pi's ` +
        `pane)${unseen}`,
    };
  }
  if (v.reason === "client_table") {
    return {
      status: "fail",
      detail: `a tmux client of this session types into the key table ${v.keys[0]}, whose ` +
        "bindings can record what you type: every modal is refused",
      fix: "tmux switch-client -T root",
    };
  }
  if (v.reason === "unreadable") {
    return {
      status: "fail",
      detail: "tmux did not list its key bindings: every modal is refused",
      fix: "check that `tmux list-keys` works in this pane",
    };
  }
  return {
    status: "fail",
    detail: `tmux has printable keys bound where you type (${v.keys.join(", ")}): they could ` +
      "record your password, so every modal is refused",
    fix: `remove them, e.g. tmux unbind -n ${v.keys[0].replace(/^prefix /, "")} (a printable ` +
      "prefix: set -g prefix C-b)",
  };
});
