/**
 * The pure halves of the keyboard checks (ADR 0007, 0009): which descriptor
 * links can be a terminal pi reads, and the verdict on a holder scan. Runs
 * under Node and Deno.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { spawn } from "node:child_process";
import {
  classifyLink,
  decideTerminal,
  rootHolder,
  summarizeProcess,
  TERMINAL_REFUSALS,
} from "../../../extension/keyboard/terminal_holders.ts";
import { parseRootTerminalOutput, ptsNumber } from "../../../extension/keyboard/root_terminal.ts";
import { runCheck } from "../../../ops/doctor/runner.ts";

const proc = (pid: number, startTime: bigint) => ({ pid, command: `cmd ${pid}`, startTime });

describe("holder scan: descriptor links", () => {
  it("the terminal's own path matches; /dev/tty is checked as the controlling terminal", () => {
    assert.equal(classifyLink("/dev/pts/3", "/dev/pts/3"), "match");
    assert.equal(classifyLink("/dev/tty", "/dev/pts/3"), "controlling");
  });
  it("every other path is compared by device number (a bind mount of the pts can sit anywhere); sockets, pipes and anonymous inodes are not", () => {
    assert.equal(classifyLink("/dev/pts/4", "/dev/pts/3"), "compare_device");
    assert.equal(classifyLink("/newroot/dev/pts/3", "/dev/pts/3"), "compare_device");
    assert.equal(classifyLink("/home/u/.cache/x/3", "/dev/pts/3"), "compare_device");
    assert.equal(classifyLink("/home/u/notes.txt", "/dev/pts/3"), "compare_device");
    assert.equal(classifyLink("socket:[123]", "/dev/pts/3"), "other");
    assert.equal(classifyLink("pipe:[9]", "/dev/pts/3"), "other");
    assert.equal(classifyLink("anon_inode:[eventfd]", "/dev/pts/3"), "other");
  });
});

describe("holder scan: the verdict", () => {
  const young = (p: { startTime: bigint }) => p.startTime > 50n;
  it("any holder refuses with terminal_shared and names it", () => {
    const v = decideTerminal({ holders: [proc(42, 10n)], hidden: [] }, young);
    assert.deepEqual(v, {
      ok: false,
      reason: TERMINAL_REFUSALS.TERMINAL_SHARED,
      culprit: proc(42, 10n),
    });
  });
  it("a hidden process the policy asks about is named for the modal; the others are not counted", () => {
    const scan = { holders: [], hidden: [proc(7, 100n), proc(8, 10n)] };
    assert.deepEqual(decideTerminal(scan, young), { ok: true, unchecked: [proc(7, 100n)] });
    assert.deepEqual(decideTerminal(scan, () => false), { ok: true });
  });
  it("a holder refuses whatever the policy: a proven threat", () => {
    const v = decideTerminal({ holders: [proc(9, 1n)], hidden: [] }, () => false);
    assert.equal(!v.ok && v.reason, TERMINAL_REFUSALS.TERMINAL_SHARED);
  });
  it("an incomplete scan fails closed", () => {
    const v = decideTerminal(undefined, young);
    assert.equal(!v.ok && v.reason, TERMINAL_REFUSALS.TERMINAL_SCAN_INCOMPLETE);
  });
  it("nobody else: ok", () => {
    assert.deepEqual(decideTerminal({ holders: [], hidden: [] }, young), { ok: true });
  });
});

describe("doctor: keyboard checks", () => {
  it("warns about X11, where any client can read the keyboard", async () => {
    assert.equal((await runCheck("display", { env: { DISPLAY: ":0" } })).status, "warn");
    assert.equal(
      (await runCheck("display", { env: { DISPLAY: ":0", WAYLAND_DISPLAY: "wayland-0" } }))
        .status,
      "ok",
    );
    assert.equal((await runCheck("display", { env: {} })).status, "ok");
  });
  it("tmux: nothing to check outside it, the lock said inside; GNU screen is named as unchecked", async () => {
    assert.equal((await runCheck("multiplexer", { env: {} })).status, "ok");
    const inside = await runCheck("multiplexer", { env: { TMUX: "/tmp/tmux-1/default,1,0" } });
    assert.equal(inside.status, "ok");
    assert.match(inside.detail, /client's own terminal while tmux is locked/);
    assert.match(inside.detail, /nested tmux/);
    assert.equal(
      (await runCheck("multiplexer", { env: { STY: "1.pts-0.host" } })).status,
      "warn",
    );
  });
  it("outside pi the terminal and dumpable checks say where to run them", async () => {
    assert.equal((await runCheck("terminal")).status, "info");
    assert.equal((await runCheck("dumpable")).status, "info");
  });
});

describe("root terminal check (hardened mode)", () => {
  it("parses the holders line and fails closed on anything else", () => {
    assert.deepEqual(parseRootTerminalOutput(0, "pi-terminal: holders\n"), {
      ok: true,
      holders: [],
    });
    assert.deepEqual(parseRootTerminalOutput(0, "pi-terminal: holders 12 345\n"), {
      ok: true,
      holders: [12, 345],
    });
    assert.equal(parseRootTerminalOutput(125, "pi-terminal: usage: x\n").ok, false);
    assert.equal(parseRootTerminalOutput(0, "pi-terminal: holders 1 x\n").ok, false);
    assert.equal(parseRootTerminalOutput(null, "").ok, false);
    const other = parseRootTerminalOutput(1, "", "sudo: a password is required\n");
    assert.equal(!other.ok && other.notPermitted, true, "the rule is not ours: no root check");
  });
  it("only /dev/pts/N terminals have a number", () => {
    assert.equal(ptsNumber("/dev/pts/17"), 17);
    assert.equal(ptsNumber("/dev/tty1"), undefined);
    assert.equal(ptsNumber("/dev/pts/1/x"), undefined);
  });
});

describe("root's listing of a terminal's holders, as they are now", () => {
  const ended = async (cmd: string, args: string[]) => {
    const child = spawn(cmd, args, { stdio: "ignore" });
    await new Promise((r) => child.once("exit", r));
    return child.pid!;
  };
  it("a holder that exited since root listed it has no summary now (the gate lists again); a live one is the culprit; exempt ones are not named", async () => {
    const gone = await ended("true", []);
    assert.deepEqual(await rootHolder([gone], new Set()), { pid: gone });
    const live = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      await new Promise((r) => live.once("spawn", r));
      const held = await waitForComm(live.pid!, "sleep");
      assert.deepEqual(await rootHolder([live.pid!], new Set()), { pid: live.pid, now: held });
      assert.deepEqual(await rootHolder([live.pid!, gone], new Set([live.pid!])), { pid: gone });
      assert.equal(await rootHolder([live.pid!], new Set([live.pid!])), undefined);
    } finally {
      live.kill("SIGKILL");
    }
  });
});

/** The process as summarizeProcess sees it once it runs `comm` (after exec). */
async function waitForComm(pid: number, comm: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const p = await summarizeProcess(pid);
    if (p?.command === comm) return p;
    assert.ok(Date.now() < deadline, `${pid} never became ${comm}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
