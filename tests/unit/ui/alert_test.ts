/**
 * The bytes a modal writes to call the user (`extension/ui/alert.ts`): the
 * bell, then OSC 9 and OSC 777, each wrapped for tmux's passthrough inside
 * tmux; the title is set once and put back once.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { alertBytes, callTheUser } from "../../../extension/ui/alert.ts";

describe("alert", () => {
  it("outside tmux: the bell, OSC 9, OSC 777", () => {
    assert.equal(
      alertBytes("pi: x", false),
      "\x07\x1b]9;pi: x\x07\x1b]777;notify;pi;pi: x\x07",
    );
  });

  it("inside tmux: each notification in tmux's passthrough, its ESC doubled; the bell plain", () => {
    assert.equal(
      alertBytes("pi: x", true),
      "\x07\x1bPtmux;\x1b\x1b]9;pi: x\x07\x1b\\\x1bPtmux;\x1b\x1b]777;notify;pi;pi: x\x07\x1b\\",
    );
  });

  it("sets the title, and puts pi's back once however often it is ended", () => {
    const writes: string[] = [];
    const titles: string[] = [];
    const stop = callTheUser(
      { write: (d) => writes.push(d), setTitle: (t) => titles.push(t) },
      { title: "pi: x", restore: "π - work" },
      false,
    );
    assert.deepEqual(titles, ["pi: x"]);
    assert.equal(writes.length, 1);
    stop();
    stop();
    assert.deepEqual(titles, ["pi: x", "π - work"]);
  });
});
