/**
 * Reading the audit log back (ADR 0004). The chains catch accidents, not a rewrite (whoever can
 * write the file can recompute every hash): the syslog copy is the evidence.
 * @module
 */
import { constants } from "node:fs";
import { lstat, open } from "node:fs/promises";
import { GENESIS_PREV, isCount, sha256Hex } from "./entry.ts";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";
import { msg } from "../../shared/i18n/tools_locale.ts";

/** Named reasons {@link verifyAuditChain} rejects a log (`broken_chain`: a `prev` or a start). */
export const AUDIT_VERIFY_ERRORS = reasons(
  "unreadable",
  "bad_json",
  "bad_record",
  "broken_chain",
  "bad_sequence",
  "partial_line",
);
/** One of the values of {@link AUDIT_VERIFY_ERRORS}. */
export type AuditVerifyError = ReasonOf<typeof AUDIT_VERIFY_ERRORS>;

/** Lines, sessions and files checked; or the first failure (`line` 1-based; 0: the file). */
export type AuditVerifyResult = Result<
  { lines: number; sessions: number; files: readonly string[] },
  AuditVerifyError,
  { file: string; line: number; detail: string }
>;

/**
 * Verifies each session's chain through `path.1` (if any) and `path`; lines without `sid` (0.1.0)
 * form one chain, which may start with a `rotated` line.
 */
export async function verifyAuditChain(path: string): Promise<AuditVerifyResult> {
  const { UNREADABLE, BAD_JSON, BAD_RECORD, BROKEN_CHAIN, BAD_SEQUENCE, PARTIAL_LINE } =
    AUDIT_VERIFY_ERRORS;
  const files = await lstat(`${path}.1`).then(() => [`${path}.1`, path], () => [path]);
  const chains = new Map<string, { seq: number; prev: string; where: string }>();
  let count = 0;
  for (const file of files) {
    const fail = (reason: AuditVerifyError, line: number, detail: string) =>
      ({ ok: false, reason, file, line, detail }) as const;
    const text = await readText(file);
    if (text === undefined) return fail(UNREADABLE, 0, msg.verifyUnreadable);
    const lines = text.split("\n");
    if (lines.pop() !== "") return fail(PARTIAL_LINE, lines.length + 1, msg.verifyNoNewline);
    for (const [i, line] of lines.entries()) {
      const n = i + 1;
      if (line === "") continue; // how a writer starts anew after a failed write
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line);
        if (rec === null || typeof rec !== "object" || Array.isArray(rec)) throw rec;
      } catch {
        return fail(BAD_JSON, n, msg.verifyNotJson);
      }
      const { sid = "", seq, prev, time, kind, event } = rec;
      if (
        typeof sid !== "string" || !isCount(seq) || typeof prev !== "string" ||
        !/^[0-9a-f]{64}$/.test(prev) || typeof time !== "string" || typeof event !== "string" ||
        (kind !== "sudo" && kind !== "secret" && kind !== "log")
      ) return fail(BAD_RECORD, n, msg.verifyBadFields);
      const chain = chains.get(sid);
      const starts = kind === "log" && event === "started" && seq === 0 && prev === GENESIS_PREV;
      if (!chain && !starts && !(sid === "" && kind === "log" && event === "rotated")) {
        return fail(BROKEN_CHAIN, n, msg.verifySessionStarts(sid));
      }
      if (chain && prev !== chain.prev) {
        const why = seq === chain.seq ? msg.verifyLineChanged : msg.verifyLinesLost;
        return fail(BROKEN_CHAIN, n, msg.verifyPrevNotHash(chain.where, why));
      }
      if (chain && seq !== chain.seq) {
        return fail(BAD_SEQUENCE, n, msg.verifyBadSeq(seq, chain.seq));
      }
      const where = file === path ? msg.verifyLine(n) : msg.verifyLineOf(n, file);
      chains.set(sid, { seq: seq + 1, prev: sha256Hex(line), where });
      count++;
    }
  }
  return { ok: true, lines: count, sessions: chains.size, files };
}

/** The last `n` lines (1 to 1000) of the log file at `path`: `audit tail`, the status panel. */
export async function readAuditTail(
  path: string,
  n: number,
): Promise<Result<{ lines: string[] }, AuditVerifyError>> {
  const lines = (await readText(path))?.split("\n").filter((l) => l !== "");
  if (!lines) return { ok: false, reason: AUDIT_VERIFY_ERRORS.UNREADABLE };
  return { ok: true, lines: lines.slice(-Math.max(1, Math.min(1000, Math.floor(n)))) };
}

/** A regular file's text (no symlink, no FIFO; bad UTF-8 shows as a changed line), or undefined. */
async function readText(path: string): Promise<string | undefined> {
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;
  const handle = await open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK).catch(() => undefined);
  try {
    const bytes = (await handle?.stat())?.isFile() ? await handle!.readFile() : undefined;
    return bytes && new TextDecoder().decode(bytes);
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => {});
  }
}
