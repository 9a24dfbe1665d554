/**
 * pi-sudo-prompt's typed, runtime-neutral core: the askpass wire protocol (between the Deno helper
 * sudo runs and the session server in pi), the helper's pinned Deno permissions and environment,
 * the named refusal reasons, sudo argument scanning and untrusted prompt text made safe. The pi
 * extension (`extension/`) is loaded by pi, not imported from here.
 *
 * @example A password request, as the helper sends it and the session reads it
 * ```ts
 * import {
 *   decodeRequest,
 *   encodeRequest,
 *   FrameReader,
 *   newRequestId,
 * } from "./mod.ts";
 *
 * const frame = encodeRequest({
 *   id: newRequestId(),
 *   prompt: "[sudo] password for alice: ",
 *   pid: 4242,
 * });
 * // The session reads the length-prefixed frame, then checks it.
 * const read = new FrameReader().push(frame);
 * if (read.ok && read.body) {
 *   const decoded = decodeRequest(read.body);
 *   if (decoded.ok) console.log(decoded.message.prompt); // "[sudo] password for alice: "
 * }
 * ```
 *
 * @module
 */
export {
  type Decoded,
  decodeIncoming,
  decodeReply,
  decodeRequest,
  DENY_REASONS,
  type DenyReason,
  encodeDenied,
  encodeRequest,
  encodeResponse,
  encodeSecretRequest,
  FrameReader,
  type IncomingRequest,
  MAX_FRAME_BYTES,
  MAX_LABEL_BYTES,
  MAX_PASSWORD_BYTES,
  MAX_PROMPT_BYTES,
  MAX_SECRET_ARGS,
  newRequestId,
  type PasswordDenied,
  type PasswordRequest,
  type PasswordResponse,
  PROTOCOL_ERRORS,
  PROTOCOL_VERSION,
  type ProtocolError,
  type Reply,
  REQUEST_ID_HEX_LENGTH,
  type SecretRequest,
} from "./askpass/protocol.ts";
export {
  HELPER_ENV,
  HELPER_FORBIDDEN_ENV,
  helperArgvPrefix,
  helperEnvironment,
  type HelperEnvValues,
} from "./askpass/helper_permissions.ts";
export {
  type ExpectedHelper,
  type ProcessRef,
  type Verification,
  type VerifiedRequester,
  VERIFY_REFUSALS,
  type VerifyRefusal,
  verifyRequester,
} from "./kernel/peer_verification.ts";
export { scanSudoOptions, type SudoOptionScan } from "./askpass/sudo_args.ts";
export { sanitizePrompt, sanitizeUntrusted } from "./askpass/prompt_text.ts";
export type {
  Prompter,
  PromptOutcome,
  PromptRequest,
  SecretPromptRequest,
} from "./askpass/prompter.ts";
