/**
 * Gathers the {@link PairingSnapshot} that `sudo_pairing.ts` decides on (ADR 0005, layer 1), from
 * the one shared `/proc` walk (`kernel/proc_walk.ts`): the user's setuid-root front ends with their
 * children from `/proc/<pid>/task/<pid>/children` (readable though sudo is not dumpable; zombies
 * listed until reaped), read here asynchronously, and the holders of the pipe inodes asked about.
 * Past the walk's deadline the pass fails (the caller refuses: fail closed).
 *
 * @module
 */
import { parseNulList, parseStatusIds, parseStatusState } from "../../kernel/proc.ts";
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
 * What a walk shows for the pairing (pure): the user's setuid-root front ends (root-owned,
 * `Uid: <ours> 0 0 0`) and, per inode asked about, the user's processes whose tables hold it.
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
  // All reads at once: this runs between the verification and the modal.
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
  const state = parseStatusState(status);
  return { pid, state, uid: ids.uid[0], exe, argv: cmdline ? parseNulList(cmdline) : undefined };
}
