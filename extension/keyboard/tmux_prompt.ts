/**
 * A modal inside tmux (ADR 0009 §1), drawn on each locked client's own terminal,
 * never in pi's pane: lock the clients (`tmux_lock.ts`); for each verified keeper
 * take its terminal (`raw_terminal.ts`), let the gate judge it, draw the modal;
 * the first modal to end ends them all; restore; unlock. A client that stops or
 * ends, or a keeper that ends, interrupts the request; a modal withdrawn while
 * typed into keeps the clients locked and drops keys (ADR 0009 §1, step 6).
 * Locks asked again: ADR 0009, "a lock asked while the last one ends".
 *
 * @module
 */
import { CURSOR_MARKER, StdinBuffer } from "@earendil-works/pi-tui";
import type { PromptOutcome } from "../../askpass/prompter.ts";
import { DENY_REASONS } from "../../askpass/protocol.ts";
import { ancestors } from "../../kernel/proc.ts";
import { readStat } from "../../kernel/peer_verification.ts";
import { ClientLocks, type HeldLock, type TmuxPlace } from "./tmux_lock.ts";
import { RawTerminal } from "./raw_terminal.ts";
import type { LockedClient } from "./keeper_check.ts";
import { msg } from "../../shared/i18n/locale.ts";
import { KEY_DROP, PASTE } from "../../shared/modal_keys.ts";

/** How often input is read and the locked clients are looked at while a modal shows. */
const TICK_MS = 25;
/**
 * A tick this late means pi was stopped (SIGSTOP gives no warning): the modal is
 * not drawn again and the request is cancelled; the keeper has erased it (ADR 0008).
 */
const STOPPED_GAP_MS = 2000;
/** About 6 s in all: an old keeper may exit late on a loaded machine. */
const RELOCK_MS = [50, 100, 200, 400, 800, 1600, 3200];
/** A client released longer ago is not waited for: its old lock is no race any more. */
const RELEASED_FOR_MS = 10_000;
const MAX_TERMINALS = 8;
const MODAL_WIDTH = 80;
const CANCEL: PromptOutcome = { kind: "cancel" };

/** What pi draws on a client's terminal: a modal component of the ui part. */
export interface TerminalModal {
  render(width: number): string[];
  handleInput(data: string): void;
  dispose(): void;
  /** Closes it without the human (`MaskedPromptModal.abort`). */
  abort?(): void;
  /** It was withdrawn while the human was typing into it. */
  readonly withdrawnWhileTyping?: boolean;
}

/** A client terminal pi holds now, for the keyboard gate (`terminal_gate.ts`). */
export interface TakenTerminal {
  readonly ttyPath: string;
  readonly rdev: number;
  /** Holders that are no stranger here: the client, its ancestors (its shell), the keeper. */
  readonly exempt: Promise<ReadonlySet<number>>;
}

const taken = new Set<TakenTerminal>();
/** A drop of keys in progress: the next request locks once it ends. */
let dropping: Promise<void> | undefined;
/** Clients (pid and start time) whose locks a request ended, with when. */
const released = new Map<string, number>();
const clientKey = (c: LockedClient["client"]) => `${c.pid}:${c.startTime}`;

/** The client terminals pi holds now (the gate judges each, with pi's own). */
export function takenTerminals(): readonly TakenTerminal[] {
  return [...taken];
}

/** What {@link promptOnTmuxClients} needs besides the place. */
export interface TmuxPromptOptions {
  /** Builds one modal for one terminal; `done` is called once with its outcome. */
  readonly make: (redraw: () => void, done: (outcome: PromptOutcome) => void) => TerminalModal;
  readonly signal: AbortSignal;
  /** Runs the keyboard gate now, with every taken terminal; false: the request was refused. */
  readonly recheck: () => Promise<boolean>;
  /** One line for the human (in pi's pane). */
  readonly notify?: (text: string) => void;
}

interface Shown {
  readonly held: HeldLock;
  readonly terminal: RawTerminal;
  readonly entry: TakenTerminal;
  readonly input: StdinBuffer;
  modal?: TerminalModal;
  size: { cols: number; rows: number };
  /** The keeper is gone: tmux has the terminal again, pi must not touch it. */
  lockEnded?: boolean;
}

/**
 * Asks on every client of pi's tmux session (see the module's description). `again` locks again:
 * a client attached since (or one whose lock did not take) gets its modal.
 */
export function promptOnTmuxClients(
  place: TmuxPlace,
  o: TmuxPromptOptions,
): { readonly outcome: Promise<PromptOutcome>; again(): void } {
  const shown = new Set<Shown>();
  /** The clients a verified keeper of this request came from. */
  const reached = new Set<string>();
  let locks: ClientLocks | undefined;
  let finished = false;
  let resolveOutcome!: (outcome: PromptOutcome) => void;
  const outcome = new Promise<PromptOutcome>((r) => resolveOutcome = r);
  let tick: ReturnType<typeof setInterval> | undefined;
  let looking = false;
  let lastTick = performance.now();
  /** pi was stopped since the last tick: the modal is not drawn again. */
  const wasStopped = () => {
    if (performance.now() - lastTick < STOPPED_GAP_MS) return false;
    interrupt(msg.piStopped);
    return true;
  };

  /** Gives every terminal back (modes, exclusive mode) and ends the locks. */
  const release = (note?: string) => {
    clearInterval(tick);
    const now = performance.now();
    for (const [c, at] of released) if (now - at >= RELEASED_FOR_MS) released.delete(c);
    for (const c of reached) released.set(c, now);
    for (const s of shown) {
      s.input.destroy();
      taken.delete(s.entry);
      if (s.lockEnded) {
        s.terminal.abandon();
        continue;
      }
      if (note) s.terminal.write(`\x1b[0m\x1b[2J\x1b[H${note}\r\n`);
      s.terminal.write("\x1b[?2004l\x1b[?25h");
      s.terminal.restore();
    }
    shown.clear();
    void locks?.close();
  };

  const finish = (result: PromptOutcome, how: "ended" | "withdrawn" | "interrupted") => {
    if (finished) return;
    finished = true;
    o.signal.removeEventListener("abort", onAbort);
    let typing = false;
    for (const s of shown) {
      if (how === "withdrawn") s.modal?.abort?.();
      typing ||= s.modal?.withdrawnWhileTyping === true;
      s.modal?.dispose();
    }
    resolveOutcome(result);
    if (how === "interrupted") {
      for (const s of shown) if (!s.lockEnded) s.terminal.dropInput();
      return release(msg.boxInterrupted);
    }
    if (!typing || shown.size === 0) return release();
    dropping = dropKeys().finally(() => dropping = undefined);
  };

  /** Holds the terminals and drops what is typed until a pause or Enter, then releases them. */
  const dropKeys = () =>
    new Promise<void>((resolve) => {
      clearInterval(tick);
      const started = performance.now();
      let last = started;
      let dropped = false;
      for (const s of shown) draw(s, [msg.droppingKeys]);
      tick = setInterval(() => {
        const now = performance.now();
        for (const s of shown) {
          const data = s.terminal.read();
          if (!data) continue;
          dropped = true;
          last = now;
          if (data.includes("\r")) last = -Infinity;
        }
        if (now - last < KEY_DROP.idleMs && now - started < KEY_DROP.maxMs) return;
        release();
        if (dropped) o.notify?.(msg.droppedKeys);
        resolve();
      }, TICK_MS);
    });

  const onAbort = () => {
    const reason = o.signal.reason;
    // A closing session or a stopped pi: what is typed next is meant for pi.
    const forPi = reason === DENY_REASONS.SESSION_CLOSED || reason === DENY_REASONS.PI_STOPPED;
    finish(CANCEL, forPi ? "ended" : "withdrawn");
  };
  o.signal.addEventListener("abort", onAbort, { once: true });
  if (o.signal.aborted) onAbort(); // no event comes for a signal aborted already

  const interrupt = (why: string) => {
    if (finished) return;
    o.notify?.(msg.boxInterruptedBecause(why));
    finish(CANCEL, "interrupted");
  };

  /** Draws `lines` (the modal's, else the given ones) centred on the client's terminal. */
  const draw = (s: Shown, lines?: readonly string[]) => {
    if (!lines && wasStopped()) return;
    s.size = s.terminal.size();
    const width = Math.max(20, Math.min(MODAL_WIDTH, s.size.cols - 2));
    if (!lines && (finished || !s.modal)) return;
    const body = lines ?? s.modal!.render(width).map((l) => l.replaceAll(CURSOR_MARKER, ""));
    const all = [...(s.held.locked.nested ? [msg.nestedTmux] : []), ...body];
    const top = Math.max(1, Math.floor((s.size.rows - all.length) / 2) + 1);
    const left = Math.max(1, Math.floor((s.size.cols - width) / 2) + 1);
    let frame = "\x1b[?25l\x1b[0m\x1b[H\x1b[2J";
    all.forEach((line, i) => frame += `\x1b[${top + i};${left}H${line}\x1b[0m`);
    s.terminal.write(frame);
  };

  /** Reads what was typed, follows a resize, and looks at every locked client. */
  const onTick = () => {
    if (wasStopped()) return;
    lastTick = performance.now();
    for (const s of shown) {
      const data = s.terminal.read();
      if (data && s.modal) s.input.process(data);
      if (finished) return;
      const now = s.terminal.size();
      if (now.cols !== s.size.cols || now.rows !== s.size.rows) draw(s);
    }
    if (looking) return;
    looking = true;
    void Promise.all([...shown].map(async (s) => {
      const c = s.held.locked.client;
      const stat = await readStat(c.pid);
      if (!stat || stat.startTime !== c.startTime || stat.state === "Z") {
        return msg.tmuxClientEnded;
      }
      if (stat.state === "T" || stat.state === "t") return msg.tmuxClientStopped;
      return undefined;
    })).then((whys) => {
      looking = false;
      const why = whys.find((w) => w !== undefined);
      if (why) interrupt(why);
    });
  };

  const onClient = async (held: HeldLock) => {
    const key = clientKey(held.locked.client);
    reached.add(key);
    if (finished) released.set(key, performance.now()); // after release()
    if (finished || shown.size >= MAX_TERMINALS) return held.release();
    const { locked } = held;
    const took = RawTerminal.take(locked.ttyPath, locked.rdev);
    if (!took.ok) {
      o.notify?.(msg.tmuxTerminalNotTaken(locked.ttyPath, took.reason));
      return held.release();
    }
    const entry: TakenTerminal = {
      ttyPath: locked.ttyPath,
      rdev: locked.rdev,
      exempt: exemptOf(locked),
    };
    const input = new StdinBuffer();
    const s: Shown = { held, terminal: took.terminal, entry, input, size: took.terminal.size() };
    shown.add(s);
    taken.add(entry);
    held.onEnd(() => {
      s.lockEnded = true;
      interrupt(msg.tmuxLockEnded);
    });
    if (!tick) {
      lastTick = performance.now();
      tick = setInterval(onTick, TICK_MS);
    }
    // The gate judges this terminal with the others before anything is drawn.
    if (!await o.recheck().catch(() => false) || finished) return;
    s.terminal.write("\x1b[?2004h");
    s.modal = o.make(() => draw(s), (result) => finish(result, "ended"));
    input.on("data", (seq: string) => s.modal?.handleInput(seq));
    input.on("paste", (text: string) => s.modal?.handleInput(PASTE.start + text + PASTE.end));
    draw(s);
  };

  // A drop of keys for a withdrawn modal ends first: its keys are not this one's.
  void (dropping ?? Promise.resolve())
    .then(() => finished ? undefined : ClientLocks.open(place, (held) => void onClient(held)))
    .then(async (opened) => {
      if (!opened) return;
      if (!opened.ok) {
        o.notify?.(msg.tmuxNotLocked(opened.reason));
        return;
      }
      if (finished) return void opened.locks.close();
      locks = opened.locks;
      const now = performance.now();
      const waiting = [...released].filter(([, at]) => now - at < RELEASED_FOR_MS).map(([c]) => c);
      await locks.lock();
      for (const pause of waiting.length ? RELOCK_MS : []) {
        await new Promise((r) => setTimeout(r, pause));
        if (finished || waiting.every((c) => reached.has(c))) return;
        await locks.lock();
      }
    });
  return { outcome, again: () => void locks?.lock() };
}

/** The client, its ancestors (the user's shell there holds the terminal too) and the keeper. */
async function exemptOf(locked: LockedClient): Promise<ReadonlySet<number>> {
  const out = new Set<number>([locked.keeper.pid]);
  for await (const pid of ancestors(locked.client.pid, readStat)) out.add(pid);
  return out;
}
