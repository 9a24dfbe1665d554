/**
 * Gathers the {@link PairingSnapshot} that `sudo_pairing.ts` decides on, in
 * one asynchronous, bounded pass over `/proc`:
 *
 * 1. `stat` every `/proc/<pid>` directory (its owner is the process's
 *    effective uid and gid). A setuid-root front end of ours shows uid 0 and
 *    a gid other than root's, so only those get their `status` read;
 *    processes owned by us get their fd table scanned.
 * 2. For each front end whose `Uid:` is `<ours> 0 0 0`: its children from
 *    `/proc/<pid>/task/<pid>/children` (readable even though sudo is not
 *    dumpable; zombies are listed until reaped), with each child's `status`,
 *    `exe` and `cmdline`.
 * 3. The fd tables of our processes, for the pipe inodes asked about
 *    (`pipe:[N]` link texts), capped at {@link MAX_SCANNED_FDS} links.
 *
 * Costs on the test VM (2 vCPUs, ~80 processes): about 1–3 ms. Nothing here
 * blocks the event loop; every read is capped; a deadline ends the pass and
 * fails it (the caller refuses: fail closed).
 *
 * @module
 */
import { readdir, stat } from "node:fs/promises";
import { sharesFileTable } from "../../kernel/file_table.ts";
import { parseNulList, parseStat, parseStatusIds } from "../../kernel/proc.ts";
import { readProcFile, readProcLink, readProcText } from "../../kernel/proc_reader.ts";
import {
  type FrontEnd,
  type FrontEndChild,
  type PairingSnapshot,
  pipeInodeOf,
} from "./sudo_pairing.ts";

/** Most fd links read in one pass; a larger table fails the pass (fail closed). */
export const MAX_SCANNED_FDS = 65_536;
/** Most children looked at per front end (sudo has one or two). */
const MAX_CHILDREN = 64;

/** Why a pass failed. */
export const SNAPSHOT_ERRORS = {
  PROC_UNREADABLE: "proc_unreadable",
  TOO_MANY_FDS: "too_many_fds",
  DEADLINE: "deadline",
} as const;

/** One of the values of {@link SNAPSHOT_ERRORS}. */
export type SnapshotError = typeof SNAPSHOT_ERRORS[keyof typeof SNAPSHOT_ERRORS];

/** Result of {@link gatherPairingSnapshot}. */
export type SnapshotResult =
  | { readonly ok: true; readonly snapshot: PairingSnapshot }
  | { readonly ok: false; readonly reason: SnapshotError };

/** Reads `/proc` for the front ends of `uid` and the holders of `inodes`. */
export async function gatherPairingSnapshot(
  uid: number,
  gid: number,
  inodes: readonly number[],
  deadline: number,
): Promise<SnapshotResult> {
  let names: string[];
  try {
    names = (await readdir("/proc")).filter((n) => /^[0-9]+$/.test(n));
  } catch {
    return { ok: false, reason: SNAPSHOT_ERRORS.PROC_UNREADABLE };
  }
  const owners = await Promise.all(
    names.map(async (name) => {
      const st = await stat(`/proc/${name}`).catch(() => undefined);
      return st ? { pid: Number(name), uid: st.uid, gid: st.gid } : undefined;
    }),
  );
  if (Date.now() > deadline) return { ok: false, reason: SNAPSHOT_ERRORS.DEADLINE };
  const mine: number[] = [];
  const maybeFrontEnds: number[] = [];
  for (const o of owners) {
    if (!o) continue;
    if (o.uid === uid) mine.push(o.pid);
    else if (o.uid === 0 && (o.gid === gid || o.gid !== 0)) maybeFrontEnds.push(o.pid);
  }
  const wanted = new Set(inodes);
  const [frontEnds, holders] = await Promise.all([
    Promise.all(maybeFrontEnds.map((pid) => readFrontEnd(pid, uid))),
    wanted.size > 0 ? scanPipeHolders(mine, wanted) : Promise.resolve(new Map()),
  ]);
  if (holders === undefined) return { ok: false, reason: SNAPSHOT_ERRORS.TOO_MANY_FDS };
  if (Date.now() > deadline) return { ok: false, reason: SNAPSHOT_ERRORS.DEADLINE };
  return {
    ok: true,
    snapshot: {
      frontEnds: frontEnds.filter((f): f is FrontEnd => f !== undefined),
      pipeHolders: holders,
    },
  };
}

/** A front end of `uid` (`Uid: <uid> 0 0 0`) with its children, or undefined. */
async function readFrontEnd(pid: number, uid: number): Promise<FrontEnd | undefined> {
  const ids = parseStatusIds(await readProcText(`/proc/${pid}/status`) ?? "");
  if (!ids || ids.uid[0] !== uid || ids.uid[1] !== 0 || ids.uid[2] !== 0 || ids.uid[3] !== 0) {
    return undefined;
  }
  const st = await readProcText(`/proc/${pid}/stat`);
  const parsed = parseStat(st ?? "");
  if (!parsed || parsed.pid !== pid) return undefined;
  const list = await readProcText(`/proc/${pid}/task/${pid}/children`) ?? "";
  const childPids = list.trim().split(/\s+/).filter((s) => /^[0-9]{1,10}$/.test(s)).map(Number)
    .slice(0, MAX_CHILDREN);
  const children = await Promise.all(childPids.map(readChild));
  return {
    pid,
    comm: parsed.comm,
    state: parsed.state,
    ttyNr: parsed.ttyNr ?? 0,
    uid: ids.uid,
    children: children.filter((c): c is FrontEndChild => c !== undefined),
  };
}

async function readChild(pid: number): Promise<FrontEndChild | undefined> {
  const status = await readProcText(`/proc/${pid}/status`);
  const ids = parseStatusIds(status ?? "");
  if (!status || !ids) return undefined;
  const state = /^State:\t([A-Za-z])/m.exec(status)?.[1] ?? "?";
  const [exe, cmdline] = await Promise.all([
    readProcLink(`/proc/${pid}/exe`),
    readProcFile(`/proc/${pid}/cmdline`),
  ]);
  return { pid, state, uid: ids.uid[0], exe, argv: cmdline ? parseNulList(cmdline) : undefined };
}

/**
 * For each inode in `wanted`, the pids among `pids` whose fd table holds it.
 * Undefined when the tables together exceed {@link MAX_SCANNED_FDS}.
 */
async function scanPipeHolders(
  pids: readonly number[],
  wanted: ReadonlySet<number>,
): Promise<Map<number, number[]> | undefined> {
  const holders = new Map<number, number[]>();
  let budget = MAX_SCANNED_FDS;
  let overflow = false;
  await Promise.all(pids.map(async (pid) => {
    // Threads made without CLONE_FILES keep a table of their own, which only
    // /proc/<pid>/task/<tid>/fd shows (`kcmp` tells which ones).
    const dirs = [`/proc/${pid}/fd`];
    for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
      if (tid !== String(pid) && sharesFileTable(pid, Number(tid)) !== true) {
        dirs.push(`/proc/${pid}/task/${tid}/fd`);
      }
    }
    const paths: string[] = [];
    for (const dir of dirs) {
      const fds = await readdir(dir).catch(() => [] as string[]);
      budget -= fds.length;
      if (budget < 0) return void (overflow = true);
      paths.push(...fds.map((fd) => `${dir}/${fd}`));
    }
    const links = await Promise.all(paths.map((path) => readProcLink(path)));
    for (const link of links) {
      const inode = pipeInodeOf(link);
      if (inode === undefined || !wanted.has(inode)) continue;
      const list = holders.get(inode) ?? [];
      if (!list.includes(pid)) list.push(pid);
      holders.set(inode, list);
    }
  }));
  return overflow ? undefined : holders;
}
