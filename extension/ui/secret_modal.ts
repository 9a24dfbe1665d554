/**
 * The "🔑 Secret request" modal for `pi-secret-run`: the argv the root broker will run, where it
 * runs, the agent's label marked unverified, and a red warning when it is not allowlisted.
 *
 * @module
 */

import type { PromptOutcome, SecretPromptRequest } from "../../askpass/prompter.ts";
import { MaskedPromptModal, type ModalRenderer, type ModalUI, showModal } from "./masked_prompt.ts";
import { type Elsewhere, showElsewhere } from "./elsewhere.ts";
import {
  commandLines,
  MAX_COMMAND_LINES,
  modalRenderer,
  scrolledLines,
  untrustedLines,
} from "./modal_frame.ts";
import type { MaskedInputView, ModalColor, ModalTheme } from "./modal_frame.ts";
import { labelled, shellQuote, wrapped } from "./modal_text.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** The secret modal's title: deliberately not the sudo modal's. */
export const SECRET_MODAL_TITLE: string = msg.secretTitle;
/** Shown when the agent can trace the command (no Yama or `ptrace_scope` 0) and read the secret. */
export const TRACEABLE_WARNING: string = msg.traceableWarning;
/** Shown in the error colour when the secret's argv is not on the allowlist. */
export const NOT_ALLOWLISTED_WARNING: string = msg.notAllowlistedWarning;

/** Everything {@link renderSecretModal} draws; no secrets, no callbacks. */
export interface SecretModalState extends MaskedInputView {
  readonly request: Pick<
    SecretPromptRequest,
    "argv" | "cwd" | "label" | "allowlisted" | "traceable"
  >;
}

/** The secret modal's own lines, between the title and the input line. */
function secretBodyLines(state: SecretModalState, width: number, theme: ModalTheme): string[] {
  const { request } = state;
  const color = (c: ModalColor) => (s: string) => theme.fg(c, s);
  return [
    ...scrolledLines(commandLines(request.argv, width), state.scroll ?? 0, theme),
    // Where it runs matters (`cat .env`): the caller's real cwd, checked by the broker.
    ...labelled(msg.inLabel, shellQuote(request.cwd), width, MAX_COMMAND_LINES),
    // The marker is a suffix, so a long label can never push it out of view.
    ...untrustedLines(msg.labelLabel, request.label, width, theme, {
      text: msg.unverified,
      style: (s) => theme.bold(theme.fg("warning", s)),
    }),
    ...(request.allowlisted ? [] : wrapped(NOT_ALLOWLISTED_WARNING, width, color("error"))),
    ...(request.traceable ? wrapped(TRACEABLE_WARNING, width, color("warning")) : []),
    "",
  ];
}

/** Draws the "Secret request" modal, pure, width-safe and boxed like {@link renderSudoModal}. */
export const renderSecretModal = modalRenderer(SECRET_MODAL_TITLE, secretBodyLines, {
  label: msg.secretLabel,
  note: msg.secretNote,
});

/** The masked `pi-secret-run` overlay ("🔑 Secret request"). */
export class SecretModal extends MaskedPromptModal<SecretPromptRequest> {
  protected readonly draw: ModalRenderer<SecretPromptRequest> = renderSecretModal;
}

/** Shows the "Secret request" modal; overlay, abort and RPC mode as {@link showSudoModal}. */
export function showSecretModal(
  ui: ModalUI,
  request: SecretPromptRequest,
  signal: AbortSignal,
  elsewhere?: Elsewhere,
): Promise<PromptOutcome> {
  return elsewhere
    ? showElsewhere(
      ui,
      request,
      signal,
      SecretModal,
      msg.secretElsewhereTitle,
      elsewhere,
    )
    : showModal(ui, request, signal, SecretModal, msg.secretBlocked);
}
