/**
 * Who else has pi's terminal open. Exclusive mode stops new opens, but not a
 * process that opened the terminal before (a reader left in the terminal
 * from an earlier run), one that inherited it, or one that copied it from a
 * process that has it (`pidfd_getfd` on the shell that started pi). So before
 * a modal opens, and again and again while it is open, every process of the
 * user is looked at through `/proc/<pid>/fd` (ADR 0007).
 *
 * The reading is asynchronous and bounded (a deadline, a cap on processes
 * and descriptors); the decision is a pure function of what was read.
 *
 * @module
 */
import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { parseStat, parseStatusIds } from "../../kernel/proc.ts";
import { readProcText, statProcPath } from "../../kernel/proc_reader.ts";
import { sharesFileTable } from "../../kernel/file_table.ts";
import { errnoCode } from "../../shared/errno.ts";

/** Named reasons a modal is not opened (or is closed) because of the terminal. */
export const TERMINAL_REFUSALS = {
  /** Another process of the user has pi's terminal open. */
  TERMINAL_SHARED: "terminal_shared",
  /** The scan did not finish within its deadline or bounds: fail closed. */
  TERMINAL_SCAN_INCOMPLETE: "terminal_scan_incomplete",
  /** tmux would hand typed characters to a binding of the agent's. */
  MULTIPLEXER_KEYS_BOUND: "multiplexer_keys_bound",
  /** Inside tmux, typed keys would go elsewhere than pi's pane (another pane, a mode, a popup). */
  FOCUS_MOVED: "focus_moved",
} as const;

/** One of the values of {@link TERMINAL_REFUSALS}. */
export type TerminalRefusal = typeof TERMINAL_REFUSALS[keyof typeof TERMINAL_REFUSALS];

/** A process named in a refusal notice. */
export interface ProcessSummary {
  readonly pid: number;
  /** Its argv joined by spaces (untrusted text: sanitise before drawing). */
  readonly command: string;
  /** Start time in clock ticks after boot (`stat` field 22). */
  readonly startTime: bigint;
}

/** What one scan found. */
export interface HolderScan {
  /** Processes with pi's terminal open on some descriptor. */
  readonly holders: readonly ProcessSummary[];
  /** Processes of the user whose descriptors cannot be read (non-dumpable). */
  readonly hidden: readonly ProcessSummary[];
}

/** What to look for. */
export interface HolderScanSpec {
  /** The terminal's path as `/proc/<pid>/fd` links show it (`/dev/pts/3`). */
  readonly ttyPath: string;
  /** Its device number. */
  readonly rdev: number;
  /** The user's uid: only processes with it on all four fields count as hidden. */
  readonly uid: number;
  /** pids never counted: pi, its ancestors, the guardian. */
  readonly exclude: ReadonlySet<number>;
  /** Stop and fail closed after this long (default 2 s). */
  readonly deadlineMs?: number;
}

const MAX_PROCESSES = 32_768;
const MAX_FDS_PER_PROCESS = 65_536;
/** Longest synchronous stretch of the scan before the event loop runs, in ms. */
const SLICE_MS = 2;

/**
 * Reads every process's descriptor table that the user may read. Returns
 * `undefined` when the deadline or a bound is hit (the caller refuses).
 *
 * Listing descriptors and reading their links never touches the target's
 * memory map or a file system, so that part runs synchronously, in slices of
 * at most {@link SLICE_MS} between which the event loop runs (async `/proc`
 * reads cost ~50 µs each in the thread pool, sync ones ~2 µs). What can block
 * (`cmdline`, which takes the target's mmap lock; `stat` of a path that may be
 * on any file system) stays asynchronous.
 */
export async function scanTerminalHolders(spec: HolderScanSpec): Promise<HolderScan | undefined> {
  const deadline = performance.now() + (spec.deadlineMs ?? 2000);
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const pids = entries.filter((e) => /^[1-9][0-9]*$/.test(e)).map(Number)
    .filter((pid) => !spec.exclude.has(pid));
  if (pids.length > MAX_PROCESSES) return undefined;
  const holding = new Set<number>();
  const maybe: { pid: number; fdPath: string; link: string }[] = [];
  const unreadable: number[] = [];
  let slice = performance.now();
  for (const pid of pids) {
    if (performance.now() - slice > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      if (performance.now() > deadline) return undefined;
      slice = performance.now();
    }
    const r = walkTables(pid, spec);
    if (r === "too_many") return undefined;
    if (r === "unreadable") unreadable.push(pid);
    else if (r === "holds") holding.add(pid);
    else if (r) maybe.push(...r);
  }
  // The few links that need a second look, and the unreadable tables.
  const confirmed = await Promise.all(
    maybe.map(async (m) => await isTheTerminal(m.pid, m.fdPath, m.link, spec) ? m.pid : 0),
  );
  for (const pid of confirmed) if (pid) holding.add(pid);
  if (performance.now() > deadline) return undefined;
  const holders = (await Promise.all([...holding].map(summarize))).filter((p) => p !== undefined);
  const hidden = (await Promise.all(unreadable.map(summarize))).filter((p) => p !== undefined);
  return { holders, hidden };
}

/**
 * One process's descriptor tables, read synchronously: `holds` on a link that
 * is the terminal's path, links to look at again, `unreadable` for a process
 * of ours that hides its tables (non-dumpable), or `undefined`.
 */
function walkTables(
  pid: number,
  spec: HolderScanSpec,
):
  | "holds"
  | "unreadable"
  | "too_many"
  | { pid: number; fdPath: string; link: string }[]
  | undefined {
  // The owner of /proc/<pid> sorts processes cheaply: ours and dumpable
  // (read its tables), another user's (skip), or root's, which is either
  // root's own, a kernel thread (no exe), or one of ours that is non-dumpable,
  // which only its status tells (`status`, unlike `cmdline`, is made from
  // counters, without the target's locks).
  let owner: number;
  try {
    owner = statSync(`/proc/${pid}`).uid;
  } catch {
    return undefined; // gone
  }
  if (owner !== spec.uid && owner !== 0) return undefined;
  if (owner === 0 && spec.uid !== 0) {
    try {
      readlinkSync(`/proc/${pid}/exe`);
    } catch (e) {
      if (errnoCode(e) !== "EACCES") return undefined;
    }
    let status = "";
    try {
      status = readFileSync(`/proc/${pid}/status`, "latin1").slice(0, 8192);
    } catch {
      return undefined;
    }
    const ids = parseStatusIds(status);
    return ids && ids.uid.every((u) => u === spec.uid) ? "unreadable" : undefined;
  }
  // Every task's table: the leader's, and those of threads made without
  // CLONE_FILES, which only /proc/<pid>/task/<tid>/fd shows (`kcmp` tells
  // which). A leader that exited while a thread lives on shows an unreadable
  // table of its own: its threads' tables are read all the same.
  const tables: { dir: string; fds: string[] }[] = [];
  let unreadable = false;
  const read = (dir: string): "too_many" | undefined => {
    try {
      const fds = readdirSync(dir);
      if (fds.length > MAX_FDS_PER_PROCESS) return "too_many";
      tables.push({ dir, fds });
    } catch (e) {
      if (errnoCode(e) === "EACCES") unreadable = true;
    }
  };
  if (read(`/proc/${pid}/fd`) === "too_many") return "too_many";
  const leaderRead = tables.length === 1;
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    // gone
  }
  for (const tid of tasks) {
    if (tid === String(pid)) continue;
    if (leaderRead && sharesFileTable(pid, Number(tid)) === true) continue;
    if (read(`/proc/${pid}/task/${tid}/fd`) === "too_many") return "too_many";
  }
  const again: { pid: number; fdPath: string; link: string }[] = [];
  for (const table of tables) {
    for (const fd of table.fds) {
      let link: string;
      try {
        link = readlinkSync(`${table.dir}/${fd}`);
      } catch {
        continue;
      }
      const kind = classifyLink(link, spec.ttyPath);
      if (kind === "match") return "holds";
      if (kind !== "other") again.push({ pid, fdPath: `${table.dir}/${fd}`, link });
    }
  }
  if (again.length > 0) return again;
  // Made non-dumpable since the owner check above, in part or in whole.
  return unreadable ? "unreadable" : undefined;
}

/**
 * Whether the descriptor at `fdPath` of `pid`, whose link reads `link`, is the terminal.
 * Sockets, pipes and anonymous inodes never are; the terminal's own path is;
 * `/dev/tty` is the process's controlling terminal; any other device path is
 * compared by device number (a path seen from another mount namespace).
 */
async function isTheTerminal(
  pid: number,
  fdPath: string,
  link: string,
  spec: HolderScanSpec,
): Promise<boolean> {
  const kind = classifyLink(link, spec.ttyPath);
  if (kind === "match") return true;
  if (kind === "other") return false;
  if (kind === "controlling") {
    const stat = parseStat(await readProcText(`/proc/${pid}/stat`) ?? "");
    // An unreadable field counts as a match: fail closed. So does no
    // controlling terminal now: the process opened /dev/tty and then left
    // its session (setsid), and which terminal it holds cannot be told.
    return stat !== undefined &&
      (stat.ttyNr === undefined || stat.ttyNr === 0 || stat.ttyNr === spec.rdev);
  }
  const st = await statProcPath(fdPath);
  return st !== undefined && st.isCharacterDevice() && st.rdev === spec.rdev;
}

/** How a descriptor link is checked (pure, for tests). */
export function classifyLink(
  link: string,
  ttyPath: string,
): "match" | "controlling" | "compare_device" | "other" {
  if (link === ttyPath) return "match";
  if (link === "/dev/tty") return "controlling";
  if (!link.startsWith("/")) return "other"; // socket:[…], pipe:[…], anon_inode:…
  // Any path may be the terminal: a bind mount of the pts, or a path in
  // another mount namespace (unshare -m). The file is compared, by device
  // number, through the descriptor itself, never by its name.
  return "compare_device";
}

async function summarize(pid: number): Promise<ProcessSummary | undefined> {
  const stat = parseStat(await readProcText(`/proc/${pid}/stat`) ?? "");
  if (!stat || stat.pid !== pid || stat.state === "X") return undefined;
  // A zombie leader has closed its own descriptors; it counts only while a
  // thread of it lives on (then its table was read, or hidden).
  if (stat.state === "Z" && !await hasLiveThread(pid)) return undefined;
  // `comm`, not `cmdline`: reading another process's argv takes its mmap
  // lock, which a hostile process can hold for as long as it likes.
  return { pid, command: `${stat.comm}`.slice(0, 64), startTime: stat.startTime };
}

async function hasLiveThread(pid: number): Promise<boolean> {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  for (const tid of tasks) {
    if (tid === String(pid)) continue;
    const text = await readProcText(`/proc/${pid}/task/${tid}/stat`);
    const state = parseStat(text ?? "")?.state;
    if (state && state !== "Z" && state !== "X") return true;
  }
  return false;
}

/** The verdict on one scan. */
export type TerminalVerdict =
  | {
    readonly ok: true;
    /** Young hidden processes the human is asked about (policy `ask`). */
    readonly unchecked?: readonly ProcessSummary[];
  }
  | {
    readonly ok: false;
    readonly reason: TerminalRefusal;
    /** The process the notice names, when there is one. */
    readonly culprit?: ProcessSummary;
  };

/**
 * What to make of a hidden process of the user (non-dumpable, so its
 * descriptors are unreadable) that started after pi, which could have copied
 * the terminal from pi's shell (ADR 0007, issue 20):
 *
 * - `ignore` when root has just listed the terminal's holders (hardened
 *   mode: root's answer replaces the guess), or when Yama's `ptrace_scope`
 *   is 1 or more (nothing of the agent's can copy a descriptor out of pi's
 *   shell or pi then: ADR 0008);
 * - `ask` otherwise: the modal names them (and any that appear while it is
 *   open) and the human decides.
 */
export type HiddenPolicy = "ignore" | "ask";

/**
 * Decides on a scan: any holder refuses (`terminal_shared`, a proven
 * threat); an incomplete scan refuses. Young hidden processes follow
 * `policy` ({@link HiddenPolicy}); hidden processes older than pi (an
 * ssh-agent started before it) are never a question.
 */
export function decideTerminal(
  scan: HolderScan | undefined,
  piStartTime: bigint,
  policy: HiddenPolicy = "ask",
): TerminalVerdict {
  if (!scan) return { ok: false, reason: TERMINAL_REFUSALS.TERMINAL_SCAN_INCOMPLETE };
  if (scan.holders.length > 0) {
    return { ok: false, reason: TERMINAL_REFUSALS.TERMINAL_SHARED, culprit: scan.holders[0] };
  }
  const young = scan.hidden.filter((p) => p.startTime > piStartTime);
  if (young.length === 0 || policy === "ignore") return { ok: true };
  return { ok: true, unchecked: young };
}

/** Summary of one process by pid (for a holder that root named). */
export function summarizeProcess(pid: number): Promise<ProcessSummary | undefined> {
  return summarize(pid);
}
