/**
 * The gate every modal passes before it opens, every {@link GATE_INTERVAL_MS}
 * while open, and right before an answer leaves: pi's terminal is exclusive and
 * held by a live guardian, and nobody else holds a terminal the modal reads
 * (pi's, and each locked tmux client's). Else the request is refused with a named
 * reason and a notice (ADR 0007, 0009). Which hidden processes the modal names:
 * ADR 0009 §2.
 *
 * @module
 */
import process from "node:process";
import { readStat } from "../../kernel/peer_verification.ts";
import { ancestors } from "../../kernel/proc.ts";
import { firstExecutable } from "../../shared/executables.ts";
import { sanitizeUntrusted } from "../../askpass/prompt_text.ts";
import {
  decideTerminal,
  type ProcessSummary,
  rootHolder,
  scanTerminalHolders,
  TERMINAL_REFUSALS,
  type TerminalRefusal,
} from "./terminal_holders.ts";
import {
  ptsNumber,
  type RootTerminalResult,
  runRootTerminalCheck,
  TERMINAL_CHECK,
} from "./root_terminal.ts";
import { rootCheckInstalled } from "../pairing/root_check.ts";
import { liveGuardian, terminalGuardStatus } from "./terminal_guard.ts";
import { takenTerminals } from "./tmux_prompt.ts";
import type { UncheckedProcess } from "../../askpass/prompter.ts";
import { ptraceScope } from "../../kernel/yama.ts";
import { describeProcess } from "../../kernel/process_facts.ts";
import { carriesMark } from "../../kernel/provenance.ts";
import type { Result } from "../../shared/result.ts";
import { ownUid } from "../../shared/own_uid.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** How often an open modal is checked again (the bound: 100 ms or less). */
export const GATE_INTERVAL_MS = 100;
/** How often root checks again while a modal is open. */
export const ROOT_RECHECK_MS = 500;
/** Times a check runs again when the holder root named has exited since (then it reads nothing). */
const EXITED_RETRIES = 2;

/**
 * A gate's answer. `notice` is one line for the human; it holds no secret.
 * An open gate may name processes it could not clear, for the modal to show.
 */
export type GateVerdict = Result<
  { unchecked?: readonly UncheckedProcess[] },
  TerminalRefusal,
  { notice: string }
>;

/** `open`: before a modal opens; `watch`: each interval while open; `send`: before an answer. */
export type GatePhase = "open" | "watch" | "send";

/** What the session server calls before and during every modal. */
export interface ModalGate {
  check(phase: GatePhase): Promise<GateVerdict>;
  readonly intervalMs: number;
}

/** What pi can prove about where a process came from (ADR 0009 §2). */
export interface ProvenanceFacts {
  /** pi's mark (`kernel/provenance.ts`), once set. */
  readonly mark: () => bigint | undefined;
  /** Whether a start time (ticks since boot) falls while a tool call or `!` command ran. */
  readonly duringCall: (startTime: bigint) => boolean;
}

interface Judged {
  readonly ttyPath: string;
  readonly rdev: number;
  /** pi's own terminal (else a locked tmux client's). */
  readonly own: boolean;
  readonly exempt: Promise<ReadonlySet<number>>;
}

/**
 * The gate for this pi process; without a terminal (tests, stdin not a tty) only
 * locked clients' terminals are judged. In hardened mode root's listing, begun at
 * most {@link ROOT_RECHECK_MS} ago, counts too; before an answer leaves, a fresh one.
 */
export function terminalGate(provenance: ProvenanceFacts): ModalGate {
  const uid = ownUid();
  let piStart: bigint | undefined;
  let realSudo: string | undefined;
  /** Root's last listing of each terminal, by when it began (in flight or done). */
  const rootListings = new Map<string, { at: number; result: Promise<RootTerminalResult> }>();
  return {
    intervalMs: GATE_INTERVAL_MS,
    check: (phase) => check(phase, EXITED_RETRIES, false),
  };
  async function check(phase: GatePhase, retries: number, rootNow: boolean): Promise<GateVerdict> {
    const asked = performance.now();
    const guard = terminalGuardStatus();
    // The terminal is never open without a guardian to close it again (ADR 0009 §3).
    if (guard.ttyPath && (!guard.exclusive || guard.guardianPid === undefined)) {
      return {
        ok: false,
        reason: TERMINAL_REFUSALS.TERMINAL_UNGUARDED,
        notice: guard.exclusive ? msg.guardianNotRunning : msg.terminalNotExclusiveNow,
      };
    }
    const base = excluded();
    base.catch(() => {}); // awaited with the scans; a failure fails them
    const terminals: Judged[] = [
      ...(guard.ttyPath !== undefined && guard.rdev !== undefined
        ? [{ ttyPath: guard.ttyPath, rdev: guard.rdev, own: true, exempt: base }]
        : []),
      ...takenTerminals().map((t) => ({
        ttyPath: t.ttyPath,
        rdev: t.rdev,
        own: false,
        exempt: Promise.all([base, t.exempt]).then(([a, b]) => new Set([...a, ...b])),
      })),
    ];
    if (terminals.length === 0) return { ok: true };
    // A listing stands ROOT_RECHECK_MS from its start: the one begun when a helper
    // connected serves its modal's opening, and two checks at once share one.
    const askRoot = async (t: Judged): Promise<RootTerminalResult | undefined> => {
      const n = ptsNumber(t.ttyPath);
      realSudo ??= await firstExecutable(["/usr/bin/sudo", "/bin/sudo"]);
      if (n === undefined || realSudo === undefined) return undefined;
      if (!await rootCheckInstalled(TERMINAL_CHECK)) return undefined;
      for (const [tty, l] of rootListings) {
        if (asked - l.at >= ROOT_RECHECK_MS) rootListings.delete(tty);
      }
      const last = rootListings.get(t.ttyPath);
      if (!rootNow && phase !== "send" && last) return await last.result;
      const listing = {
        at: performance.now(),
        result: runRootTerminalCheck(realSudo, n).then((r) => {
          // A listing that failed stands for nobody after the check it refuses.
          if (!r.ok && !r.notPermitted && rootListings.get(t.ttyPath) === listing) {
            rootListings.delete(t.ttyPath);
          }
          return r;
        }),
      };
      rootListings.set(t.ttyPath, listing);
      return await listing.result;
    };
    const [scans, roots, scope, piStarted] = await Promise.all([
      Promise.all(
        terminals.map((t) =>
          scanTerminalHolders({ ...t, uid, exclude: t.exempt, notBefore: asked })
        ),
      ),
      Promise.all(terminals.map(askRoot)),
      ptraceScope(),
      piStart ?? readStat(process.pid).then((s) => s?.startTime),
    ]);
    piStart ??= piStarted;
    // Root decides hidden holders when it listed every terminal's.
    let rootDecides = roots.length > 0;
    for (const [i, root] of roots.entries()) {
      if (!root || (!root.ok && root.notPermitted)) {
        rootDecides = false;
        continue;
      }
      if (!root.ok) {
        return {
          ok: false,
          reason: TERMINAL_REFUSALS.TERMINAL_SCAN_INCOMPLETE,
          notice: msg.rootTerminalCheckFailed(sanitizeUntrusted(root.reason, 80)),
        };
      }
      const listed = await rootHolder(root.holders, await terminals[i].exempt);
      // Gone since root listed it: it reads nothing now, and root lists again.
      if (listed && !listed.now && retries > 0) return await check(phase, retries - 1, true);
      if (listed) {
        const culprit = listed.now ?? { pid: listed.pid, command: msg.exitedSince, startTime: 0n };
        return refuse({ reason: TERMINAL_REFUSALS.TERMINAL_SHARED, culprit });
      }
    }
    const origins = new Map<number, UncheckedProcess["origin"]>();
    const originOf = async (p: ProcessSummary) => {
      if (!origins.has(p.pid)) {
        const marked = await carriesMark(p.pid, provenance.mark());
        origins.set(
          p.pid,
          marked ? "agent" : provenance.duringCall(p.startTime) ? "during_call" : undefined,
        );
      }
      return origins.get(p.pid);
    };
    const named = new Map<number, ProcessSummary>();
    for (const [i, t] of terminals.entries()) {
      const scan = scans[i];
      // Hidden processes whose origins are needed: read before the pure decision.
      for (const p of scan?.hidden ?? []) if (!t.own) await originOf(p);
      const verdict = decideTerminal(scan, (p) => {
        if (rootDecides) return false;
        // pi's own terminal: with Yama >= 1 nothing of the agent's can copy it (ADR 0008).
        if (t.own) return (scope === undefined || scope < 1) && p.startTime > (piStart ?? 0n);
        // A tmux client's: the agent has tmux's lock besides, whatever Yama says (ADR 0009).
        return origins.get(p.pid) !== undefined;
      });
      if (!verdict.ok) return refuse(verdict);
      for (const p of verdict.unchecked ?? []) named.set(p.pid, p);
    }
    const unchecked = await Promise.all(
      [...named.values()].map(async (p) =>
        describeProcess(p.pid, msg.hidesOpenFiles, await originOf(p))
      ),
    );
    return unchecked.length > 0 ? { ok: true, unchecked } : { ok: true };
  }
}

/** pi, its ancestors (its shell holds the terminal too) and the live guardian. */
async function excluded(): Promise<Set<number>> {
  const out = new Set<number>([process.pid]);
  const guardian = liveGuardian();
  if (guardian && (await readStat(guardian.pid))?.startTime === guardian.startTime) {
    out.add(guardian.pid);
  }
  for await (const pid of ancestors(process.ppid, readStat)) out.add(pid);
  return out;
}

/** The refusal for a verdict on who holds a terminal, with its notice. */
function refuse(v: { reason: TerminalRefusal; culprit?: ProcessSummary }): GateVerdict {
  const p = v.culprit;
  const who = p ? msg.processNamed(p.pid, sanitizeUntrusted(p.command, 80)) : msg.aProcess;
  const kill = p ? ` (kill ${p.pid})` : "";
  const notice = v.reason === TERMINAL_REFUSALS.TERMINAL_SHARED
    ? msg.terminalSharedNotice(who, kill)
    : msg.terminalNotCheckable;
  return { ok: false, reason: v.reason, notice };
}
