/**
 * The audit log on real files and a real syslog socket: a flood of appends
 * never stalls the event loop and yields a verifiable chain; sessions (in one
 * process or several) append to one file and each session's chain verifies;
 * tampering the chain can see is reported at the right line, and what it
 * cannot see (a session's end, a rewrite) is shown as such; lines the file
 * missed show as a gap; unsafe paths are refused; nothing outside the listed
 * fields (so no typed text) reaches the file or the system log; each line
 * goes to an AF_UNIX datagram socket, which may be missing, full or
 * restarted without pi ever waiting.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  rm,
  symlink,
  truncate,
  writeFile,
} from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { NODE_BINARY } from "../../helpers/test_env.ts";
import { startHeartbeat } from "../../helpers/heartbeat.ts";
import {
  type AuditEntry,
  defaultAuditPath,
  GENESIS_PREV,
  MAX_ARGV,
} from "../../../extension/audit/entry.ts";
import {
  AUDIT_OPEN_ERRORS,
  AuditLog,
  type AuditLogOptions,
} from "../../../extension/audit/writer.ts";
import { AUDIT_VERIFY_ERRORS, verifyAuditChain } from "../../../extension/audit/verify.ts";
import { openSyslog, SYSLOG_ERRORS, SYSLOG_TAG } from "../../../extension/audit/syslog.ts";
import {
  auditEntryFromSessionEvent,
  sessionAuditSink,
} from "../../../extension/channel/audit_events.ts";
import type { SessionEvent } from "../../../extension/channel/session_server.ts";

const CLI = fileURLToPath(new URL("../../../ops/audit_cli.ts", import.meta.url));
const WRITER = pathToFileURL(
  fileURLToPath(new URL("../../../extension/audit/writer.ts", import.meta.url)),
);
const CANARY = "hunter2-typed-canary";
/** The fields an `AuditEntry` may have (ADR 0004); nothing else may reach a line. */
const AUDIT_ENTRY_FIELDS: readonly string[] =
  "time kind event requestId peerPid argv argvTruncated decision reason attempt timings".split(" ");

/**
 * A syslog daemon stand-in: binds an AF_UNIX datagram socket at argv[1] and,
 * in "read" mode, prints each datagram as hex on a line; in "hold" mode it
 * never reads, so the socket's queue fills.
 */
const RECEIVER = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("ready", flush=True)
while sys.argv[2] == "read":
    sys.stdout.write(s.recv(65536).hex() + "\\n")
    sys.stdout.flush()
sys.stdin.read()
`;

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "pi-sudo-audit-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function entry(i: number, extra: Partial<AuditEntry> = {}): AuditEntry {
  return {
    time: new Date(1_700_000_000_000 + i).toISOString(),
    requestId: i.toString(16).padStart(32, "0"),
    kind: "sudo",
    event: "queued",
    argv: ["sudo", "apt-get", "install", `pkg-${i}`],
    attempt: 1,
    ...extra,
  };
}

async function openLog(path: string, options: AuditLogOptions = {}): Promise<AuditLog> {
  const opened = await AuditLog.open(path, { syslogPath: false, ...options });
  assert.ok(opened.ok, `open failed: ${!opened.ok && opened.reason}`);
  return opened.log;
}

/** A closed session at `path` with its start line and `n` entries (n + 1 lines). */
async function makeLog(path: string, n: number, options: AuditLogOptions = {}): Promise<void> {
  const log = await openLog(path, options);
  for (let i = 1; i <= n; i++) assert.ok(log.append(entry(i)));
  await log.close();
}

async function readLines(path: string): Promise<string[]> {
  const text = await readFile(path, "utf8");
  assert.ok(text.endsWith("\n"));
  return text.slice(0, -1).split("\n");
}

async function writeLines(path: string, lines: string[]): Promise<void> {
  await writeFile(path, lines.map((l) => l + "\n").join(""));
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** A SessionEvent built from a plain object (the type is allowed to grow fields). */
function ev(fields: Record<string, unknown>): SessionEvent {
  return fields as unknown as SessionEvent;
}

function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(NODE_BINARY, [CLI, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Waits until `done()` holds (polling), or fails after `ms`. */
async function until(done: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A python3 syslog stand-in bound at `path`; `messages` are the datagrams received. */
async function startReceiver(
  path: string,
  mode: "read" | "hold",
): Promise<{ child: ChildProcess; messages: string[]; stop: () => Promise<void> }> {
  const child = spawn("python3", ["-c", RECEIVER, path, mode], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const messages: string[] = [];
  let ready = false;
  let buffered = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    for (const line of lines) {
      if (line === "ready") ready = true;
      else messages.push(Buffer.from(line, "hex").toString("utf8"));
    }
  });
  await until(() => ready, "the python3 receiver");
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  return { child, messages, stop };
}

describe("audit log", () => {
  it("takes a concurrent flood without stalling the loop; the chain verifies", async () => {
    await withDir(async (dir) => {
      const path = join(dir, "state", "pi-sudo-prompt", "audit.jsonl");
      const log = await openLog(path, { queueCapacity: 10_000, maxBytes: 64 * 1024 * 1024 });
      const beat = startHeartbeat();
      const producers = 8;
      const each = 500;
      await Promise.all(
        Array.from({ length: producers }, async (_, p) => {
          for (let i = 0; i < each; i++) {
            assert.ok(log.append(entry(p * each + i, { event: i % 2 ? "prompted" : "queued" })));
            if (i % 25 === 0) await new Promise((r) => setImmediate(r));
          }
        }),
      );
      await log.close();
      // No append waits on the disk: the heartbeat (the machine's share
      // taken out) sees none hold the loop.
      beat.assertNoStall();
      const stats = log.stats();
      assert.deepEqual(
        { written: stats.written, dropped: stats.dropped, invalid: stats.invalid },
        { written: producers * each + 1, dropped: 0, invalid: 0 },
      );
      assert.equal(stats.syslog, "off");
      assert.equal(log.append(entry(0)), false, "a closed log takes nothing");

      const r = await verifyAuditChain(path);
      assert.deepEqual(r, { ok: true, lines: producers * each + 1, sessions: 1, files: [path] });
      const lines = await readLines(path);
      const first = JSON.parse(lines[0]);
      assert.equal(first.event, "started");
      assert.equal(first.sid, log.sid);
      assert.equal(first.seq, 0);
      assert.equal(first.prev, GENESIS_PREV);
      assert.equal(first.pid, process.pid);
      for (let i = 1; i < lines.length; i++) {
        const rec = JSON.parse(lines[i]);
        assert.equal(rec.seq, i);
        assert.equal(rec.prev, sha256Hex(lines[i - 1]));
      }
      assert.equal((await lstat(path)).mode & 0o777, 0o600);
      assert.equal((await lstat(dirname(path))).mode & 0o777, 0o700);
    });
  });

  describe("several sessions on one file", () => {
    it("two sessions in one process interleave their lines; each chain verifies", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        const a = await openLog(path);
        const b = await openLog(path);
        assert.notEqual(a.sid, b.sid);
        for (let i = 0; i < 100; i++) {
          (i % 3 ? a : b).append(entry(i));
          if (i % 7 === 0) await new Promise((r) => setTimeout(r, 1));
        }
        await Promise.all([a.close(), b.close()]);
        const r = await verifyAuditChain(path);
        assert.deepEqual(r, { ok: true, lines: 102, sessions: 2, files: [path] });
        const sids = (await readLines(path)).map((l) => JSON.parse(l).sid);
        assert.ok(sids.findIndex((s) => s === b.sid) < sids.findLastIndex((s) => s === a.sid));
      });
    });

    it("writer processes appending at once keep whole lines and verifiable chains", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "state", "audit.jsonl");
        const perProcess = 300;
        const code = `
          const { AuditLog } = await import(${JSON.stringify(WRITER.href)});
          const [path, tag, n] = process.argv.slice(-3);
          const r = await AuditLog.open(path, { syslogPath: false });
          if (!r.ok) { console.error(r.reason); process.exit(3); }
          for (let i = 0; i < Number(n); i++) {
            r.log.append({ time: new Date().toISOString(), kind: "sudo", event: "queued",
              requestId: tag + "-" + i, argv: ["sudo", "x".repeat(i * 7 % 3000)] });
            if (i % 10 === 0) await new Promise((res) => setTimeout(res, 1));
          }
          await r.log.close();
          const s = r.log.stats();
          if (s.dropped || s.invalid) { console.error(JSON.stringify(s)); process.exit(4); }
        `;
        await mkdir(dirname(path), { mode: 0o700 });
        const run = (tag: string) =>
          new Promise<void>((resolve, reject) => {
            execFile(
              NODE_BINARY,
              ["--input-type=module", "-e", code, "--", path, tag, String(perProcess)],
              { timeout: 60_000 },
              (err, _out, stderr) => err ? reject(new Error(`${tag}: ${stderr}`)) : resolve(),
            );
          });
        await Promise.all(["p1", "p2", "p3"].map(run));
        const r = await verifyAuditChain(path);
        assert.deepEqual(r, { ok: true, lines: 3 * perProcess + 3, sessions: 3, files: [path] });
        const ids = new Set((await readLines(path)).map((l) => JSON.parse(l).requestId));
        assert.equal(ids.size, 3 * perProcess + 1, "every entry of every process (and undefined)");
      });
    });

    it("a 0.1.0 log (no sid, maybe starting with a rotated line) verifies, then new sessions", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        const legacy: string[] = [];
        let prev = "1".repeat(64); // a `rotated` first line chains onto a file that is gone
        for (let seq = 7; seq < 12; seq++) {
          const body = seq === 7
            ? { seq, time: "2026-01-01T00:00:00.000Z", kind: "log", event: "rotated" }
            : { seq, ...entry(seq) };
          legacy.push(JSON.stringify({ ...body, prev }));
          prev = sha256Hex(legacy.at(-1)!);
        }
        await writeLines(path, legacy);
        assert.deepEqual(await verifyAuditChain(path), {
          ok: true,
          lines: 5,
          sessions: 1,
          files: [path],
        });
        await makeLog(path, 2);
        const r = await verifyAuditChain(path);
        assert.ok(r.ok && r.sessions === 2 && r.lines === 8, JSON.stringify(r));
        await writeLines(path, [...legacy.slice(0, 2), ...legacy.slice(3)]);
        const broken = await verifyAuditChain(path);
        assert.ok(!broken.ok && broken.reason === AUDIT_VERIFY_ERRORS.BROKEN_CHAIN);
        assert.equal(broken.line, 3);
      });
    });
  });

  describe("tampering", () => {
    /** One session of 21 lines (start + 20 entries), edited, then verified. */
    async function tampered(edit: (lines: string[]) => string[]) {
      let result: Awaited<ReturnType<typeof verifyAuditChain>> | undefined;
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 20);
        const lines = await readLines(path);
        assert.equal(lines.length, 21);
        await writeLines(path, edit([...lines]));
        result = await verifyAuditChain(path);
      });
      return result!;
    }

    const cases: {
      name: string;
      edit: (lines: string[]) => string[];
      reason: string;
      line: number;
      detail?: RegExp;
    }[] = [
      {
        name: "a field edited in a middle line: the next line's prev no longer matches",
        edit: (l) => {
          l[9] = l[9].replace('"pkg-9"', '"pkg-X"'); // line 10
          return l;
        },
        reason: AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
        line: 11,
        detail: /line 10: that line was changed/,
      },
      {
        name: "a middle line deleted",
        edit: (l) => [...l.slice(0, 9), ...l.slice(10)],
        reason: AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
        line: 10,
        detail: /lines lost or moved/,
      },
      {
        name: "the first line deleted",
        edit: (l) => l.slice(1),
        reason: AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
        line: 1,
        detail: /starts here: lines before it were removed/,
      },
      {
        name: "the first five lines deleted",
        edit: (l) => l.slice(5),
        reason: AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
        line: 1,
      },
      {
        name: "two middle lines swapped",
        edit: (l) => {
          [l[9], l[10]] = [l[10], l[9]];
          return l;
        },
        reason: AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
        line: 10,
      },
      {
        name: "a line duplicated",
        edit: (l) => [...l.slice(0, 10), l[9], ...l.slice(10)],
        reason: AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
        line: 11,
      },
      {
        name: "a forged line appended with a wrong prev",
        edit: (l) => [...l, l[20].replace(/"seq":20/, '"seq":21').replace(/"pkg-20"/, '"evil"')],
        reason: AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
        line: 22,
      },
      {
        name: "only the seq of a middle line edited",
        edit: (l) => {
          l[9] = l[9].replace('"seq":9,', '"seq":90,');
          return l;
        },
        reason: AUDIT_VERIFY_ERRORS.BAD_SEQUENCE,
        line: 10,
      },
      {
        name: "a line that is not JSON inserted",
        edit: (l) => [...l.slice(0, 5), "not json", ...l.slice(5)],
        reason: AUDIT_VERIFY_ERRORS.BAD_JSON,
        line: 6,
      },
      {
        name: "a line without its fields inserted",
        edit: (l) => [...l.slice(0, 5), '{"seq":1}', ...l.slice(5)],
        reason: AUDIT_VERIFY_ERRORS.BAD_RECORD,
        line: 6,
      },
      {
        name: "a start line of the same session forged in the middle",
        edit: (l) => {
          const { sid } = JSON.parse(l[0]);
          l[9] = JSON.stringify({
            sid,
            seq: 0,
            time: "x",
            kind: "log",
            event: "started",
            prev: GENESIS_PREV,
          });
          return l;
        },
        reason: AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
        line: 10,
      },
    ];
    for (const c of cases) {
      it(`detects ${c.name} (${c.reason} at line ${c.line})`, async () => {
        const r = await tampered(c.edit);
        assert.equal(r.ok, false, `not detected: ${JSON.stringify(r)}`);
        if (r.ok) return;
        assert.equal(r.reason, c.reason, r.detail);
        assert.equal(r.line, c.line, r.detail);
        if (c.detail) assert.match(r.detail, c.detail);
      });
    }

    it("LIMIT: a session's last lines removed, or a rewrite, are not detected (syslog is the copy)", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 20);
        const lines = await readLines(path);
        await writeLines(path, lines.slice(0, 18));
        assert.ok((await verifyAuditChain(path)).ok, "a session's cut end is invisible");
        const forged = JSON.stringify({
          sid: JSON.parse(lines[0]).sid,
          seq: 18,
          time: "2026-01-01T00:00:00.000Z",
          kind: "sudo",
          event: "answered",
          prev: sha256Hex(lines[17]),
        });
        await writeLines(path, [...lines.slice(0, 18), forged]);
        const r = await verifyAuditChain(path);
        assert.ok(r.ok, "documented: whoever can write the file can extend the chain");
        await writeFile(path, "");
        assert.deepEqual(await verifyAuditChain(path), {
          ok: true,
          lines: 0,
          sessions: 0,
          files: [path],
        });
      });
    });

    it("a last line cut short is partial_line; the next session starts on a new line", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 20);
        await truncate(path, (await lstat(path)).size - 10);
        const cut = await verifyAuditChain(path);
        assert.ok(!cut.ok);
        assert.equal(cut.reason, AUDIT_VERIFY_ERRORS.PARTIAL_LINE);
        assert.equal(cut.line, 21);
        await makeLog(path, 2); // a crash, then pi again
        const lines = await readLines(path);
        assert.equal(JSON.parse(lines[21]).event, "started", "the new session's line is whole");
        const damaged = await verifyAuditChain(path);
        assert.ok(!damaged.ok);
        assert.equal(damaged.reason, AUDIT_VERIFY_ERRORS.BAD_JSON);
        assert.equal(damaged.line, 21);
        await writeLines(path, [...lines.slice(0, 20), ...lines.slice(21)]);
        const r = await verifyAuditChain(path);
        assert.ok(r.ok && r.sessions === 2, "without the cut line, both sessions verify");
      });
    });
  });

  it("starting past maxBytes moves the file to .1; verify reads both, oldest first", async () => {
    await withDir(async (dir) => {
      const path = join(dir, "audit.jsonl");
      await makeLog(path, 30, { maxBytes: 2048 });
      const firstSession = await readFile(path, "utf8");
      await makeLog(path, 3, { maxBytes: 2048 });
      assert.equal(await readFile(`${path}.1`, "utf8"), firstSession);
      const r = await verifyAuditChain(path);
      assert.deepEqual(r, { ok: true, lines: 35, sessions: 2, files: [`${path}.1`, path] });
      assert.equal((await lstat(`${path}.1`)).mode & 0o777, 0o600);
      await makeLog(path, 1, { maxBytes: 100 }); // the second session's file replaces .1
      assert.ok((await readFile(`${path}.1`, "utf8")).length < firstSession.length);
      await writeFile(`${path}.1`, firstSession.replace('"pkg-5"', '"pkg-X"'));
      const broken = await verifyAuditChain(path);
      assert.ok(!broken.ok);
      assert.equal(broken.file, `${path}.1`);
      assert.equal(broken.line, 7);
    });
  });

  it("bounds the queue: lines past capacity miss the file, are counted, and show as a gap", async () => {
    await withDir(async (dir) => {
      const path = join(dir, "audit.jsonl");
      const log = await openLog(path, { queueCapacity: 10 });
      const results = Array.from({ length: 100 }, (_, i) => log.append(entry(i + 1)));
      assert.equal(results.filter(Boolean).length, 10);
      assert.equal(log.stats().dropped, 90);
      await until(() => log.stats().queued === 0, "the queue to drain");
      for (let i = 101; i <= 105; i++) assert.ok(log.append(entry(i)));
      await log.close();
      assert.deepEqual(
        { written: log.stats().written, dropped: log.stats().dropped },
        { written: 16, dropped: 90 },
      );
      const r = await verifyAuditChain(path);
      assert.ok(!r.ok);
      assert.equal(r.reason, AUDIT_VERIFY_ERRORS.BROKEN_CHAIN);
      assert.equal(r.line, 12);
      assert.match(r.detail, /lines lost or moved/);
    });
  });

  it("a failed write is counted, the next line starts on a new line, verify shows it", async () => {
    await withDir(async (dir) => {
      const path = join(dir, "audit.jsonl");
      const log = await openLog(path);
      for (let i = 1; i <= 3; i++) log.append(entry(i));
      await until(() => log.stats().queued === 0, "the first lines");
      const probe = await open(path, "r");
      const proto = Object.getPrototypeOf(probe) as {
        appendFile: (this: unknown, data: string) => Promise<void>;
      };
      await probe.close();
      const real = proto.appendFile;
      let failures = 1;
      proto.appendFile = function (this: unknown, data: string) {
        if (failures-- <= 0) return real.call(this, data);
        // Half the line reaches the disk, then the disk is full.
        return real.call(this, data.slice(0, data.length / 2)).then(() => {
          throw Object.assign(new Error("no space"), { code: "ENOSPC" });
        });
      };
      try {
        log.append(entry(4));
        await until(() => log.stats().queued === 0, "the failed write");
      } finally {
        proto.appendFile = real;
      }
      assert.equal(log.stats().dropped, 1);
      for (let i = 5; i <= 6; i++) log.append(entry(i));
      await log.close();
      const text = await readFile(path, "utf8");
      const lines = text.slice(0, -1).split("\n");
      assert.equal(lines.length, 7);
      assert.equal(JSON.parse(lines[5]).requestId.slice(-1), "5", "line 6 is whole");
      const torn = await verifyAuditChain(path);
      assert.ok(!torn.ok && torn.reason === AUDIT_VERIFY_ERRORS.BAD_JSON && torn.line === 5);
      await writeLines(path, [...lines.slice(0, 4), ...lines.slice(5)]);
      const gap = await verifyAuditChain(path);
      assert.ok(!gap.ok && gap.reason === AUDIT_VERIFY_ERRORS.BROKEN_CHAIN && gap.line === 5);
    });
  });

  describe("unsafe paths", () => {
    it("refuses a symlinked log file and leaves its target alone", async () => {
      await withDir(async (dir) => {
        const target = join(dir, "target");
        await writeFile(target, "precious\n");
        await mkdir(join(dir, "state"), { mode: 0o700 });
        const path = join(dir, "state", "audit.jsonl");
        await symlink(target, path);
        const r = await AuditLog.open(path, { syslogPath: false });
        assert.deepEqual(r, { ok: false, reason: AUDIT_OPEN_ERRORS.FILE_UNSAFE });
        assert.equal(await readFile(target, "utf8"), "precious\n");
        const v = await verifyAuditChain(path);
        assert.ok(!v.ok);
        assert.equal(v.reason, AUDIT_VERIFY_ERRORS.UNREADABLE);
      });
    });

    it("refuses a symlinked directory, a directory others can write, or not ours", async () => {
      await withDir(async (dir) => {
        const real = join(dir, "real");
        await mkdir(real, { mode: 0o700 });
        await symlink(real, join(dir, "linked"));
        const viaLink = await AuditLog.open(join(dir, "linked", "audit.jsonl"));
        assert.deepEqual(viaLink, { ok: false, reason: AUDIT_OPEN_ERRORS.DIR_UNSAFE });

        const shared = join(dir, "shared");
        await mkdir(shared);
        await chmod(shared, 0o777);
        const inShared = await AuditLog.open(join(shared, "audit.jsonl"));
        assert.deepEqual(inShared, { ok: false, reason: AUDIT_OPEN_ERRORS.DIR_UNSAFE });

        if (process.getuid!() === 0) {
          const foreign = join(dir, "foreign");
          await mkdir(foreign, { mode: 0o700 });
          await chown(foreign, 65534, 65534);
          const inForeign = await AuditLog.open(join(foreign, "audit.jsonl"));
          assert.deepEqual(inForeign, { ok: false, reason: AUDIT_OPEN_ERRORS.DIR_UNSAFE });
        }
        assert.deepEqual(await readdir(real), [], "nothing created through the symlink");
      });
    });

    it("tightens an existing readable directory and file to 0700 / 0600", async () => {
      await withDir(async (dir) => {
        const state = join(dir, "state");
        await mkdir(state);
        await chmod(state, 0o755);
        const path = join(state, "audit.jsonl");
        await writeFile(path, "");
        await chmod(path, 0o644);
        await makeLog(path, 0);
        assert.equal((await lstat(state)).mode & 0o777, 0o700);
        assert.equal((await lstat(path)).mode & 0o777, 0o600);
      });
    });

    it("uses XDG_STATE_HOME when absolute, else ~/.local/state", () => {
      assert.equal(
        defaultAuditPath({ XDG_STATE_HOME: "/x/state", HOME: "/home/u" }),
        "/x/state/pi-sudo-prompt/audit.jsonl",
      );
      assert.equal(
        defaultAuditPath({ XDG_STATE_HOME: "relative", HOME: "/home/u" }),
        "/home/u/.local/state/pi-sudo-prompt/audit.jsonl",
      );
      assert.equal(
        defaultAuditPath({ HOME: "/home/u" }),
        "/home/u/.local/state/pi-sudo-prompt/audit.jsonl",
      );
    });
  });

  describe("what reaches the file", () => {
    const now = new Date("2026-01-02T03:04:05.000Z");
    const id = "a".repeat(32);
    const events = [
      ev({ kind: "refused", reason: "wrong_executable", peerPid: 42, requestId: id }),
      ev({ kind: "refused", reason: "too_many_connections" }),
      ev({
        kind: "queued",
        requestId: id,
        request: "sudo",
        argv: ["sudo", "id"],
        attempt: 1,
        verifyMs: 3.25,
      }),
      ev({ kind: "prompted", requestId: id, attempt: 1 }),
      ev({ kind: "answered", requestId: id, attempt: 1 }),
      ev({ kind: "denied", requestId: id, reason: "cancelled" }),
      ev({ kind: "something_new", requestId: id }),
    ];

    it("maps every server event to listed fields only, even when the event carries more", () => {
      for (const e of events) {
        const hostile = ev({
          ...(e as unknown as Record<string, unknown>),
          password: CANARY,
          typed: CANARY,
          promptText: CANARY,
          toolCommand: ["sh", "-c", CANARY],
          reply: CANARY, // the user's reply to the agent (issue 36) stays out of the log
        });
        const mapped = auditEntryFromSessionEvent(hostile, "sudo", now);
        for (const key of Object.keys(mapped)) {
          assert.ok(AUDIT_ENTRY_FIELDS.includes(key), `unexpected field ${key} from ${e.kind}`);
        }
        assert.ok(!JSON.stringify(mapped).includes(CANARY), `typed text leaked from ${e.kind}`);
      }
      assert.deepEqual(auditEntryFromSessionEvent(events[0], "sudo", now), {
        time: now.toISOString(),
        kind: "sudo",
        event: "refused",
        requestId: id,
        peerPid: 42,
        decision: "refused",
        reason: "wrong_executable",
      });
      assert.deepEqual(auditEntryFromSessionEvent(events[2], "secret", now), {
        time: now.toISOString(),
        kind: "sudo",
        event: "queued",
        requestId: id,
        argv: ["sudo", "id"],
        attempt: 1,
        timings: { verifyMs: 3.25 },
      });
      assert.deepEqual(
        auditEntryFromSessionEvent(
          ev({ kind: "queued", requestId: id, sudoArgv: [CANARY], attempt: 2 }),
          "sudo",
          now,
        ).argv,
        [],
      );
      const oddReason = auditEntryFromSessionEvent(
        ev({ kind: "denied", requestId: id, reason: { toString: () => CANARY } }),
        "sudo",
        now,
      );
      assert.equal(oddReason.reason, undefined, "a non-string value is left out, not stringified");
      assert.deepEqual(auditEntryFromSessionEvent(events[6], "sudo", now), {
        time: now.toISOString(),
        kind: "sudo",
        event: "unknown",
      });
    });

    it("append keeps only listed fields: nothing typed reaches the file", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        const log = await openLog(path);
        const sink = sessionAuditSink(log, "sudo", { now: () => now });
        for (const e of events) {
          sink(ev({ ...(e as unknown as Record<string, unknown>), password: CANARY }));
        }
        const sneaky = { ...entry(1), password: CANARY, typed: [CANARY] } as AuditEntry;
        assert.ok(log.append(sneaky));
        const wrongTypes = {
          ...entry(2),
          requestId: { toString: () => CANARY },
          reason: [CANARY],
          argv: ["ok", { secret: CANARY }],
          timings: { [CANARY.repeat(3)]: 1, ok: 2, bad: CANARY },
        } as unknown as AuditEntry;
        assert.ok(log.append(wrongTypes));
        assert.equal(log.append({ ...entry(3), kind: "log" } as unknown as AuditEntry), false);
        assert.equal(log.append(null as unknown as AuditEntry), false);
        await log.close();
        const text = await readFile(path, "utf8");
        assert.ok(!text.includes(CANARY), "typed text reached the audit log");
        assert.ok((await verifyAuditChain(path)).ok);
        const records = (await readLines(path)).map((l) => JSON.parse(l));
        const allowed = new Set([...AUDIT_ENTRY_FIELDS, "sid", "seq", "prev"]);
        for (const rec of records.filter((r) => r.kind !== "log")) {
          for (const key of Object.keys(rec)) assert.ok(allowed.has(key), `field ${key}`);
        }
        const wrong = records.at(-1);
        assert.equal(wrong.requestId, undefined);
        assert.equal(wrong.reason, undefined);
        assert.deepEqual(wrong.argv, ["ok", ""]);
        assert.deepEqual(wrong.argvTruncated, { elements: 2, chars: 2 });
        assert.deepEqual(wrong.timings, { ok: 2 });
        assert.equal(log.stats().invalid, 2);
      });
    });

    it("caps a hostile argv so one line stays small; escapes controls as plain text", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        const log = await openLog(path);
        const many = Array.from({ length: 10_000 }, () => "x".repeat(1000));
        const controls = ["sudo", "\u0001".repeat(5000)];
        const huge = ["sudo", "y".repeat(1_000_000)];
        const fits = ["sudo", "z".repeat(3000)];
        const bidi = ["sudo", "\u202e\u009b31m"];
        // Capping is cheap: the appends hold the loop less than the heartbeat's limit.
        const beat = startHeartbeat();
        await new Promise((r) => setTimeout(r, 20));
        for (const argv of [many, controls, huge, fits, bidi]) {
          assert.ok(log.append(entry(1, { argv })));
        }
        await new Promise((r) => setTimeout(r, 20));
        beat.assertNoStall();
        await log.close();
        const raw = await readFile(path, "utf8");
        // deno-lint-ignore no-control-regex -- looking for control characters is the point
        assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/.test(raw), "plain bytes");
        const lines = await readLines(path);
        const recs = lines.slice(1).map((l) => JSON.parse(l));
        for (const line of lines) {
          assert.ok(new TextEncoder().encode(line).length < 6 * 1024, `line of ${line.length}`);
        }
        for (const rec of recs) {
          assert.ok(new TextEncoder().encode(JSON.stringify(rec.argv)).length <= MAX_ARGV.BYTES);
        }
        assert.deepEqual(recs[0].argvTruncated, { elements: 10_000, chars: 10_000_000 });
        assert.equal(recs[0].argv[0], "x".repeat(1000));
        assert.deepEqual(recs[1].argvTruncated, { elements: 2, chars: 5004 });
        assert.ok(recs[1].argv[1].length > 600 && recs[1].argv[1].length < 700);
        assert.deepEqual(recs[2].argvTruncated, { elements: 2, chars: 1_000_004 });
        assert.deepEqual(recs[3].argv, fits, "an argv that fits is kept whole");
        assert.equal(recs[3].argvTruncated, undefined);
        assert.deepEqual(recs[4].argv, bidi, "escaped text, the same JSON value");
        assert.ok((await verifyAuditChain(path)).ok);
      });
    });

    it("the sink adds timings and carries a request's kind to its later events", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        const log = await openLog(path);
        let t = 1000;
        const sink = sessionAuditSink(log, "sudo", { now: () => now, clock: () => t });
        const sid = "b".repeat(32);
        sink(ev({ kind: "queued", requestId: sid, request: "secret", argv: ["x"], attempt: 1 }));
        t += 5;
        sink(ev({ kind: "prompted", requestId: sid, attempt: 1 }));
        t += 15;
        sink(ev({ kind: "answered", requestId: sid, attempt: 1 }));
        sink(ev({ kind: "denied", requestId: sid, reason: "timeout" })); // no longer tracked
        await log.close();
        const recs = (await readLines(path)).slice(1).map((l) => JSON.parse(l));
        assert.deepEqual(recs.map((r) => r.kind), ["secret", "secret", "secret", "sudo"]);
        assert.equal(recs[0].timings, undefined);
        assert.deepEqual(recs[1].timings, { queuedMs: 5 });
        assert.deepEqual(recs[2].timings, { totalMs: 20, promptMs: 15 });
        assert.equal(recs[2].decision, "answered");
        assert.equal(recs[3].timings, undefined);
      });
    });
  });

  describe("the system log copy", () => {
    it("sends every line to an AF_UNIX datagram socket, tagged, authpriv, no secret", async () => {
      await withDir(async (dir) => {
        const sock = join(dir, "dev-log");
        const receiver = await startReceiver(sock, "read");
        try {
          const path = join(dir, "audit.jsonl");
          const log = await openLog(path, { syslogPath: sock });
          assert.equal(log.stats().syslog, "ok");
          const sink = sessionAuditSink(log, "sudo");
          const id = "c".repeat(32);
          sink(ev({ kind: "refused", reason: "wrong_executable", peerPid: 7, password: CANARY }));
          sink(ev({ kind: "queued", requestId: id, request: "sudo", argv: ["sudo", "id"] }));
          sink(ev({ kind: "prompted", requestId: id, attempt: 1, typed: CANARY }));
          sink(ev({ kind: "answered", requestId: id, attempt: 1, password: CANARY }));
          await log.close();
          const lines = await readLines(path);
          await until(() => receiver.messages.length >= lines.length, "the datagrams");
          assert.deepEqual(log.stats().syslogSent, lines.length);
          const re = new RegExp(
            `^<(\\d+)>[A-Z][a-z]{2} [ 0-9]\\d \\d\\d:\\d\\d:\\d\\d ${SYSLOG_TAG}\\[(\\d+)\\]: (.*)$`,
          );
          const got = receiver.messages.map((m) => {
            const match = re.exec(m);
            assert.ok(match, `not an RFC 3164 line: ${m}`);
            assert.equal(Number(match[2]), process.pid);
            return { pri: Number(match[1]), line: match[3] };
          });
          assert.deepEqual(got.map((g) => g.line), lines, "the same bytes as the file");
          // authpriv (10) × 8 + severity: refusals warning (4), the rest info (6).
          assert.deepEqual(got.map((g) => g.pri), [86, 84, 86, 86, 86]);
          assert.ok(!receiver.messages.join("\n").includes(CANARY), "typed text reached syslog");
        } finally {
          await receiver.stop();
        }
      });
    });

    it("a receiver that does not read: lines are dropped and counted, pi never waits", async () => {
      await withDir(async (dir) => {
        const sock = join(dir, "dev-log");
        const receiver = await startReceiver(sock, "hold");
        try {
          const path = join(dir, "audit.jsonl");
          const log = await openLog(path, { syslogPath: sock, queueCapacity: 10_000 });
          const beat = startHeartbeat();
          for (let i = 1; i <= 3000; i++) {
            assert.ok(log.append(entry(i, { argv: ["sudo", "x".repeat(2000)] })));
            // The loop turns every 10 lines: a burst of 100 lines in one turn measured the
            // test's own loop (100 × a 2 kB line), not pi, which appends one line per event.
            if (i % 10 === 0) await new Promise((r) => setImmediate(r));
          }
          await log.close();
          // A send that waited on the full socket would hold the loop: the heartbeat sees it.
          beat.assertNoStall();
          const s = log.stats();
          assert.ok(s.syslogDropped > 0, "the full socket dropped lines");
          assert.equal(s.syslogSent + s.syslogDropped, 3001);
          assert.equal(s.written, 3001, "the file has them all");
        } finally {
          await receiver.stop();
        }
      });
    });

    it("the daemon restarting: the next line reconnects to the new socket", async () => {
      await withDir(async (dir) => {
        const sock = join(dir, "dev-log");
        const first = await startReceiver(sock, "read");
        const opened = openSyslog(sock);
        assert.ok(opened.ok);
        try {
          assert.ok(opened.sink.send("one"));
          await until(() => first.messages.length === 1, "the first datagram");
          await first.stop();
          await rm(sock);
          const second = await startReceiver(sock, "read");
          try {
            assert.ok(opened.sink.send("two"), "reconnected");
            await until(() => second.messages.length === 1, "the second datagram");
            assert.match(second.messages[0], / pi-sudo-prompt\[\d+\]: two$/);
          } finally {
            await second.stop();
          }
          opened.sink.close();
          assert.equal(opened.sink.send("three"), false, "closed: dropped");
          assert.deepEqual(opened.sink.stats(), { sent: 2, dropped: 1 });
        } finally {
          opened.sink.close();
          await first.stop();
        }
      });
    });

    it("a missing or wrong socket is a reason, never an exception, and never waits", async () => {
      await withDir(async (dir) => {
        const t0 = performance.now();
        const missing = join(dir, "nope");
        assert.deepEqual(openSyslog(missing), { ok: false, reason: SYSLOG_ERRORS.NO_SOCKET });
        await writeFile(join(dir, "file"), "");
        assert.deepEqual(openSyslog(join(dir, "file")), {
          ok: false,
          reason: SYSLOG_ERRORS.NOT_A_SOCKET,
        });
        const stream = createServer();
        await new Promise<void>((r) => stream.listen(join(dir, "stream"), r));
        try {
          const wrongType = openSyslog(join(dir, "stream"));
          assert.ok(!wrongType.ok && wrongType.reason === SYSLOG_ERRORS.CONNECT_FAILED);
        } finally {
          stream.close();
        }
        const status = openSyslog(); // /dev/log: whatever this machine has
        if (status.ok) status.sink.close();
        assert.ok(status.ok || Object.values(SYSLOG_ERRORS).includes(status.reason));
        assert.ok(performance.now() - t0 < 1000);

        const path = join(dir, "audit.jsonl");
        const log = await openLog(path, { syslogPath: missing });
        assert.equal(log.stats().syslog, SYSLOG_ERRORS.NO_SOCKET);
        assert.ok(log.append(entry(1)));
        await log.close();
        assert.equal((await readLines(path)).length, 2, "the file still gets every line");
      });
    });
  });

  describe("pi-sudo-prompt audit", () => {
    it("verify: ok exits 0; a broken chain exits 1 with one line and no stack trace", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 10);
        const ok = await runCli(["verify", path]);
        assert.equal(ok.code, 0, ok.stderr);
        assert.match(ok.stdout, /^audit: ok: 11 lines from 1 session\(s\) in 1 file\(s\); /);

        const lines = await readLines(path);
        await writeLines(path, [...lines.slice(0, 4), ...lines.slice(5)]);
        const bad = await runCli(["verify", path]);
        assert.equal(bad.code, 1);
        assert.equal(bad.stdout, "");
        assert.equal(bad.stderr.trim().split("\n").length, 1);
        assert.match(bad.stderr, /^audit: broken_chain at .*audit\.jsonl line 5: /);

        // Nothing there yet is not an error (tests/unit/ops/messages_test.ts has the text).
        const none = await runCli(["verify", join(dir, "nope.jsonl")]);
        assert.equal(none.code, 0, none.stderr);
        assert.match(none.stdout, /^audit: no audit log yet \(looked for /);
        await symlink(join(dir, "nope.jsonl"), join(dir, "dangling.jsonl"));
        const unreadable = await runCli(["verify", join(dir, "dangling.jsonl")]);
        assert.equal(unreadable.code, 1);
        assert.match(unreadable.stderr, /^audit: unreadable at /);
        assert.doesNotMatch(unreadable.stderr, /\n\s+at /);

        for (const args of [["frobnicate"], ["verify", "a", "b"], ["tail", "0"], ["--x"]]) {
          const usage = await runCli(args);
          assert.equal(usage.code, 2, args.join(" "));
          assert.match(usage.stderr, /^audit: usage: /);
        }
      });
    });

    it("tail prints the last lines with control characters escaped", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        const log = await openLog(path);
        for (let i = 1; i <= 5; i++) log.append(entry(i, { argv: ["sudo", `x\u009b31m${i}`] }));
        await log.close();
        // A 0.1.0 line carried raw C1 controls: tail escapes them too.
        await writeFile(path, '{"argv":["\u009b2J"]}\n', { flag: "a" });
        const r = await runCli(["tail", "3", path]);
        assert.equal(r.code, 0, r.stderr);
        const out = r.stdout.trim().split("\n");
        assert.equal(out.length, 3);
        // deno-lint-ignore no-control-regex -- looking for control characters is the point
        assert.ok(!/[\u0000-\u001f\u007f-\u009f]/.test(r.stdout.replaceAll("\n", "")));
        assert.deepEqual(JSON.parse(out[1]).argv, ["sudo", "x\u009b31m5"]);
        assert.deepEqual(JSON.parse(out[2]).argv, ["\u009b2J"]);
      });
    });
  });
});
