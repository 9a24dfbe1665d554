/**
 * Event-loop watchdog for tests. A timer ticks every few milliseconds on the
 * loop under test; any gap between ticks longer than the limit is a stall.
 * `stop()` returns the worst gap, and `assertNoStall()` fails the test with
 * the stall length.
 *
 * On a loaded 2-core machine the kernel can simply not schedule the thread
 * for a while; that is not our code blocking the loop. So each gap is
 * reduced by what the machine took from it (`schedstat` of each thread):
 *
 * - the time the loop's thread waited on a run queue;
 * - the time it was neither running nor runnable (blocked) while other
 *   tasks waited on a run queue, at most as long as they waited: the
 *   process's other threads (V8's garbage collector, the thread pool, which
 *   the loop waits for), and any task of the machine (`/proc/pressure/cpu`,
 *   `some`): spawning a child blocks its parent until the child runs `exec`,
 *   which a starved child does late.
 *
 * - the time a CPU was stopped: a virtual machine's host can stop the
 *   guest's CPUs, one at a time (here, ~100 ms at a time beside two
 *   CPU-bound jobs), without reporting steal time, and the guest then books
 *   the stop as CPU of the thread that was running. A witness thread pinned
 *   to each CPU (below) sees such a stop as a timer that fired late while it
 *   was neither running nor runnable. A stop of the loop's CPU excuses at
 *   most the CPU time booked to the loop; a stop of any CPU excuses blocked
 *   time as other tasks' queueing does.
 *
 * What stays is the loop's own time: code that runs on it, always, and
 * blocking calls while nothing on the machine waited for a CPU (an idle
 * machine, as CI's, sees every blocking call). Our code cannot make a
 * witness lose time: it runs on its own thread, and time it waits for a CPU
 * is not lost. The raw worst gap is reported alongside. The test runner's
 * own per-test timeout turns a loop that never comes back into a failure
 * instead of a hang.
 *
 * @module
 */
import assert from "node:assert/strict";
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";

/** Largest gap a test tolerates (docs/design.md §7, issue: 50 ms). */
export const MAX_LOOP_GAP_MS = 50;
const TICK_MS = 10;
/** Gaps kept for judging against the witness; past it, they count as they are. */
const MAX_GAPS = 4096;

/** A running heartbeat. */
export interface Heartbeat {
  /** Worst gap so far, in ms. */
  worstGap(): number;
  /** Stops ticking and returns the worst gap. */
  stop(): number;
  /** Stops and fails if the worst gap exceeded `limitMs`. */
  assertNoStall(limitMs?: number): void;
}

/** One gap between ticks: its span (epoch ms), the loop thread's CPUs, and its parts in ms. */
interface Gap {
  readonly from: number;
  readonly to: number;
  readonly on: readonly number[];
  readonly raw: number;
  readonly cpu: number;
  readonly waited: number;
  readonly blocked: number;
  readonly starved: number;
}

/**
 * What of a gap is the loop's own: not its wait for a CPU, not a stop of its
 * CPU booked as its CPU time (`lostHere`), not blocked time while other tasks
 * waited for a CPU or a CPU was stopped (`lostAny`), at most as long as that.
 */
function ours(g: Gap, lostHere: number, lostAny: number): number {
  return g.raw - g.waited - Math.min(g.cpu, lostHere) -
    Math.min(g.blocked, Math.max(g.starved, lostAny));
}

/** Starts a heartbeat on the current event loop. */
export function startHeartbeat(): Heartbeat {
  const self = ownTid();
  const witness = startWitness();
  let last = performance.now();
  let before = threadTimes(self);
  let worst = 0;
  let worstRaw = 0;
  // Gaps long enough to matter, judged against the witness when read: it
  // may write down a stop a moment after the loop has seen it.
  const gaps: Gap[] = [];
  const timer = setInterval(() => {
    const now = performance.now();
    const after = threadTimes(self);
    // The timer itself is due every TICK_MS; anything beyond is lag.
    const raw = now - last - TICK_MS;
    worstRaw = Math.max(worstRaw, raw);
    const cpu = after.cpu - before.cpu;
    const waited = after.wait - before.wait;
    const gap: Gap = {
      from: performance.timeOrigin + last,
      to: performance.timeOrigin + now,
      // The CPUs it may have run on: the one before and after the gap, or
      // any, when it moved between CPUs within it (a stop of the CPU it
      // moved to is booked to it as CPU time all the same).
      on: before.moves < 0 || after.moves === before.moves ? [before.on, after.on] : shared.cpus,
      raw,
      cpu,
      waited,
      blocked: Math.max(0, now - last - cpu - waited),
      starved: Math.max(
        after.othersWait - before.othersWait,
        after.machineWait - before.machineWait,
        0,
      ),
    };
    const ms = ours(gap, 0, 0);
    if (ms > MAX_LOOP_GAP_MS / 5 && gaps.length < MAX_GAPS) gaps.push(gap);
    else worst = Math.max(worst, ms);
    last = now;
    before = after;
  }, TICK_MS);
  let stopped = false;
  // The worst gap, and what it was made of (for a failure's message).
  const judge = () => {
    let result = { ms: worst, parts: "" };
    for (const g of gaps) {
      // A stop of the CPU the loop's thread ran on (before or after the
      // gap) is what the guest booked to it as CPU; a stop of any CPU may
      // be what the blocked thread waited for (a thread or child there).
      const lostHere = Math.max(...g.on.map((c) => witness.lostWithin(c, g.from, g.to)));
      const lostAny = Math.max(...shared.cpus.map((c) => witness.lostWithin(c, g.from, g.to)));
      const ms = ours(g, lostHere, lostAny);
      if (ms > result.ms) {
        result = {
          ms,
          parts: `${g.raw.toFixed(1)} ms late at ${(g.from - performance.timeOrigin).toFixed(0)} ` +
            `ms: ${g.cpu.toFixed(1)} on a CPU (its CPU stopped ` +
            `${lostHere.toFixed(1)}), ${g.waited.toFixed(1)} queued, ${g.blocked.toFixed(1)} ` +
            `blocked (others queued ${g.starved.toFixed(1)}, a CPU stopped ${lostAny.toFixed(1)})`,
        };
      }
    }
    return result;
  };
  const judged = () => judge().ms;
  const stop = () => {
    clearInterval(timer);
    if (!stopped) witness.release();
    stopped = true;
    return judged();
  };
  return {
    worstGap: judged,
    stop,
    assertNoStall(limitMs = MAX_LOOP_GAP_MS) {
      stop();
      const { ms, parts } = judge();
      assert.ok(
        ms <= limitMs,
        `event loop stalled for ${ms.toFixed(1)} ms (limit ${limitMs} ms; ${parts}; ` +
          `worst gap before the machine's share ${worstRaw.toFixed(1)} ms)`,
      );
    },
  };
}

/** This thread's id (`/proc/thread-self` points at `<pid>/task/<tid>`). */
function ownTid(): string {
  try {
    return readlinkSync("/proc/thread-self").split("/").pop() ?? "";
  } catch {
    return "";
  }
}

/**
 * In ms: this thread's time on a CPU and on a run queue (`schedstat` fields
 * 1 and 2), the run-queue time of the process's other threads (not the
 * witnesses'), and the time some task of the machine waited for a CPU (0
 * without pressure stall information: then only the process's own threads
 * count); the CPU this thread last ran on (`stat` field 39), and how often it
 * moved between CPUs.
 */
function threadTimes(
  self: string,
): {
  cpu: number;
  wait: number;
  othersWait: number;
  machineWait: number;
  on: number;
  moves: number;
} {
  const out = {
    cpu: 0,
    wait: 0,
    othersWait: 0,
    machineWait: cpuPressureMs(),
    on: -1,
    moves: migrations(self),
  };
  let tasks: string[] = [];
  try {
    tasks = readdirSync("/proc/self/task");
    const n = readSmall(taskPath(self, "stat"));
    // Field 39, counted from field 3, the first after the command's ")" (not past
    // what was read: the buffer holds older reads beyond it).
    out.on = fieldOf(PROC_BUFFER.lastIndexOf(0x29, n - 1) + 2, n, 36);
  } catch {
    return out;
  }
  const witnesses = witnessTids();
  for (const tid of tasks) {
    if (witnesses.has(tid)) continue;
    let n: number;
    try {
      n = readSmall(taskPath(tid, "schedstat"));
    } catch {
      continue; // exited
    }
    if (tid === self) {
      out.cpu = fieldOf(0, n, 0) / 1e6;
      out.wait = fieldOf(0, n, 1) / 1e6;
    } else {
      out.othersWait += fieldOf(0, n, 1) / 1e6;
    }
  }
  return out;
}

// A heartbeat reads a file per thread every tick: paths are kept, and
// numbers are read from the bytes, so that ticking makes next to no garbage
// (its garbage made the test process's own collector stop the loop).
const taskPaths = new Map<string, string>();
function taskPath(tid: string, file: "stat" | "schedstat" | "sched"): string {
  const key = `${file}${tid}`;
  let path = taskPaths.get(key);
  if (path === undefined) {
    if (taskPaths.size > 4096) taskPaths.clear();
    path = `/proc/self/task/${tid}/${file}`;
    taskPaths.set(key, path);
  }
  return path;
}

/**
 * How often this thread moved between CPUs (`se.nr_migrations` of its
 * `sched`), or -1 where the kernel does not say (no `CONFIG_SCHED_DEBUG`).
 */
function migrations(tid: string): number {
  try {
    const n = readSmall(taskPath(tid, "sched"));
    const at = PROC_BUFFER.subarray(0, n).indexOf(MIGRATIONS);
    const colon = at < 0 ? -1 : PROC_BUFFER.indexOf(0x3a, at);
    if (colon < 0) return -1;
    let i = colon + 1;
    while (i < n && PROC_BUFFER[i] === 0x20) i++;
    return fieldOf(i, n, 0);
  } catch {
    return -1;
  }
}
const MIGRATIONS = Buffer.from("se.nr_migrations ");

/**
 * The decimal number in space-separated field `index` (after `skip` bytes of
 * it), counted from byte `from` of PROC_BUFFER.
 */
function fieldOf(from: number, end: number, index: number, skip = 0): number {
  let i = from;
  for (let k = 0; k < index && i < end; i++) if (PROC_BUFFER[i] === 0x20) k++;
  i += skip;
  let value = 0;
  for (; i < end && PROC_BUFFER[i] >= 0x30 && PROC_BUFFER[i] <= 0x39; i++) {
    value = value * 10 + PROC_BUFFER[i] - 0x30;
  }
  return value;
}

/**
 * Reads a small `/proc` file into PROC_BUFFER and returns its length. A
 * heartbeat reads a file per thread every tick; `readFileSync` gives each
 * read a fresh buffer and a string, and that garbage had the test process's
 * own collector stop its loop (up to 64 ms beside two CPU-bound jobs).
 */
function readSmall(path: string): number {
  const fd = openSync(path, "r");
  try {
    return readSync(fd, PROC_BUFFER, 0, PROC_BUFFER.length, 0);
  } finally {
    closeSync(fd);
  }
}
const PROC_BUFFER = Buffer.alloc(4096);

/** `some … total=` of `/proc/pressure/cpu` (µs some task waited for a CPU), in ms. */
function cpuPressureMs(): number {
  try {
    // "some avg10=… avg60=… avg300=… total=N" is the first line.
    const n = readSmall("/proc/pressure/cpu");
    const some = n > 5 && PROC_BUFFER.toString("latin1", 0, 5) === "some ";
    return some ? fieldOf(0, n, 4, "total=".length) / 1000 : 0;
  } catch {
    return 0;
  }
}

/**
 * The witnesses: one thread per CPU the process may run on, pinned there
 * (`taskset`, util-linux), that while some heartbeat runs sleeps
 * WITNESS_SLEEP_MS at a time and writes down each span its timer fired late
 * while the thread was neither running nor on a run queue (its own
 * `schedstat`): time that CPU did not run, as when the host stops one of the
 * guest's CPUs (it stops them one at a time). Spans go to a ring per CPU in
 * shared memory, in ms since the epoch (`timeOrigin + now()` is the same
 * clock on every thread).
 */
const WITNESS_SLEEP_MS = 2;
const WITNESS_RING = 1024;
const WITNESS_SOURCE = `
const { workerData } = require("node:worker_threads");
const { closeSync, openSync, readlinkSync, readSync } = require("node:fs");
const { execFileSync } = require("node:child_process");
const { slot, slots, cpu } = workerData;
const ctl = new Int32Array(workerData.ctl);
const ring = new Float64Array(workerData.ring, slot * 16 * ${WITNESS_RING}, 2 * ${WITNESS_RING});
const nap = new Int32Array(new SharedArrayBuffer(4));
const buf = Buffer.alloc(256);
const tid = readlinkSync("/proc/thread-self").split("/").pop();
Atomics.store(ctl, 1 + slots + slot, Number(tid));
try {
  execFileSync("taskset", ["-pc", String(cpu), tid], { stdio: "ignore", timeout: 10000 });
} catch { /* unpinned: it still sees stops of the CPU it happens to be on */ }
const now = () => performance.timeOrigin + performance.now();
const sched = () => {
  try {
    const fd = openSync("/proc/thread-self/schedstat", "r");
    let n = 0;
    try { n = readSync(fd, buf, 0, buf.length, 0); } finally { closeSync(fd); }
    const f = buf.toString("latin1", 0, n).split(" ");
    return Number(f[0]) / 1e6 + Number(f[1]) / 1e6;
  } catch { return 0; }
};
for (;;) {
  while (Atomics.load(ctl, 0) === 0) Atomics.wait(ctl, 0, 0, 1000);
  let last = now();
  let busy = sched();
  while (Atomics.load(ctl, 0) > 0) {
    Atomics.wait(nap, 0, 0, ${WITNESS_SLEEP_MS});
    const t = now();
    const b = sched();
    const lost = t - last - ${WITNESS_SLEEP_MS} - (b - busy);
    if (lost > 1) {
      const n = Atomics.load(ctl, 1 + slot) % ${WITNESS_RING};
      ring[2 * n] = t - lost;
      ring[2 * n + 1] = t;
      Atomics.add(ctl, 1 + slot, 1);
    }
    last = t;
    busy = b;
  }
}
`;

interface Witness {
  /** Ms the witness of `cpu` lost between `from` and `to` (epoch ms). */
  lostWithin(cpu: number, from: number, to: number): number;
  /** This heartbeat no longer needs the witnesses. */
  release(): void;
}

/** The CPUs this process may run on (`Cpus_allowed_list`), at most 64. */
function allowedCpus(): number[] {
  const list = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
  const cpus: number[] = [];
  for (const range of (list ?? "0").split(",")) {
    const [a, b = a] = range.split("-").map(Number);
    for (let c = a; c <= b && cpus.length < 64; c++) cpus.push(c);
  }
  return cpus;
}

// Started when this module loads: Deno's worker start blocks its caller for
// up to ~150 ms, which must fall before any test, not inside one.
const shared = (() => {
  const cpus = allowedCpus();
  const ctl = new SharedArrayBuffer(4 * (1 + 2 * cpus.length));
  const ring = new SharedArrayBuffer(16 * WITNESS_RING * cpus.length);
  cpus.forEach((cpu, slot) => {
    const workerData = { ctl, ring, slot, slots: cpus.length, cpu };
    new Worker(WITNESS_SOURCE, { eval: true, workerData }).unref();
  });
  return { cpus, ctl: new Int32Array(ctl), ring: new Float64Array(ring) };
})();

/** The witnesses' thread ids (their run-queue waits are no thread of the test's). */
function witnessTids(): Set<string> {
  const n = shared.cpus.length;
  return new Set(Array.from(shared.ctl.subarray(1 + n, 1 + 2 * n), String));
}

/** Wakes the process's witnesses for one heartbeat. */
function startWitness(): Witness {
  const { cpus, ctl, ring } = shared;
  Atomics.add(ctl, 0, 1);
  Atomics.notify(ctl, 0);
  return {
    lostWithin(cpu, from, to) {
      const slot = cpus.indexOf(cpu);
      if (slot < 0) return 0;
      const written = Atomics.load(ctl, 1 + slot);
      const base = slot * 2 * WITNESS_RING;
      let lost = 0;
      for (let i = Math.max(0, written - WITNESS_RING); i < written; i++) {
        const n = base + 2 * (i % WITNESS_RING);
        lost += Math.max(0, Math.min(to, ring[n + 1]) - Math.max(from, ring[n]));
      }
      return lost;
    },
    release() {
      Atomics.sub(ctl, 0, 1);
    },
  };
}
