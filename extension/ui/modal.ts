/**
 * The modals' entry point: {@link SudoModal} and {@link SecretModal} are one component
 * ({@link MaskedPromptModal}, `masked_prompt.ts`) and one box (`modal_frame.ts`), differing only
 * in their own lines (`sudo_modal.ts`, `secret_modal.ts`). All they show was read from the kernel
 * or verified by the server, except the agent's text (sudo's prompt line, the secret's `--label`):
 * sanitised and drawn in `«…»` after its label, continuation lines indented, so it can never pass
 * for one of the modal's own lines. Rendering is pure, testable without a terminal.
 *
 * @module
 */

export { formatCountdown, shellCommandText, shellQuote } from "./modal_text.ts";
export type { MaskedInputView, ModalColor, ModalTheme } from "./modal_frame.ts";
export { MaskedPromptModal } from "./masked_prompt.ts";
export type { ModalUI as SecretModalUI, ModalUI as SudoModalUI } from "./masked_prompt.ts";
export { renderSudoModal, showSudoModal, SUDO_MODAL_TITLE, SudoModal } from "./sudo_modal.ts";
export type { SudoModalState } from "./sudo_modal.ts";
export {
  NOT_ALLOWLISTED_WARNING,
  renderSecretModal,
  SECRET_MODAL_TITLE,
  SecretModal,
  showSecretModal,
  TRACEABLE_WARNING,
} from "./secret_modal.ts";
export type { SecretModalState } from "./secret_modal.ts";
