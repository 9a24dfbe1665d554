/**
 * The lock keeper's command and its check (ADR 0009 §1): tmux's
 * `lock-command` is written from the same lists pi checks the keeper
 * against, quoted so that no path can break out of it; a process that is
 * not a keeper in a tmux client's lock is refused with a named reason.
 * Runs under Node and Deno.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { describe, it } from "node:test";
import {
  keeperArgv,
  keeperEnvironment,
  keeperLockCommand,
} from "../../../extension/keyboard/lock_keeper_permissions.ts";
import { checkKeeper, KEEPER_REFUSALS } from "../../../extension/keyboard/keeper_check.ts";
import { tmuxPlace } from "../../../extension/keyboard/tmux_lock.ts";

const PLACE = {
  deno: "/opt/deno/deno",
  keeper: "/opt/pkg/extension/keyboard/lock_keeper.ts",
  denoDir: "/tmp/pi-sudo-prompt-deno-x",
  libc: "/lib/x86_64-linux-gnu/libc.so.6",
  socket: "/tmp/pi-sudo-prompt-lock-y/k",
  pi: 4242,
  piStopped: "pi-sudo-prompt: o pi foi parado enquanto pedia uma senha. Não digite a senha aqui.",
};

describe("the keeper's lock-command", () => {
  it("execs env -i with exactly the checked environment and argv, each quoted, output to /dev/null", () => {
    const command = keeperLockCommand(PLACE, "/usr/bin/env")!;
    const quoted = ["/usr/bin/env", "-i", ...keeperEnvironment(PLACE), ...keeperArgv(PLACE)]
      .map((a) => `'${a}'`).join(" ");
    assert.equal(command, `exec ${quoted} >/dev/null 2>&1`);
    assert.deepEqual(keeperArgv(PLACE).slice(-4), [
      PLACE.socket,
      PLACE.libc,
      "4242",
      PLACE.piStopped,
    ]);
    assert.ok(keeperArgv(PLACE).includes(`--allow-net=unix:${PLACE.socket}`));
  });
  it("refuses a text with a single quote (it could not be quoted)", () => {
    assert.equal(keeperLockCommand({ ...PLACE, piStopped: "pi's" }, "/usr/bin/env"), undefined);
  });
  it("refuses a path it cannot quote safely (a quote, a comma, a space)", () => {
    for (const bad of ["/tmp/a'b", "/tmp/a,b", "/tmp/a b", "relative"]) {
      assert.equal(keeperLockCommand({ ...PLACE, socket: bad }, "/usr/bin/env"), undefined, bad);
    }
  });
});

describe("pi's tmux", () => {
  it("from TMUX and TMUX_PANE; nothing outside tmux or with a bent value", () => {
    assert.deepEqual(tmuxPlace({ TMUX: "/tmp/tmux-1/default,12,0", TMUX_PANE: "%3" }), {
      socket: "/tmp/tmux-1/default",
      pane: "%3",
    });
    assert.equal(tmuxPlace({}), undefined);
    assert.equal(tmuxPlace({ TMUX: "/tmp/tmux-1/default,12,0" }), undefined);
    assert.equal(tmuxPlace({ TMUX: "relative,1,0", TMUX_PANE: "%1" }), undefined);
    assert.equal(tmuxPlace({ TMUX: "/s,1,0", TMUX_PANE: "%1; kill-server" }), undefined);
  });
});

describe("the keeper's check", () => {
  const expected = {
    uid: process.getuid?.() ?? 0,
    exe: "/opt/deno/deno",
    argv: keeperArgv(PLACE),
    environment: keeperEnvironment(PLACE),
  };
  it("another program (here: sleep) is not our keeper", async () => {
    const child = spawn("sleep", ["5"], { stdio: "ignore" });
    try {
      await new Promise((r) => setTimeout(r, 100));
      const r = await checkKeeper(child.pid!, expected);
      assert.deepEqual(r, { ok: false, reason: KEEPER_REFUSALS.KEEPER_NOT_OURS });
    } finally {
      child.kill("SIGKILL");
    }
  });
  it("a process that is gone is gone", async () => {
    assert.deepEqual(await checkKeeper(2 ** 30, expected), {
      ok: false,
      reason: KEEPER_REFUSALS.KEEPER_GONE,
    });
  });
  it("the right program, argv and environment, but whose parent is no tmux client: not in a lock", async () => {
    // The checked lists describe this very process, whose parent is the test runner.
    const self = await import("node:fs").then((fs) => ({
      exe: fs.readlinkSync("/proc/self/exe"),
      argv: fs.readFileSync("/proc/self/cmdline", "utf8").split("\0").slice(0, -1),
      environment: fs.readFileSync("/proc/self/environ", "utf8").split("\0").filter((v) => v),
    }));
    const r = await checkKeeper(process.pid, { ...expected, ...self });
    assert.deepEqual(r, { ok: false, reason: KEEPER_REFUSALS.KEEPER_NOT_IN_LOCK });
  });
});
