/**
 * The gate every modal passes, before it opens and every
 * {@link GATE_INTERVAL_MS} while it is open: nobody else holds pi's terminal
 * (`terminal_holders.ts`) and tmux does not route typed keys to a binding
 * (`multiplexer_keys.ts`). A closed gate refuses the request with a named
 * reason and a notice that names the process or the keys and says what to do
 * (ADR 0007).
 *
 * @module
 */
import process from "node:process";
import { readStat } from "../../kernel/peer_verification.ts";
import { ancestors } from "../../kernel/proc.ts";
import { firstExecutable } from "../../shared/executables.ts";
import { checkTmuxKeyTables, type KeyTableVerdict } from "./multiplexer_keys.ts";
import { sanitizeUntrusted } from "../../askpass/prompt_text.ts";
import {
  decideTerminal,
  type ProcessSummary,
  scanTerminalHolders,
  summarizeProcess,
  TERMINAL_REFUSALS,
  type TerminalRefusal,
} from "./terminal_holders.ts";
import { ptsNumber, rootTerminalCheckInstalled, runRootTerminalCheck } from "./root_terminal.ts";
import { liveGuardian, terminalGuardStatus } from "./terminal_guard.ts";
import type { UncheckedProcess } from "../../askpass/prompter.ts";
import { ptraceScope } from "../../kernel/yama.ts";
import { describeProcess } from "../../kernel/process_facts.ts";
import type { Result } from "../../shared/result.ts";

/** How often an open modal is checked again (the bound: 100 ms or less). */
export const GATE_INTERVAL_MS = 100;
/** How often root checks again while a modal is open (each check is one `sudo -n`). */
export const ROOT_RECHECK_MS = 500;

/**
 * A gate's answer. `notice` is one line for the human; it holds no secret.
 * An open gate may name processes it could not clear, for the modal to show.
 */
export type GateVerdict = Result<
  { unchecked?: readonly UncheckedProcess[] },
  TerminalRefusal,
  { notice: string }
>;

/**
 * When a check runs: right before a modal opens (`open`, where hardened mode
 * also asks root), every interval while it is open (`watch`), and right
 * before an answer is sent (`send`).
 */
export type GatePhase = "open" | "watch" | "send";

/** What the session server calls before and during every modal. */
export interface ModalGate {
  check(phase: GatePhase): Promise<GateVerdict>;
  readonly intervalMs: number;
}

/** Options of {@link terminalGate}. */
export interface TerminalGateOptions {
  /** Environment with `TMUX`/`TMUX_PANE` (default `process.env`). */
  readonly env?: Record<string, string | undefined>;
  /** The terminal to guard (default: the terminal guard's, pi's stdin); the bench passes a pty. */
  readonly terminal?: () => { readonly ttyPath?: string; readonly rdev?: number };
  /** More pids never counted, beside pi, its ancestors and the guardian (the bench's pty holders). */
  readonly exclude?: readonly number[];
}

/**
 * The gate for this pi process. Without a terminal (tests, or stdin not a
 * tty) only the tmux check applies. In hardened mode (the broker's terminal
 * check installed) root also lists the holders, non-dumpable ones included,
 * before each modal opens, every {@link ROOT_RECHECK_MS} while it is open, and
 * before the answer leaves.
 */
export function terminalGate(uid: number, options: TerminalGateOptions = {}): ModalGate {
  const env = options.env ?? process.env;
  let piStart: bigint | undefined;
  let realSudo: string | undefined;
  let lastRoot = 0;
  /** When root last listed the holders and found none (its answer stands until the next). */
  let rootClearedAt = -Infinity;
  return {
    intervalMs: GATE_INTERVAL_MS,
    async check(phase) {
      const asked = performance.now();
      const { ttyPath, rdev } = options.terminal?.() ?? terminalGuardStatus();
      // Every read starts now, side by side: pi's ancestors (the walk needs
      // them only once it is back), tmux, root's listing and Yama's scope.
      const exclude = excluded(options.exclude ?? []);
      exclude.catch(() => {}); // awaited only with a scan or root's list; a failure fails those
      const n = ttyPath ? ptsNumber(ttyPath) : undefined;
      // Root looks before the modal opens, before the answer leaves, and
      // every ROOT_RECHECK_MS while the modal is open: a hidden process may
      // copy the terminal from pi's shell at any time (without Yama).
      const rootDue = phase !== "watch" || performance.now() - lastRoot >= ROOT_RECHECK_MS;
      const askRoot = async () => {
        realSudo ??= await firstExecutable(["/usr/bin/sudo", "/bin/sudo"]);
        if (!rootDue || n === undefined || realSudo === undefined) return undefined;
        if (!await rootTerminalCheckInstalled()) return undefined;
        lastRoot = performance.now();
        return await runRootTerminalCheck(realSudo, n);
      };
      const [scan, keys, root, scope, piStarted] = await Promise.all([
        ttyPath !== undefined && rdev !== undefined
          ? scanTerminalHolders({ ttyPath, rdev, uid, exclude, notBefore: asked })
          : Promise.resolve({ holders: [], hidden: [] }),
        checkTmuxKeyTables(env),
        askRoot(),
        ptraceScope(),
        piStart ?? readStat(process.pid).then((s) => s?.startTime),
      ]);
      piStart ??= piStarted;
      if (root && !root.ok && !root.notPermitted) {
        return {
          ok: false,
          reason: TERMINAL_REFUSALS.TERMINAL_SCAN_INCOMPLETE,
          notice: `root could not check who has this terminal open (${
            sanitizeUntrusted(root.reason, 80)
          }); run /sudo-prompt doctor`,
        };
      }
      if (root?.ok) {
        const excludes = await exclude;
        const holder = root.holders.find((pid) => !excludes.has(pid));
        if (holder === undefined) rootClearedAt = performance.now();
        else {
          const culprit = await summarizeProcess(holder) ??
            { pid: holder, command: "exited since", startTime: 0n };
          return refuse({ reason: TERMINAL_REFUSALS.TERMINAL_SHARED, culprit });
        }
      }
      // Root's last listing stands until its next one; with Yama >= 1 nothing
      // of the agent's can copy the terminal (ADR 0008); otherwise ask.
      const rootDecides = performance.now() - rootClearedAt <= ROOT_RECHECK_MS + 100;
      const policy = rootDecides || (scope !== undefined && scope >= 1) ? "ignore" : "ask";
      const verdict = decideTerminal(scan, piStart ?? 0n, policy);
      if (!verdict.ok) return refuse(verdict);
      const unchecked = await Promise.all(
        (verdict.unchecked ?? []).map((p) =>
          describeProcess(p.pid, "hides its open files: it may hold this terminal")
        ),
      );
      if (!keys.ok) return keysRefusal(keys);
      return unchecked.length > 0 ? { ok: true, unchecked } : { ok: true };
    },
  };
}

/** pi, its ancestors (its shell holds the terminal too), the live guardian and `more`. */
async function excluded(more: readonly number[]): Promise<Set<number>> {
  const out = new Set<number>([process.pid, ...more]);
  const guardian = liveGuardian();
  if (guardian && (await readStat(guardian.pid))?.startTime === guardian.startTime) {
    out.add(guardian.pid);
  }
  for await (const pid of ancestors(process.ppid, readStat)) out.add(pid);
  return out;
}

/** The refusal for a verdict on who holds the terminal, with its notice. */
function refuse(v: { reason: TerminalRefusal; culprit?: ProcessSummary }): GateVerdict {
  const p = v.culprit;
  const who = p ? `process ${p.pid} (${sanitizeUntrusted(p.command, 80)})` : "a process";
  const kill = p ? ` (kill ${p.pid})` : "";
  const notice = v.reason === TERMINAL_REFUSALS.TERMINAL_SHARED
    ? `${who} has this terminal open and could read what you type. Stop it${kill} and try again`
    : "could not check who else has this terminal open; try again";
  return { ok: false, reason: v.reason, notice };
}

/** The refusal for what tmux does with typed keys, with its notice. */
function keysRefusal(keys: Exclude<KeyTableVerdict, { ok: true }>): GateVerdict {
  if (keys.reason === "focus") {
    return {
      ok: false,
      reason: TERMINAL_REFUSALS.FOCUS_MOVED,
      notice:
        `keys typed now would go to ${
          sanitizeUntrusted(keys.keys[0] ?? "another pane", 60)
        }, not to pi: the password prompt is withdrawn. Put the focus back on pi's pane (leave ` +
        "copy mode, close the popup) and try again",
    };
  }
  return {
    ok: false,
    reason: TERMINAL_REFUSALS.MULTIPLEXER_KEYS_BOUND,
    notice: keys.reason === "unreadable"
      ? "tmux did not say which keys are bound, so a key logger cannot be ruled out; try again"
      : keys.reason === "client_table"
      ? `a tmux client of this session types into the key table ${
        sanitizeUntrusted(keys.keys[0], 40)
      }, whose bindings can record what you type. Run tmux switch-client -T root and try again`
      : `tmux has printable keys bound where you type (${
        keys.keys.map((k) => sanitizeUntrusted(k, 20)).join(", ")
      }): a binding can record what you type. Remove them (e.g. tmux unbind -n ${
        sanitizeUntrusted(keys.keys[0].replace(/^prefix /, ""), 20)
      }) and try again`,
  };
}
