/**
 * The modals' entry point. Both are one component (`MaskedPromptModal`, `masked_prompt.ts`)
 * and one box (`modal_frame.ts`), differing only in their look (`sudo_modal.ts`,
 * `secret_modal.ts`). All they show was read from the kernel or verified by the server, except the
 * agent's text (sudo's prompt line, the secret's `--label`): sanitised and drawn in `«…»` after its
 * label, continuation lines indented, so it can never pass for one of the modal's own lines.
 * Rendering is pure, testable without a terminal.
 *
 * @module
 */

import type { PromptOutcome, PromptRequest, SecretPromptRequest } from "../../askpass/prompter.ts";
import type { ModalLook, ModalUI, QueuedRequest } from "./masked_prompt.ts";
import { showModal } from "./masked_prompt.ts";
import { type Elsewhere, showElsewhere } from "./elsewhere.ts";
import { SUDO_LOOK } from "./sudo_modal.ts";
import { SECRET_LOOK } from "./secret_modal.ts";

/**
 * Shows a modal for `request` and resolves with the answer: on the terminals `elsewhere` reaches
 * when given, else as pi's overlay (abort and RPC mode as `showModal`).
 */
export type ShowModal<R> = (
  ui: ModalUI,
  request: R,
  signal: AbortSignal,
  elsewhere?: Elsewhere,
) => Promise<PromptOutcome>;

function showing<R extends QueuedRequest>(look: ModalLook<R>): ShowModal<R> {
  return (ui, request, signal, elsewhere) =>
    elsewhere
      ? showElsewhere(ui, request, signal, look, elsewhere)
      : showModal(ui, request, signal, look);
}

/** Shows the sudo modal. */
export const showSudoModal: ShowModal<PromptRequest> = showing(SUDO_LOOK);
/** Shows the "Secret request" modal of `pi-secret-run`. */
export const showSecretModal: ShowModal<SecretPromptRequest> = showing(SECRET_LOOK);
