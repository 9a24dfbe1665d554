import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { closeSync, mkdtempSync, openSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import {
  holdProcessWalker,
  releaseProcessWalker,
  WALK_FAILURES,
  type WalkedProcess,
  walkProcesses,
} from "../../../kernel/proc_walk.ts";
import { holdersIn } from "../../../extension/keyboard/terminal_holders.ts";
import { pairingFacts } from "../../../extension/pairing/pairing_snapshot.ts";

const uid = process.getuid!();
const gid = process.getgid!();
const now = () => performance.now();
const ask = (notBefore = now(), deadline = now() + 5000) =>
  walkProcesses({ uid, gid, notBefore, deadline });

describe("the one walk of /proc (a worker thread)", () => {
  before(() => holdProcessWalker());
  after(() => releaseProcessWalker());

  it("reads the user's descriptor tables: a file we hold and a pipe two children hold are in its links", async () => {
    const dir = mkdtempSync(join(tmpdir(), "walk-"));
    const file = join(dir, "held");
    const fd = openSync(file, "w");
    // sh runs `sleep | sleep`: the pipe between them is held by both.
    const shell = spawn("sh", ["-c", "sleep 30 | sleep 31"], {
      stdio: "ignore",
      detached: true,
    });
    try {
      // Until both sleeps run, the writer's stdout on the pipe (a loaded host
      // may show a child that has not yet moved the pipe onto fd 1 or 0).
      let kids: number[] = [];
      let inode = NaN;
      const pipeOn = (pid: number | undefined, fd: number) => {
        try {
          return Number(/^pipe:\[([0-9]+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]);
        } catch {
          return NaN;
        }
      };
      for (let i = 0; i < 1500 && !(kids.length === 2 && inode > 0); i++) {
        await new Promise((r) => setTimeout(r, 20));
        kids = readFileSync(`/proc/${shell.pid}/task/${shell.pid}/children`, "utf8").trim()
          .split(/\s+/).filter((s) => s !== "").map(Number);
        // …and the reader's stdin on the same pipe.
        inode = pipeOn(kids[1], 0) === pipeOn(kids[0], 1) ? pipeOn(kids[0], 1) : NaN;
      }
      assert.equal(kids.length, 2, "sh did not start both sleeps");
      const [writer, reader] = kids;
      assert.ok(inode > 0, "the writer's stdout is the pipe");
      const r = await ask();
      assert.ok(r.ok, `walk failed: ${!r.ok && r.reason}`);
      const me = r.walk.processes.find((p) => p.pid === process.pid);
      assert.ok(me?.tables, "no table of our own process");
      assert.ok(
        me.tables.some((t) =>
          t.links.some(([path, link]) => link === file && path.endsWith(`/fd/${fd}`))
        ),
      );
      const facts = pairingFacts(r.walk, { uid, gid, inodes: [inode] });
      assert.deepEqual(facts.pipeHolders.get(inode)?.sort(), [writer, reader].sort());
      // The same walk, read for the terminal check, names the holder of the file.
      const found = holdersIn(r.walk, { ttyPath: file, uid, exclude: new Set() });
      assert.deepEqual(found.holding, [process.pid]);
      const excluded = holdersIn(r.walk, { ttyPath: file, uid, exclude: new Set([process.pid]) });
      assert.deepEqual(excluded.holding, []);
    } finally {
      process.kill(-shell.pid!, "SIGKILL"); // its process group: sh and both sleeps
      closeSync(fd);
      rmSync(dir, { recursive: true });
    }
  });

  it("checks asked at once share one walk; a check that starts after it gets a new one", async () => {
    const t = now();
    const [a, b] = await Promise.all([ask(t), ask(t)]);
    assert.ok(a.ok && b.ok);
    assert.equal(a.walk, b.walk, "two walks for two checks asked at once");
    const c = await ask(t); // done, and started after t: served again
    assert.ok(c.ok);
    assert.equal(c.walk, a.walk);
    const d = await ask(now());
    assert.ok(d.ok);
    assert.notEqual(d.walk, a.walk, "a walk older than the check served it");
    assert.ok(d.walk.postedAt > a.walk.postedAt);
  });

  it("while a walk is in flight, later checks wait for one more walk, not one each", async () => {
    const first = ask(now());
    await new Promise((r) => setImmediate(r));
    // Three checks that arrive together (one moment: had the first walk just
    // ended, a walk started by the first of them must serve the other two).
    const arrived = now();
    const later = await Promise.all([ask(arrived), ask(arrived), ask(arrived)]);
    const f = await first;
    assert.ok(f.ok && later.every((r) => r.ok));
    const walks = new Set(later.map((r) => r.ok ? r.walk : undefined));
    assert.equal(walks.size, 1, "each waiting check got a walk of its own");
    assert.ok(later[0].ok && later[0].walk.postedAt > f.walk.postedAt);
  });

  it("root's own processes (root:root), kernel threads included, are never read: only their owner", async () => {
    // As another user (nobody, group nobody). A setuid-root front end keeps the user's group,
    // so its Uid: is read (the pairing's suites prove it: P2, P16); root:root ones hide nothing,
    // as /proc/<pid> shows the effective ids even of a process that is not dumpable.
    const walked = await walkProcesses({
      uid: 65534,
      gid: 65534,
      notBefore: now(),
      deadline: now() + 5000,
    });
    assert.ok(walked.ok);
    const processes: readonly WalkedProcess[] = walked.walk.processes;
    for (const pid of [1, 2]) {
      const p = processes.find((q) => q.pid === pid);
      assert.ok(p, `no pid ${pid}`);
      assert.deepEqual([p.owner.uid, p.owner.gid, p.ids, p.tables], [0, 0, undefined, undefined]);
    }
  });

  it("a deadline that passes fails the check: fail closed", async () => {
    const r = await ask(now(), now() - 1);
    assert.deepEqual(r, { ok: false, reason: WALK_FAILURES.DEADLINE });
  });

  it("a worker stopped under a walk answers it worker_failed, and the next walk starts a new one", async () => {
    assert.ok((await ask(now())).ok); // nothing in flight or queued
    holdProcessWalker();
    const pending = ask(now());
    // The worker cannot answer before this thread yields: the stop comes first.
    releaseProcessWalker();
    releaseProcessWalker();
    assert.deepEqual(await pending, { ok: false, reason: WALK_FAILURES.WORKER_FAILED });
    holdProcessWalker();
    holdProcessWalker();
    const again = await ask(now());
    assert.ok(again.ok, "no new worker after a stop");
    releaseProcessWalker();
  });
});
