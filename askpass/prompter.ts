/**
 * The contract between the session server and whatever asks the human (pi's modal; a scripted
 * prompter in tests). A {@link PromptRequest} holds only what the server read from the kernel,
 * never the requester's claims, except `promptText`: the agent chooses it (`SUDO_PROMPT`), so it
 * is sanitised and shown framed as untrusted.
 *
 * @module
 */

/**
 * A process the checks could not clear, named in the modal for the human to decide (issue 20):
 * one that hides its open files (it may hold pi's terminal), or a setuid-root program of the user
 * waiting with no askpass (a password could reach it). Strings are untrusted `/proc` text.
 */
export interface UncheckedProcess {
  readonly pid: number;
  /** Its command line (or name): the process's own claim, shown as such. */
  readonly command: string;
  /** When it started, local time `HH:MM:SS`, or `""` when unknown. */
  readonly started: string;
  /** Its parent: `pid (name)`, or `""` when unknown. */
  readonly parent: string;
  /** What could not be checked. */
  readonly why: string;
  /** Proven origin (ADR 0009 §2): `agent`, descends from pi; `during_call`, started in a call. */
  readonly origin?: "agent" | "during_call";
}

/** What the modal needs to show for one password request. */
export interface PromptRequest {
  /** Random 128-bit id (hex), for the audit log. */
  readonly requestId: string;
  /** sudo's argv as read from `/proc/<sudo pid>/cmdline`. */
  readonly sudoArgv: readonly string[];
  /** argv (from `/proc`) of the shell pi started for the call that runs this sudo, or `null`. */
  readonly toolCommand: readonly string[] | null;
  /** sudo's prompt line with control characters removed. Untrusted text. */
  readonly promptText: string;
  /** 1-based attempt number for this sudo process. */
  readonly attempt: number;
  /** Total attempts sudo allows (default 3). */
  readonly maxAttempts: number;
  /** Epoch milliseconds at which the request is denied automatically. */
  readonly deadline: number;
  /** How many other verified requests wait behind this one right now. */
  readonly waiting: () => number;
  /** The processes that could not be checked, as of now (named in the modal). */
  readonly unchecked?: () => readonly UncheckedProcess[];
  /**
   * Runs the keyboard gate again after a terminal was added (a locked tmux client's, ADR 0009);
   * false when the request was refused and its modal must not be drawn.
   */
  readonly recheck: () => Promise<boolean>;
  /** Approves the whole `call` (sudo caches it until the call ends) or this `sudo` (default). */
  readonly covers?: "call" | "sudo";
  /** Red lines: ways this sudo may run something its argv does not show (ADR 0006). */
  readonly warnings?: readonly string[];
}

/** What the "Secret request" modal needs for one `pi-secret-run` request. */
export interface SecretPromptRequest {
  readonly requestId: string;
  /** The real argv the root broker will run (program resolved to its real path). */
  readonly argv: readonly string[];
  /** The directory it runs in: the caller's real cwd, entered by the broker as the caller. */
  readonly cwd: string;
  /** The agent's `--label`: unverified text, to be shown as such. */
  readonly label: string;
  /** See {@link PromptRequest.recheck}. */
  readonly recheck: () => Promise<boolean>;
  /** True only when the allowlist allows this exact argv (else the red warning). */
  readonly allowlisted: boolean;
  /**
   * True when the agent can trace the command (Yama `ptrace_scope` 0 or no Yama; the broker keeps
   * it out of the caller's process tree): the modal says so.
   */
  readonly traceable: boolean;
  /** Epoch milliseconds at which the request is denied automatically. */
  readonly deadline: number;
  /** How many other verified requests wait behind this one right now. */
  readonly waiting: () => number;
}

/**
 * The human's answer. The password is bytes the server zeroes once written; prompters keep no
 * copy. A cancel may carry a one-line `reply` to the agent, typed in its own field, never the
 * password's.
 */
export type PromptOutcome =
  | { readonly kind: "submit"; readonly password: Uint8Array }
  | { readonly kind: "cancel"; readonly reply?: string };

/**
 * Asks the human. When `signal` aborts (deadline, helper or sudo died, session closing) the
 * prompter must close its UI promptly and resolve `{ kind: "cancel" }`.
 */
export interface Prompter {
  prompt(request: PromptRequest, signal: AbortSignal): Promise<PromptOutcome>;
  /** The "Secret request" modal; without it every secret request is denied. */
  promptSecret?(request: SecretPromptRequest, signal: AbortSignal): Promise<PromptOutcome>;
}
