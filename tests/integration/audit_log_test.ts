/**
 * The audit log on real files: a flood of appends never stalls the event
 * loop and yields a verifiable chain; every kind of tampering the chain can
 * see is reported at the right line (and the ones it cannot see are shown
 * as such); rotation keeps the chain verifiable across files; the queue bound
 * drops and records; unsafe paths are refused; and nothing outside the listed
 * fields (so no typed text) can reach the file.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { webcrypto } from "node:crypto";
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
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { NODE_BINARY } from "../helpers/test_env.ts";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  AUDIT_ENTRY_FIELDS,
  AUDIT_OPEN_ERRORS,
  AUDIT_VERIFY_ERRORS,
  type AuditEntry,
  auditEntryFromSessionEvent,
  AuditLog,
  type AuditLogOptions,
  defaultAuditPath,
  GENESIS_PREV,
  HEAD_SUFFIX,
  MAX_ARGV_BYTES,
  sessionAuditSink,
  verifyAuditChain,
} from "../../extension/audit_log.ts";
import type { SessionEvent } from "../../extension/session_server.ts";
import { startHeartbeat } from "../helpers/heartbeat.ts";

const CLI = fileURLToPath(new URL("../../extension/audit_cli.ts", import.meta.url));
const MODULE = pathToFileURL(
  fileURLToPath(new URL("../../extension/audit_log.ts", import.meta.url)),
);
const CANARY = "hunter2-typed-canary";

async function scratch(): Promise<string> {
  return await mkdtemp(join(tmpdir(), "pi-sudo-audit-"));
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await scratch();
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
  const opened = await AuditLog.open(path, options);
  assert.ok(opened.ok, `open failed: ${!opened.ok && opened.reason}`);
  return opened.log;
}

/** A closed log at `path` with a start line and `n` entries (n + 1 lines). */
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

async function sha256Hex(text: string): Promise<string> {
  const d = new Uint8Array(
    await webcrypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
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

describe("audit log", () => {
  it("takes a concurrent flood without stalling the loop; the chain verifies", async () => {
    await withDir(async (dir) => {
      const path = join(dir, "state", "pi-sudo-prompt", "audit.jsonl");
      const log = await openLog(path, { queueCapacity: 10_000, maxBytes: 64 * 1024 * 1024 });
      const beat = startHeartbeat();
      const producers = 8;
      const each = 500;
      let slowest = 0;
      await Promise.all(
        Array.from({ length: producers }, async (_, p) => {
          for (let i = 0; i < each; i++) {
            const t0 = performance.now();
            assert.ok(log.append(entry(p * each + i, { event: i % 2 ? "prompted" : "queued" })));
            slowest = Math.max(slowest, performance.now() - t0);
            if (i % 25 === 0) await new Promise((r) => setImmediate(r));
          }
        }),
      );
      await log.flush();
      beat.assertNoStall();
      assert.ok(slowest < 20, `one append took ${slowest.toFixed(1)} ms`);
      assert.deepEqual(log.stats(), {
        queued: 0,
        written: producers * each + 1,
        dropped: 0,
        invalid: 0,
        writeErrors: 0,
        rotations: 0,
      });
      await log.close();
      assert.equal(log.append(entry(0)), false, "a closed log takes nothing");

      const r = await verifyAuditChain(path);
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(r.lines, producers * each + 1);
      assert.equal(r.firstSeq, 0);
      assert.equal(r.lastSeq, producers * each);
      assert.equal(r.headChecked, true);
      assert.deepEqual(r.notices, []);
      const lines = await readLines(path);
      const first = JSON.parse(lines[0]);
      assert.equal(first.event, "started");
      assert.equal(first.prev, GENESIS_PREV);
      for (let i = 1; i < lines.length; i++) {
        assert.equal(JSON.parse(lines[i]).prev, await sha256Hex(lines[i - 1]));
      }
      assert.equal((await lstat(path)).mode & 0o777, 0o600);
      assert.equal((await lstat(dirname(path))).mode & 0o777, 0o700);
      const head = JSON.parse(await readFile(path + HEAD_SUFFIX, "utf8"));
      assert.deepEqual(head, { seq: producers * each, hash: await sha256Hex(lines.at(-1)!) });
    });
  });

  describe("tampering", () => {
    /** 21 lines: the start line and 20 entries. Returns a copy without the head file. */
    async function tampered(edit: (lines: string[]) => string[] | Promise<string[]>) {
      const dir = await scratch();
      const path = join(dir, "audit.jsonl");
      await makeLog(path, 20);
      const lines = await readLines(path);
      assert.equal(lines.length, 21);
      await rm(path + HEAD_SUFFIX);
      await writeLines(path, await edit([...lines]));
      const result = await verifyAuditChain(path);
      await rm(dir, { recursive: true, force: true });
      return result;
    }

    const cases: {
      name: string;
      edit: (lines: string[]) => string[] | Promise<string[]>;
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
        detail: /line 10 was changed/,
      },
      {
        name: "a middle line deleted",
        edit: (l) => [...l.slice(0, 9), ...l.slice(10)], // line 10 gone
        reason: AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
        line: 10,
        detail: /1 line\(s\) missing/,
      },
      {
        name: "the first line deleted",
        edit: (l) => l.slice(1),
        reason: AUDIT_VERIFY_ERRORS.BROKEN_CHAIN,
        line: 1,
        detail: /not the start of a log/,
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
          [l[9], l[10]] = [l[10], l[9]]; // lines 10 and 11
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
        detail: /reordered or duplicated/,
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
        name: "a start line forged in the middle",
        edit: (l) => {
          l[9] = JSON.stringify({
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

    it("detects a last line cut short (partial_line)", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 20);
        const size = (await lstat(path)).size;
        await truncate(path, size - 10);
        const r = await verifyAuditChain(path, { head: false });
        assert.ok(!r.ok);
        assert.equal(r.reason, AUDIT_VERIFY_ERRORS.PARTIAL_LINE);
        assert.equal(r.line, 21);
      });
    });

    it("LIMIT: truncating the end is invisible to the chain; the head file catches it", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 20);
        const lines = await readLines(path);
        await writeLines(path, lines.slice(0, 18));
        const chainOnly = await verifyAuditChain(path, { head: false });
        assert.ok(chainOnly.ok, "a hash chain alone cannot see a cut end");
        assert.equal(chainOnly.lines, 18);
        const r = await verifyAuditChain(path);
        assert.ok(!r.ok);
        assert.equal(r.reason, AUDIT_VERIFY_ERRORS.TRUNCATED_END);
        assert.equal(r.line, 19);
      });
    });

    it("LIMIT: an edited last line is invisible to the chain; the head file catches it", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 20);
        const lines = await readLines(path);
        lines[20] = lines[20].replace('"pkg-20"', '"pkg-X"');
        await writeLines(path, lines);
        assert.ok((await verifyAuditChain(path, { head: false })).ok);
        const r = await verifyAuditChain(path);
        assert.ok(!r.ok);
        assert.equal(r.reason, AUDIT_VERIFY_ERRORS.HEAD_MISMATCH);
        assert.equal(r.line, 21);
      });
    });

    it("LIMIT: a forged line with a correctly recomputed prev is not detected (no secret)", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 20);
        const lines = await readLines(path);
        const forged = JSON.stringify({
          seq: 21,
          time: "2026-01-01T00:00:00.000Z",
          kind: "sudo",
          event: "answered",
          prev: await sha256Hex(lines[20]),
        });
        await writeLines(path, [...lines, forged]);
        const r = await verifyAuditChain(path);
        assert.ok(r.ok, "documented: whoever can write the file can extend the chain");
        assert.equal(r.lines, 22);
      });
    });

    it("a malformed head file is reported, not ignored", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 3);
        await writeFile(path + HEAD_SUFFIX, "{}\n");
        const r = await verifyAuditChain(path);
        assert.ok(!r.ok);
        assert.equal(r.reason, AUDIT_VERIFY_ERRORS.HEAD_MISMATCH);
      });
    });
  });

  describe("reopening", () => {
    it("continues the chain of an existing log instead of starting a new one", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 5);
        await makeLog(path, 5);
        const r = await verifyAuditChain(path);
        assert.ok(r.ok, JSON.stringify(r));
        assert.equal(r.lines, 11);
        const events = (await readLines(path)).map((l) => JSON.parse(l).event);
        assert.equal(events.filter((e) => e === "started").length, 1);
      });
    });

    it("records in the chain that the end was cut while it was closed", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 10);
        const lines = await readLines(path);
        await writeLines(path, lines.slice(0, 6)); // seq 6..10 removed
        await makeLog(path, 1);
        const r = await verifyAuditChain(path);
        assert.ok(r.ok, JSON.stringify(r));
        assert.equal(r.notices.length, 1);
        assert.equal(r.notices[0].event, "head_mismatch");
        assert.equal(r.notices[0].line, 7);
        const note = JSON.parse((await readLines(path))[6]);
        assert.equal(note.kind, "log");
        assert.equal(note.headSeq, 10);
        assert.equal(note.headHash, await sha256Hex(lines[10]));
      });
    });

    it("sets a file that ends in a partial line aside and starts a new one", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 5);
        const lines = await readLines(path);
        await writeFile(path, lines.map((l) => l + "\n").join("") + lines[5].slice(0, 30));
        await makeLog(path, 2);
        const current = await readLines(path);
        const first = JSON.parse(current[0]);
        assert.equal(first.event, "rotated");
        assert.equal(first.damagedTail, true);
        assert.equal(first.prev, await sha256Hex(lines[5]));
        // The current file verifies on its own; the damaged one stays damaged.
        assert.ok((await verifyAuditChain(path, { rotated: false, head: false })).ok);
        const all = await verifyAuditChain(path);
        assert.ok(!all.ok);
        assert.equal(all.reason, AUDIT_VERIFY_ERRORS.PARTIAL_LINE);
        assert.equal(all.file, `${path}.1`);
        assert.equal(all.line, 7);
      });
    });
  });

  it("rotates at the size limit, keeps 3 old files, and the chain verifies across them", async () => {
    await withDir(async (dir) => {
      const path = join(dir, "audit.jsonl");
      const log = await openLog(path, { maxBytes: 2048, keep: 3 });
      for (let i = 1; i <= 200; i++) assert.ok(log.append(entry(i)));
      await log.close();
      assert.ok(log.stats().rotations > 10);
      for (const f of [path, `${path}.1`, `${path}.2`, `${path}.3`]) {
        const st = await lstat(f);
        assert.ok(st.size <= 2048, `${f} is ${st.size} bytes`);
        assert.equal(st.mode & 0o777, 0o600);
      }
      await assert.rejects(lstat(`${path}.4`));

      const r = await verifyAuditChain(path);
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(r.files.length, 4);
      assert.equal(r.lastSeq, 200 + log.stats().rotations);
      assert.equal(r.lines, r.lastSeq! - r.firstSeq! + 1);
      assert.equal(r.headChecked, true);
      const current = await readLines(path);
      const older = await readLines(`${path}.1`);
      const first = JSON.parse(current[0]);
      assert.equal(first.event, "rotated");
      assert.equal(first.prev, await sha256Hex(older.at(-1)!));
      assert.ok((await verifyAuditChain(path, { rotated: false })).ok);

      // The link between files is checked: edit the last line of .1.
      await writeLines(`${path}.1`, [...older.slice(0, -1), older.at(-1)!.replace("pkg", "pkX")]);
      const broken = await verifyAuditChain(path);
      assert.ok(!broken.ok);
      assert.equal(broken.reason, AUDIT_VERIFY_ERRORS.BROKEN_CHAIN);
      assert.equal(broken.file, path);
      assert.equal(broken.line, 1);
      // …and the start of an old file: delete the first line of .2.
      await writeLines(`${path}.1`, older);
      const older2 = await readLines(`${path}.2`);
      await writeLines(`${path}.2`, older2.slice(1));
      const broken2 = await verifyAuditChain(path);
      assert.ok(!broken2.ok);
      assert.equal(broken2.file, `${path}.2`);
      assert.equal(broken2.line, 1);
    });
  });

  it("continues from the rotated file when the current one is emptied", async () => {
    await withDir(async (dir) => {
      const path = join(dir, "audit.jsonl");
      await makeLog(path, 100, { maxBytes: 2048 });
      await writeFile(path, ""); // as after a crash between rename and the first write
      await makeLog(path, 3, { maxBytes: 2048 });
      const r = await verifyAuditChain(path);
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(JSON.parse((await readLines(path))[0]).event, "rotated");
      // The head still pointed into the emptied file: that is on record.
      assert.equal(r.notices.map((n) => n.event).join(), "head_mismatch");
    });
  });

  it("bounds the queue: drops past capacity, counts them and writes one dropped line", async () => {
    await withDir(async (dir) => {
      const path = join(dir, "audit.jsonl");
      const log = await openLog(path, { queueCapacity: 10 });
      const accepted = Array.from({ length: 100 }, (_, i) => log.append(entry(i)));
      assert.equal(accepted.filter(Boolean).length, 10);
      assert.equal(log.stats().queued, 10);
      assert.equal(log.stats().dropped, 90);
      await log.flush();
      // Room again once written; a second overflow gets its own line, in place.
      const again = Array.from({ length: 15 }, (_, i) => log.append(entry(200 + i)));
      assert.equal(again.filter(Boolean).length, 10);
      await log.close();
      const lines = (await readLines(path)).map((l) => JSON.parse(l));
      assert.equal(lines.length, 1 + 10 + 1 + 10 + 1);
      assert.equal(lines[11].event, "dropped");
      assert.equal(lines[11].dropped, 90);
      assert.equal(lines[11].kind, "log");
      assert.equal(lines[22].dropped, 5);
      const r = await verifyAuditChain(path);
      assert.ok(r.ok);
      assert.deepEqual(r.notices.map((n) => n.line), [12, 23]);
      assert.equal(log.stats().dropped, 95);
    });
  });

  describe("several writers and write errors", () => {
    it("two logs on one file in one process keep one chain", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        const a = await openLog(path, { maxBytes: 4096 });
        const b = await openLog(path, { maxBytes: 4096 });
        for (let i = 0; i < 100; i++) {
          (i % 3 ? a : b).append(entry(i));
          if (i % 7 === 0) await (i % 2 ? a : b).flush();
        }
        await Promise.all([a.close(), b.close()]);
        const r = await verifyAuditChain(path, { head: true });
        assert.ok(r.ok, JSON.stringify(r));
      });
    });

    it("writer processes sharing the log (with rotations) keep one verifiable chain", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "state", "audit.jsonl");
        const perProcess = 300;
        const code = `
          const { AuditLog } = await import(${JSON.stringify(MODULE.href)});
          const [path, tag, n] = process.argv.slice(-3);
          const r = await AuditLog.open(path, { maxBytes: 8192, keep: 100 });
          if (!r.ok) { console.error(r.reason); process.exit(3); }
          for (let i = 0; i < Number(n); i++) {
            r.log.append({ time: new Date().toISOString(), kind: "sudo", event: "queued",
              requestId: tag + "-" + i, argv: ["sudo", "true"] });
            if (i % 10 === 0) await new Promise((res) => setTimeout(res, 1));
          }
          await r.log.close();
          const s = r.log.stats();
          if (s.dropped || s.writeErrors) { console.error(JSON.stringify(s)); process.exit(4); }
        `;
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
        assert.ok(r.ok, JSON.stringify(r));
        assert.ok(r.files.length > 3, "rotated while shared");
        const ids = new Set<string>();
        for (const f of r.files) {
          for (const line of await readLines(f)) {
            const rec = JSON.parse(line);
            if (rec.kind === "sudo") ids.add(rec.requestId);
          }
        }
        assert.equal(ids.size, 3 * perProcess, "every entry of every process is there");
        await assert.rejects(lstat(path + ".lock"), "the lock is released");
      });
    });

    it("a failed write is cut off the file, counted, and the chain goes on", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        const log = await openLog(path);
        for (let i = 1; i <= 3; i++) log.append(entry(i));
        await log.flush();
        const probe = await open(path, "r");
        const proto = Object.getPrototypeOf(probe) as {
          appendFile: (this: unknown, data: string) => Promise<void>;
        };
        await probe.close();
        const real = proto.appendFile;
        let failures = 1;
        proto.appendFile = function (this: unknown, data: string) {
          if (failures-- <= 0) return real.call(this, data);
          // Half the batch reaches the disk, then the disk is full.
          return real.call(this, data.slice(0, data.length / 2)).then(() => {
            throw Object.assign(new Error("no space"), { code: "ENOSPC" });
          });
        };
        try {
          for (let i = 4; i <= 6; i++) log.append(entry(i));
          await log.flush();
        } finally {
          proto.appendFile = real;
        }
        assert.equal(log.stats().writeErrors, 1);
        assert.equal(log.stats().dropped, 3);
        for (let i = 7; i <= 8; i++) log.append(entry(i));
        await log.close();
        const r = await verifyAuditChain(path);
        assert.ok(r.ok, JSON.stringify(r));
        const recs = (await readLines(path)).map((l) => JSON.parse(l));
        assert.deepEqual(
          recs.map((x) => x.event === "dropped" ? `dropped:${x.dropped}` : x.requestId?.slice(-1)),
          [undefined, "1", "2", "3", "dropped:3", "7", "8"],
        );
      });
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
        const r = await AuditLog.open(path);
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
        const log = await openLog(path);
        await log.close();
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
      // A queued event without a usable argv records an empty one, nothing else.
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
      assert.ok(!JSON.stringify(oddReason).includes(CANARY));
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
        // Listed fields of the wrong type are dropped, not stringified.
        const wrongTypes = {
          ...entry(2),
          requestId: { toString: () => CANARY },
          reason: [CANARY],
          argv: ["ok", { secret: CANARY }],
          timings: { [CANARY.repeat(3)]: 1, ok: 2, bad: CANARY },
        } as unknown as AuditEntry;
        assert.ok(log.append(wrongTypes));
        assert.equal(log.append({ ...entry(3), kind: "log" } as unknown as AuditEntry), false);
        await log.close();
        const text = await readFile(path, "utf8");
        assert.ok(!text.includes(CANARY), "typed text reached the audit log");
        assert.ok((await verifyAuditChain(path)).ok);
        const records = (await readLines(path)).map((l) => JSON.parse(l));
        const allowed = new Set([...AUDIT_ENTRY_FIELDS, "seq", "prev"]);
        for (const rec of records.filter((r) => r.kind !== "log")) {
          for (const key of Object.keys(rec)) assert.ok(allowed.has(key), `field ${key}`);
        }
        const wrong = records.at(-1);
        assert.equal(wrong.requestId, undefined);
        assert.equal(wrong.reason, undefined);
        assert.deepEqual(wrong.argv, ["ok", ""]);
        assert.deepEqual(wrong.argvTruncated, { elements: 2, chars: 2 });
        assert.deepEqual(wrong.timings, { ok: 2 });
        assert.equal(log.stats().invalid, 1);
      });
    });

    it("caps a hostile argv so one line stays small", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        const log = await openLog(path);
        const many = Array.from({ length: 10_000 }, () => "x".repeat(1000));
        const controls = ["sudo", "\u0001".repeat(5000)];
        const huge = ["sudo", "y".repeat(1_000_000)];
        const fits = ["sudo", "z".repeat(3000)];
        const t0 = performance.now();
        for (const argv of [many, controls, huge, fits]) {
          assert.ok(log.append(entry(1, { argv })));
        }
        assert.ok(performance.now() - t0 < 50, "capping must be cheap");
        await log.close();
        const lines = await readLines(path);
        const recs = lines.slice(1).map((l) => JSON.parse(l));
        for (const line of lines) {
          assert.ok(new TextEncoder().encode(line).length < 8 * 1024, `line of ${line.length}`);
        }
        for (const rec of recs) {
          assert.ok(new TextEncoder().encode(JSON.stringify(rec.argv)).length <= MAX_ARGV_BYTES);
        }
        assert.deepEqual(recs[0].argvTruncated, { elements: 10_000, chars: 10_000_000 });
        assert.equal(recs[0].argv[0], "x".repeat(1000));
        assert.deepEqual(recs[1].argvTruncated, { elements: 2, chars: 5004 });
        assert.ok(recs[1].argv[1].length > 600 && recs[1].argv[1].length < 700);
        assert.deepEqual(recs[2].argvTruncated, { elements: 2, chars: 1_000_004 });
        assert.deepEqual(recs[3].argv, fits, "an argv that fits is kept whole");
        assert.equal(recs[3].argvTruncated, undefined);
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

  describe("deno task audit", () => {
    it("verify: ok exits 0; a broken chain exits 1 with one line and no stack trace", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        await makeLog(path, 10);
        const ok = await runCli(["verify", path]);
        assert.equal(ok.code, 0, ok.stderr);
        assert.match(ok.stdout, /^audit: ok: 11 lines \(seq 0\.\.10\) in 1 file\(s\); end matches/);

        const lines = await readLines(path);
        await writeLines(path, [...lines.slice(0, 4), ...lines.slice(5)]);
        const bad = await runCli(["verify", path]);
        assert.equal(bad.code, 1);
        assert.equal(bad.stdout, "");
        assert.equal(bad.stderr.trim().split("\n").length, 1);
        assert.match(bad.stderr, /^audit: broken_chain at .*audit\.jsonl line 5: /);

        // Nothing there yet is not an error (tests/unit/messages_test.ts has the text).
        const none = await runCli(["verify", join(dir, "nope.jsonl")]);
        assert.equal(none.code, 0, none.stderr);
        assert.match(none.stdout, /^audit: no audit log yet \(looked for /);
        await symlink(join(dir, "nope.jsonl"), join(dir, "dangling.jsonl"));
        const unreadable = await runCli(["verify", join(dir, "dangling.jsonl")]);
        assert.equal(unreadable.code, 1);
        assert.match(unreadable.stderr, /^audit: unreadable at /);
        assert.doesNotMatch(unreadable.stderr, /\n\s+at /);

        const usage = await runCli(["frobnicate"]);
        assert.equal(usage.code, 2);
        assert.match(usage.stderr, /^audit: usage: /);
      });
    });

    it("tail prints the last lines with control characters escaped", async () => {
      await withDir(async (dir) => {
        const path = join(dir, "audit.jsonl");
        const log = await openLog(path);
        for (let i = 1; i <= 5; i++) log.append(entry(i, { argv: ["sudo", `x\u009b31m${i}`] }));
        await log.close();
        const r = await runCli(["tail", "3", path]);
        assert.equal(r.code, 0, r.stderr);
        const out = r.stdout.trim().split("\n");
        assert.equal(out.length, 3);
        // deno-lint-ignore no-control-regex -- looking for control characters is the point
        assert.ok(!/[\u0000-\u001f\u007f-\u009f]/.test(r.stdout.replaceAll("\n", "")));
        assert.deepEqual(JSON.parse(out[2]).argv, ["sudo", "x\u009b31m5"]);
      });
    });
  });
});
