/**
 * Folder `extension/ui/`: what the human sees: the modals, the info panel, and
 * untrusted text made safe to draw.
 *
 * The two masked-input overlays, "🔐 Sudo Authentication Required"
 * ({@link SudoModal}) and "🔑 Secret request" ({@link SecretModal}), are one
 * component ({@link MaskedPromptModal}) and one box; they differ only in
 * their own lines.
 *
 * Everything shown comes from a {@link PromptRequest} or a
 * {@link SecretPromptRequest}, which the server read from the kernel or
 * verified itself, except the text the agent controls: sudo's prompt line
 * (`SUDO_PROMPT`) and the secret's `--label`. That text is sanitised and drawn
 * inside `«…»` after its own label, with continuation lines indented, so that
 * it can never pass for one of the modal's own lines.
 *
 * The secret lives only in {@link MaskedPromptModal}'s private array of code
 * points until Enter; it is then encoded straight into a `Uint8Array` that the
 * server can zero, and the array is emptied. It is never rendered (one `•` per
 * code point) and never logged.
 *
 * Rendering is pure ({@link renderSudoModal}, {@link renderSecretModal}) so
 * that it can be tested without a terminal.
 *
 * This module is what importers use; the code lives by responsibility in:
 *
 * - `modal_text.ts`: pure text helpers (sanitising, shell quoting, the
 *   countdown, wrapping with a hanging indent).
 * - `modal_frame.ts`: the theme, the live input view, and the lines, layout
 *   and box both modals draw alike.
 * - `masked_prompt.ts`: the {@link MaskedPromptModal} component and showing
 *   it as an overlay in pi.
 * - `sudo_modal.ts` and `secret_modal.ts`: each modal's own lines, component
 *   and `show…` function.
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
