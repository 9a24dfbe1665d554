/**
 * The "🔐 Sudo Authentication Required" modal: sudo's argv, the shell command that runs it, and
 * sudo's own prompt line as untrusted text.
 *
 * @module
 */

import { truncateToWidth } from "@earendil-works/pi-tui";
import type { PromptRequest, UncheckedProcess } from "../../askpass/prompter.ts";
import { sanitizeUntrusted } from "../../askpass/prompt_text.ts";
import type { ModalLook } from "./masked_prompt.ts";
import { commandLines, modalRenderer, scrolledLines, untrustedLines } from "./modal_frame.ts";
import type { MaskedInputView, ModalTheme } from "./modal_frame.ts";
import { escapeUnsafe, shellCommandText, wrapped } from "./modal_text.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** Everything {@link renderSudoModal} draws; no secrets, no callbacks. */
export interface SudoModalState extends MaskedInputView {
  readonly request: Pick<
    PromptRequest,
    "sudoArgv" | "toolCommand" | "promptText" | "attempt" | "maxAttempts" | "covers" | "warnings"
  >;
  /** Processes the checks could not clear, named for the human to judge. */
  readonly unchecked?: readonly UncheckedProcess[];
}

/** Most processes named one by one; the rest are counted. */
export const MAX_UNCHECKED_SHOWN = 4;

/**
 * The "could not be checked" section: each process (pid, start, parent, proven origin, what was
 * not checked, what it calls itself), then what to do, and the root check that would decide.
 */
function uncheckedLines(
  list: readonly UncheckedProcess[],
  width: number,
  theme: ModalTheme,
): string[] {
  if (list.length === 0) return [];
  const warn = (s: string) => theme.fg("warning", s);
  const lines = wrapped(msg.notCheckedHead, width, warn);
  // What pi proved comes first: it must never hide behind "… and N more".
  const rank = (p: UncheckedProcess) => p.origin === "agent" ? 0 : p.origin ? 1 : 2;
  const sorted = [...list].sort((a, b) => rank(a) - rank(b));
  for (const p of sorted.slice(0, MAX_UNCHECKED_SHOWN)) {
    const when = p.started ? msg.uncheckedStarted(sanitizeUntrusted(p.started, 8)) : "";
    const parent = p.parent ? msg.uncheckedParent(sanitizeUntrusted(p.parent, 40)) : "";
    lines.push(...wrapped(`• ${p.pid}${when}${parent}`, width, warn));
    if (p.origin) {
      // What pi proved of its origin (ADR 0009 §2). One from pi may read this terminal too, and
      // take the keys (Escape included): how to stop it.
      const origin = p.origin === "agent"
        ? msg.originAgent + msg.stopIt(p.pid)
        : msg.originDuringCall;
      lines.push(...wrapped(`  ${origin}`, width, (s) => theme.fg("error", s)));
    }
    lines.push(...wrapped(`  ${sanitizeUntrusted(p.why, 80)}`, width, warn));
    lines.push(
      "  " + truncateToWidth(
        msg.callsItself(escapeUnsafe(sanitizeUntrusted(p.command, 200))),
        width - 2,
        "…",
      ),
    );
  }
  if (list.length > MAX_UNCHECKED_SHOWN) {
    lines.push(warn(msg.andMore(list.length - MAX_UNCHECKED_SHOWN)));
  }
  // The one step that lets root answer instead of the human.
  return [...lines, ...wrapped(msg.rootCheckOffer, width, (s) => theme.fg("muted", s)), ""];
}

/**
 * The red lines: ways this sudo may run what its argv does not show (`-s`, `-E`, `VAR=value`, a
 * program the user could have written), whole, with unsafe characters spelt out.
 */
function warningLines(warnings: readonly string[], width: number, theme: ModalTheme): string[] {
  return warnings.flatMap((w) =>
    wrapped(`‼ ${escapeUnsafe(w)}`, width, (s) => theme.fg("error", s))
  );
}

/** What typing the password approves, in one sentence. */
export function approvalText(covers: "call" | "sudo" | undefined): string {
  return covers === "call" ? msg.approvesCall : msg.approvesSudo;
}

/** Lines for the shell command, whole: every line, wrapped, never cut. */
function shellCommandLines(argv: readonly string[], width: number, theme: ModalTheme): string[] {
  const source = shellCommandText(argv).replace(/\n+$/, "");
  const lines = source.split("\n").flatMap((line) =>
    wrapped(
      escapeUnsafe(line.replace(/\r$/, "").replaceAll("\t", "  ")),
      Math.max(1, width - 2),
      (piece) => "  " + piece,
    )
  );
  return [theme.fg("muted", msg.shellCommandLabel), ...lines];
}

/** The sudo modal's own lines, between the title and the input line. */
function sudoBodyLines(state: SudoModalState, width: number, theme: ModalTheme): string[] {
  const { request } = state;
  // sudo's own argv first, then the whole tool command: scrolled, never cut.
  const command = [...commandLines(request.sudoArgv, width)];
  if (request.toolCommand !== null && request.toolCommand.length > 0) {
    command.push(...shellCommandLines(request.toolCommand, width, theme));
  }
  const lines: string[] = [
    ...scrolledLines(command, state.scroll ?? 0, theme),
    ...warningLines(request.warnings ?? [], width, theme),
    ...wrapped(approvalText(request.covers), width, (s) => theme.fg("muted", s)),
    ...untrustedLines(msg.sudoAsksLabel, request.promptText, width, theme),
    "",
    ...uncheckedLines(state.unchecked ?? [], width, theme),
  ];
  const retry = msg.incorrectPassword(request.attempt, request.maxAttempts);
  if (request.attempt >= 2) lines.push(theme.fg("error", retry));
  return lines;
}

/** Draws the sudo modal: pure, each line at most `width` visible columns. */
export const renderSudoModal = modalRenderer(msg.sudoTitle, sudoBodyLines, {
  label: msg.passwordLabel,
  note: msg.passwordNote,
});

/** The sudo modal's look: the processes not cleared are read at each draw (they change). */
export const SUDO_LOOK: ModalLook<PromptRequest> = {
  draw: (state, width, theme) =>
    renderSudoModal({ ...state, unchecked: state.request.unchecked?.() }, width, theme),
  blocked: msg.sudoBlocked,
  elsewhereTitle: msg.sudoElsewhereTitle,
};
