/**
 * What each named refusal means and what the user can do about it: the one
 * table behind the one-line notice pi shows and `pi-sudo-prompt doctor
 * --explain <reason>` (docs/troubleshooting.md). The table is typed over every
 * reason a request can end with, so a new reason without advice does not
 * compile; its text is the language's (`shared/i18n/`), the names stay.
 *
 * @module
 */
import type { DenyReason } from "../../askpass/protocol.ts";
import type { RefusalReason } from "./session_types.ts";
import { msg as m } from "../../shared/i18n/locale.ts";

/** Every reason a password or secret request can be refused or denied with. */
export type NamedReason = RefusalReason | DenyReason;

/** One refusal, explained. Plain text, one line each, no secret ever. */
export interface RefusalAdvice {
  /** What the product saw. */
  readonly means: string;
  /** What the user can do (one imperative sentence). */
  readonly todo: string;
}

/** The advice of a reason whose fix is `todoNotOurs`, or `todoRetry`. */
const notOurs = (means: string): RefusalAdvice => ({ means, todo: m.todoNotOurs });
const retry = (means: string): RefusalAdvice => ({ means, todo: m.todoRetry });

const ADVICE: Readonly<Record<NamedReason, RefusalAdvice>> = {
  // The requester is not the helper of a sudo the modal can show (kernel/peer_verification.ts).
  ffi_unavailable: { means: m.whyFfiUnavailable, todo: m.todoFfiUnavailable },
  peer_credentials_failed: retry(m.whyPeerCredentialsFailed),
  claimed_pid_mismatch: notOurs(m.whyClaimedPidMismatch),
  peer_uid_mismatch: notOurs(m.whyPeerUidMismatch),
  peer_gone: { means: m.whyPeerGone, todo: m.todoPeerGone },
  peer_ids_mismatch: notOurs(m.whyPeerIdsMismatch),
  peer_exe_mismatch: notOurs(m.whyPeerExeMismatch),
  peer_cmdline_mismatch: notOurs(m.whyPeerCmdlineMismatch),
  peer_environ_mismatch: notOurs(m.whyPeerEnvironMismatch),
  peer_stdout_not_sudo_pipe: notOurs(m.whyPeerStdoutNotSudoPipe),
  parent_not_sudo: notOurs(m.whyParentNotSudo),
  parent_not_setuid_root: notOurs(m.whyParentNotSetuidRoot),
  not_from_this_session: { means: m.whyNotFromThisSession, todo: m.todoNotFromThisSession },
  peer_connection_inherited: notOurs(m.whyPeerConnectionInherited),
  peer_does_not_hold_connection: notOurs(m.whyPeerDoesNotHoldConnection),
  peer_holds_connection_twice: notOurs(m.whyPeerHoldsConnectionTwice),
  connection_owner_unknown: retry(m.whyConnectionOwnerUnknown),
  peer_stopped: { means: m.whyPeerStopped, todo: m.todoPeerStopped },
  helper_traced: { means: m.whyHelperTraced, todo: m.todoHelperTraced },
  peer_changed: notOurs(m.whyPeerChanged),
  broker_not_root: { means: m.whyBrokerNotRoot, todo: m.todoBrokerNotRoot },
  broker_cmdline_mismatch: { means: m.whyBrokerCmdlineMismatch, todo: m.todoBrokerCmdlineMismatch },
  broker_proof_invalid: { means: m.whyBrokerProofInvalid, todo: m.todoBrokerProofInvalid },
  // The bytes on the socket broke the protocol (askpass/protocol.ts).
  frame_too_large: notOurs(m.whyFrameTooLarge),
  trailing_bytes: notOurs(m.whyTrailingBytes),
  malformed_frame: notOurs(m.whyMalformedFrame),
  malformed_header: notOurs(m.whyMalformedHeader),
  unsupported_version: { means: m.whyUnsupportedVersion, todo: m.todoUnsupportedVersion },
  unexpected_type: notOurs(m.whyUnexpectedType),
  bad_field: notOurs(m.whyBadField),
  prompt_too_long: notOurs(m.whyPromptTooLong),
  password_too_long: { means: m.whyPasswordTooLong, todo: m.todoPasswordTooLong },
  password_has_line_break: { means: m.whyPasswordHasLineBreak, todo: m.todoPasswordHasLineBreak },
  id_mismatch: notOurs(m.whyIdMismatch),
  // The connection itself (extension/channel/session_types.ts).
  too_many_connections: { means: m.whyTooManyConnections, todo: m.todoTooManyConnections },
  request_timeout: retry(m.whyRequestTimeout),
  replayed_request: notOurs(m.whyReplayedRequest),
  peer_closed: retry(m.whyPeerClosed),
  internal_error: { means: m.whyInternalError, todo: m.todoInternalError },
  // sudo's credential cache (extension/channel/credential_policy.ts).
  would_cache_credentials: { means: m.whyWouldCacheCredentials, todo: m.todoWouldCacheCredentials },
  // Only pi reads the keys (extension/keyboard/, ADR 0007).
  terminal_shared: { means: m.whyTerminalShared, todo: m.todoTerminalShared },
  terminal_scan_incomplete: retry(m.whyTerminalScanIncomplete),
  terminal_unguarded: { means: m.whyTerminalUnguarded, todo: m.todoTerminalUnguarded },
  // The password reaches only the sudo the modal shows (extension/pairing/, ADR 0005).
  stdout_pipe_unknown: retry(m.whyStdoutPipeUnknown),
  stdout_pipe_shared: { means: m.whyStdoutPipeShared, todo: m.todoStdoutPipeShared },
  stdout_pipe_held_elsewhere: {
    means: m.whyStdoutPipeHeldElsewhere,
    todo: m.todoStdoutPipeHeldElsewhere,
  },
  other_sudo_without_helper: { means: m.whyOtherSudoWithoutHelper, todo: m.todoStopOtherSudo },
  other_sudo_foreign_askpass: { means: m.whyOtherSudoForeignAskpass, todo: m.todoStopOtherSudo },
  other_sudo_helper_not_queued: {
    means: m.whyOtherSudoHelperNotQueued,
    todo: m.todoOtherSudoHelperNotQueued,
  },
  pairing_scan_failed: retry(m.whyPairingScanFailed),
  root_pairing_refused: { means: m.whyRootPairingRefused, todo: m.todoRootPairingRefused },
  root_pairing_unavailable: {
    means: m.whyRootPairingUnavailable,
    todo: m.todoRootPairingUnavailable,
  },
  // What root runs is shown, or refused (extension/channel/root_program.ts, ADR 0006).
  risky_sudo: { means: m.whyRiskySudo, todo: m.todoRiskySudo },
  // pi writes the password into sudo's pipe (kernel/sudo_pipe.ts, ADR 0008).
  pidfd_getfd_not_permitted: { means: m.whyPidfdGetfdNotPermitted, todo: m.todoHelperWrites },
  pidfd_getfd_unsupported: { means: m.whyPidfdGetfdUnsupported, todo: m.todoHelperWrites },
  helper_gone: retry(m.whyHelperGone),
  helper_pipe_changed: notOurs(m.whyHelperPipeChanged),
  pipe_write_failed: retry(m.whyPipeWriteFailed),
  // How a request ended without a password (askpass/protocol.ts).
  cancelled: { means: m.whyCancelled, todo: m.todoNothing },
  timeout: { means: m.whyTimeout, todo: m.todoTimeout },
  verification_failed: { means: m.whyVerificationFailed, todo: m.todoVerificationFailed },
  process_gone: { means: m.whyProcessGone, todo: m.todoProcessGone },
  queue_full: { means: m.whyQueueFull, todo: m.todoQueueFull },
  attempts_exhausted: { means: m.whyAttemptsExhausted, todo: m.todoAttemptsExhausted },
  session_closed: { means: m.whySessionClosed, todo: m.todoNothing },
  no_interactive_ui: { means: m.whyNoInteractiveUi, todo: m.todoNoInteractiveUi },
  pi_stopped: { means: m.whyPiStopped, todo: m.todoPiStopped },
};

/** The advice for a named reason; undefined for a name that is none of them. */
export function refusalAdvice(reason: string): RefusalAdvice | undefined {
  return Object.hasOwn(ADVICE, reason) ? ADVICE[reason as NamedReason] : undefined;
}

/** Every reason that has advice, sorted (doctor lists them). */
export function refusalReasons(): readonly string[] {
  return Object.keys(ADVICE).sort();
}

/**
 * The one-line notice for a refusal that carries no notice of its own: the
 * reason's name, what to do, and where the details are.
 */
export function refusalNotice(reason: string): string {
  const advice = refusalAdvice(reason);
  const todo = advice ? `: ${advice.todo}` : "";
  return `${m.refusedRequest(reason)}${todo} · ${explainHint(reason)}`;
}

/**
 * The notice for a refusal that names a process (the pairing pass): the
 * reason's name, the pid, what was seen and what to do.
 */
export function processRefusalNotice(
  refusal: { readonly reason: string; readonly pid?: number },
): string {
  const advice = refusalAdvice(refusal.reason);
  const who = refusal.pid === undefined ? "" : ` (pid ${refusal.pid})`;
  if (!advice) return `${refusal.reason}${who}`;
  const todo = advice.todo.charAt(0).toUpperCase() + advice.todo.slice(1);
  return `${refusal.reason}${who}: ${advice.means}. ${todo}`;
}

/** Where a refusal's details are, in pi and in a shell. */
export function explainHint(reason: string): string {
  return m.detailsHint(reason);
}
