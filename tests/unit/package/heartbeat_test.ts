import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { startHeartbeat } from "../../helpers/heartbeat.ts";

/** This thread's time on a CPU, in ms (`schedstat` field 1). */
function cpuMs(): number {
  return Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]) / 1e6;
}

/**
 * Keeps the loop's thread busy until it has had `ms` of CPU: on a loaded
 * machine that takes longer, and the time it waits for a CPU is the machine's.
 */
function spin(ms: number): void {
  const end = cpuMs() + ms;
  while (cpuMs() < end) { /* busy */ }
}

/** Blocks the loop's thread in the kernel for `ms`, the rest of the process idle. */
function block(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const tick = () => new Promise((r) => setTimeout(r, 20));

/** Time some task of the machine waited for a CPU, in ms (`/proc/pressure/cpu`). */
function cpuPressureMs(): number {
  try {
    const text = readFileSync("/proc/pressure/cpu", "utf8");
    return Number(/^some .*total=([0-9]+)$/m.exec(text)?.[1] ?? 0) / 1000;
  } catch {
    return 0;
  }
}

describe("the tests' heartbeat (the machine's share is not a stall, ours is)", () => {
  it("code that keeps the loop busy for 120 ms of CPU is a stall, however loaded the machine", async () => {
    const beat = startHeartbeat();
    await tick();
    spin(120);
    await tick();
    assert.ok(beat.stop() >= 80, "a busy loop went unseen");
  });

  it("a call that blocks the loop 120 ms while nothing waits for a CPU is a stall", async () => {
    const beat = startHeartbeat();
    await tick();
    const before = cpuPressureMs();
    block(120);
    const pressure = cpuPressureMs() - before;
    await tick();
    const gap = beat.stop();
    // On a loaded machine, blocked time while other tasks waited for a CPU
    // is the machine's (up to how long they waited): what remains must show.
    assert.ok(
      gap >= 80 - pressure,
      `a blocking call went unseen (gap ${gap}, pressure ${pressure})`,
    );
  });

  it("the whole process stopped 150 ms (as when the host stops the guest's CPUs) is not a stall", async () => {
    const beat = startHeartbeat();
    await tick();
    // A stop no thread of ours can see coming: every thread, the witnesses'
    // too, stands still; only the witnesses make this the machine's share.
    const pid = process.pid;
    const stopper = spawn("sh", ["-c", `kill -STOP ${pid}; sleep 0.15; kill -CONT ${pid}`], {
      stdio: "ignore",
      timeout: 10_000,
    });
    await new Promise((r) => stopper.once("close", r));
    await tick();
    assert.equal(stopper.exitCode, 0);
    assert.ok(
      beat.stop() < 50,
      `a stop of the whole process counted as ours (${beat.worstGap()} ms)`,
    );
  });

  it("an idle loop shows no stall", async () => {
    const beat = startHeartbeat();
    for (let i = 0; i < 10; i++) await tick();
    assert.ok(beat.stop() < 50);
  });
});
