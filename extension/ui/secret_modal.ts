/**
 * The "🔑 Secret request" modal for `pi-secret-run`: the argv the root broker will run, where it
 * runs, the agent's label marked unverified, and a red warning when it is not allowlisted.
 *
 * @module
 */

import type { SecretPromptRequest } from "../../askpass/prompter.ts";
import type { ModalLook } from "./masked_prompt.ts";
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
    ...(request.allowlisted ? [] : wrapped(msg.notAllowlistedWarning, width, color("error"))),
    // The agent can trace the command (no Yama, or `ptrace_scope` 0) and read the secret.
    ...(request.traceable ? wrapped(msg.traceableWarning, width, color("warning")) : []),
    "",
  ];
}

/**
 * Draws the "Secret request" modal, pure, width-safe and boxed like {@link renderSudoModal}; its
 * title is deliberately not the sudo modal's.
 */
export const renderSecretModal = modalRenderer(msg.secretTitle, secretBodyLines, {
  label: msg.secretLabel,
  note: msg.secretNote,
});

/** The `pi-secret-run` modal's look. */
export const SECRET_LOOK: ModalLook<SecretPromptRequest> = {
  draw: renderSecretModal,
  blocked: msg.secretBlocked,
  elsewhereTitle: msg.secretElsewhereTitle,
};
