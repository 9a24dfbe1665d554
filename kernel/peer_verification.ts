/**
 * Decides whether the peer of an askpass connection is the real helper that
 * sudo started for a command of this pi session. It trusts the kernel, never
 * the request: the pid comes from `SO_PEERCRED`, everything else from `/proc`.
 * The checks: docs/design.md §4.5; the connection's owner (`O_CLOEXEC`, against
 * connect-then-exec): ADR 0001, Consequences.
 *
 * @module
 */
import type { Stats } from "node:fs";
import type { PasswordRequest } from "../askpass/protocol.ts";
import type { PeerCredentials } from "./peer_credentials.ts";
import {
  ancestors,
  isStopped,
  parseNulList,
  parseStat,
  parseStatusIds,
  parseTracerPid,
  type ProcStat,
  sameList,
} from "./proc.ts";
import { readProcFile, readProcLink, readProcText, statProcPath } from "./proc_reader.ts";
import { peerOwnsConnection } from "./socket_peer.ts";
import type { Result } from "../shared/result.ts";

/** Named reasons a requester is refused. */
export const VERIFY_REFUSALS = {
  FFI_UNAVAILABLE: "ffi_unavailable",
  PEER_CREDENTIALS_FAILED: "peer_credentials_failed",
  CLAIMED_PID_MISMATCH: "claimed_pid_mismatch",
  PEER_UID_MISMATCH: "peer_uid_mismatch",
  PEER_GONE: "peer_gone",
  PEER_IDS_MISMATCH: "peer_ids_mismatch",
  PEER_EXE_MISMATCH: "peer_exe_mismatch",
  PEER_CMDLINE_MISMATCH: "peer_cmdline_mismatch",
  PEER_ENVIRON_MISMATCH: "peer_environ_mismatch",
  PEER_STDOUT_NOT_SUDO_PIPE: "peer_stdout_not_sudo_pipe",
  PARENT_NOT_SUDO: "parent_not_sudo",
  PARENT_NOT_SETUID_ROOT: "parent_not_setuid_root",
  NOT_FROM_THIS_SESSION: "not_from_this_session",
  PEER_CONNECTION_INHERITED: "peer_connection_inherited",
  PEER_DOES_NOT_HOLD_CONNECTION: "peer_does_not_hold_connection",
  PEER_HOLDS_CONNECTION_TWICE: "peer_holds_connection_twice",
  CONNECTION_OWNER_UNKNOWN: "connection_owner_unknown",
  PEER_STOPPED: "peer_stopped",
  HELPER_TRACED: "helper_traced",
  PEER_CHANGED: "peer_changed",
  BROKER_NOT_ROOT: "broker_not_root",
  BROKER_CMDLINE_MISMATCH: "broker_cmdline_mismatch",
  BROKER_PROOF_INVALID: "broker_proof_invalid",
} as const;

/** One of the values of {@link VERIFY_REFUSALS}. */
export type VerifyRefusal = typeof VERIFY_REFUSALS[keyof typeof VERIFY_REFUSALS];

/** What the real helper of this session looks like. */
export interface ExpectedHelper {
  /** Our uid; the helper must have it on all four fields. */
  readonly uid: number;
  /** The deno binary the launcher execs (the `exe` link must equal it). */
  readonly exePath: string;
  /** `[deno, "run", ...flags, helperPath]`; the prompt follows. */
  readonly argvPrefix: readonly string[];
  /** The launcher's environment, `NAME=value`, in order. */
  readonly environment: readonly string[];
  /** The pi process whose tool calls may ask (sudo must descend from it). */
  readonly ownerPid: number;
}

/** A process pinned by pid and start time. */
export interface ProcessRef {
  readonly pid: number;
  readonly startTime: bigint;
}

/** A requester that passed every check. */
export interface VerifiedRequester {
  readonly helper: ProcessRef;
  readonly sudo: ProcessRef;
  /** sudo's argv from `/proc/<sudo>/cmdline`. */
  readonly sudoArgv: readonly string[];
  /** argv of the shell pi started for the command (child of the owner), if found. */
  readonly toolCommand: readonly string[] | null;
  /** Inode of the helper's stdout: sudo's root-owned pipe, the one pi writes into. */
  readonly pipeInode: number;
}

/** Result of {@link verifyRequester}. */
export type Verification = Result<{ requester: VerifiedRequester }, VerifyRefusal>;

/**
 * The reads of one peer ({@link readRequester}): `pinned` once the first
 * show the pinned deno with our uids, untraced; `reads` when all are done.
 */
export type RequesterReading = {
  pinned: Promise<boolean>;
  reads: Promise<{ first: FirstReads; rest?: Awaited<ReturnType<typeof readRest>> }>;
};
type FirstReads = { stat?: ProcStat; statusText?: string; exe?: string };

/** A peer whose uid is not ours is refused before any read is judged: nothing is read. */
const NOTHING_READ = { pinned: Promise.resolve(false), reads: Promise.resolve({ first: {} }) };

/**
 * Starts every read that verifying peer `creds.pid` needs, judging nothing; a
 * session starts them at accept (why: docs/design.md §4.5). Beyond its stat,
 * status and `exe`, only the pinned deno with our four uids, untraced, is read.
 */
export function readRequester(
  expected: ExpectedHelper,
  creds: PeerCredentials,
  acceptedInode: number,
): RequesterReading {
  if (creds.uid !== expected.uid) return NOTHING_READ;
  const pid = creds.pid;
  const first = Promise.all([
    readStat(pid),
    readProcText(`/proc/${pid}/status`),
    readProcLink(`/proc/${pid}/exe`),
  ]).then(([stat, statusText, exe]): FirstReads => ({ stat, statusText, exe }));
  const pinned = first.then((f) => firstRefusal(expected, f) === undefined ? f.stat : undefined);
  const reads = pinned.then(async (stat) => ({
    first: await first,
    rest: stat && await readRest(expected, pid, stat, acceptedInode),
  }));
  const reading = { pinned: pinned.then((s) => s !== undefined), reads };
  reading.pinned.catch(() => {}); // a caller may never ask (the reads' failure reaches the judge)
  return reading;
}

async function readRest(expected: ExpectedHelper, pid: number, stat: ProcStat, inode: number) {
  const sudoStat = readStat(stat.ppid);
  const [cmdlineBytes, environBytes, out, parent, sudoArgvBytes, owned, ancestry] = await Promise
    .all([
      readProcFile(`/proc/${pid}/cmdline`),
      readProcFile(`/proc/${pid}/environ`),
      statProcPath(`/proc/${pid}/fd/1`),
      setuidSudoParent(stat.ppid, expected.uid, sudoStat),
      readProcFile(`/proc/${stat.ppid}/cmdline`),
      peerOwnsConnection(inode, pid),
      sudoStat.then((s) => s ? walkToOwner(s.ppid, expected.ownerPid) : { ok: false as const }),
    ]);
  return { cmdlineBytes, environBytes, out, parent, sudoArgvBytes, owned, ancestry };
}

/** The first check that the first reads fail, in the fixed order; `undefined` when none. */
function firstRefusal(expected: ExpectedHelper, first: FirstReads): VerifyRefusal | undefined {
  const { stat, statusText, exe } = first;
  const status = parseStatusIds(statusText ?? "");
  if (!stat || !status) return VERIFY_REFUSALS.PEER_GONE;
  // A stopped helper cannot be talking to us itself (SIGSTOP before it connects).
  if (isStopped(stat)) return VERIFY_REFUSALS.PEER_STOPPED;
  // A traced helper is driven by its tracer, who sees every byte it handles (ADR 0008).
  if (parseTracerPid(statusText ?? "") !== 0) return VERIFY_REFUSALS.HELPER_TRACED;
  if (!status.uid.every((u) => u === expected.uid)) return VERIFY_REFUSALS.PEER_IDS_MISMATCH;
  if (exe !== expected.exePath) return VERIFY_REFUSALS.PEER_EXE_MISMATCH;
  return undefined;
}

/**
 * Judges the reads of {@link readRequester} against `request` in a fixed order
 * (so the first failing check names the refusal), then re-checks that the pid
 * is still the process that connected (pidfd), that it and its sudo still run
 * with the start times read, and that the helper is still untraced.
 */
export async function judgeRequester(
  expected: ExpectedHelper,
  creds: PeerCredentials,
  pidfd: number | undefined,
  reading: RequesterReading,
  request: PasswordRequest,
): Promise<Verification> {
  const refuse = (reason: VerifyRefusal): Verification => ({ ok: false, reason });
  const pid = creds.pid;
  if (request.pid !== pid) return refuse(VERIFY_REFUSALS.CLAIMED_PID_MISMATCH);
  if (creds.uid !== expected.uid) return refuse(VERIFY_REFUSALS.PEER_UID_MISMATCH);
  const { first, rest } = await reading.reads;
  const early = firstRefusal(expected, first);
  if (early !== undefined) return refuse(early);
  if (!first.stat || !rest) return refuse(VERIFY_REFUSALS.PEER_GONE); // not reached: both read
  const cmdline = parseNulList(rest.cmdlineBytes ?? new Uint8Array());
  if (!cmdline || !sameList(cmdline, [...expected.argvPrefix, request.prompt])) {
    return refuse(VERIFY_REFUSALS.PEER_CMDLINE_MISMATCH);
  }
  const environ = parseNulList(rest.environBytes ?? new Uint8Array());
  if (!environ || !sameList(environ, expected.environment)) {
    return refuse(VERIFY_REFUSALS.PEER_ENVIRON_MISMATCH);
  }
  const out = rest.out;
  if (!isSudoPipe(out)) return refuse(VERIFY_REFUSALS.PEER_STDOUT_NOT_SUDO_PIPE);
  if (!rest.parent.ok) return refuse(rest.parent.reason);
  const sudoArgv = parseNulList(rest.sudoArgvBytes ?? new Uint8Array());
  if (!sudoArgv || sudoArgv.length === 0) return refuse(VERIFY_REFUSALS.PARENT_NOT_SUDO);
  if (!rest.ancestry.ok) return refuse(VERIFY_REFUSALS.NOT_FROM_THIS_SESSION);
  if (!rest.owned.ok) return refuse(rest.owned.reason); // socket_peer's reasons are refusals

  const helper = { pid, startTime: first.stat.startTime };
  const sudo = { pid: rest.parent.stat.pid, startTime: rest.parent.stat.startTime };
  // The process, not its program: an exec keeps pid and start time (docs/design.md §4.5).
  const [same, running, tracer] = await Promise.all([
    pidfdRefersTo(pidfd, pid),
    stillRunning([helper, sudo]),
    tracerOf(pid),
  ]);
  if (!same || !running) return refuse(VERIFY_REFUSALS.PEER_CHANGED);
  if (tracer !== 0) return refuse(VERIFY_REFUSALS.HELPER_TRACED);
  return {
    ok: true,
    requester: {
      helper,
      sudo,
      sudoArgv,
      toolCommand: rest.ancestry.toolCommand,
      pipeInode: out.ino,
    },
  };
}

/**
 * {@link readRequester}, then {@link judgeRequester}. `creds`, `pidfd` and
 * `acceptedInode` must be taken from the accepted socket before any other work,
 * so they describe the process that called `connect()` and this connection.
 */
export function verifyRequester(
  expected: ExpectedHelper,
  creds: PeerCredentials,
  pidfd: number | undefined,
  acceptedInode: number,
  request: PasswordRequest,
): Promise<Verification> {
  const reading = readRequester(expected, creds, acceptedInode);
  return judgeRequester(expected, creds, pidfd, reading, request);
}

/**
 * True when every process is alive (not a zombie, not stopped) with the same
 * start time: the re-check before a password is sent, and the liveness watch's.
 */
export async function stillRunning(refs: readonly ProcessRef[]): Promise<boolean> {
  const stats = await Promise.all(refs.map((ref) => readStat(ref.pid)));
  return refs.every((ref, i) => {
    const stat = stats[i];
    return stat !== undefined && stat.startTime === ref.startTime &&
      stat.state !== "Z" && !isStopped(stat);
  });
}

/**
 * True when `pidfd` still refers to live process `pid` (fdinfo shows `Pid: -1`
 * once it exited). Without a pidfd, true: start times alone guard PID reuse.
 */
export async function pidfdRefersTo(pidfd: number | undefined, pid: number): Promise<boolean> {
  if (pidfd === undefined) return true;
  const info = await readProcText(`/proc/self/fdinfo/${pidfd}`);
  const match = info ? /^Pid:\t(-?\d+)$/m.exec(info) : null;
  return match !== null && Number(match[1]) === pid;
}

/** True for sudo's pipe: a FIFO of root's with mode 0600, as the helper's stdout must be. */
export function isSudoPipe(st: Stats | undefined): st is Stats {
  return st !== undefined && st.isFIFO() && st.uid === 0 && (st.mode & 0o777) === 0o600;
}

/** `/proc/<pid>/stat`, parsed, or `undefined` when gone or malformed. */
export async function readStat(pid: number): Promise<ProcStat | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const stat = parseStat(await readProcText(`/proc/${pid}/stat`) ?? "");
  return stat && stat.pid === pid ? stat : undefined;
}

/**
 * Walks parents from `start` up to `ownerPid` (bounded); on success, the argv
 * of the owner's direct child: the shell pi started for the call or `!` command.
 */
export async function walkToOwner(
  start: number,
  ownerPid: number,
): Promise<{ ok: true; toolCommand: string[] | null } | { ok: false }> {
  let child: number | undefined;
  for await (const pid of ancestors(start, readStat)) {
    if (pid === ownerPid) {
      if (child === undefined) return { ok: true, toolCommand: null };
      const argv = parseNulList(await readProcFile(`/proc/${child}/cmdline`) ?? new Uint8Array());
      return { ok: true, toolCommand: argv && argv.length > 0 ? argv : null };
    }
    child = pid;
  }
  return { ok: false };
}

/**
 * The process `ppid` if it is a setuid sudo front end that we ran: `comm`
 * `sudo`, real uid `uid`, the other three 0. Shared with the broker's check.
 */
export async function setuidSudoParent(
  ppid: number,
  uid: number,
  stat: Promise<ProcStat | undefined> = readStat(ppid),
): Promise<Result<{ stat: ProcStat }, "parent_not_sudo" | "parent_not_setuid_root">> {
  const [sudoStat, statusText] = await Promise.all([stat, readProcText(`/proc/${ppid}/status`)]);
  if (sudoStat?.comm !== "sudo") return { ok: false, reason: VERIFY_REFUSALS.PARENT_NOT_SUDO };
  const ids = parseStatusIds(statusText ?? "");
  if (!ids || ids.uid[0] !== uid || ids.uid[1] !== 0 || ids.uid[2] !== 0 || ids.uid[3] !== 0) {
    return { ok: false, reason: VERIFY_REFUSALS.PARENT_NOT_SETUID_ROOT };
  }
  return { ok: true, stat: sudoStat };
}

/**
 * The pid tracing `pid` now: 0 for none, `undefined` when unreadable (the
 * caller treats that as traced). Read right before the password leaves, to
 * catch a tracer that attached after the verification (ADR 0008).
 */
export async function tracerOf(pid: number): Promise<number | undefined> {
  return parseTracerPid(await readProcText(`/proc/${pid}/status`) ?? "");
}
