/**
 * One walk of `/proc` per check, off pi's JavaScript thread, shared by the
 * pairing checks (ADR 0005) and the keyboard gate (ADR 0007). The walk runs in
 * `proc_walk_worker.mjs`; this module asks it, applies the deadline and shares
 * the answers (docs/design.md §7). A failed or late walk, or a lost worker,
 * fails the check (fail closed); a worker that errs or stays silent past
 * {@link WORKER_SILENCE_MS} is replaced on the next walk.
 *
 * @module
 */
import process from "node:process";
import { Worker } from "node:worker_threads";
import { libc } from "./libc.ts";
import { parseStatusIds, type ProcIds } from "./proc.ts";
// The worker's answers: one shape, written in its JSDoc types.
import type { Table as RawTable, Walked as RawProcess } from "./proc_walk_worker.mjs";
import { type ReasonOf, reasons, type Result } from "../shared/result.ts";

/**
 * Why a walk gave no answer (`too_many`: processes or descriptors past the
 * walk's bounds; `worker_failed`: the worker could not start, or died).
 */
export const WALK_FAILURES = reasons("proc_unreadable", "too_many", "deadline", "worker_failed");

/** One of the values of {@link WALK_FAILURES}. */
export type WalkFailure = ReasonOf<typeof WALK_FAILURES>;

/** A descriptor table of one task as the walk read it. */
export interface FdTable {
  /** `[path of the descriptor, its link text]`, only links to a path (`/…`) or a pipe. */
  readonly links: readonly (readonly [string, string])[];
  /** The table could not be read (EACCES: the process is not dumpable). */
  readonly unreadable: boolean;
}

/** One process as the walk saw it. */
export interface WalkedProcess {
  readonly pid: number;
  /** The owner of `/proc/<pid>`: the effective ids, even of a process that is not dumpable. */
  readonly owner: { readonly uid: number; readonly gid: number };
  /** For the user's own processes: the leader's table and every task's that has its own. */
  readonly tables?: readonly FdTable[];
  /** For root-owned ones outside root's group (a setuid program's): the `Uid:` of `status`. */
  readonly ids?: ProcIds;
}

/** What one walk saw, and when it was asked for. */
export interface ProcessWalk {
  /** `performance.now()` when the walk was handed to the worker: it read `/proc` after. */
  readonly postedAt: number;
  readonly processes: readonly WalkedProcess[];
}

/** Result of {@link walkProcesses}. */
export type WalkResult = Result<{ walk: ProcessWalk }, WalkFailure>;

/** A worker without an answer for this long is terminated (kill, then a new one). */
export const WORKER_SILENCE_MS = 10_000;

/** What a caller asks for. */
export interface WalkRequest {
  readonly uid: number;
  readonly gid: number;
  /** The walk must have started after this `performance.now()`. */
  readonly notBefore: number;
  /** `performance.now()` after which the caller gets {@link WALK_FAILURES.DEADLINE}. */
  readonly deadline: number;
}

type Answer = { ok: boolean; reason?: string; processes?: unknown; tables?: unknown };

interface Run {
  readonly postedAt: number;
  readonly uid: number;
  readonly gid: number;
  readonly result: Promise<WalkResult>;
}

let worker: WalkerThread | undefined;
let nextId = 1;
const waiting = new Map<number, (answer: Answer) => void>();
let silenceTimer: ReturnType<typeof setTimeout> | undefined;
let inFlight: Run | undefined;
let queued: Omit<Run, "postedAt"> | undefined;
let last: { readonly run: Run; readonly value: WalkResult } | undefined;
let users = 0;

/**
 * Starts the worker at a session's start, so the first sudo does not wait for
 * it; `warm` also runs one walk as that user to learn the kernel threads. Each
 * call needs one {@link releaseProcessWalker}.
 */
export function holdProcessWalker(warm?: { readonly uid: number; readonly gid: number }): void {
  users++;
  ensureWorker();
  if (warm) {
    const t = performance.now();
    void walkProcesses({ ...warm, notBefore: t, deadline: t + WORKER_SILENCE_MS });
  }
}

/** Ends one {@link holdProcessWalker}; the last one terminates the worker. */
export function releaseProcessWalker(): void {
  users = Math.max(0, users - 1);
  if (users === 0) stopWorker();
}

/** A walk of `/proc` begun after `request.notBefore`, shared with every caller that can use it. */
export function walkProcesses(request: WalkRequest): Promise<WalkResult> {
  if (performance.now() >= request.deadline) {
    return Promise.resolve({ ok: false, reason: WALK_FAILURES.DEADLINE });
  }
  const usable = (r: { postedAt: number; uid: number; gid: number }) =>
    r.postedAt >= request.notBefore && r.uid === request.uid && r.gid === request.gid;
  let result: Promise<WalkResult>;
  if (last && usable(last.run) && last.value.ok) result = Promise.resolve(last.value);
  else if (inFlight && usable(inFlight)) result = inFlight.result;
  else if (!inFlight) result = start(request.uid, request.gid).result;
  else if (queued && queued.uid === request.uid && queued.gid === request.gid) {
    result = queued.result; // posted when the walk in flight ends: after notBefore
  } else result = enqueue(request.uid, request.gid);
  return withDeadline(result, request.deadline);
}

function enqueue(uid: number, gid: number): Promise<WalkResult> {
  const result = (async () => {
    await inFlight?.result;
    queued = undefined;
    return await start(uid, gid).result;
  })();
  queued = { uid, gid, result };
  return result;
}

function start(uid: number, gid: number): Run {
  const postedAt = performance.now();
  const result = runWalk(uid, gid, postedAt);
  const run: Run = { postedAt, uid, gid, result };
  inFlight = run;
  void result.then((value) => {
    if (inFlight === run) inFlight = undefined;
    if (!last || last.run.postedAt < postedAt) last = { run, value };
  });
  return run;
}

async function runWalk(uid: number, gid: number, postedAt: number): Promise<WalkResult> {
  const answer = await ask({ kind: "walk", uid, gid });
  if (!answer.ok) return { ok: false, reason: failure(answer.reason) };
  const raw = Array.isArray(answer.processes) ? answer.processes as RawProcess[] : [];
  // Threads made without CLONE_FILES keep a table of their own, which only
  // /proc/<pid>/task/<tid>/fd shows; `kcmp` tells which ({@link sharesFileTable}).
  const own = raw.flatMap((p) =>
    (p.tasks ?? []).filter((tid) => !(p.leaderRead && sharesFileTable(p.pid, tid) === true))
      .map((tid) => `/proc/${p.pid}/task/${tid}/fd`)
  );
  const extra = new Map<number, FdTable[]>();
  if (own.length > 0) {
    const more = await ask({ kind: "tables", dirs: own });
    if (!more.ok) return { ok: false, reason: failure(more.reason) };
    for (const t of Array.isArray(more.tables) ? more.tables as RawTable[] : []) {
      const pid = Number(/^\/proc\/([0-9]+)\//.exec(t.dir)?.[1]);
      extra.set(pid, [...extra.get(pid) ?? [], table(t)]);
    }
  }
  return {
    ok: true,
    walk: {
      postedAt,
      processes: raw.map((p) => ({
        pid: p.pid,
        owner: { uid: p.uid, gid: p.gid },
        ...(p.tables ? { tables: [...p.tables.map(table), ...extra.get(p.pid) ?? []] } : {}),
        ...(p.ids !== undefined ? { ids: parseStatusIds(p.ids) } : {}),
      })),
    },
  };
}

const KCMP_FILES = 2;
/** `kcmp` is 312 on x86_64 and 272 on the generic table (arm64, riscv64). */
const SYS_KCMP = process.arch === "x64" ? 312 : 272;

/**
 * Whether tasks `a` and `b` share one file-descriptor table (`kcmp`
 * `KCMP_FILES`); `undefined` when the kernel would not say (no FFI, no
 * permission): the caller reads the table.
 */
function sharesFileTable(a: number, b: number): boolean | undefined {
  const c = libc();
  if (!c) return undefined;
  const r = c.syscall(SYS_KCMP, "long", a, "long", b, "long", KCMP_FILES, "long", 0, "long", 0);
  return r === 0 ? true : r > 0 ? false : undefined;
}

function table(t: RawTable): FdTable {
  const links: [string, string][] = [];
  for (let i = 0; i + 1 < t.links.length; i += 2) links.push([t.links[i], t.links[i + 1]]);
  return { links, unreadable: t.unreadable };
}

function failure(reason: string | undefined): WalkFailure {
  return reason === WALK_FAILURES.TOO_MANY || reason === WALK_FAILURES.PROC_UNREADABLE
    ? reason
    : WALK_FAILURES.WORKER_FAILED;
}

function ask(message: Record<string, unknown>): Promise<Answer> {
  const w = ensureWorker();
  if (!w) return Promise.resolve({ ok: false, reason: WALK_FAILURES.WORKER_FAILED });
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    silenceTimer ??= setTimeout(() => stopWorker(), WORKER_SILENCE_MS);
    try {
      w.post({ id, ...message });
    } catch {
      waiting.delete(id);
      resolve({ ok: false, reason: WALK_FAILURES.WORKER_FAILED });
    }
  });
}

/**
 * The worker: `node:worker_threads` in Node (pi), a web worker in Deno (the
 * tests), where `node:worker_threads` blocks the parent for tens of milliseconds.
 */
interface WalkerThread {
  post(message: unknown): void;
  terminate(): void;
}

function spawnThread(
  onAnswer: (answer: Answer & { id?: unknown }) => void,
  onGone: () => void,
): WalkerThread {
  const url = new URL("./proc_walk_worker.mjs", import.meta.url);
  const web = globalThis as { Deno?: unknown; Worker?: typeof globalThis.Worker };
  if (web.Deno && web.Worker) {
    const w = new web.Worker(url, { type: "module" });
    w.onmessage = (e: MessageEvent) => onAnswer(e.data);
    w.onerror = (e: Event) => {
      e.preventDefault();
      onGone();
    };
    return { post: (m) => w.postMessage(m), terminate: () => w.terminate() };
  }
  const w = new Worker(url);
  w.unref();
  w.on("message", onAnswer);
  w.on("error", onGone);
  w.on("exit", onGone);
  return { post: (m) => w.postMessage(m), terminate: () => void w.terminate().catch(() => {}) };
}

function ensureWorker(): WalkerThread | undefined {
  if (worker) return worker;
  try {
    const w: WalkerThread = spawnThread((answer) => {
      const resolve = typeof answer?.id === "number" ? waiting.get(answer.id) : undefined;
      if (!resolve) return;
      waiting.delete(answer.id as number);
      if (waiting.size === 0 && silenceTimer) {
        clearTimeout(silenceTimer);
        silenceTimer = undefined;
      }
      resolve(answer);
    }, () => {
      // An error or an exit answers every question still open, once.
      if (worker !== undefined && worker === w) stopWorker();
    });
    worker = w;
    return w;
  } catch {
    return undefined;
  }
}

/** Terminates the worker and fails every walk still waiting for it. */
function stopWorker(): void {
  const w = worker;
  worker = undefined;
  if (silenceTimer) clearTimeout(silenceTimer);
  silenceTimer = undefined;
  for (const resolve of waiting.values()) {
    resolve({ ok: false, reason: WALK_FAILURES.WORKER_FAILED });
  }
  waiting.clear();
  last = undefined;
  w?.terminate();
}

function withDeadline(result: Promise<WalkResult>, deadline: number): Promise<WalkResult> {
  return new Promise((resolve) => {
    const timer = setTimeout(
      () => resolve({ ok: false, reason: WALK_FAILURES.DEADLINE }),
      Math.max(0, deadline - performance.now()),
    );
    void result.then((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}
