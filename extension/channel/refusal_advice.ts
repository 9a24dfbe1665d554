/**
 * What the user can do about each named refusal: every reason falls in one of about
 * thirty groups, each with a title and one thing to do (docs/troubleshooting.md).
 * A reason named like a group is in that group; every other is in a map typed over all of them,
 * so a new reason without a group does not compile.
 *
 * @module
 */
import type { DenyReason } from "../../askpass/protocol.ts";
import type { RefusalReason } from "./session_types.ts";
import { msg as m } from "../../shared/i18n/locale.ts";

/** Every reason a password or secret request can be refused or denied with. */
export type NamedReason = RefusalReason | DenyReason;

/**
 * Each group of refusals: what happened, in a few words, and what the user can do (one imperative
 * sentence). A reason's details are in `pi-sudo-prompt doctor --explain`
 * (`ops/doctor/reason_details.ts`), so their text stays out of pi's process.
 */
const GROUPS = {
  not_our_helper: { title: m.grpNotOurHelper, todo: m.todoNotOurs },
  broken_request: { title: m.grpBrokenRequest, todo: m.todoNotOurs },
  check_incomplete: { title: m.grpCheckIncomplete, todo: m.todoRetry },
  interrupted: { title: m.grpInterrupted, todo: m.todoRetry },
  asker_gone: { title: m.grpAskerGone, todo: m.todoProcessGone },
  ffi_unavailable: { title: m.grpFfiUnavailable, todo: m.todoFfiUnavailable },
  not_from_this_session: { title: m.grpNotFromThisSession, todo: m.todoNotFromThisSession },
  peer_stopped: { title: m.grpPeerStopped, todo: m.todoPeerStopped },
  helper_traced: { title: m.grpHelperTraced, todo: m.todoHelperTraced },
  broker_unverified: { title: m.grpBrokerUnverified, todo: m.todoBrokerUnverified },
  unsupported_version: { title: m.grpUnsupportedVersion, todo: m.todoUnsupportedVersion },
  password_unusable: { title: m.grpPasswordUnusable, todo: m.todoPasswordUnusable },
  too_many_requests: { title: m.grpTooManyRequests, todo: m.todoTooManyRequests },
  internal_error: { title: m.grpInternalError, todo: m.todoInternalError },
  would_cache_credentials: { title: m.grpWouldCacheCredentials, todo: m.todoWouldCacheCredentials },
  terminal_shared: { title: m.grpTerminalShared, todo: m.todoTerminalShared },
  terminal_unguarded: { title: m.grpTerminalUnguarded, todo: m.todoTerminalUnguarded },
  password_redirected: { title: m.grpPasswordRedirected, todo: m.todoPasswordRedirected },
  other_sudo_waiting: { title: m.grpOtherSudoWaiting, todo: m.todoStopOtherSudo },
  other_sudo_helper_not_queued: {
    title: m.grpOtherSudoHelperNotQueued,
    todo: m.todoOtherSudoHelperNotQueued,
  },
  root_pairing_unavailable: {
    title: m.grpRootPairingUnavailable,
    todo: m.todoRootPairingUnavailable,
  },
  risky_sudo: { title: m.grpRiskySudo, todo: m.todoRiskySudo },
  helper_writes: { title: m.grpHelperWrites, todo: m.todoHelperWrites },
  cancelled: { title: m.grpCancelled, todo: m.todoNothing },
  timeout: { title: m.grpTimeout, todo: m.todoTimeout },
  verification_failed: { title: m.grpVerificationFailed, todo: m.todoVerificationFailed },
  attempts_exhausted: { title: m.grpAttemptsExhausted, todo: m.todoAttemptsExhausted },
  session_closed: { title: m.grpSessionClosed, todo: m.todoNothing },
  no_interactive_ui: { title: m.grpNoInteractiveUi, todo: m.todoNoInteractiveUi },
  pi_stopped: { title: m.grpPiStopped, todo: m.todoPiStopped },
} as const satisfies Record<string, { title: string; todo: string }>;

/** The name of a group of refusals. */
export type RefusalGroup = keyof typeof GROUPS;

/** The group of each named reason that is not named like a group. */
const GROUP_OF: Readonly<Record<Exclude<NamedReason, RefusalGroup>, RefusalGroup>> = {
  // The requester is not the helper of a sudo the modal can show (kernel/peer_verification.ts).
  peer_credentials_failed: "check_incomplete",
  claimed_pid_mismatch: "not_our_helper",
  peer_uid_mismatch: "not_our_helper",
  peer_gone: "asker_gone",
  peer_ids_mismatch: "not_our_helper",
  peer_exe_mismatch: "not_our_helper",
  peer_cmdline_mismatch: "not_our_helper",
  peer_environ_mismatch: "not_our_helper",
  peer_stdout_not_sudo_pipe: "not_our_helper",
  parent_not_sudo: "not_our_helper",
  parent_not_setuid_root: "not_our_helper",
  peer_connection_inherited: "not_our_helper",
  peer_does_not_hold_connection: "not_our_helper",
  peer_holds_connection_twice: "not_our_helper",
  connection_owner_unknown: "check_incomplete",
  peer_changed: "not_our_helper",
  broker_not_root: "broker_unverified",
  broker_cmdline_mismatch: "broker_unverified",
  broker_proof_invalid: "broker_unverified",
  // The bytes on the socket broke the protocol (askpass/protocol.ts).
  frame_too_large: "broken_request",
  trailing_bytes: "broken_request",
  malformed_frame: "broken_request",
  malformed_header: "broken_request",
  unexpected_type: "broken_request",
  bad_field: "broken_request",
  prompt_too_long: "broken_request",
  password_too_long: "password_unusable",
  password_has_line_break: "password_unusable",
  id_mismatch: "broken_request",
  // The connection itself (extension/channel/session_types.ts).
  too_many_connections: "too_many_requests",
  request_timeout: "interrupted",
  replayed_request: "broken_request",
  peer_closed: "interrupted",
  // Only pi reads the keys (extension/keyboard/, ADR 0007).
  terminal_scan_incomplete: "check_incomplete",
  // The password reaches only the sudo the modal shows (extension/pairing/, ADR 0005).
  stdout_pipe_unknown: "check_incomplete",
  stdout_pipe_shared: "password_redirected",
  stdout_pipe_held_elsewhere: "password_redirected",
  other_sudo_without_helper: "other_sudo_waiting",
  other_sudo_foreign_askpass: "other_sudo_waiting",
  pairing_scan_failed: "check_incomplete",
  root_pairing_refused: "password_redirected",
  // pi writes the password into sudo's pipe (kernel/sudo_pipe.ts, ADR 0008).
  pidfd_getfd_not_permitted: "helper_writes",
  pidfd_getfd_unsupported: "helper_writes",
  helper_gone: "interrupted",
  helper_pipe_changed: "not_our_helper",
  pipe_write_failed: "interrupted",
  // How a request ended without a password (askpass/protocol.ts).
  process_gone: "asker_gone",
  queue_full: "too_many_requests",
};

/**
 * The advice for a named reason (its group's, with the group's name); undefined for a name that
 * is neither a reason nor a group (the doctor, which takes any name, checks it is a reason).
 */
export function refusalAdvice(reason: string) {
  const group = Object.hasOwn(GROUP_OF, reason)
    ? GROUP_OF[reason as keyof typeof GROUP_OF]
    : reason;
  if (!Object.hasOwn(GROUPS, group)) return undefined;
  return { group: group as RefusalGroup, ...GROUPS[group as RefusalGroup] } as const;
}

/** The one-line notice for a refusal with no notice of its own: group, reason, what to do. */
export function refusalNotice(reason: string): string {
  const advice = refusalAdvice(reason);
  const head = advice
    ? `${m.refusedRequestAs(advice.title, reason)}: ${advice.todo}`
    : m.refusedRequest(reason);
  return `${head} · ${m.detailsHint(reason)}`;
}

/** The notice for a refusal that names a process (the pairing pass). */
export function processRefusalNotice(
  refusal: { readonly reason: string; readonly pid?: number },
): string {
  const advice = refusalAdvice(refusal.reason);
  const who = refusal.pid === undefined ? "" : `, pid ${refusal.pid}`;
  if (!advice) return `${refusal.reason}${who}`;
  const todo = advice.todo.charAt(0).toUpperCase() + advice.todo.slice(1);
  return `${advice.title} (${refusal.reason}${who}). ${todo}`;
}
