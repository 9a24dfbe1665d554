/**
 * One approval per call (ADR 0006; the steps: ADR 0009 §4): a sudo ticket may
 * live while a tool call or `!` command runs, and ends when a call in which a
 * password was given ends. sudo keys a tty-less sudo's ticket to the sudo's
 * parent (pid, start time), which pi records ({@link TicketHolder}). Call times
 * also serve the modal's provenance of hidden processes (ADR 0009 §2).
 *
 * @module
 */
import { spawnWithDeadline } from "../../shared/spawn_deadline.ts";
import { type ReasonOf, reasons } from "../../shared/result.ts";
import { CallWindows, ticksNow } from "../../kernel/provenance.ts";
import { readStat } from "../../kernel/peer_verification.ts";
import { closeFd, pidfdOpen } from "../../kernel/peer_credentials.ts";
import { libc } from "../../kernel/libc.ts";
import process from "node:process";

/** Deadline for `sudo -K` (it never prompts; this only bounds a wedged sudo). */
export const REMOVE_DEADLINE_MS = 5000;

/** Why the removal failed: no sudo binary (`no_sudo`), or `sudo -K` did not exit 0. */
export const REMOVE_ERRORS = reasons("no_sudo", "sudo_failed");

/** One of the values of {@link REMOVE_ERRORS}. */
export type RemoveError = ReasonOf<typeof REMOVE_ERRORS>;

/** The process a ticket is keyed to: the sudo's parent, by pid and start time. */
export interface TicketHolder {
  readonly pid: number;
  readonly startTime: bigint;
}

/** A running call, as handed out by {@link CallTracker.begin}. */
export interface CallHandle {
  /** Answers given before the call began; later ones may have made a ticket it must remove. */
  readonly answersAtStart: number;
  readonly window: object;
}

/** Bookkeeping of running calls, answers and ticket holders; the caller does the removal. */
export class CallTracker {
  #running = 0;
  #answers = 0;
  readonly #windows = new CallWindows();
  #holders: TicketHolder[] = [];

  /** A call starts (before its command is spawned). */
  begin(): CallHandle {
    this.#running++;
    return { answersAtStart: this.#answers, window: this.#windows.begin(ticksNow()) };
  }

  /** A call ended: true if a password was given since; remove tickets before its result returns. */
  end(call: CallHandle): boolean {
    this.#running = Math.max(0, this.#running - 1);
    this.#windows.end(call.window, ticksNow());
    return this.#answers > call.answersAtStart;
  }

  /** Whether any call is running now. */
  inProgress(): boolean {
    return this.#running > 0;
  }

  /** Whether a process that started at `startTime` (ticks since boot) started while a call ran. */
  ranAt(startTime: bigint): boolean {
    return this.#windows.covers(startTime);
  }

  /** A password was handed to a sudo; `holder` when that sudo may leave a ticket. */
  noteAnswer(holder?: TicketHolder): void {
    this.#answers++;
    if (holder && this.#holders.length < 256) this.#holders.push(holder);
  }

  /** The ticket holders recorded so far, forgotten once taken. */
  takeHolders(): TicketHolder[] {
    const out = this.#holders;
    this.#holders = [];
    return out;
  }
}

/** Removes every cached sudo credential of this user (`sudo -K`), with a deadline. */
export function removeCachedCredentials(
  realSudo: string | undefined,
): Promise<{ ok: true } | { ok: false; reason: RemoveError }> {
  if (!realSudo) return Promise.resolve({ ok: false, reason: REMOVE_ERRORS.NO_SUDO });
  return spawnWithDeadline(realSudo, ["-K"], {
    deadlineMs: REMOVE_DEADLINE_MS,
    env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
  }).then((run) =>
    run.code === 0 ? { ok: true } : { ok: false, reason: REMOVE_ERRORS.SUDO_FAILED }
  );
}

/** The process a ticket of sudo `sudoPid` is keyed to: its parent, or `undefined` when gone. */
export async function ticketHolderOf(sudoPid: number): Promise<TicketHolder | undefined> {
  const sudo = await readStat(sudoPid);
  const parent = sudo && await readStat(sudo.ppid);
  return parent ? { pid: parent.pid, startTime: parent.startTime } : undefined;
}

/** `pidfd_send_signal` (the same number on every architecture). */
const SYS_PIDFD_SEND_SIGNAL = 424;
const SIGKILL = 9;

/**
 * Kills each holder still the process it was (pid and start time, via a pidfd, so
 * a reused pid is never hit): no later sudo can then present its ticket. Returns the count.
 */
export async function killTicketHolders(holders: readonly TicketHolder[]): Promise<number> {
  let killed = 0;
  for (const h of holders) {
    if (h.pid <= 1 || h.pid === process.pid) continue;
    const pidfd = pidfdOpen(h.pid);
    if (!pidfd.ok) continue;
    try {
      const stat = await readStat(h.pid);
      if (stat?.startTime !== h.startTime || stat.state === "Z") continue;
      const c = libc();
      const sent = c?.syscall(
        SYS_PIDFD_SEND_SIGNAL,
        "int",
        pidfd.fd,
        "int",
        SIGKILL,
        "void *",
        null,
        "unsigned int",
        0,
      );
      if (sent === 0) killed++;
    } finally {
      closeFd(pidfd.fd);
    }
  }
  return killed;
}

/**
 * The end of a call in which a password was given: `sudo -K`; if it fails, the holders
 * are killed and it is tried once more. Not `ok`: the caller blocks later calls (`index.ts`).
 */
export async function endTickets(
  realSudo: string | undefined,
  holders: readonly TicketHolder[],
): Promise<{ ok: true; killed: number } | { ok: false; reason: RemoveError; killed: number }> {
  const first = await removeCachedCredentials(realSudo);
  if (first.ok) return { ok: true, killed: 0 };
  const killed = await killTicketHolders(holders);
  const again = await removeCachedCredentials(realSudo);
  return again.ok ? { ok: true, killed } : { ok: false, reason: again.reason, killed };
}
