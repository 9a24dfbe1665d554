// @ts-check
/**
 * The walk of `/proc` for `proc_walk.ts`, in a worker thread. It reads and
 * lists; the callers decide. Plain JavaScript: Node loads a worker's file itself
 * and strips no types below `node_modules`, where `pi install` puts this package.
 *
 * Only reads that never wait on another process: listings, `stat` of
 * `/proc/<pid>`, descriptor links (`readlink` never follows them) and `status`
 * (built from counters, without the target's locks). `cmdline`, which takes
 * the target's mmap lock, is never read.
 *
 * @module
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { readDescriptorTableSync } from "./descriptor_table.mjs";
import { parentPort } from "node:worker_threads";

/** More processes than this fail the walk (the callers refuse). */
const MAX_PROCESSES = 32_768;
const MAX_FDS_PER_TABLE = 65_536;
/** More descriptor links in one walk than this fail it (bounds the answer's size). */
const MAX_LINKS = 262_144;
/** The part of `status` that holds `Uid:` (it comes early). */
const STATUS_CAP = 8192;

/**
 * @typedef {{ dir: string, links: string[], unreadable: boolean }} Table
 * `links` holds pairs, flattened: the descriptor's path, then its link text.
 */

/**
 * @typedef {{
 *   pid: number, uid: number, gid: number,
 *   tables?: Table[], tasks?: number[], leaderRead?: boolean, ids?: string
 * }} Walked
 */

/** Links that can be a file (`/…`) or a pipe (`pipe:[N]`): the only ones the callers look at. */
const fileOrPipe = (/** @type {string} */ link) => link.startsWith("/") || link.startsWith("pipe:");

/**
 * One descriptor table: its kept links, or `unreadable` (EACCES: the process
 * hides its tables); `undefined` when gone; `"too_many"` past a bound.
 * @param {string} dir
 * @param {{ left: number }} budget links still allowed in this request (from {@link MAX_LINKS})
 * @returns {Table | "too_many" | undefined}
 */
function readTable(dir, budget) {
  const table = readDescriptorTableSync(dir, Math.min(MAX_FDS_PER_TABLE, budget.left), fileOrPipe);
  if (!table.ok) {
    if (table.reason === "too_many") return "too_many";
    return table.reason === "hidden" ? { dir, links: [], unreadable: true } : undefined;
  }
  budget.left -= table.fds;
  return {
    dir,
    links: table.kept.flatMap(([fd, link]) => [`${dir}/${fd}`, link]),
    unreadable: false,
  };
}

/**
 * Every process: the owner of `/proc/<pid>` (effective ids, or root's when not
 * dumpable); for the user's own, the leader's table and the other tasks' ids
 * (`kcmp`, on the caller's side, tells which share it); for root-owned ones
 * that may be the user's (not a kernel thread, or a group other than root's),
 * the `Uid:` and `Gid:` lines.
 * @param {number} uid
 * @param {number} gid
 */
function walk(uid, gid) {
  /** @type {string[]} */
  let names;
  try {
    names = readdirSync("/proc").filter((n) => /^[1-9][0-9]*$/.test(n));
  } catch {
    return { ok: false, reason: "proc_unreadable" };
  }
  if (names.length > MAX_PROCESSES) return { ok: false, reason: "too_many" };
  const budget = { left: MAX_LINKS };
  /** @type {Walked[]} */
  const processes = [];
  for (const name of names) {
    const pid = Number(name);
    let owner;
    try {
      owner = statSync(`/proc/${name}`);
    } catch {
      continue; // gone
    }
    /** @type {Walked} */
    const entry = { pid, uid: owner.uid, gid: owner.gid };
    if (entry.uid === uid) {
      const leader = readTable(`/proc/${name}/fd`, budget);
      if (leader === "too_many") return { ok: false, reason: "too_many" };
      entry.tables = leader ? [leader] : [];
      entry.leaderRead = leader !== undefined && !leader.unreadable;
      try {
        entry.tasks = readdirSync(`/proc/${name}/task`).filter((t) => t !== name).map(Number);
      } catch {
        entry.tasks = [];
      }
    } else if (entry.uid === 0 && uid !== 0 && (entry.gid !== 0 || entry.gid === gid)) {
      // Root's, in the user's group or a group not root's: a setuid-root program the user may
      // have started (its egid stays the user's), for the pairing's front ends. `/proc/<pid>`
      // shows the effective ids even of a process that is not dumpable, so root's own
      // processes (root:root), kernel threads included, are not read at all.
      try {
        const status = readFileSync(`/proc/${name}/status`, "latin1").slice(0, STATUS_CAP);
        // Whole lines only: `Name:` may hold a `\r` (only `\n` and `\\` are escaped) (P16).
        entry.ids = status.split("\n").find((l) => l.startsWith("Uid:"));
      } catch { /* gone */ }
    }
    processes.push(entry);
  }
  return { ok: true, processes };
}

/**
 * The tables of tasks that `kcmp` said have their own.
 * @param {string[]} dirs
 */
function tables(dirs) {
  const budget = { left: MAX_LINKS };
  /** @type {Table[]} */
  const out = [];
  for (const dir of dirs.slice(0, MAX_PROCESSES)) {
    const table = readTable(dir, budget);
    if (table === "too_many") return { ok: false, reason: "too_many" };
    if (table) out.push(table);
  }
  return { ok: true, tables: out };
}

/** @param {Record<string, unknown>} message */
function answer(message) {
  const id = message?.id;
  const dirs = message?.dirs;
  try {
    const result = message?.kind === "walk"
      ? walk(Number(message.uid), Number(message.gid))
      : message?.kind === "tables" && Array.isArray(dirs)
      ? tables(dirs.filter((d) => typeof d === "string"))
      : { ok: false, reason: "bad_request" };
    return { id, ...result };
  } catch {
    return { id, ok: false, reason: "proc_unreadable" };
  }
}

// Node starts this as a node:worker_threads worker, Deno (the tests) as a web worker.
if (parentPort) {
  const port = parentPort;
  port.on("message", (message) => port.postMessage(answer(message)));
} else {
  // A web worker's global scope, which the node types do not describe.
  const scope = /** @type {{ onmessage: unknown, postMessage(message: unknown): void }} */ (
    /** @type {unknown} */ (globalThis)
  );
  scope.onmessage = (/** @type {MessageEvent} */ e) => scope.postMessage(answer(e.data));
}
