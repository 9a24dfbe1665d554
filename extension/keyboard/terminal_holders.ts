/**
 * Who else has a terminal pi reads open (pi's own, or a locked tmux client's).
 * Exclusive mode stops new opens, not a process that opened, inherited or copied
 * (`pidfd_getfd` on pi's shell) the terminal before, so every process of the
 * user is looked at through `/proc/<pid>/fd` (ADR 0007), from the shared walk
 * (`kernel/proc_walk.ts`); the decision is a pure function of what was read.
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
  readonly rdev: number;
  /** The user's uid: only processes with it on all four fields count as hidden. */
  readonly uid: number;
  /** pids never counted: pi, its ancestors, the guardian. */
  readonly exclude: ReadonlySet<number>;
  /**
   * The walk must have begun after this `performance.now()` (default: now), so
   * that a walk begun for the same request serves it.
   */
  readonly notBefore?: number;
}

/**
 * Every process of the user that holds the terminal, or hides its tables;
 * `undefined` (the caller refuses) when the walk failed or the deadline passed.
 * `exclude` may still be pending: it is needed only once the walk is back.
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
 * What a walk shows (pure): pids holding the terminal's path, links to look at
 * again, and hiders: the user's non-dumpable processes (their tables unreadable).
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
    }
  }
  return { holding, maybe, unreadable };
}

/** Whether the descriptor behind `link` is the terminal (see {@link classifyLink}). */
async function isTheTerminal(
  { pid, fdPath, link }: Link,
  spec: Pick<HolderScanSpec, "ttyPath" | "rdev">,
): Promise<boolean> {
  const kind = classifyLink(link, spec.ttyPath);
  if (kind === "match") return true;
  if (kind === "other") return false;
  if (kind === "controlling") {
    const stat = await readStat(pid);
    // Fail closed: an unreadable field matches, and so does no controlling terminal
    // (it opened /dev/tty, then left its session: which terminal it holds is unknown).
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
  // Any path may be the terminal (a bind mount of the pts, another mount namespace):
  // compared by device number through the descriptor itself, never by name.
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
 * The first holder root listed that is not exempt, as it is now: no `now` once it
 * has exited (it reads nothing; a child it left would be in root's next listing).
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

/** The verdict on one scan: open, with hidden processes to ask about; or closed, with a culprit. */
export type TerminalVerdict = Result<
  { unchecked?: readonly ProcessSummary[] },
  TerminalRefusal,
  { culprit?: ProcessSummary }
>;

/**
 * Any holder refuses (`terminal_shared`), as does an incomplete scan; a hidden process
 * is asked about when `asked` says so, else ignored (ADR 0007 amendment, ADR 0009 §2).
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
