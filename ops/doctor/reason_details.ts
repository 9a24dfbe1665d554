/**
 * What each named refusal saw: the detail line behind a notice that `doctor --explain` prints.
 * Here, outside pi's process, because only the doctor reads it; typed over every reason, so a new
 * reason without its detail does not compile.
 *
 * @module
 */
import type { NamedReason } from "../../extension/channel/refusal_advice.ts";
import { msg } from "../../shared/i18n/tools_locale.ts";

/** Each named reason's detail line, in the user's language. */
export const REASON_DETAILS: Readonly<Record<NamedReason, string>> = {
  // The requester is not the helper of a sudo the modal can show (kernel/peer_verification.ts).
  ffi_unavailable: msg.whyFfiUnavailable,
  peer_credentials_failed: msg.whyPeerCredentialsFailed,
  claimed_pid_mismatch: msg.whyClaimedPidMismatch,
  peer_uid_mismatch: msg.whyPeerUidMismatch,
  peer_gone: msg.whyPeerGone,
  peer_ids_mismatch: msg.whyPeerIdsMismatch,
  peer_exe_mismatch: msg.whyPeerExeMismatch,
  peer_cmdline_mismatch: msg.whyPeerCmdlineMismatch,
  peer_environ_mismatch: msg.whyPeerEnvironMismatch,
  peer_stdout_not_sudo_pipe: msg.whyPeerStdoutNotSudoPipe,
  parent_not_sudo: msg.whyParentNotSudo,
  parent_not_setuid_root: msg.whyParentNotSetuidRoot,
  not_from_this_session: msg.whyNotFromThisSession,
  peer_connection_inherited: msg.whyPeerConnectionInherited,
  peer_does_not_hold_connection: msg.whyPeerDoesNotHoldConnection,
  peer_holds_connection_twice: msg.whyPeerHoldsConnectionTwice,
  connection_owner_unknown: msg.whyConnectionOwnerUnknown,
  peer_stopped: msg.whyPeerStopped,
  helper_traced: msg.whyHelperTraced,
  peer_changed: msg.whyPeerChanged,
  broker_not_root: msg.whyBrokerNotRoot,
  broker_cmdline_mismatch: msg.whyBrokerCmdlineMismatch,
  broker_proof_invalid: msg.whyBrokerProofInvalid,
  // The bytes on the socket broke the protocol (askpass/protocol.ts).
  frame_too_large: msg.whyFrameTooLarge,
  trailing_bytes: msg.whyTrailingBytes,
  malformed_frame: msg.whyMalformedFrame,
  malformed_header: msg.whyMalformedHeader,
  unsupported_version: msg.whyUnsupportedVersion,
  unexpected_type: msg.whyUnexpectedType,
  bad_field: msg.whyBadField,
  prompt_too_long: msg.whyPromptTooLong,
  password_too_long: msg.whyPasswordTooLong,
  password_has_line_break: msg.whyPasswordHasLineBreak,
  id_mismatch: msg.whyIdMismatch,
  // The connection itself (extension/channel/session_types.ts).
  too_many_connections: msg.whyTooManyConnections,
  request_timeout: msg.whyRequestTimeout,
  replayed_request: msg.whyReplayedRequest,
  peer_closed: msg.whyPeerClosed,
  internal_error: msg.whyInternalError,
  // sudo's credential cache (extension/channel/credential_policy.ts).
  would_cache_credentials: msg.whyWouldCacheCredentials,
  // Only pi reads the keys (extension/keyboard/, ADR 0007).
  terminal_shared: msg.whyTerminalShared,
  terminal_scan_incomplete: msg.whyTerminalScanIncomplete,
  terminal_unguarded: msg.whyTerminalUnguarded,
  // The password reaches only the sudo the modal shows (extension/pairing/, ADR 0005).
  stdout_pipe_unknown: msg.whyStdoutPipeUnknown,
  stdout_pipe_shared: msg.whyStdoutPipeShared,
  stdout_pipe_held_elsewhere: msg.whyStdoutPipeHeldElsewhere,
  other_sudo_without_helper: msg.whyOtherSudoWithoutHelper,
  other_sudo_foreign_askpass: msg.whyOtherSudoForeignAskpass,
  other_sudo_helper_not_queued: msg.whyOtherSudoHelperNotQueued,
  pairing_scan_failed: msg.whyPairingScanFailed,
  root_pairing_refused: msg.whyRootPairingRefused,
  root_pairing_unavailable: msg.whyRootPairingUnavailable,
  // What root runs is shown, or refused (extension/channel/root_program.ts, ADR 0006).
  risky_sudo: msg.whyRiskySudo,
  // pi writes the password into sudo's pipe (kernel/sudo_pipe.ts, ADR 0008).
  pidfd_getfd_not_permitted: msg.whyPidfdGetfdNotPermitted,
  pidfd_getfd_unsupported: msg.whyPidfdGetfdUnsupported,
  helper_gone: msg.whyHelperGone,
  helper_pipe_changed: msg.whyHelperPipeChanged,
  pipe_write_failed: msg.whyPipeWriteFailed,
  // How a request ended without a password (askpass/protocol.ts).
  cancelled: msg.whyCancelled,
  timeout: msg.whyTimeout,
  verification_failed: msg.whyVerificationFailed,
  process_gone: msg.whyProcessGone,
  queue_full: msg.whyQueueFull,
  attempts_exhausted: msg.whyAttemptsExhausted,
  session_closed: msg.whySessionClosed,
  no_interactive_ui: msg.whyNoInteractiveUi,
  pi_stopped: msg.whyPiStopped,
};
