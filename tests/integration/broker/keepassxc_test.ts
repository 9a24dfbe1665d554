/**
 * The real consumer the issue names: `pi-secret-run -- keepassxc-cli show`
 * through the installed broker, with a database whose master password only
 * the scripted "human" knows. The root phase allowlists
 * `/usr/bin/keepassxc-cli show -q -a Password <db> <entry>`, so this is the
 * normal (no warning) modal. keepassxc-cli comes from Debian's `keepassxc`
 * package, which .ci/run installs; its absence is a failure, not a skip.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSession } from "../../../extension/channel/session_server.ts";
import { ScriptedPrompter } from "../../helpers/scripted_prompter.ts";
import { runToolCommand } from "../../helpers/tool_command.ts";
import { startHeartbeat } from "../../helpers/heartbeat.ts";

const CLI = "/usr/bin/keepassxc-cli";

/** Runs keepassxc-cli with `input` on stdin (test setup only). */
function cli(args: string[], input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(CLI, args, { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`keepassxc-cli ${args[0]} failed: ${stderr}`));
      else resolve(stdout);
    });
    child.stdin!.end(input);
  });
}

describe("a real consumer: keepassxc-cli", () => {
  it("pi-secret-run opens the database with the typed master password; it appears nowhere else", async () => {
    await readFile(CLI).catch(() => {
      throw new Error(`${CLI} is missing: apt-get install keepassxc (.ci/run does)`);
    });
    const dir = await mkdtemp(join(tmpdir(), "pi-keepassxc-"));
    const master = `Master-Canary-${crypto.randomUUID()}`;
    const entryPassword = `Entry-${crypto.randomUUID()}`;
    const db = join(dir, "db.kdbx");
    const prompter = new ScriptedPrompter([{ submit: master }]);
    const started = await startSession({ prompter });
    assert.ok(started.ok);
    const session = started.session;
    const beat = startHeartbeat();
    try {
      await cli(["db-create", "--set-password", db], `${master}\n${master}\n`);
      await cli(
        ["add", "-q", "-p", db, "entry"],
        `${master}\n${entryPassword}\n${entryPassword}\n`,
      );
      const r = await runToolCommand(
        session,
        `pi-secret-run --label "KeePassXC master password" -- keepassxc-cli show -q -a Password ${db} entry`,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${entryPassword}\n`);
      assert.ok(!r.stdout.includes(master) && !r.stderr.includes(master));
      assert.equal(prompter.secrets.length, 1);
      const seen = prompter.secrets[0].request;
      assert.deepEqual(seen.argv, [CLI, "show", "-q", "-a", "Password", db, "entry"]);
      assert.equal(seen.label, "KeePassXC master password");
      assert.equal(seen.allowlisted, true, "the root phase allowlists this shape");
      beat.assertNoStall();
    } finally {
      beat.stop();
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
