/**
 * Whether a `secret_request` comes from the real root broker of a `pi-secret-run`
 * of this session (docs/design.md §5), judged by the kernel and root-owned files,
 * not the request: uid 0, the launcher's exact argv for our socket, a setuid
 * sudo parent descending from this pi, and a root-only proof file.
 *
 * @module
 */
import { lstat } from "node:fs/promises";
import type { SecretRequest } from "../../askpass/protocol.ts";
import { brokerArgvPrefix, parseBrokerArgs } from "../../broker/broker_permissions.ts";
import { PROOF_DIR } from "../../broker/paths.ts";
import type { PeerCredentials } from "../../kernel/peer_credentials.ts";
import {
  type ProcessRef,
  readStat,
  setuidSudoParent,
  stillRunning,
  VERIFY_REFUSALS,
  type VerifyRefusal,
  walkToOwner,
} from "../../kernel/peer_verification.ts";
import { parseNulList, parseStatusIds, sameList } from "../../kernel/proc.ts";
import { readProcFile, readProcText } from "../../kernel/proc_reader.ts";
import type { Result } from "../../shared/result.ts";

/** What this session expects of a broker. */
export interface ExpectedBroker {
  readonly socketPath: string;
  /** Our uid: the sudo front end's real uid. */
  readonly uid: number;
  readonly ownerPid: number;
  /** Override for tests of the proof rule; default `/run/pi-sudo-prompt`. */
  readonly proofDir?: string;
}

/** A broker that passed every check. */
export interface VerifiedBroker {
  readonly broker: ProcessRef;
  readonly sudo: ProcessRef;
}

/** Runs every check of the broker behind one connection. */
export async function verifyBroker(
  expected: ExpectedBroker,
  creds: PeerCredentials,
  request: SecretRequest,
): Promise<Result<{ verified: VerifiedBroker }, VerifyRefusal>> {
  const refuse = (reason: VerifyRefusal) => ({ ok: false as const, reason });
  const pid = creds.pid;
  if (creds.uid !== 0) return refuse(VERIFY_REFUSALS.BROKER_NOT_ROOT);
  if (request.pid !== pid) return refuse(VERIFY_REFUSALS.CLAIMED_PID_MISMATCH);
  const stat = await readStat(pid);
  const ids = parseStatusIds(await readProcText(`/proc/${pid}/status`) ?? "");
  if (!stat || !ids) return refuse(VERIFY_REFUSALS.PEER_GONE);
  if (stat.state === "T" || stat.state === "t") return refuse(VERIFY_REFUSALS.PEER_STOPPED);
  if (!ids.uid.every((u) => u === 0)) return refuse(VERIFY_REFUSALS.BROKER_NOT_ROOT);

  const cmdline = parseNulList(await readProcFile(`/proc/${pid}/cmdline`) ?? new Uint8Array());
  const prefix = brokerArgvPrefix(expected.socketPath);
  if (!cmdline || !sameList(cmdline.slice(0, prefix.length), prefix)) {
    return refuse(VERIFY_REFUSALS.BROKER_CMDLINE_MISMATCH);
  }
  const args = parseBrokerArgs(cmdline.slice(prefix.length));
  if (
    !args || args.socketPath !== expected.socketPath || args.label !== request.label ||
    args.cwd !== request.cwd || !sameList(args.argv.slice(1), request.argv.slice(1))
  ) {
    return refuse(VERIFY_REFUSALS.BROKER_CMDLINE_MISMATCH);
  }

  const parent = await setuidSudoParent(stat.ppid, expected.uid);
  if (!parent.ok) return refuse(parent.reason);
  const sudoStat = parent.stat;
  if (!(await walkToOwner(sudoStat.ppid, expected.ownerPid)).ok) {
    return refuse(VERIFY_REFUSALS.NOT_FROM_THIS_SESSION);
  }
  if (!await proofIsValid(expected.proofDir ?? PROOF_DIR, request, pid, expected.uid)) {
    return refuse(VERIFY_REFUSALS.BROKER_PROOF_INVALID);
  }
  const broker = { pid, startTime: stat.startTime };
  const sudo = { pid: sudoStat.pid, startTime: sudoStat.startTime };
  if (!await stillRunning([broker, sudo])) return refuse(VERIFY_REFUSALS.PEER_CHANGED);
  return { ok: true, verified: { broker, sudo } };
}

/**
 * The proof: a root-owned file in a root-owned directory, neither writable by
 * others, naming this request id, broker pid and our uid. Only root can create it.
 */
async function proofIsValid(
  dir: string,
  request: SecretRequest,
  pid: number,
  uid: number,
): Promise<boolean> {
  if (!/^[0-9a-f]{32}$/.test(request.proof)) return false;
  const d = await lstat(dir).catch(() => undefined);
  if (!d?.isDirectory() || d.uid !== 0 || (d.mode & 0o022) !== 0) return false;
  const path = `${dir}/${request.proof}`;
  const f = await lstat(path).catch(() => undefined);
  if (!f?.isFile() || f.uid !== 0 || (f.mode & 0o022) !== 0 || f.size > 256) return false;
  return await readProcText(path, 256) === `id=${request.id}\npid=${pid}\nuid=${uid}\n`;
}
