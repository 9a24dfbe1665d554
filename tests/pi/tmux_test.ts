/**
 * Self-test of tests/helpers/tmux.ts: typing, capture, clear errors on
 * timeout and on early exit, exit status, cleanup.
 *
 * Run: node_modules/.bin/node --test tests/pi/tmux_test.ts
 *
 * @module
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { TmuxSession } from "../helpers/tmux.ts";

test("tmux: size, literal text, named keys, exit status, cleanup", async () => {
  const t = await TmuxSession.start({
    argv: ["sh", "-c", 'stty -echo; echo ready; read line; echo "got:$line"; exit 7'],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    cols: 100,
    rows: 30,
  });
  try {
    const { stdout } = await t.tmux(
      "display-message",
      "-p",
      "-t",
      t.target,
      "#{pane_width}x#{pane_height}",
    );
    assert.equal(stdout.trim(), "100x30");
    await t.waitFor(/^ready$/m, 5_000);
    await t.sendText("a b;$X'\"");
    await t.sendKeys("BSpace", "Enter");
    await t.waitFor(/^got:a b;\$X'$/m, 5_000);
    await t.waitUntil(() => false, "exit", { timeoutMs: 5_000, failOnExit: true }).then(
      () => assert.fail("waitUntil resolved"),
      (e: Error) => assert.match(e.message, /program exited \(status 7\)[\s\S]*got:a b/),
    );
    assert.equal(await t.exitStatus(), 7);
  } finally {
    await t.kill();
  }
  assert.equal(existsSync(t.dir), false, "tmp dir removed");
});

test("tmux: waitFor timeout error shows the last screen", async () => {
  const t = await TmuxSession.start({ argv: ["sh", "-c", "echo hello-screen; exec sleep 60"] });
  try {
    assert.equal(await t.exitStatus(), undefined);
    const started = Date.now();
    await assert.rejects(
      t.waitFor("never-shown", 400),
      (e: Error) =>
        /timed out after 400 ms waiting for "never-shown"/.test(e.message) &&
        e.message.includes("hello-screen"),
    );
    assert.ok(Date.now() - started < 2_000);
  } finally {
    await t.kill();
  }
  // kill() took the whole pane process group down, including `sleep`.
  assert.throws(() => process.kill(-t.pid, 0));
});
