/**
 * The session server's pairing gate (ADR 0005): run once a helper passes the kernel checks, and
 * again right before its password is sent. It keeps this session's verified helpers, decides on a
 * `/proc` snapshot (waiting, bounded, while a neighbour is in a legitimate transient state), and
 * in hardened mode asks root to confirm the helper's pipe is read by its parent sudo alone.
 *
 * @module
 */
import { stillRunning, type VerifiedRequester } from "../../kernel/peer_verification.ts";
import type { ProcessRef } from "../../kernel/peer_verification.ts";
import { firstExecutable } from "../../shared/executables.ts";
import { gatherPairingSnapshot, stdoutPipeInode } from "./pairing_snapshot.ts";
import { walkProcesses } from "../../kernel/proc_walk.ts";
import { ownFrontEnds, PAIRING_CHECK, rootCheckInstalled, runRootPairing } from "./root_check.ts";
import type { UncheckedProcess } from "../../askpass/prompter.ts";
import { describeProcess } from "../../kernel/process_facts.ts";
import { decidePairing, PAIRING_REFUSALS, ROOT_PAIRING_NOT_PERMITTED } from "./sudo_pairing.ts";
import type { FrontEnd, HelperShape, PairedHelper, PairingRefusal } from "./sudo_pairing.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** How long a transient state of another front end may last before it refuses. */
export const PAIRING_GRACE_MS = 3000;
/** Deadline of one `/proc` pass. */
const SNAPSHOT_DEADLINE_MS = 500;
const FIRST_RETRY_MS = 20;
const MAX_RETRY_MS = 250;

/** Our uid and gid, and the pinned helper's deno and argv (to tell a helper still starting up). */
export interface PairingGuardOptions {
  readonly uid: number;
  readonly gid: number;
  readonly exePath: string;
  readonly argvPrefix: readonly string[];
  /** The real sudo, for the root check (default: the first of /usr/bin/sudo, /bin/sudo). */
  readonly sudoPath: string | undefined;
}

/** Result of {@link PairingGuard.admit} and {@link PairingGuard.confirm}. */
export type PairingResult =
  | {
    readonly ok: true;
    readonly rootChecked: boolean;
    /** Front ends the user's uid could not clear, to be named in the modal (issue 20). */
    readonly unchecked?: readonly UncheckedProcess[];
  }
  | { readonly ok: false; readonly reason: PairingRefusal; readonly pid?: number };

interface Known extends PairedHelper {
  readonly helper: ProcessRef;
}

/** Per-session pairing state; see the module doc. */
export class PairingGuard {
  readonly #options: PairingGuardOptions;
  readonly #known = new Map<string, Known>();
  /** Our own `sudo -n` children (root checks in flight), this guard's and the terminal check's. */
  readonly #own = ownFrontEnds();

  constructor(options: PairingGuardOptions) {
    this.#options = options;
  }

  /**
   * Checks a newly verified helper. It is registered first, so that two
   * helpers verified at the same moment each see the other as verified
   * (otherwise each would wait for the other), and forgotten if refused.
   * `arrivedAt` (`performance.now()` when its connection was accepted) lets
   * a walk of `/proc` that started after it serve (the keyboard gate's, or
   * {@link prefetch}'s, started beside the kernel checks).
   */
  async admit(
    requestId: string,
    requester: VerifiedRequester,
    arrivedAt = performance.now(),
  ): Promise<PairingResult> {
    const entry: Known = {
      helperPid: requester.helper.pid,
      sudoPid: requester.sudo.pid,
      // Read by the verification from /proc/<helper>/fd/1 (a root-owned 0600 FIFO).
      pipeInode: requester.pipeInode,
      helper: requester.helper,
    };
    this.#known.set(requestId, entry);
    const result = await this.#evaluate(requestId, entry, arrivedAt);
    if (!result.ok) this.#known.delete(requestId);
    return result;
  }

  /**
   * Starts the walk of `/proc` that {@link admit} will read, when a helper
   * connects: it then runs in its worker beside the kernel checks instead of
   * after them. Walks are shared and bounded (`kernel/proc_walk.ts`), so a
   * flood of requests costs at most one walk in flight and one waiting.
   */
  prefetch(arrivedAt: number): void {
    const { uid, gid } = this.#options;
    const deadline = arrivedAt + SNAPSHOT_DEADLINE_MS;
    void walkProcesses({ uid, gid, notBefore: arrivedAt, deadline });
  }

  /** Checks again right before the password of `requestId` is sent. */
  async confirm(requestId: string): Promise<PairingResult> {
    const entry = this.#known.get(requestId);
    const now = entry && await stdoutPipeInode(entry.helperPid);
    if (!entry || now === undefined || now !== entry.pipeInode) {
      return { ok: false, reason: PAIRING_REFUSALS.STDOUT_PIPE_UNKNOWN };
    }
    return await this.#evaluate(requestId, entry, performance.now());
  }

  /**
   * Root first, where its check is installed: root reads sudo's descriptor
   * table, so its "paired" settles what the user's uid can only guess at
   * (other front ends of the user), and nothing is asked of the human.
   * Otherwise, or when the broker's rule is not this user's, the user-level
   * checks decide, and name what they could not clear.
   */
  async #evaluate(requestId: string, entry: Known, notBefore: number): Promise<PairingResult> {
    if (await rootCheckInstalled(PAIRING_CHECK)) {
      const sudoPath = this.#options.sudoPath ??
        await firstExecutable(["/usr/bin/sudo", "/bin/sudo"]);
      if (entry.pipeInode === undefined || !sudoPath) {
        return { ok: false, reason: PAIRING_REFUSALS.ROOT_PAIRING_UNAVAILABLE };
      }
      const verdict = await runRootPairing(sudoPath, { ...entry, pipeInode: entry.pipeInode });
      if (verdict.ok) return { ok: true, rootChecked: true };
      // The broker's rule names another user: root cannot be asked for us.
      if (verdict.reason !== ROOT_PAIRING_NOT_PERMITTED) {
        return { ok: false, reason: verdict.reason };
      }
    }
    return await this.#userLevel(requestId, entry, notBefore);
  }

  async #userLevel(requestId: string, entry: Known, notBefore: number): Promise<PairingResult> {
    const o = this.#options;
    const shape: HelperShape = { ...o, ownFrontEnds: this.#own };
    const graceEnd = Date.now() + PAIRING_GRACE_MS;
    let pause = FIRST_RETRY_MS;
    for (;;) {
      const others = await this.#liveOthers(requestId);
      const gathered = await gatherPairingSnapshot({
        uid: o.uid,
        gid: o.gid,
        inodes: entry.pipeInode === undefined ? [] : [entry.pipeInode],
        notBefore,
        deadline: performance.now() + SNAPSHOT_DEADLINE_MS,
      });
      if (!gathered.ok) return { ok: false, reason: PAIRING_REFUSALS.PAIRING_SCAN_FAILED };
      const d = decidePairing(entry, others, gathered.snapshot, shape);
      if (d.ok) {
        const unchecked = await Promise.all((d.unverified ?? []).map(describeFrontEnd));
        return { ok: true, rootChecked: false, ...(unchecked.length ? { unchecked } : {}) };
      }
      if (!d.transient || Date.now() + pause > graceEnd) {
        return { ok: false, reason: d.reason, pid: d.pid };
      }
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, MAX_RETRY_MS);
      notBefore = performance.now();
    }
  }

  /** The other registered helpers that are still running (finished ones are dropped). */
  async #liveOthers(requestId: string): Promise<PairedHelper[]> {
    const others: PairedHelper[] = [];
    for (const [id, k] of [...this.#known]) {
      if (id === requestId) continue;
      if (await stillRunning([k.helper])) others.push(k);
      else this.#known.delete(id);
    }
    return others;
  }
}

/** A front end named in the modal: what it is and why its pipe could not be checked. */
function describeFrontEnd(fe: FrontEnd): Promise<UncheckedProcess> {
  const sudo = fe.comm === "sudo";
  const why = fe.ttyNr !== 0
    ? (sudo ? msg.waitingSudoAtTerminal : msg.waitingSetuidAtTerminal)
    : (sudo ? msg.waitingSudo : msg.waitingSetuid);
  return describeProcess(fe.pid, why);
}
