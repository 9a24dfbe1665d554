import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readlinkSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import {
  type DescriptorTable,
  descriptorTable,
  readDescriptorTable,
  readDescriptorTableSync,
} from "../../../kernel/descriptor_table.mjs";

/** Runs the reader against scripted answers: the listing, then the links by path. */
function decide(
  listing: string[] | { errno: string },
  links: Record<string, string | null | undefined> = {},
  cap = 10,
  keep = (_: string) => true,
): { table: DescriptorTable; asked: unknown[] } {
  const walk = descriptorTable("/proc/7/fd", cap, keep);
  const asked: unknown[] = [];
  let step = walk.next();
  while (!step.done) {
    const read = step.value;
    asked.push(read);
    step = walk.next("list" in read ? listing : read.links.map((p) => links[p]));
  }
  return { table: step.value, asked };
}

describe("the one descriptor-table reader", () => {
  it("names why there is no table: gone, hidden, unreadable, too many", () => {
    assert.deepEqual(decide({ errno: "ENOENT" }).table, { ok: false, reason: "gone" });
    assert.deepEqual(decide({ errno: "EACCES" }).table, { ok: false, reason: "hidden" });
    assert.deepEqual(decide({ errno: "EIO" }).table, { ok: false, reason: "unreadable" });
    const eleven = Array.from({ length: 11 }, (_, i) => String(i));
    const refused = decide(eleven);
    assert.deepEqual(refused.table, { ok: false, reason: "too_many" });
    assert.equal(refused.asked.length, 1, "no link is read past the cap");
    assert.equal(decide(eleven.slice(1)).table.ok, true, "exactly the cap is read");
  });

  it("keeps what the caller asks for, in fd order; a closed descriptor is skipped, an unreadable link is said", () => {
    const { table } = decide(
      ["10", "2", "1", "x"],
      {
        "/proc/7/fd/1": "socket:[5]",
        "/proc/7/fd/2": null,
        "/proc/7/fd/10": "pipe:[9]",
      },
      10,
      (l) => l.startsWith("socket:") || l.startsWith("pipe:"),
    );
    assert.deepEqual(table, {
      ok: true,
      fds: 3,
      kept: [[1, "socket:[5]"], [10, "pipe:[9]"]],
      unreadableLink: false,
    });
    const unreadable = decide(["3"], { "/proc/7/fd/3": undefined }).table;
    assert.deepEqual(unreadable, { ok: true, fds: 1, kept: [], unreadableLink: true });
  });

  it("the synchronous and the asynchronous reads give the same table of a real process", async () => {
    const child = spawn("sleep", ["30"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const dir = `/proc/${child.pid}/fd`;
      const all = () => true;
      // The child opens files while it starts (locale data): compare once its table is still.
      let [sync, async] = [readDescriptorTableSync(dir, 100, all), undefined as unknown];
      for (let i = 0; i < 50 && !isDeepStrictEqual(async, sync); i++) {
        await new Promise((r) => setTimeout(r, 20));
        async = await readDescriptorTable(dir, 100, all);
        if (!isDeepStrictEqual(async, sync)) sync = readDescriptorTableSync(dir, 100, all);
      }
      assert.deepEqual(async, sync);
      assert.ok(sync.ok);
      assert.deepEqual(sync.kept.find(([fd]) => fd === 1), [1, readlinkSync(`${dir}/1`)]);
      assert.deepEqual(readDescriptorTableSync(dir, 1, all), { ok: false, reason: "too_many" });
      assert.deepEqual(await readDescriptorTable(dir, 1, all), { ok: false, reason: "too_many" });
    } finally {
      child.kill("SIGKILL");
    }
    await new Promise((r) => child.once("exit", r));
    const gone = `/proc/${child.pid}/fd`;
    assert.deepEqual(readDescriptorTableSync(gone, 100, () => true), { ok: false, reason: "gone" });
    assert.deepEqual(await readDescriptorTable(gone, 100, () => true), {
      ok: false,
      reason: "gone",
    });
  });
});
