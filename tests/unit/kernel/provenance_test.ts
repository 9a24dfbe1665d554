/**
 * What pi can prove of where a process came from (ADR 0009 §2): the mark it
 * sets on itself, read back from `/proc/<pid>/limits` of a real child (a
 * child inherits it; it cannot raise it again), and the windows of its tool
 * calls. Runs under Node and Deno.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import {
  CallWindows,
  carriesMark,
  chooseMark,
  parseRealtimeHardLimit,
  ticksNow,
} from "../../../kernel/provenance.ts";

const LIMITS = (hard: string) =>
  `Limit                     Soft Limit           Hard Limit           Units     \n` +
  `Max realtime priority     0                    0                    \n` +
  `Max realtime timeout      ${hard.padEnd(20)} ${hard.padEnd(20)} us        \n`;

describe("pi's mark", () => {
  it("reads the hard real-time timeout: a number, unlimited, or nothing from a bent file", () => {
    assert.equal(parseRealtimeHardLimit(LIMITS("4611686018427375559")), 4611686018427375559n);
    assert.equal(parseRealtimeHardLimit(LIMITS("unlimited")), "unlimited");
    assert.equal(parseRealtimeHardLimit("Max realtime timeout x"), undefined);
    assert.equal(parseRealtimeHardLimit(""), undefined);
  });
  it("is just below 2^62 µs, apart per pi, and never above the hard limit in force", () => {
    const unlimited = (1n << 64n) - 1n;
    const a = chooseMark(unlimited, 1);
    const b = chooseMark(unlimited, 2);
    assert.ok(a < 1n << 62n && a > (1n << 62n) - (1n << 21n));
    assert.notEqual(a, b);
    assert.ok(chooseMark(1000n, 5) < 1000n);
  });
  it("a child carries a mark set in it, cannot raise it back, and a process without it does not", async () => {
    // The child marks itself (as pi does), then tries to raise the hard limit again.
    const script =
      "ulimit -R 4611686018427000000 && (ulimit -HR unlimited 2>/dev/null && echo raised); exec sleep 5";
    const child = spawn("bash", ["-c", script], { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    child.stdout.on("data", (d) => out += String(d));
    try {
      await new Promise((r) => setTimeout(r, 300));
      const text = spawnSync("cat", [`/proc/${child.pid}/limits`]).stdout.toString();
      assert.equal(parseRealtimeHardLimit(text), 4611686018427000000n);
      assert.equal(await carriesMark(child.pid!, 4611686018427000000n), true);
      assert.equal(await carriesMark(child.pid!, 4611686018427000001n), false);
      assert.equal(await carriesMark(child.pid!, undefined), false);
      assert.equal(out, "", "a process raised its own hard limit back");
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("tool-call windows", () => {
  it("cover a start time while a call runs, a tick either side, and not after it ended", () => {
    const w = new CallWindows();
    const call = w.begin(1000n);
    assert.equal(w.covers(999n), true, "a tick early: start times are whole ticks");
    assert.equal(w.covers(5000n), true, "still running");
    w.end(call, 1200n);
    assert.equal(w.covers(1201n), true);
    assert.equal(w.covers(1300n), false);
    assert.equal(w.covers(900n), false);
  });
  it("keep at most 256 windows, merging the oldest (a wider window only names more)", () => {
    const w = new CallWindows();
    for (let i = 0; i < 300; i++) w.end(w.begin(BigInt(i * 100)), BigInt(i * 100 + 10));
    assert.equal(w.covers(50n), true, "the merged oldest windows cover the gaps between them");
    assert.equal(w.covers(29_905n), true);
  });
  it("the clock is /proc's: ticks since boot, close to this process's own start time", () => {
    const now = ticksNow();
    assert.ok(now !== undefined && now > 0n);
  });
});
