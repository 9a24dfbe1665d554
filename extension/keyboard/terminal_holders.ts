/**
 * Who else has a terminal pi reads open (pi's own, or a locked tmux client's). Exclusive mode stops new opens, but not a
 * process that opened the terminal before (a reader left in the terminal
 * from an earlier run), one that inherited it, or one that copied it from a
 * process that has it (`pidfd_getfd` on the shell that started pi). So before
 * a modal opens, and again and again while it is open, every process of the
 * user is looked at through `/proc/<pid>/fd` (ADR 0007).
 *
 * The descriptor tables come from the one shared walk of `/proc`
 * (`kernel/proc_walk.ts`, in a worker thread); the few links that need a
 * second look and the summaries are read here, asynchronously; the decision
 * is a pure function of what was read.
 *
 * @module
 */
import { readdir } from "node:fs/promises";
import process from "node:process";
import { parseStat } from "../../kernel/proc.ts";
import { readProcText, statProcPath } from "../../kernel/proc_reader.ts";
import { readStat } from "../../kernel/peer_verification.ts";
import { type ProcessWalk, walkProcesses } from "../../kernel/proc_walk.ts";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";

/** A scan stops and fails closed after this long. */
const SCAN_DEADLINE_MS = 2000;

/**
 * Named reasons a modal is not opened (or is closed) because of a terminal it reads:
 * - `terminal_shared`: another process of the user has the terminal open.
 * - `terminal_scan_incomplete`: the scan did not finish within its deadline or bounds: fail closed.
 * - `terminal_unguarded`: pi's terminal is not exclusive, or no guardian holds it to close it again.
 */
export const TERMINAL_REFUSALS = reasons(
  "terminal_shared",
  "terminal_scan_incomplete",
  "terminal_unguarded",
);

/** One of the values of {@link TERMINAL_REFUSALS}. */
export type TerminalRefusal = ReasonOf<typeof TERMINAL_REFUSALS>;

/** A process named in a refusal notice. */
export interface ProcessSummary {
  readonly pid: number;
  /** Its command name, `comm` (untrusted text: sanitise before drawing). */
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
  /**
   * The walk of `/proc` must have started after this `performance.now()`
   * (default: now); the check's own start lets a walk begun for the same
   * request serve it (`kernel/proc_walk.ts`).
   */
  readonly notBefore?: number;
}

/**
 * Every process of the user that holds the terminal, or hides its tables.
 * Returns `undefined` when the walk failed or the deadline passed (the
 * caller refuses). `exclude` may still be in the making: it is needed only
 * once the walk is back, so the caller reads pi's ancestors while it runs.
 */
export async function scanTerminalHolders(
  spec: Omit<HolderScanSpec, "exclude"> & {
    readonly exclude: ReadonlySet<number> | Promise<ReadonlySet<number>>;
  },
): Promise<HolderScan | undefined> {
  const now = performance.now();
  const deadline = now + SCAN_DEADLINE_MS;
  const walked = await walkProcesses({
    uid: spec.uid,
    gid: process.getgid?.() ?? -1,
    notBefore: spec.notBefore ?? now,
    deadline,
  });
  if (!walked.ok) return undefined;
  const found = holdersIn(walked.walk, { ...spec, exclude: await spec.exclude });
  // The few links that need a second look.
  const confirmed = await Promise.all(
    found.maybe.map(async (m) => await isTheTerminal(m, spec) ? m.pid : 0),
  );
  const holding = new Set(found.holding);
  for (const pid of confirmed) if (pid) holding.add(pid);
  if (performance.now() > deadline) return undefined;
  const summaries = async (pids: Iterable<number>) =>
    (await Promise.all([...pids].map(summarizeProcess))).filter((p) => p !== undefined);
  return { holders: await summaries(holding), hidden: await summaries(found.unreadable) };
}

/** A descriptor link of `pid` at `fdPath` that needs a second look. */
type Link = { pid: number; fdPath: string; link: string };

/**
 * What a walk shows about the terminal (pure): the pids whose tables hold its
 * path, the links to look at again, and the processes of the user that hide
 * their tables: their own ones made non-dumpable (their tables are
 * unreadable), and root-owned ones whose `status` shows the user's uid on all
 * four fields (a kernel thread hides nothing: it has no `exe`).
 */
export function holdersIn(walk: ProcessWalk, spec: Omit<HolderScanSpec, "rdev">): {
  holding: number[];
  maybe: Link[];
  unreadable: number[];
} {
  const holding: number[] = [];
  const maybe: Link[] = [];
  const unreadable: number[] = [];
  for (const p of walk.processes) {
    if (spec.exclude.has(p.pid)) continue;
    if (p.owner.uid === spec.uid && p.tables) {
      let holds = false;
      const again: Link[] = [];
      for (const table of p.tables) {
        for (const [fdPath, link] of table.links) {
          const kind = classifyLink(link, spec.ttyPath);
          if (kind === "match") holds = true;
          else if (kind !== "other") again.push({ pid: p.pid, fdPath, link });
        }
      }
      if (holds) holding.push(p.pid);
      else if (again.length > 0) maybe.push(...again);
      else if (p.tables.some((t) => t.unreadable)) unreadable.push(p.pid);
    } else if (p.owner.uid === 0 && spec.uid !== 0 && p.exeHidden && p.ids) {
      if (p.ids.uid.every((u) => u === spec.uid)) unreadable.push(p.pid);
    }
  }
  return { holding, maybe, unreadable };
}

/**
 * Whether the descriptor at `fdPath` of `pid`, whose link reads `link`, is the terminal.
 * Sockets, pipes and anonymous inodes never are; the terminal's own path is;
 * `/dev/tty` is the process's controlling terminal; any other device path is
 * compared by device number (a path seen from another mount namespace).
 */
async function isTheTerminal(
  { pid, fdPath, link }: Link,
  spec: Pick<HolderScanSpec, "ttyPath" | "rdev">,
): Promise<boolean> {
  const kind = classifyLink(link, spec.ttyPath);
  if (kind === "match") return true;
  if (kind === "other") return false;
  if (kind === "controlling") {
    const stat = await readStat(pid);
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

/** Summary of one process by pid (a holder found here, or one that root named). */
export async function summarizeProcess(pid: number): Promise<ProcessSummary | undefined> {
  const stat = await readStat(pid);
  if (!stat || stat.state === "X") return undefined;
  // A zombie leader has closed its own descriptors; it counts only while a
  // thread of it lives on (then its table was read, or hidden).
  if (stat.state === "Z" && !await hasLiveThread(pid)) return undefined;
  // `comm`, not `cmdline`: reading another process's argv takes its mmap
  // lock, which a hostile process can hold for as long as it likes.
  return { pid, command: stat.comm.slice(0, 64), startTime: stat.startTime };
}

/**
 * The first holder root listed that is not exempt, and that process as it
 * is now: none when it has exited since (it reads nothing now; a child it
 * left would be in root's next listing).
 */
export async function rootHolder(
  holders: readonly number[],
  exempt: ReadonlySet<number>,
): Promise<{ pid: number; now?: ProcessSummary } | undefined> {
  const pid = holders.find((p) => !exempt.has(p));
  if (pid === undefined) return undefined;
  const now = await summarizeProcess(pid);
  return now ? { pid, now } : { pid };
}

async function hasLiveThread(pid: number): Promise<boolean> {
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    if (tid === String(pid)) continue;
    const state = parseStat(await readProcText(`/proc/${pid}/task/${tid}/stat`) ?? "")?.state;
    if (state && state !== "Z" && state !== "X") return true;
  }
  return false;
}

/**
 * The verdict on one scan: when open, the hidden processes the human is
 * asked about; when closed, the process the notice names, when there is one.
 */
export type TerminalVerdict = Result<
  { unchecked?: readonly ProcessSummary[] },
  TerminalRefusal,
  { culprit?: ProcessSummary }
>;

/**
 * Decides on a scan: any holder refuses (`terminal_shared`, a proven
 * threat); an incomplete scan refuses. A hidden process is a question for
 * the human when `asked` says so (the gate's policy, ADR 0007 amendment and
 * ADR 0009 §2), and otherwise not counted.
 */
export function decideTerminal(
  scan: HolderScan | undefined,
  asked: (hidden: ProcessSummary) => boolean,
): TerminalVerdict {
  if (!scan) return { ok: false, reason: TERMINAL_REFUSALS.TERMINAL_SCAN_INCOMPLETE };
  if (scan.holders.length > 0) {
    return { ok: false, reason: TERMINAL_REFUSALS.TERMINAL_SHARED, culprit: scan.holders[0] };
  }
  const unchecked = scan.hidden.filter(asked);
  return unchecked.length === 0 ? { ok: true } : { ok: true, unchecked };
}
