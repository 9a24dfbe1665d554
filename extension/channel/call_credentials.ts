/**
 * The opt-in cache per call (`--sudo-cache-per-call`, ADR 0006): sudo may
 * keep a credential while one tool call or `!` command runs, and every
 * credential is removed when a call in which a password was given ends.
 *
 * sudo keys a ticket to the parent process of the sudo and to its session;
 * it cannot be reached by call, so removal is `sudo -K`, which deletes the
 * user's whole timestamp file: the user's other terminals ask again too.
 *
 * @module
 */
import { spawnWithDeadline } from "../../shared/spawn_deadline.ts";
import { type ReasonOf, reasons } from "../../shared/result.ts";

/** Deadline for `sudo -K` (it never prompts; this only bounds a wedged sudo). */
export const REMOVE_DEADLINE_MS = 5000;

/** Named reasons the removal failed. */
export const REMOVE_ERRORS = reasons("no_sudo", "sudo_failed");

/** A running call, as handed out by {@link CallTracker.begin}. */
export interface CallHandle {
  /** Answers given before the call began; later ones may have made a ticket it must remove. */
  readonly answersAtStart: number;
}

/**
 * Counts running calls and answered password requests. Pure bookkeeping:
 * the caller does the removal when {@link CallTracker.end} says so.
 */
export class CallTracker {
  #running = 0;
  #answers = 0;

  /** A call starts (before its command is spawned). */
  begin(): CallHandle {
    this.#running++;
    return { answersAtStart: this.#answers };
  }

  /**
   * A call ended. True when a password was given since it began: a ticket
   * may exist that belongs to it (or to a process that outlived it), and it
   * must be removed before the call's result is returned.
   */
  end(call: CallHandle): boolean {
    this.#running = Math.max(0, this.#running - 1);
    return this.#answers > call.answersAtStart;
  }

  /** Whether any call is running now. */
  inProgress(): boolean {
    return this.#running > 0;
  }

  /** A password was handed to a sudo. */
  noteAnswer(): void {
    this.#answers++;
  }
}

/**
 * Removes every cached sudo credential of this user (`sudo -K`), with a
 * deadline. No password is involved and no terminal is needed.
 */
export function removeCachedCredentials(
  realSudo: string | undefined,
): Promise<{ ok: true } | { ok: false; reason: ReasonOf<typeof REMOVE_ERRORS> }> {
  if (!realSudo) return Promise.resolve({ ok: false, reason: REMOVE_ERRORS.NO_SUDO });
  return spawnWithDeadline(realSudo, ["-K"], {
    deadlineMs: REMOVE_DEADLINE_MS,
    env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
  }).then((run) =>
    run.code === 0 ? { ok: true } : { ok: false, reason: REMOVE_ERRORS.SUDO_FAILED }
  );
}
