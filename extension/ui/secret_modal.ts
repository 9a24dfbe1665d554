/**
 * The "🔑 Secret request" modal for `pi-secret-run`: the real argv the root
 * broker will run, where it runs, the agent's label marked unverified and,
 * when the argv is not allowlisted, a red warning.
 *
 * @module
 */

import type { OverlayOptions } from "@earendil-works/pi-tui";
import type { PromptOutcome, SecretPromptRequest } from "../../askpass/prompter.ts";
import { MaskedPromptModal, showModal } from "./masked_prompt.ts";
import type { ModalOptions } from "./masked_prompt.ts";
import {
  boxed,
  commandLines,
  inputFooterLines,
  MAX_COMMAND_LINES,
  scrolledLines,
  untrustedLines,
} from "./modal_frame.ts";
import type { MaskedInputView, ModalTheme } from "./modal_frame.ts";
import { labelled, shellQuote, wrapped } from "./modal_text.ts";
import { SUDO_MODAL_OVERLAY } from "./sudo_modal.ts";
import type { SudoModalUI } from "./sudo_modal.ts";

/** The secret modal's title: deliberately not the sudo modal's. */
export const SECRET_MODAL_TITLE = "🔑 Secret request";
/**
 * Shown in the warning colour when the agent can trace the command (no Yama,
 * or `ptrace_scope` 0): the secret is then readable in its memory.
 */
export const TRACEABLE_WARNING =
  "⚠ Runs as you: the agent can trace it and read the secret (ptrace_scope 1 stops this).";
/** Shown in the error colour when the secret's argv is not on the allowlist. */
export const NOT_ALLOWLISTED_WARNING =
  "⚠ Not on the allowlist: this command may show the agent what you type.";

/** Everything {@link renderSecretModal} draws; no secrets, no callbacks. */
export interface SecretModalState extends MaskedInputView {
  readonly request: Pick<
    SecretPromptRequest,
    "argv" | "cwd" | "label" | "allowlisted" | "traceable"
  >;
}

/** The secret modal's content lines, unframed, for a content area `width` wide. */
function secretContentLines(
  state: SecretModalState,
  width: number,
  theme: ModalTheme,
): string[] {
  const { request } = state;
  const lines: string[] = [
    theme.bold(theme.fg("accent", SECRET_MODAL_TITLE)),
    "",
    ...scrolledLines(commandLines(request.argv, width), state.scroll ?? 0, theme),
    // Where it runs matters (`cat .env`): the caller's real cwd, checked by the broker.
    ...labelled("In: ", shellQuote(request.cwd), width, MAX_COMMAND_LINES),
    // The marker is a suffix, so a long label can never push it out of view.
    ...untrustedLines("Label: ", request.label, width, theme, {
      text: "(unverified)",
      style: (s) => theme.bold(theme.fg("warning", s)),
    }),
  ];
  if (!request.allowlisted) {
    lines.push(...wrapped(NOT_ALLOWLISTED_WARNING, width, (s) => theme.fg("error", s)));
  }
  if (request.traceable) {
    lines.push(...wrapped(TRACEABLE_WARNING, width, (s) => theme.fg("warning", s)));
  }
  lines.push(
    "",
    ...inputFooterLines(
      state,
      "Secret: ",
      "The secret goes to this command's stdin and will not be visible to the AI model.",
      width,
      theme,
    ),
  );
  return lines;
}

/**
 * Draws the "Secret request" modal for a terminal area `width` columns wide.
 * Pure, width-safe and boxed like {@link renderSudoModal}.
 */
export function renderSecretModal(
  state: SecretModalState,
  width: number,
  theme: ModalTheme,
): string[] {
  return boxed((inner) => secretContentLines(state, inner, theme), width, theme);
}

/** What {@link SecretModal} is built from. */
export type SecretModalOptions = ModalOptions<SecretPromptRequest>;

/** The masked `pi-secret-run` overlay ("🔑 Secret request"). */
export class SecretModal extends MaskedPromptModal {
  constructor(options: SecretModalOptions) {
    const { request, theme } = options;
    super({
      deadline: request.deadline,
      waiting: request.waiting,
      render: (view, width) => renderSecretModal({ ...view, request }, width, theme),
      requestRender: options.requestRender,
      done: options.done,
      now: options.now,
    });
  }
}

/** The part of pi's `ctx.ui` that {@link showSecretModal} uses. */
export type SecretModalUI = SudoModalUI;

/** The secret modal's placement: the same as the sudo modal's. */
export const SECRET_MODAL_OVERLAY: OverlayOptions = SUDO_MODAL_OVERLAY;

/**
 * Shows the "Secret request" modal for `pi-secret-run`, with the same
 * overlay, abort and RPC-mode behaviour as {@link showSudoModal}.
 */
export function showSecretModal(
  ui: SecretModalUI,
  request: SecretPromptRequest,
  signal: AbortSignal,
): Promise<PromptOutcome> {
  return showModal(
    ui,
    signal,
    SECRET_MODAL_OVERLAY,
    "secret for pi-secret-run",
    (theme, requestRender, done) => new SecretModal({ request, theme, requestRender, done }),
  );
}
