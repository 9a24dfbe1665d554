/**
 * What each named refusal means and what the user can do about it: the one
 * table behind the one-line notice pi shows and `pi-sudo-prompt doctor
 * --explain <reason>` (docs/troubleshooting.md). The table is typed over every
 * reason a request can end with, so a new reason without advice does not
 * compile.
 *
 * @module
 */
import type { DenyReason } from "../../askpass/protocol.ts";
import type { RefusalReason } from "./session_types.ts";

/** Every reason a password or secret request can be refused or denied with. */
export type NamedReason = RefusalReason | DenyReason;

/** One refusal, explained. Plain text, one line each, no secret ever. */
export interface RefusalAdvice {
  /** What the product saw. */
  readonly means: string;
  /** What the user can do (one imperative sentence). */
  readonly todo: string;
}

const RETRY = "run the command again; if it keeps happening, run `pi-sudo-prompt doctor`";
const NOT_OURS =
  "something other than this pi's helper asked for the password: stop what you did not start, " +
  "and run the command again";

/** The advice of a reason whose fix is {@link NOT_OURS}, or {@link RETRY}. */
const notOurs = (means: string): RefusalAdvice => ({ means, todo: NOT_OURS });
const retry = (means: string): RefusalAdvice => ({ means, todo: RETRY });

const ADVICE: Readonly<Record<NamedReason, RefusalAdvice>> = {
  // The requester is not the helper of a sudo the modal can show (kernel/peer_verification.ts).
  ffi_unavailable: {
    means: "pi could not load koffi, so it cannot ask the kernel who connected",
    todo: "reinstall the package (`pi install npm:pi-sudo-prompt`); doctor's FFI check says why",
  },
  peer_credentials_failed: retry(
    "the kernel did not say which process connected (SO_PEERCRED failed)",
  ),
  claimed_pid_mismatch: notOurs("the process that connected is not the one it claims to be"),
  peer_uid_mismatch: notOurs("the process that connected runs as another user"),
  peer_gone: {
    means: "the process that asked exited before it could be checked",
    todo: "nothing, unless it keeps happening: then run the command again",
  },
  peer_ids_mismatch: notOurs(
    "the asker's real, effective, saved and filesystem ids are not all yours",
  ),
  peer_exe_mismatch: notOurs("the asker is not this pi's Deno helper"),
  peer_cmdline_mismatch: notOurs("the asker runs the helper with other arguments than pi set"),
  peer_environ_mismatch: notOurs("the asker's environment does not carry this session's settings"),
  peer_stdout_not_sudo_pipe: notOurs(
    "the asker's output is not a pipe read by sudo, so the password would go elsewhere",
  ),
  parent_not_sudo: notOurs("the asker's parent is not the system's sudo"),
  parent_not_setuid_root: notOurs(
    "the asker's parent is not running as root, so it is no real sudo",
  ),
  not_from_this_session: {
    means: "the sudo did not come from a command this pi started",
    todo: "run sudo from pi's own bash tool or `!` command, not from another terminal",
  },
  peer_connection_inherited: notOurs(
    "the connection was opened by one process and handed to another",
  ),
  peer_does_not_hold_connection: notOurs("the process that claims the connection does not hold it"),
  peer_holds_connection_twice: notOurs("the asker holds its connection twice, as a relay would"),
  connection_owner_unknown: retry("pi could not find which process holds the connection"),
  peer_stopped: {
    means: "the helper or its sudo was stopped (SIGSTOP) while it asked",
    todo: "stop whatever paused it, then run the command again",
  },
  helper_traced: {
    means: "a debugger (ptrace) is attached to the helper and could read the password",
    todo: "stop the tracer the notice names (`kill <pid>`) and run the command again",
  },
  peer_changed: notOurs("the asker became another program between the check and the answer"),
  broker_not_root: {
    means: "a secret request did not come from the root broker",
    todo: "run `pi-secret-run` itself; if it keeps happening, re-run `/sudo-prompt install-broker`",
  },
  broker_cmdline_mismatch: {
    means: "the secret request came from a root process that is not the installed broker",
    todo: "re-run `/sudo-prompt install-broker`",
  },
  broker_proof_invalid: {
    means: "the broker's proof file in /run/pi-sudo-prompt did not match its request",
    todo: "re-run `/sudo-prompt install-broker`, then the command",
  },
  // The bytes on the socket broke the protocol (askpass/protocol.ts).
  frame_too_large: notOurs("the request was larger than any real request"),
  trailing_bytes: notOurs("the request carried bytes after its end"),
  malformed_frame: notOurs("the request was not a valid frame"),
  malformed_header: notOurs("the request's header was not valid"),
  unsupported_version: {
    means: "the helper speaks another protocol version than this pi",
    todo: "restart pi after an update, so the helper and the extension are the same version",
  },
  unexpected_type: notOurs("the request was of a type pi does not answer"),
  bad_field: notOurs("a field of the request was missing or invalid"),
  prompt_too_long: notOurs("sudo's prompt text was longer than the modal shows"),
  password_too_long: {
    means: "the typed password was longer than sudo accepts",
    todo: "type your password again",
  },
  password_has_line_break: {
    means: "the typed password held a line break, which sudo would cut",
    todo: "type your password again, without a line break",
  },
  id_mismatch: notOurs("an answer named another request than the one asked"),
  // The connection itself (extension/channel/session_types.ts).
  too_many_connections: {
    means: "more requests came at once than pi queues",
    todo: "run fewer sudo commands at once; stop a loop that keeps asking",
  },
  request_timeout: retry("the asker connected but sent no request in time"),
  replayed_request: notOurs("a request was sent twice with the same id"),
  peer_closed: retry("the asker hung up before pi answered"),
  internal_error: {
    means: "something unexpected failed while handling the request, so pi refused it",
    todo: "run the command again; if it keeps happening, report it with `pi-sudo-prompt doctor`",
  },
  // sudo's credential cache (extension/channel/credential_policy.ts).
  would_cache_credentials: {
    means: "the sudo had no -k, so root access would outlast this command",
    todo: "use plain `sudo` (pi adds -k) or `sudo -k …`; `/usr/bin/sudo` by path needs -k",
  },
  // Only pi reads the keys (extension/keyboard/, ADR 0007).
  terminal_shared: {
    means: "another process has pi's terminal open and could read what you type",
    todo: "stop the process the notice names (`kill <pid>`) and run the command again",
  },
  terminal_scan_incomplete: retry("pi could not list who holds its terminal within its time limit"),
  terminal_unguarded: {
    means: "pi's terminal was not exclusive, or no guardian held it to close it again if pi is " +
      "killed, so pi did not ask",
    todo: "wait a moment (pi starts a new guardian) and run the command again; " +
      "`/sudo-prompt status` shows the guardian",
  },
  // The password reaches only the sudo the modal shows (extension/pairing/, ADR 0005).
  stdout_pipe_unknown: retry("the askpass helper's output is not a pipe pi can read"),
  stdout_pipe_shared: {
    means: "two askpass helpers write into one sudo's pipe: a command may be redirecting your " +
      "password",
    todo: "stop the command (Escape, Ctrl+C) and check what it runs",
  },
  stdout_pipe_held_elsewhere: {
    means: "another process holds this sudo's pipe: a command may be redirecting your password",
    todo: "stop the process the notice names and check what it runs, then run the command again",
  },
  other_sudo_without_helper: {
    means: "another sudo of yours waits with neither a terminal nor an askpass, as a redirected " +
      "one does",
    todo: "stop it (`ps -C sudo -o pid,args` lists them), then run the command again",
  },
  other_sudo_foreign_askpass: {
    means: "another sudo of yours waits on an askpass that is not this session's: a command may " +
      "be redirecting your password",
    todo: "stop it (`ps -C sudo -o pid,args` lists them), then run the command again",
  },
  other_sudo_helper_not_queued: {
    means: "another sudo waits on a helper this session did not verify (another pi?)",
    todo: "answer that one first, then run the command again",
  },
  pairing_scan_failed: retry("/proc could not be scanned within its time limit"),
  root_pairing_refused: {
    means: "root found that the helper's pipe is not read by the sudo shown: a command is " +
      "redirecting your password",
    todo: "stop the command and check what it runs",
  },
  root_pairing_unavailable: {
    means: "the root pairing check (`sudo -n pi-secret-broker --verify-pairing`) did not run",
    todo: "re-run `/sudo-prompt install-broker`, or uninstall the broker",
  },
  // What root runs is shown, or refused (extension/channel/root_program.ts, ADR 0006).
  risky_sudo: {
    means: "the sudo lets its environment choose what root runs (-s, -E, VAR=value) or runs a " +
      "program you could have written, and you chose to refuse such sudos (--sudo-refuse-risky)",
    todo: "run the program by its root-owned absolute path, without -s, -E or VAR=value; or " +
      "start pi without --sudo-refuse-risky to see the warning in the modal and decide",
  },
  // pi writes the password into sudo's pipe (kernel/sudo_pipe.ts, ADR 0008).
  pidfd_getfd_not_permitted: {
    means: "the kernel refused pi a copy of sudo's pipe (Yama 2 or 3), so the helper writes it",
    todo: "nothing: the helper writes the password instead",
  },
  pidfd_getfd_unsupported: {
    means: "the kernel has no pidfd_getfd (older than 5.6), so the helper writes the password",
    todo: "nothing: the helper writes the password instead",
  },
  helper_gone: retry("the helper exited before pi could hand the password over"),
  helper_pipe_changed: notOurs("the helper's output is no longer the pipe pi checked"),
  pipe_write_failed: retry("sudo's pipe did not take the whole password in one write"),
  // How a request ended without a password (askpass/protocol.ts).
  cancelled: { means: "you pressed Escape, or the request was withdrawn", todo: "nothing" },
  timeout: {
    means: "nobody answered the modal within its time limit",
    todo: "run the command again and answer the modal",
  },
  verification_failed: {
    means: "a check of the asker failed; the notice or the audit log names which",
    todo: "look up the reason the notice names with `pi-sudo-prompt doctor --explain <reason>`",
  },
  process_gone: {
    means: "the sudo, its helper or the broker exited, or was stopped, while the modal waited",
    todo: "nothing, unless you did not stop it: then run the command again",
  },
  queue_full: {
    means: "more requests waited than pi queues",
    todo: "answer or cancel the open modals, and run fewer sudo commands at once",
  },
  attempts_exhausted: {
    means: "the password was wrong too often for this request",
    todo: "run the command again; check Caps Lock and your keyboard layout",
  },
  session_closed: { means: "pi's session ended while the request waited", todo: "nothing" },
  no_interactive_ui: {
    means: "pi runs without its interactive TUI (print, JSON or RPC mode), so no modal can show",
    todo: "run sudo from pi's interactive TUI",
  },
  pi_stopped: {
    means: "pi was stopped (Ctrl+Z, SIGTSTP or SIGSTOP) while the request waited",
    todo: "bring pi back (`fg`) and run the command again; stop what paused pi if it was not you",
  },
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
  return `refused a password request (${reason})${todo} · ${explainHint(reason)}`;
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
  return `details: /sudo-prompt doctor ${reason}`;
}
