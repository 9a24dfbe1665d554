/**
 * Gathers the {@link PairingSnapshot} that `sudo_pairing.ts` decides on, from
 * the one shared walk of `/proc` (`kernel/proc_walk.ts`, in a worker thread):
 *
 * 1. The walk gives the owner of every `/proc/<pid>` (the process's
 *    effective ids, or root's when it is not dumpable), the `Uid:` and `Gid:`
 *    of root-owned processes, and the descriptor links of the user's own.
 * 2. For each front end whose `Uid:` is `<ours> 0 0 0`: its children from
 *    `/proc/<pid>/task/<pid>/children` (readable even though sudo is not
 *    dumpable; zombies are listed until reaped), with each child's `status`,
 *    `exe` and `cmdline`, read here, asynchronously.
 * 3. The holders of the pipe inodes asked about (`pipe:[N]` link texts).
 *
 * The walk's deadline ends the pass and fails it (the caller refuses: fail
 * closed).
 *
 * @module
 */
import { parseNulList, parseStatusIds } from "../../kernel/proc.ts";
import { readProcFile, readProcLink, readProcText } from "../../kernel/proc_reader.ts";
import { readStat } from "../../kernel/peer_verification.ts";
import {
  type ProcessWalk,
  WALK_FAILURES,
  type WalkFailure,
  walkProcesses,
} from "../../kernel/proc_walk.ts";
import {
  type FrontEnd,
  type FrontEndChild,
  type PairingSnapshot,
  pipeInodeOf,
} from "./sudo_pairing.ts";
import type { Result } from "../../shared/result.ts";

/** Most children looked at per front end (sudo has one or two). */
const MAX_CHILDREN = 64;

/** Result of {@link gatherPairingSnapshot}: a failed pass says why its walk failed. */
export type SnapshotResult = Result<{ snapshot: PairingSnapshot }, WalkFailure>;

/** What to gather. */
export interface SnapshotRequest {
  readonly uid: number;
  readonly gid: number;
  /** The pipe inodes whose holders are wanted. */
  readonly inodes: readonly number[];
  /** The walk must have started after this `performance.now()` (a shared walk may serve). */
  readonly notBefore: number;
  /** `performance.now()` after which the pass fails. */
  readonly deadline: number;
}

/** Reads `/proc` for the front ends of `uid` and the holders of `inodes`. */
export async function gatherPairingSnapshot(request: SnapshotRequest): Promise<SnapshotResult> {
  const walked = await walkProcesses(request);
  if (!walked.ok) return walked;
  const { candidates, pipeHolders } = pairingFacts(walked.walk, request);
  const frontEnds = await Promise.all(candidates.map(readFrontEnd));
  if (performance.now() > request.deadline) return { ok: false, reason: WALK_FAILURES.DEADLINE };
  const snapshot = { frontEnds: frontEnds.filter((f) => f !== undefined), pipeHolders };
  return { ok: true, snapshot };
}

/**
 * What a walk shows for the pairing (pure): the setuid-root front ends of
 * the user (root-owned, `Uid: <ours> 0 0 0`) and, for each inode asked
 * about, the user's processes whose tables hold it.
 */
export function pairingFacts(
  walk: ProcessWalk,
  request: Pick<SnapshotRequest, "uid" | "gid" | "inodes">,
): { candidates: number[]; pipeHolders: Map<number, number[]> } {
  const wanted = new Set(request.inodes);
  const candidates: number[] = [];
  const pipeHolders = new Map<number, number[]>();
  for (const p of walk.processes) {
    if (p.owner.uid === request.uid && p.tables) {
      for (const table of p.tables) {
        for (const [, link] of table.links) {
          const inode = pipeInodeOf(link);
          if (inode === undefined || !wanted.has(inode)) continue;
          const list = pipeHolders.get(inode) ?? [];
          if (!list.includes(p.pid)) list.push(p.pid);
          pipeHolders.set(inode, list);
        }
      }
    } else if (p.owner.uid === 0 && (p.owner.gid === request.gid || p.owner.gid !== 0)) {
      const u = p.ids?.uid;
      if (u && u[0] === request.uid && u[1] === 0 && u[2] === 0 && u[3] === 0) {
        candidates.push(p.pid);
      }
    }
  }
  return { candidates, pipeHolders };
}

/** The inode of the pipe on fd 1 of `pid` (a helper's stdout), or undefined for anything else. */
export async function stdoutPipeInode(pid: number): Promise<number | undefined> {
  return pipeInodeOf(await readProcLink(`/proc/${pid}/fd/1`));
}

/** A front end with its children, or undefined when it is gone. */
async function readFrontEnd(pid: number): Promise<FrontEnd | undefined> {
  // Both at once, and each child's three reads at once: this runs between the
  // verification and the modal.
  const [parsed, listText] = await Promise.all([
    readStat(pid),
    readProcText(`/proc/${pid}/task/${pid}/children`),
  ]);
  if (!parsed) return undefined;
  const childPids = (listText ?? "").trim().split(/\s+/).filter((s) => /^[0-9]{1,10}$/.test(s))
    .map(Number).slice(0, MAX_CHILDREN);
  const children = await Promise.all(childPids.map(readChild));
  return {
    pid,
    comm: parsed.comm,
    state: parsed.state,
    ttyNr: parsed.ttyNr ?? 0,
    children: children.filter((c): c is FrontEndChild => c !== undefined),
  };
}

async function readChild(pid: number): Promise<FrontEndChild | undefined> {
  const [status, exe, cmdline] = await Promise.all([
    readProcText(`/proc/${pid}/status`),
    readProcLink(`/proc/${pid}/exe`),
    readProcFile(`/proc/${pid}/cmdline`),
  ]);
  const ids = parseStatusIds(status ?? "");
  if (!status || !ids) return undefined;
  const state = /^State:\t([A-Za-z])/m.exec(status)?.[1] ?? "?";
  return { pid, state, uid: ids.uid[0], exe, argv: cmdline ? parseNulList(cmdline) : undefined };
}
