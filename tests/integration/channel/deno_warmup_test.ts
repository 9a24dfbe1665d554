/**
 * The session's Deno cache warm-up (`extension/channel/deno_warmup.ts`): it runs each
 * entry point once and reports how it ended, kills a run at its deadline,
 * stops when cancelled, and a real session's warm-up fills the cache that
 * its helper then uses. Run as the throwaway user with the real deno.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { warmDenoCache, WARMUP_FAILURES } from "../../../extension/channel/deno_warmup.ts";
import { startSession } from "../../../extension/channel/session_server.ts";
import { ScriptedPrompter } from "../../helpers/scripted_prompter.ts";
import { startHeartbeat } from "../../helpers/heartbeat.ts";
import { waitFor } from "../../helpers/processes.ts";

async function withScratch(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "pi-sudo-warmup-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function program(path: string, body: string): Promise<string> {
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o700);
  return path;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("deno cache warm-up", () => {
  it("runs each entry point once, in order, with only DENO_DIR and NO_COLOR", async () => {
    await withScratch(async (dir) => {
      const log = join(dir, "log");
      const a = await program(join(dir, "a"), `env >> ${log}; echo a-"$#" >> ${log}; exit 1`);
      const b = await program(join(dir, "b"), `echo b-"$1" >> ${log}; exit 125`);
      const r = await warmDenoCache([
        { argv: [a], expectedCode: 1 },
        { argv: [b, "x"], expectedCode: 125 },
      ], join(dir, "cache")).done;
      assert.equal(r.ok, true);
      const lines = (await readFile(log, "utf8")).trim().split("\n");
      const shellOwn = /^(PWD|SHLVL|_)=/; // set by sh itself
      const env = lines.filter((l) => l.includes("=") && !shellOwn.test(l)).sort();
      assert.deepEqual(env, [`DENO_DIR=${join(dir, "cache")}`, "NO_COLOR=1"]);
      assert.deepEqual(lines.filter((l) => !l.includes("=")), ["a-0", "b-x"]);
    });
  });

  it("an unexpected exit or a missing program is reported, never thrown", async () => {
    await withScratch(async (dir) => {
      const zero = await program(join(dir, "zero"), "exit 0");
      const r1 = await warmDenoCache([{ argv: [zero], expectedCode: 1 }], dir).done;
      assert.deepEqual(r1, { ok: false, reason: WARMUP_FAILURES.UNEXPECTED_EXIT });
      const r2 = await warmDenoCache([{ argv: [join(dir, "none")], expectedCode: 1 }], dir).done;
      assert.deepEqual(r2, { ok: false, reason: WARMUP_FAILURES.SPAWN_FAILED });
    });
  });

  it("a run past its deadline is killed; cancel kills the run in flight and skips the rest", async () => {
    const beat = startHeartbeat();
    await withScratch(async (dir) => {
      const pidFile = join(dir, "pid");
      const hang = await program(join(dir, "hang"), `echo $$ > ${pidFile}; exec sleep 60`);
      const r = await warmDenoCache([{ argv: [hang], expectedCode: 1 }], dir, 300).done;
      assert.deepEqual(r, { ok: false, reason: WARMUP_FAILURES.TIMED_OUT });
      const first = Number(await readFile(pidFile, "utf8"));
      await waitFor("the hung run to die", () => !alive(first) || undefined, 5_000);

      await rm(pidFile);
      const never = join(dir, "never");
      const w = warmDenoCache([
        { argv: [hang], expectedCode: 1 },
        { argv: [await program(never, `touch ${never}.ran`)], expectedCode: 0 },
      ], dir);
      const pid = await waitFor("the run to start", async () => {
        const text = await readFile(pidFile, "utf8").catch(() => "");
        return text.trim() ? Number(text) : undefined;
      }, 5_000);
      w.cancel();
      assert.deepEqual(await w.done, { ok: false, reason: WARMUP_FAILURES.CANCELLED });
      await waitFor("the cancelled run to die", () => !alive(pid) || undefined, 5_000);
      await assert.rejects(readFile(`${never}.ran`), "the second run never started");
    });
    beat.assertNoStall();
  });

  it("a real session warms its own cache at start without delaying it", async () => {
    await withScratch(async (base) => {
      const started = await startSession(
        { prompter: new ScriptedPrompter([]) },
        { runtimeBase: base, hardened: false },
      );
      assert.ok(started.ok);
      const s = started.session;
      try {
        // startSession returned before the warm-up ended: its result is still a promise.
        const r = await s.warmup;
        assert.equal(r.ok, true, JSON.stringify(r));
        const entries = await readdir(s.denoDir);
        assert.ok(entries.includes("gen"), `transpiled modules in ${entries.join(",")}`);
        assert.ok(
          entries.some((e) => e.startsWith("v8_code_cache")),
          `V8's code cache in ${entries.join(",")}`,
        );
      } finally {
        await s.close();
      }
      // Closed while its warm-up still runs: the run is killed and the directory removed.
      const again = await startSession(
        { prompter: new ScriptedPrompter([]) },
        { runtimeBase: base, hardened: false },
      );
      assert.ok(again.ok);
      await again.session.close();
      assert.equal((await again.session.warmup).ok, false);
      assert.deepEqual(await readdir(base), []);
    });
  });
});
