/**
 * The doctor's keyboard checks (ADR 0007): is pi's terminal exclusive and
 * guarded, is pi non-dumpable, does tmux route typed keys to a binding, and
 * does an X11 display let any client read the keyboard. Each returns a
 * verdict and a fix; `doctor.ts` runs them with the others.
 *
 * @module
 */
import { checkTmuxKeyTables } from "./multiplexer_keys.ts";
import { DUMPABLE_SWITCH, RELEASE_COMMAND, terminalGuardStatus } from "./terminal_guard.ts";

/** A check's verdict, in `doctor.ts`'s shape. */
export interface KeyboardFinding {
  readonly status: "ok" | "warn" | "fail" | "info";
  readonly detail: string;
  readonly fix?: string;
}

const OUTSIDE_PI = "run /sudo-prompt doctor inside pi to check pi's own process";

/** Exclusive mode on pi's terminal, and the guardian that releases it. */
export function terminalCheck(): Promise<KeyboardFinding> {
  const s = terminalGuardStatus();
  if (!s.started) {
    return Promise.resolve({ status: "info", detail: `not inside pi: ${OUTSIDE_PI}` });
  }
  if (!s.ttyPath) {
    return Promise.resolve({
      status: "warn",
      detail: "pi's stdin is not a terminal: nothing to make exclusive",
    });
  }
  if (!s.exclusive) {
    return Promise.resolve({
      status: "fail",
      detail: `${s.ttyPath} is not exclusive: any process of yours can open it and read what ` +
        `you type (${s.problems.join("; ") || "cleared since"})`,
      fix: "restart pi; if it persists, run this doctor and report the problem it lists",
    });
  }
  if (s.guardianPid === undefined) {
    return Promise.resolve({
      status: "warn",
      detail: `${s.ttyPath} is exclusive, but no guardian runs: if pi is killed, the terminal ` +
        "stays exclusive and sudo there fails with a busy terminal",
      fix: `after such a kill run ${RELEASE_COMMAND} in that terminal`,
    });
  }
  return Promise.resolve({
    status: "ok",
    detail: `${s.ttyPath} is exclusive (no other process can open it); guardian pid ` +
      `${s.guardianPid} releases it if pi dies`,
  });
}

/** pi non-dumpable: no ptrace, no `/proc/<pi>/mem`, no `pidfd_getfd`. */
export function dumpableCheck(): Promise<KeyboardFinding> {
  const s = terminalGuardStatus();
  if (!s.started) {
    return Promise.resolve({ status: "info", detail: `not inside pi: ${OUTSIDE_PI}` });
  }
  if (s.nonDumpable) {
    return Promise.resolve({
      status: "ok",
      detail: "pi is non-dumpable: no process of yours can trace it or read its memory",
    });
  }
  if (s.dumpableByChoice) {
    return Promise.resolve({
      status: "warn",
      detail: `${DUMPABLE_SWITCH}=1: pi is dumpable, so any process of yours can read its memory ` +
        "and copy its terminal",
      fix: `unset ${DUMPABLE_SWITCH} (it is for debugging only) and restart pi`,
    });
  }
  return Promise.resolve({
    status: "fail",
    detail: "pi is dumpable: any process of yours can read its memory and copy its terminal",
    fix: "check that FFI works (see the FFI check) and restart pi",
  });
}

/** tmux key tables: no printable key bound where pi's keys are typed. */
export async function multiplexerCheck(
  env: Record<string, string | undefined>,
): Promise<KeyboardFinding> {
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
  if (v.ok) return { status: "ok", detail: "tmux: no printable key is bound where you type" };
  if (v.why === "client_table") {
    return {
      status: "fail",
      detail: `a tmux client of this session types into the key table ${v.keys[0]}, whose ` +
        "bindings can record what you type: every modal is refused",
      fix: "tmux switch-client -T root",
    };
  }
  if (v.why === "unreadable") {
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
}

/** X11: any client can read the keyboard; nothing in a terminal can stop it. */
export function displayCheck(env: Record<string, string | undefined>): Promise<KeyboardFinding> {
  if (env.DISPLAY && !env.WAYLAND_DISPLAY && !env.WAYLAND_SOCKET) {
    return Promise.resolve({
      status: "warn",
      detail: `X11 display ${env.DISPLAY}: any X client of yours (the agent can start one) can ` +
        "read every key you type, the modal's included; nothing in a terminal program can stop it",
      fix: "use a Wayland session or a text console for pi, or unset DISPLAY in pi's environment " +
        "if no X program needs it",
    });
  }
  return Promise.resolve({ status: "ok", detail: "no X11 display in pi's environment" });
}
