/**
 * The boundary between the askpass session server and whatever asks the human
 * for the password: the pi modal in production, a scripted prompter in tests.
 *
 * Everything in a {@link PromptRequest} was read by the server from the kernel
 * (`/proc`), never taken from what the requesting process claimed, except
 * `promptText`, which is sudo's prompt line: the agent can choose it with
 * `SUDO_PROMPT`, so it is sanitised and must be shown framed as untrusted.
 *
 * @module
 */

/**
 * A process the checks could not clear, named in the modal so that the human
 * decides (issue 20: where the product cannot see, it asks): a process that
 * hides its open files (it may hold pi's terminal), or a setuid-root program
 * of the user waiting with no askpass (a password could reach it). Every
 * string is untrusted text from `/proc`, sanitised when drawn.
 */
export interface UncheckedProcess {
  readonly pid: number;
  /** Its command line (or name): the process's own claim, shown as such. */
  readonly command: string;
  /** When it started, local time `HH:MM:SS`, or `""` when unknown. */
  readonly started: string;
  /** Its parent: `pid (name)`, or `""` when unknown. */
  readonly parent: string;
  /** What could not be checked, in a few words. */
  readonly why: string;
  /**
   * What pi proved of where it came from (ADR 0009 §2): `agent`, it descends
   * from pi (a tool call or a `!` command); `during_call`, it started while
   * one ran. Absent: nothing proven.
   */
  readonly origin?: "agent" | "during_call";
}

/** What the modal needs to show for one password request. */
export interface PromptRequest {
  /** Random 128-bit request id (hex), for correlation in the audit log. */
  readonly requestId: string;
  /** sudo's argv as read from `/proc/<sudo pid>/cmdline`. */
  readonly sudoArgv: readonly string[];
  /**
   * argv of the shell that pi started for the tool call or `!` command that
   * runs this sudo (from `/proc/<pid>/cmdline`), or `null` when unknown.
   */
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
   * Runs the keyboard gate again, now (a terminal was added to those the
   * modal reads: a locked tmux client's, ADR 0009); false when the request
   * was refused, and its modal must not be drawn.
   */
  readonly recheck?: () => Promise<boolean>;
  /**
   * What the password approves: `"call"`, the whole tool call or `!`
   * command (sudo caches it until the call ends, so its later sudos do not
   * ask); `"sudo"`, this one sudo. Absent: `"sudo"`.
   */
  readonly covers?: "call" | "sudo";
  /** Red lines: ways this sudo may run something its argv does not show (ADR 0006). */
  readonly warnings?: readonly string[];
}

/** What the "Secret request" modal needs for one `pi-secret-run` request. */
export interface SecretPromptRequest {
  /** Random 128-bit request id (hex). */
  readonly requestId: string;
  /** The real argv the root broker will run (program resolved to its real path). */
  readonly argv: readonly string[];
  /** The directory it runs in: the caller's real cwd, entered by the broker as the caller. */
  readonly cwd: string;
  /** The agent's `--label`: unverified text, to be shown as such. */
  readonly label: string;
  /** See {@link PromptRequest.recheck}. */
  readonly recheck?: () => Promise<boolean>;
  /** True only when the allowlist allows this exact argv (else the red warning). */
  readonly allowlisted: boolean;
  /**
   * True when the agent can trace the command (it runs as the user; the
   * broker keeps it out of the caller's process tree, so only Yama
   * `ptrace_scope` 0, or no Yama, lets the agent trace it): the modal says so.
   */
  readonly traceable: boolean;
  /** Epoch milliseconds at which the request is denied automatically. */
  readonly deadline: number;
  /** How many other verified requests wait behind this one right now. */
  readonly waiting: () => number;
}

/**
 * The human's answer. The password is a byte buffer so that the server can
 * zero it once it has been written to the helper; prompters must not keep a
 * copy. A cancel may carry the human's one-line `reply` to the agent, typed
 * in a field of its own (never the password's): the agent reads it in the
 * tool call's result, marked as the user's words.
 */
export type PromptOutcome =
  | { readonly kind: "submit"; readonly password: Uint8Array }
  | { readonly kind: "cancel"; readonly reply?: string };

/**
 * Asks the human. `signal` aborts when the request must end without an
 * answer (deadline, helper or sudo died, session closing); the prompter must
 * then close its UI promptly and resolve `{ kind: "cancel" }`.
 */
export interface Prompter {
  prompt(request: PromptRequest, signal: AbortSignal): Promise<PromptOutcome>;
  /** The "Secret request" modal; without it every secret request is denied. */
  promptSecret?(request: SecretPromptRequest, signal: AbortSignal): Promise<PromptOutcome>;
}
