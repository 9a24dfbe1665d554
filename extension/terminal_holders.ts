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
import { parseNulList, parseStat, parseStatusIds } from "./proc.ts";
import { readProcFile, readProcText, statProcPath } from "./proc_reader.ts";
import { sharesFileTable } from "./terminal_control.ts";

/** Named reasons a modal is not opened (or is closed) because of the terminal. */
export const TERMINAL_REFUSALS = {
  /** Another process of the user has pi's terminal open. */
  TERMINAL_SHARED: "terminal_shared",
  /**
   * A process of the user started after pi hides its descriptors
   * (non-dumpable), so nobody but root can tell whether it holds the terminal.
   */
  TERMINAL_UNVERIFIABLE: "terminal_unverifiable",
  /** The scan did not finish within its deadline or bounds: fail closed. */
  TERMINAL_SCAN_INCOMPLETE: "terminal_scan_incomplete",
  /** tmux would hand typed characters to a binding of the agent's. */
  MULTIPLEXER_KEYS_BOUND: "multiplexer_keys_bound",
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
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EACCES") return undefined; // gone
    // Another user's (skip), or root-owned: root's, a kernel thread (no exe),
    // or one of ours that is non-dumpable, which its status tells (`status`,
    // unlike `cmdline`, is made from counters, without the target's locks).
    try {
      if (statSync(`/proc/${pid}`).uid !== 0) return undefined;
      readlinkSync(`/proc/${pid}/exe`);
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code !== "EACCES") return undefined;
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
  if (fds.length > MAX_FDS_PER_PROCESS) return "too_many";
  // Threads made without CLONE_FILES keep a table of their own, which only
  // /proc/<pid>/task/<tid>/fd shows: read those too.
  const tables = [{ dir: `/proc/${pid}/fd`, fds }];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    // gone: its own table was read
  }
  for (const tid of tasks) {
    if (tid === String(pid) || sharesFileTable(pid, Number(tid)) === true) continue;
    let own: string[];
    try {
      own = readdirSync(`/proc/${pid}/task/${tid}/fd`);
    } catch {
      continue;
    }
    if (own.length > MAX_FDS_PER_PROCESS) return "too_many";
    tables.push({ dir: `/proc/${pid}/task/${tid}/fd`, fds: own });
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
  return again.length > 0 ? again : undefined;
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
    // An unreadable field counts as a match: fail closed.
    return stat !== undefined && (stat.ttyNr === undefined || stat.ttyNr === spec.rdev);
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
  // A character device can sit at any path only in another mount namespace
  // or as a device node root made; compare device numbers for everything
  // outside the usual file places.
  if (link.startsWith("/dev/") || link.includes("/pts/") || link.includes("/dev/")) {
    return "compare_device";
  }
  return "other";
}

async function summarize(pid: number): Promise<ProcessSummary | undefined> {
  const stat = parseStat(await readProcText(`/proc/${pid}/stat`) ?? "");
  // A zombie has closed every descriptor (and its fd directory is unreadable
  // for that reason, not because it hides anything).
  if (!stat || stat.pid !== pid || stat.state === "Z" || stat.state === "X") return undefined;
  const argv = parseNulList(await readProcFile(`/proc/${pid}/cmdline`, 4096) ?? new Uint8Array());
  const command = argv && argv.length > 0 ? argv.join(" ") : `[${stat.comm}]`;
  return { pid, command: command.slice(0, 200), startTime: stat.startTime };
}

/** The verdict on one scan. */
export type TerminalVerdict =
  | { readonly ok: true }
  | {
    readonly ok: false;
    readonly reason: TerminalRefusal;
    /** The process the notice names, when there is one. */
    readonly culprit?: ProcessSummary;
  };

/**
 * Decides on a scan: any holder refuses (`terminal_shared`); an incomplete
 * scan refuses. A hidden process of the user (non-dumpable, so its
 * descriptors are unreadable) refuses (`terminal_unverifiable`) when root
 * did not look at it (`rootVerified`, hardened mode), or, without root, when
 * it started after pi: it may have copied the terminal from pi's shell.
 * Without root, hidden processes older than pi (an ssh-agent, a gpg-agent)
 * are allowed: the threat model lists that residual risk, which hardened
 * mode closes.
 */
export function decideTerminal(
  scan: HolderScan | undefined,
  piStartTime: bigint,
  rootVerified?: ReadonlySet<string>,
): TerminalVerdict {
  if (!scan) return { ok: false, reason: TERMINAL_REFUSALS.TERMINAL_SCAN_INCOMPLETE };
  if (scan.holders.length > 0) {
    return { ok: false, reason: TERMINAL_REFUSALS.TERMINAL_SHARED, culprit: scan.holders[0] };
  }
  // With root's word (hardened mode), every hidden process root looked at
  // is known not to hold the terminal; any other one is not.
  const unverified = rootVerified
    ? scan.hidden.find((p) => !rootVerified.has(processKey(p)))
    : scan.hidden.find((p) => p.startTime > piStartTime);
  if (unverified) {
    return { ok: false, reason: TERMINAL_REFUSALS.TERMINAL_UNVERIFIABLE, culprit: unverified };
  }
  return { ok: true };
}

/** A process's identity across scans: pid and start time (a reused pid differs). */
export function processKey(p: ProcessSummary): string {
  return `${p.pid}:${p.startTime}`;
}

/** Summary of one process by pid (for a holder that root named). */
export function summarizeProcess(pid: number): Promise<ProcessSummary | undefined> {
  return summarize(pid);
}
