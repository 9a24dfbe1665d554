/**
 * Is the process on the other end of a lock connection our keeper, in a tmux
 * client's lock? Decided from the kernel alone (`SO_PEERCRED`, `/proc` of it and
 * its parent), never from tmux, which the agent can configure. Why such a keeper
 * proves its client locked and unread: ADR 0009, "Research" and §1 step 3.
 *
 * @module
 */
import { basename } from "node:path";
import { parseNulList, parseStatusIds, parseTracerPid, sameList } from "../../kernel/proc.ts";
import {
  readProcFile,
  readProcLink,
  readProcText,
  statProcPath,
} from "../../kernel/proc_reader.ts";
import { readStat } from "../../kernel/peer_verification.ts";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";

/**
 * Named reasons a lock connection is not a keeper (the client then gets no modal):
 * - `keeper_gone`: it ended, or could not be read, while it was checked.
 * - `keeper_not_ours`: another program, argv or environment, another uid, or traced or stopped.
 * - `keeper_not_in_lock`: its parent is not a tmux client of ours.
 * - `keeper_terminal_mismatch`: its stdin is not a terminal, or not its client's.
 */
export const KEEPER_REFUSALS = reasons(
  "keeper_gone",
  "keeper_not_ours",
  "keeper_not_in_lock",
  "keeper_terminal_mismatch",
);

/** One of the values of {@link KEEPER_REFUSALS}. */
export type KeeperRefusal = ReasonOf<typeof KEEPER_REFUSALS>;

/** What a keeper must be. */
export interface ExpectedKeeper {
  readonly uid: number;
  /** The real path of the deno binary it runs. */
  readonly exe: string;
  readonly argv: readonly string[];
  readonly environment: readonly string[];
}

/** A locked tmux client, as the kernel shows it. */
export interface LockedClient {
  readonly keeper: { readonly pid: number; readonly startTime: bigint };
  readonly client: { readonly pid: number; readonly startTime: bigint };
  /** The client's terminal: its path as `/proc` links show it, and its device number. */
  readonly ttyPath: string;
  readonly rdev: number;
  /** The client itself runs inside tmux (`TMUX` in its environment): nested tmux. */
  readonly nested: boolean;
}

/** Checks the keeper `pid` (from `SO_PEERCRED`) against `expected`. */
export async function checkKeeper(
  pid: number,
  expected: ExpectedKeeper,
): Promise<Result<{ locked: LockedClient }, KeeperRefusal>> {
  const refuse = (reason: KeeperRefusal) => ({ ok: false, reason }) as const;
  const [stat, statusText, exe, argvBytes, envBytes, ttyLink, tty] = await Promise.all([
    readStat(pid),
    readProcText(`/proc/${pid}/status`),
    readProcLink(`/proc/${pid}/exe`),
    readProcFile(`/proc/${pid}/cmdline`),
    readProcFile(`/proc/${pid}/environ`),
    readProcLink(`/proc/${pid}/fd/0`),
    statProcPath(`/proc/${pid}/fd/0`),
  ]);
  if (!stat || !statusText) return refuse(KEEPER_REFUSALS.KEEPER_GONE);
  const ids = parseStatusIds(statusText);
  const argv = argvBytes && parseNulList(argvBytes);
  const environment = envBytes && parseNulList(envBytes);
  if (
    !ids || !ids.uid.every((u) => u === expected.uid) || parseTracerPid(statusText) !== 0 ||
    stat.state === "T" || stat.state === "t" || exe !== expected.exe ||
    !argv || !sameList(argv, expected.argv) || !environment ||
    !sameList(environment, expected.environment)
  ) {
    return refuse(KEEPER_REFUSALS.KEEPER_NOT_OURS);
  }
  const clientPid = stat.ppid;
  const [clientStat, clientStatus, clientExe, clientLink, clientTty, clientEnv] = await Promise.all(
    [
      readStat(clientPid),
      readProcText(`/proc/${clientPid}/status`),
      readProcLink(`/proc/${clientPid}/exe`),
      readProcLink(`/proc/${clientPid}/fd/0`),
      statProcPath(`/proc/${clientPid}/fd/0`),
      readProcFile(`/proc/${clientPid}/environ`),
    ],
  );
  const clientIds = parseStatusIds(clientStatus ?? "");
  if (
    !clientStat || !clientIds || !clientIds.uid.every((u) => u === expected.uid) ||
    clientExe === undefined || basename(clientExe) !== "tmux" ||
    clientStat.startTime > stat.startTime
  ) {
    return refuse(KEEPER_REFUSALS.KEEPER_NOT_IN_LOCK);
  }
  if (
    !ttyLink || !tty?.isCharacterDevice() || ttyLink !== clientLink ||
    !clientTty?.isCharacterDevice() || clientTty.rdev !== tty.rdev || !ttyLink.startsWith("/dev/")
  ) {
    return refuse(KEEPER_REFUSALS.KEEPER_TERMINAL_MISMATCH);
  }
  const nested = (parseNulList(clientEnv ?? new Uint8Array()) ?? []).some((v) =>
    v.startsWith("TMUX=")
  );
  return {
    ok: true,
    locked: {
      keeper: { pid, startTime: stat.startTime },
      client: { pid: clientPid, startTime: clientStat.startTime },
      ttyPath: ttyLink,
      rdev: tty.rdev,
      nested,
    },
  };
}
