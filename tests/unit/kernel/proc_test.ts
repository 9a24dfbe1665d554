import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  ancestors,
  parseNulList,
  parseStat,
  parseStatusGroups,
  parseStatusIds,
  parseStatusState,
  parseTracerPid,
  sameList,
} from "../../../kernel/proc.ts";
import { readStat } from "../../../kernel/peer_verification.ts";

const tail = "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 20 21";

describe("/proc parsers", () => {
  it("parses a real /proc/self/stat", () => {
    const s = parseStat(readFileSync("/proc/self/stat", "utf8"));
    assert.ok(s);
    assert.equal(s.pid, process.pid);
    assert.equal(s.ppid, process.ppid);
    assert.ok(s.startTime > 0n);
  });

  it("takes comm up to the LAST parenthesis (spaces and ')' inside)", () => {
    const s = parseStat(`123 (a) b (c)) ${tail}`);
    assert.deepEqual(s, {
      pid: 123,
      comm: "a) b (c)",
      state: "S",
      ppid: 1,
      pgrp: 2,
      ttyNr: 4,
      tpgid: 5,
      startTime: 987654n,
    });
    assert.equal(parseStat(`9 (sudo) S 1 ${tail.slice(4)}`)?.comm, "sudo");
  });

  it("a comm faking extra fields cannot move the start time", () => {
    const evil = `55 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 111 20 21) ${tail}`;
    assert.equal(parseStat(evil)?.startTime, 987654n);
  });

  it("returns undefined for malformed stat lines", () => {
    for (
      const bad of [
        "",
        "garbage",
        "12 (x",
        "x (y) S 1",
        `12 (x) S 1 2`,
        `12 (x) ! 1 ${tail.slice(4)}`,
        `-1 (x) ${tail}`,
      ]
    ) {
      assert.equal(parseStat(bad), undefined, bad);
    }
  });

  it("reads status's State: letter from its own line only, never one forged in Name:", () => {
    assert.equal(parseStatusState("Name:\tsudo\nUmask:\t0022\nState:\tS (sleeping)\n"), "S");
    assert.equal(parseStatusState("Name:\ts\rState:\tZ\nState:\tS (sleeping)\n"), "S");
    assert.equal(parseStatusState("Name:\ts\rState:\tZ\n"), "?");
  });

  it("parses the Uid quad of status", () => {
    const status = "Name:\tsudo\nUid:\t1001\t0\t0\t0\nGid:\t1001\t1001\t1001\t1001\n";
    assert.deepEqual(parseStatusIds(status), { uid: [1001, 0, 0, 0] });
    assert.equal(parseStatusIds("Uid:\t1\t2\t3\nGid:\t1\t1\t1\t1\n"), undefined);
    assert.equal(parseStatusIds("Name:\tUid:\t0\t0\t0\t0\n"), undefined);
    assert.ok(parseStatusIds(readFileSync("/proc/self/status", "utf8")));
  });

  it("splits NUL lists, keeping empty arguments", () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    assert.deepEqual(parseNulList(enc("a\0b c\0\0d\0")), ["a", "b c", "", "d"]);
    assert.deepEqual(parseNulList(enc("")), []);
    assert.deepEqual(parseNulList(enc("only")), ["only"]);
    assert.equal(parseNulList(new Uint8Array([0xff, 0])), undefined);
    assert.ok(sameList(["a", ""], ["a", ""]));
    assert.ok(!sameList(["a"], ["a", ""]));
  });

  it("Groups: every id of a whole line; a missing or bent line (a cut read) is undefined", () => {
    assert.ok(parseStatusGroups(readFileSync("/proc/self/status", "utf8")));
    assert.deepEqual(parseStatusGroups("Name:\tx\nGroups:\t4 24 27 \nUid:\t1\t1\t1\t1\n"), [
      4,
      24,
      27,
    ]);
    assert.deepEqual(parseStatusGroups("Groups:\t\n"), []);
    assert.deepEqual(parseStatusGroups("Groups:\n"), []);
    assert.equal(parseStatusGroups("Name:\tx\n"), undefined);
    assert.equal(parseStatusGroups("Groups:\t4 x 27\n"), undefined);
    assert.equal(parseStatusGroups("Groups:\t4,27\n"), undefined);
  });

  it("TracerPid: the tracer's pid, 0 for none; a missing or bent line is undefined (treated as traced)", () => {
    assert.equal(parseTracerPid(readFileSync("/proc/self/status", "utf8")), 0);
    assert.equal(parseTracerPid("Name:\tx\nTracerPid:\t4242\nUid:\t1\t1\t1\t1\n"), 4242);
    assert.equal(parseTracerPid("Name:\tx\nUid:\t1\t1\t1\t1\n"), undefined);
    assert.equal(parseTracerPid("TracerPid:\t-1\n"), undefined);
    assert.equal(parseTracerPid("TracerPid: 0\n"), undefined);
    // A process name cannot plant the line: the kernel escapes "\n" in Name:.
    assert.equal(parseTracerPid("Name:\tTracerPid:\t0\nTracerPid:\t7\n"), 7);
  });
});

describe("ancestors: the one walk up a process's parents", () => {
  const stat = (pid: number, ppid: number) =>
    parseStat(`${pid} (p) ${tail.replace("S 1", `S ${ppid}`)}`);
  const walk = async (start: number, statOf: Parameters<typeof ancestors>[1], max?: number) => {
    const pids: number[] = [];
    for await (const pid of ancestors(start, statOf, max)) pids.push(pid);
    return pids;
  };

  it("climbs from the process itself up to real init, through the real /proc", async () => {
    const pids = await walk(process.pid, readStat);
    assert.equal(pids[0], process.pid);
    assert.equal(pids[1], process.ppid);
    assert.ok(!pids.includes(1), "init is where it stops, not a step");
  });

  it("stops at an unreadable stat and after max hops, with a sync or an async reader", async () => {
    const chain = new Map([[40, 30], [30, 20], [20, 10], [10, 1]]);
    const sync = (pid: number) => chain.has(pid) ? stat(pid, chain.get(pid)!) : undefined;
    assert.deepEqual(await walk(40, sync), [40, 30, 20, 10]);
    assert.deepEqual(await walk(40, (pid) => Promise.resolve(sync(pid))), [40, 30, 20, 10]);
    // An unreadable stat ends the walk after its pid, which was yielded before the read.
    assert.deepEqual(await walk(40, (pid) => pid === 20 ? undefined : sync(pid)), [40, 30, 20]);
    // A caller that stops at the pid it looks for never reads that pid's stat.
    const read: number[] = [];
    for await (const pid of ancestors(40, (p) => (read.push(p), sync(p)))) if (pid === 20) break;
    assert.deepEqual(read, [40, 30]);
    assert.deepEqual(await walk(40, sync, 2), [40, 30]);
    // A cycle (a forged or racing ppid) ends at the bound, not in a hang.
    assert.equal((await walk(5, (pid) => stat(pid, pid === 5 ? 6 : 5))).length, 64);
  });
});
