/**
 * The pure halves of the keyboard checks (ADR 0007): which descriptor links
 * can be pi's terminal, the verdict on a holder scan, and the reading of
 * tmux's key tables. Runs under Node and Deno.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  classifyLink,
  decideTerminal,
  TERMINAL_REFUSALS,
} from "../../../extension/keyboard/terminal_holders.ts";
import { parseRootTerminalOutput, ptsNumber } from "../../../extension/keyboard/root_terminal.ts";
import {
  decideFocus,
  decideKeyTables,
  focusFacts,
  isPrintableKey,
  parseBinding,
} from "../../../extension/keyboard/multiplexer_keys.ts";
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
  it("any holder refuses with terminal_shared and names it", () => {
    const v = decideTerminal({ holders: [proc(42, 10n)], hidden: [] }, 5n);
    assert.deepEqual(v, {
      ok: false,
      reason: TERMINAL_REFUSALS.TERMINAL_SHARED,
      culprit: proc(42, 10n),
    });
  });
  it("a hidden process started after pi is asked about (named for the modal), or ignored when root or Yama decides; an older one never counts", () => {
    const scan = { holders: [], hidden: [proc(7, 100n), proc(8, 10n)] };
    assert.deepEqual(decideTerminal(scan, 50n, "ask"), { ok: true, unchecked: [proc(7, 100n)] });
    assert.deepEqual(decideTerminal(scan, 50n, "ignore"), { ok: true });
    assert.deepEqual(decideTerminal({ holders: [], hidden: [proc(7, 10n)] }, 50n), { ok: true });
  });
  it("a holder refuses whatever the policy: a proven threat", () => {
    const v = decideTerminal({ holders: [proc(9, 1n)], hidden: [] }, 5n, "ignore");
    assert.equal(!v.ok && v.reason, TERMINAL_REFUSALS.TERMINAL_SHARED);
  });
  it("an incomplete scan fails closed", () => {
    const v = decideTerminal(undefined, 1n);
    assert.equal(!v.ok && v.reason, TERMINAL_REFUSALS.TERMINAL_SCAN_INCOMPLETE);
  });
  it("nobody else: ok", () => {
    assert.deepEqual(decideTerminal({ holders: [], hidden: [] }, 1n), { ok: true });
  });
});

const HEAD = "pi-sudo-prompt-keys root C-b None";
const DEFAULTS = [
  "bind-key    -T prefix       a                    send-prefix",
  "bind-key    -T root         MouseDown1Pane       select-pane -t = \\; send-keys -M",
  "bind-key    -T copy-mode    Space                send-keys -X begin-selection",
  "bind-key -r -T prefix       Up                   select-pane -U",
].join("\n");

describe("tmux focus (issue 21)", () => {
  const run = (flags: string) =>
    `${HEAD} ${flags} 4242\npi-sudo-prompt-keys-pane /dev/pts/3\npi-sudo-prompt-keys-pane /dev/pts/7\n`;
  it("pi's pane active in the active window, no mode, no popup: the keys reach pi", () => {
    const f = focusFacts(run("1100"));
    assert.deepEqual(f, {
      paneActive: true,
      windowActive: true,
      paneInMode: false,
      windowZoomed: false,
      serverPid: 4242,
      paneTtys: ["/dev/pts/3", "/dev/pts/7"],
    });
    assert.deepEqual(decideFocus(f!, undefined), { ok: true });
  });
  it("another pane (a split took the focus), another window, copy mode, a zoom, a popup: focus", () => {
    const cases: [string, string | undefined, RegExp][] = [
      ["0100", undefined, /another pane/],
      ["1000", undefined, /another window/],
      ["1110", undefined, /copy mode/],
      ["0101", undefined, /zoomed over pi's/],
      ["1100", "77 cat", /a popup \(77 cat\)/],
    ];
    for (const [flags, popup, what] of cases) {
      const v = decideFocus(focusFacts(run(flags))!, popup);
      assert.equal(!v.ok && v.reason, "focus", flags);
      assert.match(!v.ok ? v.keys[0] : "", what);
    }
  });
  it("a malformed answer is no answer (fail closed)", () => {
    assert.equal(focusFacts(`${HEAD}\n`), undefined);
    assert.equal(focusFacts(`${HEAD} 12x0 1\n`), undefined);
  });
  it("a user key bound where pi's keys are typed refuses (set -s user-keys[0] a; bind -n User0)", () => {
    const v = decideKeyTables(`${HEAD}\nbind-key -T root User0 run-shell "echo a >> log"\n`);
    assert.deepEqual(v, { ok: false, reason: "bound", keys: ["User0"] });
  });
});

describe("tmux key tables", () => {
  it("the default tables: nothing printable where pi's keys are typed", () => {
    assert.deepEqual(decideKeyTables(`${HEAD}\n${DEFAULTS}\n`), { ok: true });
  });
  it("a printable key bound in the root table refuses, escaped keys included", () => {
    for (const key of ["a", "\\;", '\\"', "\\#", "é", "Space", "Any", "KP1"]) {
      const out = `${HEAD}\n${DEFAULTS}\nbind-key -T root ${key} run-shell "echo x >> log"\n`;
      const v = decideKeyTables(out);
      assert.equal(v.ok, false, key);
      assert.equal(!v.ok && v.reason, "bound", key);
    }
  });
  it("modified and named keys do not count", () => {
    for (const key of ["C-a", "M-a", "Enter", "F1", "BSpace", "WheelUpPane"]) {
      assert.equal(isPrintableKey(key), false, key);
    }
  });
  it("a custom key-table option makes that table count", () => {
    const out = "pi-sudo-prompt-keys logger C-b None\nbind-key -T logger x send-keys x\n";
    assert.equal(decideKeyTables(out).ok, false);
    const other = "pi-sudo-prompt-keys root C-b None\nbind-key -T logger x send-keys x\n";
    assert.deepEqual(decideKeyTables(other), { ok: true });
  });
  it("a client of pi's session switched into another key table refuses (switch-client -T)", () => {
    const out = `${HEAD}\npi-sudo-prompt-keys-client root\npi-sudo-prompt-keys-client logger\n`;
    assert.deepEqual(decideKeyTables(out), { ok: false, reason: "client_table", keys: ["logger"] });
    const fine = `${HEAD}\npi-sudo-prompt-keys-client root\n${DEFAULTS}\n`;
    assert.deepEqual(decideKeyTables(fine), { ok: true });
  });
  it("a printable prefix key refuses", () => {
    const v = decideKeyTables("pi-sudo-prompt-keys root z None\n");
    assert.equal(!v.ok && v.keys[0], "prefix z");
  });
  it("output without the marker line fails closed", () => {
    assert.equal(decideKeyTables("").ok, false);
    assert.equal(decideKeyTables("bind-key -T root a x\n").ok, false);
  });
  it("parses list-keys lines with -r and -N", () => {
    assert.deepEqual(parseBinding('bind-key -r -N "a note" -T root \\# send-keys x'), {
      table: "root",
      key: "#",
    });
    assert.equal(parseBinding("set -g status off"), undefined);
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
  it("tmux: nothing to check outside it; GNU screen is named as unchecked", async () => {
    assert.equal((await runCheck("multiplexer", { env: {} })).status, "ok");
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
