/**
 * The password reaches only the sudo the modal shows (docs/design.md §2 invariant 2, ADR 0005):
 * pure decisions over a snapshot of the user's setuid-root front ends and of who holds the
 * helper's stdout pipe. "fd 1 is a root-owned 0600 FIFO" proves only that some setuid program made
 * the pipe (the pipe swap: ADR 0005, context). The user cannot read sudo's fd table, so without
 * root every other front end must be accounted for and no other process may hold the pipe.
 *
 * @module
 */
import { sudoWantsPassword } from "../../shared/sudo_answer.ts";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";

/**
 * Why the pairing checks refuse; each rule is in ADR 0005 (layer 1's table, layer 2). The subtle
 * one: `other_sudo_without_helper`, a `sudo` with no child and no terminal, is how the pipe swap's
 * hidden sudo looks once its askpass has handed the pipe over.
 */
export const PAIRING_REFUSALS = reasons(
  "stdout_pipe_unknown",
  "stdout_pipe_shared",
  "stdout_pipe_held_elsewhere",
  "other_sudo_without_helper",
  "other_sudo_foreign_askpass",
  "other_sudo_helper_not_queued",
  "pairing_scan_failed",
  "root_pairing_refused",
  "root_pairing_unavailable",
);

/**
 * Not a refusal: sudo said "a password is required", so the broker's NOPASSWD rule names another
 * user. Only root's sudoers decides that, so the session runs the user-level layer alone.
 */
export const ROOT_PAIRING_NOT_PERMITTED = "root_pairing_not_permitted";

/** One of the values of {@link PAIRING_REFUSALS}. */
export type PairingRefusal = ReasonOf<typeof PAIRING_REFUSALS>;

/** A child of a front end, as far as the user can see it. */
export interface FrontEndChild {
  readonly pid: number;
  /** `State:` letter (`Z` for a zombie not yet reaped). */
  readonly state: string;
  /** Real uid (first field of `Uid:`). */
  readonly uid: number;
  /** `exe` link, when readable (not for zombies or root processes). */
  readonly exe: string | undefined;
  readonly argv: readonly string[] | undefined;
}

/** A setuid-root front end of the user (`Uid: <ours> 0 0 0`). */
export interface FrontEnd {
  readonly pid: number;
  readonly comm: string;
  readonly state: string;
  /** `tty_nr` of `stat`: non-zero when it has a controlling terminal. */
  readonly ttyNr: number;
  readonly children: readonly FrontEndChild[];
}

/** What {@link decidePairing} looks at, gathered in one pass. */
export interface PairingSnapshot {
  readonly frontEnds: readonly FrontEnd[];
  /** For each pipe inode asked about: the pids whose fd table holds it. */
  readonly pipeHolders: ReadonlyMap<number, readonly number[]>;
}

/** A helper that passed the kernel checks, with the pipe on its fd 1. */
export interface PairedHelper {
  readonly helperPid: number;
  readonly sudoPid: number;
  /** Inode of the helper's fd 1 (`pipe:[N]`), or undefined if unreadable. */
  readonly pipeInode: number | undefined;
}

/** What a helper of this session looks like, to tell one still starting up. */
export interface HelperShape {
  readonly uid: number;
  readonly exePath: string;
  readonly argvPrefix: readonly string[];
  /** Front ends we started ourselves (the root pairing check's `sudo -n`). */
  readonly ownFrontEnds: ReadonlySet<number>;
}

/**
 * Result of {@link decidePairing}. `transient`: a state a legitimate neighbour passes through (a
 * sudo still authenticating, a helper starting, or exited and not yet reaped); the caller asks
 * again briefly and refuses only if it persists.
 */
export type PairingDecision = Result<
  {
    /**
     * Front ends daily use produces that the user's uid cannot tell from the swap's hidden sudo (a
     * sudo at another terminal's prompt, `su`, `passwd`, a setuid wrapper): named in the modal for
     * the human to judge (issue 20); root decides where installed.
     */
    unverified?: readonly FrontEnd[];
  },
  PairingRefusal,
  {
    transient: boolean;
    /** The process that caused it (the other front end, or a pipe holder). */
    pid?: number;
  }
>;

/**
 * Decides whether a password for `candidate` would reach only the sudo the modal shows, as far as
 * the user's uid can tell. `others`: this session's other verified helpers (queued, or verifying).
 */
export function decidePairing(
  candidate: PairedHelper,
  others: readonly PairedHelper[],
  snapshot: PairingSnapshot,
  shape: HelperShape,
): PairingDecision {
  const refuse = (reason: PairingRefusal, transient: boolean, pid?: number): PairingDecision => ({
    ok: false,
    reason,
    transient,
    pid,
  });
  const inode = candidate.pipeInode;
  if (inode === undefined) return refuse(PAIRING_REFUSALS.STDOUT_PIPE_UNKNOWN, false);
  const twin = others.find((o) => o.helperPid !== candidate.helperPid && o.pipeInode === inode);
  if (twin) return refuse(PAIRING_REFUSALS.STDOUT_PIPE_SHARED, false, twin.helperPid);
  const holders = snapshot.pipeHolders.get(inode) ?? [];
  const stranger = holders.find((pid) => pid !== candidate.helperPid);
  if (stranger !== undefined) {
    return refuse(PAIRING_REFUSALS.STDOUT_PIPE_HELD_ELSEWHERE, false, stranger);
  }
  const verified = new Set(others.map((o) => `${o.sudoPid}/${o.helperPid}`));
  const unverified: FrontEnd[] = [];
  for (const fe of snapshot.frontEnds) {
    if (fe.pid === candidate.sudoPid || shape.ownFrontEnds.has(fe.pid)) continue;
    // A zombie front end reads nothing any more.
    if (fe.state === "Z") continue;
    const verdict = judgeFrontEnd(fe, verified, shape);
    if (verdict === "ask") unverified.push(fe);
    else if (verdict) return refuse(verdict, true, fe.pid);
  }
  return unverified.length > 0 ? { ok: true, unverified } : { ok: true };
}

/**
 * Why another front end is a problem, `"ask"` when the user's uid cannot tell, or undefined when
 * every child with our uid is a verified helper of this session under it (root-owned children are
 * its command). Without children: one on a terminal or not named `sudo` is asked about; a `sudo`
 * with neither terminal nor askpass is the swap's signature and refuses.
 */
function judgeFrontEnd(
  fe: FrontEnd,
  verified: ReadonlySet<string>,
  shape: HelperShape,
): PairingRefusal | "ask" | undefined {
  if (fe.children.length === 0) {
    return fe.ttyNr !== 0 || fe.comm !== "sudo"
      ? "ask"
      : PAIRING_REFUSALS.OTHER_SUDO_WITHOUT_HELPER;
  }
  for (const child of fe.children) {
    if (child.uid !== shape.uid || verified.has(`${fe.pid}/${child.pid}`)) continue;
    return looksLikeHelper(child, shape)
      ? PAIRING_REFUSALS.OTHER_SUDO_HELPER_NOT_QUEUED
      : PAIRING_REFUSALS.OTHER_SUDO_FOREIGN_ASKPASS;
  }
  return undefined;
}

/** True when `child` runs the pinned deno with the helper's argv (started, not yet verified). */
export function looksLikeHelper(child: FrontEndChild, shape: HelperShape): boolean {
  if (child.state === "Z" || child.exe !== shape.exePath || !child.argv) return false;
  return shape.argvPrefix.every((a, i) => child.argv![i] === a) &&
    child.argv.length === shape.argvPrefix.length + 1;
}

/** The inode of a `pipe:[N]` link text, or undefined for anything else. */
export function pipeInodeOf(link: string | undefined): number | undefined {
  const m = link === undefined ? null : /^pipe:\[([0-9]{1,20})\]$/.exec(link);
  if (!m) return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** Exit statuses of `broker/pairing_check.sh` (documented there too). */
export const ROOT_PAIRING_EXIT = { PAIRED: 0, NOT_PAIRED: 1, USAGE: 125 } as const;

/** What root said about one helper, parsed from the check's exit status and stdout. */
export type RootPairingVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: typeof ROOT_PAIRING_NOT_PERMITTED }
  | { readonly ok: false; readonly reason: PairingRefusal; readonly detail: string };

/**
 * Reads root's verdict: only exit 0 with `pi-pairing: paired` accepts; exit 1 with
 * `pi-pairing: not-paired <why>` refuses; sudo's "a password is required" (empty stdout) means the
 * rule is not ours ({@link ROOT_PAIRING_NOT_PERMITTED}); anything else (timeout, usage, no line)
 * means the check did not run, which refuses too (fail closed).
 */
export function parseRootPairingVerdict(
  exitCode: number | null,
  stdout: string,
  stderr = "",
): RootPairingVerdict {
  if (sudoWantsPassword(exitCode, stdout, stderr)) {
    return { ok: false, reason: ROOT_PAIRING_NOT_PERMITTED };
  }
  const line = stdout.split("\n").find((l) => l.startsWith("pi-pairing: ")) ?? "";
  const detail = line.slice("pi-pairing: ".length).replace(/[^\x20-\x7e]/g, "").slice(0, 200);
  if (exitCode === ROOT_PAIRING_EXIT.PAIRED && line === "pi-pairing: paired") return { ok: true };
  if (exitCode === ROOT_PAIRING_EXIT.NOT_PAIRED && detail.startsWith("not-paired")) {
    return { ok: false, reason: PAIRING_REFUSALS.ROOT_PAIRING_REFUSED, detail };
  }
  return {
    ok: false,
    reason: PAIRING_REFUSALS.ROOT_PAIRING_UNAVAILABLE,
    detail: detail || `exit ${exitCode ?? "signal"}`,
  };
}
