/**
 * The "🔐 Sudo Authentication Required" modal: sudo's password, showing the
 * sudo argv, the shell command that runs it, and sudo's own prompt line as
 * untrusted text.
 *
 * @module
 */

import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";
import { truncateToWidth } from "@earendil-works/pi-tui";
import type { OverlayOptions } from "@earendil-works/pi-tui";
import type { PromptOutcome, PromptRequest, UncheckedProcess } from "../../askpass/prompter.ts";
import { sanitizeUntrusted } from "../../askpass/prompt_text.ts";
import { MaskedPromptModal, showModal } from "./masked_prompt.ts";
import type { ModalOptions } from "./masked_prompt.ts";
import {
  boxed,
  commandLines,
  inputFooterLines,
  scrolledLines,
  untrustedLines,
} from "./modal_frame.ts";
import type { MaskedInputView, ModalTheme } from "./modal_frame.ts";
import { escapeUnsafe, shellCommandText, wrapped } from "./modal_text.ts";

/** The sudo modal's title, exactly as the spec words it. */
export const SUDO_MODAL_TITLE = "🔐 Sudo Authentication Required";

/** Preferred overlay width; pi-tui clamps it to the terminal. */
const OVERLAY_WIDTH = 80;

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
 * The "could not be checked" section: each process with its pid, start time,
 * parent and command line, in the warning colour, then what to do.
 */
function uncheckedLines(
  list: readonly UncheckedProcess[],
  width: number,
  theme: ModalTheme,
): string[] {
  if (list.length === 0) return [];
  const warn = (s: string) => theme.fg("warning", s);
  const lines = wrapped(
    "⚠ Not checked: if you do not know one of these, press Escape.",
    width,
    warn,
  );
  for (const p of list.slice(0, MAX_UNCHECKED_SHOWN)) {
    const when = p.started ? `, started ${sanitizeUntrusted(p.started, 8)}` : "";
    const parent = p.parent ? `, parent ${sanitizeUntrusted(p.parent, 40)}` : "";
    lines.push(...wrapped(`• ${p.pid}${when}${parent}`, width, warn));
    lines.push(...wrapped(`  ${sanitizeUntrusted(p.why, 80)}`, width, warn));
    lines.push(
      "  " + truncateToWidth(escapeUnsafe(sanitizeUntrusted(p.command, 200)), width - 2, "…"),
    );
  }
  if (list.length > MAX_UNCHECKED_SHOWN) {
    lines.push(warn(`  … and ${list.length - MAX_UNCHECKED_SHOWN} more`));
  }
  return [...lines, ""];
}

/**
 * The red lines: each way this sudo may run something its argv does not
 * show (`-s`, `-E`, `VAR=value`, a program the user could have written),
 * whole, with unsafe characters spelt out.
 */
function warningLines(warnings: readonly string[], width: number, theme: ModalTheme): string[] {
  return warnings.flatMap((w) =>
    wrapped(`‼ ${escapeUnsafe(w)}`, width, (s) => theme.fg("error", s))
  );
}

/** What typing the password approves, in one sentence. */
export function approvalText(covers: "call" | "sudo" | undefined): string {
  return covers === "call"
    ? "Approves: everything the shell command above runs until it ends; its later sudos do " +
      "not ask again."
    : "Approves: this one sudo.";
}

/** Lines for the shell command, whole: every line, wrapped, never cut. */
function shellCommandLines(
  argv: readonly string[],
  width: number,
  theme: ModalTheme,
): string[] {
  const source = shellCommandText(argv).replace(/\n+$/, "");
  const lines = source.split("\n").flatMap((line) =>
    wrapped(
      escapeUnsafe(line.replace(/\r$/, "").replaceAll("\t", "  ")),
      Math.max(1, width - 2),
      (s) => s,
    )
      .map((piece) => "  " + piece)
  );
  return [theme.fg("muted", "Shell command:"), ...lines];
}

/** The sudo modal's content lines, unframed, for a content area `width` wide. */
function sudoContentLines(
  state: SudoModalState,
  width: number,
  theme: ModalTheme,
): string[] {
  const { request } = state;
  // sudo's own argv first, then the whole tool command: scrolled, never cut.
  const command = [...commandLines(request.sudoArgv, width)];
  if (request.toolCommand !== null && request.toolCommand.length > 0) {
    command.push(...shellCommandLines(request.toolCommand, width, theme));
  }
  const lines: string[] = [
    theme.bold(theme.fg("accent", SUDO_MODAL_TITLE)),
    "",
    ...scrolledLines(command, state.scroll ?? 0, theme),
    ...warningLines(request.warnings ?? [], width, theme),
    ...wrapped(approvalText(request.covers), width, (s) => theme.fg("muted", s)),
  ];
  lines.push(...untrustedLines("sudo asks: ", request.promptText, width, theme), "");
  lines.push(...uncheckedLines(state.unchecked ?? [], width, theme));
  if (request.attempt >= 2) {
    lines.push(theme.fg(
      "error",
      `Incorrect password, try again (${request.attempt}/${request.maxAttempts})`,
    ));
  }
  lines.push(...inputFooterLines(
    state,
    "Password: ",
    "Your password is secure and will not be visible to the AI model.",
    width,
    theme,
  ));
  return lines;
}

/**
 * Draws the sudo modal for a terminal area `width` columns wide. Pure: the
 * same state gives the same lines. Every line is at most `width` visible
 * columns; content is boxed so it cannot be mistaken for tool output.
 */
export function renderSudoModal(
  state: SudoModalState,
  width: number,
  theme: ModalTheme,
): string[] {
  return boxed((inner) => sudoContentLines(state, inner, theme), width, theme);
}

/** What {@link SudoModal} is built from. */
export type SudoModalOptions = ModalOptions<PromptRequest>;

/** The masked sudo password overlay ("🔐 Sudo Authentication Required"). */
export class SudoModal extends MaskedPromptModal {
  constructor(options: SudoModalOptions) {
    const { request, theme } = options;
    super({
      deadline: request.deadline,
      waiting: request.waiting,
      render: (view, width) =>
        renderSudoModal({ ...view, request, unchecked: request.unchecked?.() }, width, theme),
      requestRender: options.requestRender,
      done: options.done,
      now: options.now,
    });
  }
}

/** The part of pi's `ctx.ui` that {@link showSudoModal} uses. */
export type SudoModalUI = Pick<ExtensionUIContext, "custom">;

/** Overlay placement: centred, 80 columns (pi-tui clamps to the terminal). */
export const SUDO_MODAL_OVERLAY: OverlayOptions = {
  anchor: "center",
  width: OVERLAY_WIDTH,
  margin: 1,
};

/**
 * Shows the sudo modal as a focused overlay and resolves with the human's
 * answer. `signal` aborting closes it with cancel. When pi has no TUI (RPC
 * mode, where `custom` resolves without calling the factory) this resolves
 * cancel: the password must never be asked for through an unmasked channel.
 */
export function showSudoModal(
  ui: SudoModalUI,
  request: PromptRequest,
  signal: AbortSignal,
): Promise<PromptOutcome> {
  return showModal(
    ui,
    signal,
    SUDO_MODAL_OVERLAY,
    "sudo password",
    (theme, requestRender, done) => new SudoModal({ request, theme, requestRender, done }),
  );
}
