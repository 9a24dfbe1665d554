/**
 * The terminal guard's state, one per pi process (on `globalThis`, so that
 * `/reload` and `/new` find it), and the one way to tell the guardian something.
 *
 * @module
 */
import type { ChildProcess } from "node:child_process";
import { writeSync } from "node:fs";

/** The one-line command that releases a terminal left exclusive (for notices and docs). */
export const RELEASE_COMMAND = "perl -e 'ioctl(STDIN, 0x540D, 0)'";

/** What the guard knows and holds. */
export interface GuardState {
  ttyPath?: string;
  rdev?: number;
  guardian?: ChildProcess;
  /** The live guardian's start time (`stat` field 22), so a reused pid is never exempt. */
  guardianStart?: bigint;
  dumpableByChoice: boolean;
  problems: string[];
  respawns: number[];
  exiting: boolean;
  started?: Promise<void>;
  /** Modals on screen now. */
  modals: number;
  /** Run when pi stops or resumes: they deny what is pending. */
  stopListeners: Set<() => void>;
  /** This suspension came from outside pi (not the human's Ctrl+Z). */
  external: boolean;
  guardianRootOwned?: boolean;
  /** pi is quitting with a modal on screen: the guardian keeps treating it as shown. */
  quittingWithModal?: boolean;
  /** pi's mark, set once before the first tool call (ADR 0009 §2). */
  mark?: bigint;
}

const KEY = Symbol.for("pi-sudo-prompt.terminal-guard");

/** The process's one guard state. */
export function state(): GuardState {
  const g = globalThis as unknown as Record<symbol, GuardState | undefined>;
  return g[KEY] ??= {
    dumpableByChoice: false,
    problems: [],
    respawns: [],
    exiting: false,
    modals: 0,
    stopListeners: new Set(),
    external: false,
  };
}

/** One line to the guardian, written at once (pi may stop right after). */
export function tellGuardian(s: GuardState, line: string): void {
  const stdin = s.guardian?.stdin as unknown as { _handle?: { fd?: number } } | undefined;
  const fd = stdin?._handle?.fd;
  if (typeof fd !== "number" || fd < 0) return;
  try {
    writeSync(fd, line + "\n");
  } catch { /* a guardian that is gone is respawned by its exit handler */ }
}
