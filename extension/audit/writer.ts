/**
 * The audit writer, one per pi session (ADR 0004): each line goes to syslog at once and to a
 * bounded queue of `O_APPEND` writes, one `write()` a line. A line the file misses leaves a gap.
 * @module
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { chmod, type FileHandle, lstat, mkdir, open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import process from "node:process";
import { AUDIT_FORMAT, type AuditEntry, defaultAuditPath, GENESIS_PREV } from "./entry.ts";
import { normalizeAuditEntry, serializeRecord, sha256Hex } from "./entry.ts";
import { openSyslog, SYSLOG_SEVERITY, type SyslogError, type SyslogSink } from "./syslog.ts";
import type { Result } from "../../shared/result.ts";

/** Why {@link AuditLog.open} fails: the directory or the file is unsafe, or I/O failed. */
export const AUDIT_OPEN_ERRORS = {
  DIR_UNSAFE: "audit_dir_unsafe",
  FILE_UNSAFE: "audit_file_unsafe",
  OPEN_FAILED: "audit_open_failed",
} as const;
/** One of the values of {@link AUDIT_OPEN_ERRORS}. */
export type AuditOpenError = typeof AUDIT_OPEN_ERRORS[keyof typeof AUDIT_OPEN_ERRORS];

/** Rotate past `maxBytes` (1 MiB); `queueCapacity` (1000); syslog socket (`/dev/log`, `false`). */
export interface AuditLogOptions {
  readonly maxBytes?: number;
  readonly queueCapacity?: number;
  readonly syslogPath?: string | false;
}

/**
 * Whether the file ends inside a line (a writer crashed mid-line). Another session's `write()` in
 * flight grows the file page by page, so only a cut seen three times, 20 ms apart, is real.
 */
async function endsMidLine(handle: FileHandle, size: number): Promise<boolean> {
  const last = new Uint8Array(1);
  for (let attempt = 0;; attempt++) {
    if (size === 0) return false;
    await handle.read(last, 0, 1, size - 1);
    if (last[0] === 0x0a) return false;
    if (attempt === 2) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
    size = (await handle.stat()).size;
  }
}

/** One session's audit log: {@link AuditLog.open}, `append`, `close`. */
export class AuditLog {
  /** This session's id: the `sid` of its lines. */
  readonly sid: string = randomBytes(8).toString("hex");
  readonly #handle: FileHandle;
  readonly #options: AuditLogOptions;
  readonly #syslog: SyslogSink | undefined;
  readonly #syslogState: "ok" | "off" | SyslogError = "off";
  readonly #counts = { written: 0, dropped: 0, invalid: 0, queued: 0 };
  #seq = 0;
  #prev = GENESIS_PREV;
  #newline: boolean; // the file may end mid-line: the next write starts a new one
  #tail: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(handle: FileHandle, cutEnd: boolean, options: AuditLogOptions) {
    [this.#handle, this.#newline, this.#options] = [handle, cutEnd, options];
    if (options.syslogPath !== false) {
      const sys = openSyslog(options.syslogPath);
      [this.#syslog, this.#syslogState] = sys.ok ? [sys.sink, "ok"] : [undefined, sys.reason];
    }
    const time = new Date().toISOString();
    this.#push({ time, kind: "log", event: "started", format: AUDIT_FORMAT, pid: process.pid });
  }

  /**
   * Opens the log for a new session: the directory (0700) must be ours and not writable by others,
   * the file (0600, `O_NOFOLLOW`, first renamed to `path.1` past `maxBytes`) a regular file of
   * ours. Resolves once the session's `started` line is written.
   */
  static async open(
    path: string = defaultAuditPath(),
    options: AuditLogOptions = {},
  ): Promise<Result<{ log: AuditLog }, AuditOpenError>> {
    const { DIR_UNSAFE, FILE_UNSAFE, OPEN_FAILED } = AUDIT_OPEN_ERRORS;
    const uid = process.getuid?.() ?? -1;
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const st = await lstat(dirname(path));
      if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) throw DIR_UNSAFE;
      if ((st.mode & 0o077) !== 0) await chmod(dirname(path), 0o700);
      const old = await lstat(path).catch(() => undefined);
      if (old?.isFile() && old.size > (options.maxBytes ?? 1024 * 1024)) {
        await rename(path, `${path}.1`).catch(() => {}); // else it grows on
      }
    } catch {
      return { ok: false, reason: DIR_UNSAFE };
    }
    let handle: FileHandle | undefined;
    let log: AuditLog | undefined;
    try {
      const { O_RDWR, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = constants;
      handle = await open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
      const st = await handle.stat();
      if (!st.isFile() || st.uid !== uid) throw FILE_UNSAFE;
      if ((st.mode & 0o077) !== 0) await handle.chmod(0o600);
      log = new AuditLog(handle, await endsMidLine(handle, st.size), options);
      await log.#tail;
      if (log.#counts.written === 0) throw OPEN_FAILED;
      return { ok: true, log };
    } catch (e) {
      await (log ? log.close() : handle?.close().catch(() => {}));
      const unsafe = e === FILE_UNSAFE || (e as { code?: string } | null)?.code === "ELOOP";
      return { ok: false, reason: unsafe ? FILE_UNSAFE : OPEN_FAILED };
    }
  }

  /** Records an entry's listed fields at once; never throws. False: invalid, closed or missed. */
  append(entry: AuditEntry): boolean {
    if (this.#closed) return false;
    try {
      const body = normalizeAuditEntry(entry, new Date());
      const { WARNING, INFO } = SYSLOG_SEVERITY;
      if (body) return this.#push(body, body.event === "refused" ? WARNING : INFO);
    } catch { /* not an object: invalid */ }
    this.#counts.invalid++;
    return false;
  }

  /** Stops taking entries, writes the queue, closes the file and the syslog socket. Idempotent. */
  async close(): Promise<void> {
    const first = !this.#closed;
    this.#closed = true;
    await this.#tail;
    this.#syslog?.close();
    if (first) await this.#handle.close().catch(() => {});
  }

  /** Lines written, queued and missed by the file, invalid entries; the syslog copy's state. */
  stats() {
    const { sent = 0, dropped = 0 } = this.#syslog?.stats() ?? {};
    return { ...this.#counts, syslog: this.#syslogState, syslogSent: sent, syslogDropped: dropped };
  }

  /** Chains one line, sends it to syslog, and queues it for the file (or counts it missed). */
  #push(body: object, severity: number = SYSLOG_SEVERITY.INFO): boolean {
    const line = serializeRecord(this.sid, this.#seq++, body, this.#prev);
    this.#prev = sha256Hex(line);
    this.#syslog?.send(line, severity);
    const c = this.#counts;
    if (c.queued >= (this.#options.queueCapacity ?? 1000)) return (c.dropped++, false);
    c.queued++;
    this.#tail = this.#tail.then(async () => {
      try {
        await this.#handle.appendFile(`${this.#newline ? "\n" : ""}${line}\n`);
        [c.written, this.#newline] = [c.written + 1, false];
      } catch {
        [c.dropped, this.#newline] = [c.dropped + 1, true]; // part of it may be there
      }
      c.queued--;
    });
    return true;
  }
}
