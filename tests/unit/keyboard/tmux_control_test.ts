/**
 * pi's tmux control-mode client (`extension/keyboard/tmux_control.ts`):
 * against a real tmux server, the questions of the keyboard gate answered
 * through one kept client; against a scripted stand-in for tmux, every way
 * the stream can go wrong (no frame, a forged frame, a flood, silence) ends
 * in "unavailable" (the gate then runs tmux itself), never in a forged answer.
 * Runs under Node and Deno; needs tmux (CI installs it).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import {
  askTmuxControl,
  closeTmuxControl,
  controlLine,
} from "../../../extension/keyboard/tmux_control.ts";
import { checkTmuxKeyTables } from "../../../extension/keyboard/multiplexer_keys.ts";

const TMUX = ["/usr/bin/tmux", "/usr/local/bin/tmux"].find((p) => {
  try {
    execFileSync(p, ["-V"]);
    return true;
  } catch {
    return false;
  }
});

let dir = "";
let socket = "";
let pane = "";
const tmux = (...args: string[]) =>
  execFileSync(TMUX!, ["-S", socket, ...args], { encoding: "utf8" });
const controlClients = () =>
  tmux("list-clients", "-F", "#{client_control_mode}").split("\n").filter((l) => l === "1").length;

before(() => {
  assert.ok(TMUX, "tmux is needed for these tests (apt install tmux)");
  dir = mkdtempSync(join(tmpdir(), "pi-tmux-control-"));
  socket = join(dir, "s");
  tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "sleep 600");
  pane = tmux("display-message", "-p", "-t", "t", "#{pane_id}").trim();
});

after(() => {
  closeTmuxControl();
  try {
    tmux("kill-server");
  } catch {
    // already gone
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("controlLine", () => {
  it("quotes every argument; refuses one it cannot quote", () => {
    assert.equal(controlLine(["list-keys", "-T", "root"]), "'list-keys' '-T' 'root'");
    assert.equal(
      controlLine(["display-message", "-p", "#{pane_id} x"]),
      "'display-message' '-p' '#{pane_id} x'",
    );
    assert.equal(controlLine(["a'b"]), undefined);
    assert.equal(controlLine(["a\nb"]), undefined);
  });
});

describe("a real tmux server", () => {
  it("answers several commands in order through one kept client; a failing command is 'command'", async () => {
    const lines = [
      controlLine(["display-message", "-p", "-t", pane, "one #{pane_id}"])!,
      controlLine(["display-message", "-p", "-t", pane, "two"])!,
    ];
    const first = await askTmuxControl(TMUX!, socket, pane, lines, 5000);
    assert.deepEqual(first, { ok: true, outputs: [`one ${pane}\n`, "two\n"] });
    const again = await askTmuxControl(TMUX!, socket, pane, lines, 5000);
    assert.ok(again.ok);
    assert.equal(controlClients(), 1, "one control client, kept");
    const bad = await askTmuxControl(TMUX!, socket, pane, [
      controlLine(["list-keys", "-T", "nonesuch"])!,
    ], 5000);
    assert.deepEqual(bad, { ok: false, reason: "command" });
    assert.ok(
      (await askTmuxControl(TMUX!, socket, pane, lines, 5000)).ok,
      "still usable after an error",
    );
  });

  it("a question that outlasts its deadline ends 'unavailable' at the deadline and the client goes", async () => {
    const t0 = performance.now();
    const slow = await askTmuxControl(
      TMUX!,
      socket,
      pane,
      [controlLine(["run-shell", "sleep 3"])!],
      300,
    );
    assert.deepEqual(slow, { ok: false, reason: "unavailable" });
    assert.ok(performance.now() - t0 < 2000, "answered at the deadline, not after the command");
  });

  it("the keyboard gate's check goes on working when the client is detached (falls back to a tmux run)", async () => {
    const env = { TMUX: `${socket},0,0`, TMUX_PANE: pane };
    await new Promise((r) => setTimeout(r, 2100)); // past the restart pause of the test above
    assert.deepEqual(await checkTmuxKeyTables(env), { ok: true });
    assert.equal(controlClients(), 1);
    tmux("detach-client", "-s", "t");
    assert.deepEqual(await checkTmuxKeyTables(env), { ok: true });
    tmux("bind", "-n", "a", "display-message", "x");
    try {
      assert.deepEqual(await checkTmuxKeyTables(env), { ok: false, reason: "bound", keys: ["a"] });
    } finally {
      tmux("unbind", "-n", "a");
    }
  });
});

/**
 * A stand-in for tmux: it reads command lines and writes control output as
 * `FAKE_TMUX_MODE` says, to show what the parser does with a stream tmux
 * would never send.
 */
function fakeTmux(): string {
  const path = join(dir, "fake-tmux");
  writeFileSync(
    path,
    `#!/bin/sh
n=0
echo '%begin 1 0 0'; echo '%end 1 0 0'
while IFS= read -r line; do
  n=$((n + 1))
  case "$FAKE_TMUX_MODE" in
    silent) ;;
    forged) echo "%begin 1 $n 1"; echo "ok"; echo "%end 1 $n 1" ;;
    early-end) echo "%begin 1 $n 1"; echo "%end 1 999 1"; echo "%end 2 $n 1"; echo "%end 1 $n 1" ;;
    flood) echo "%begin 1 $n 1"; yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx | head -c 6000000 ;;
    *) word=\${line#"'display-message' '-p' '"}; word=\${word%"'"}
       case "$line" in *pi-sudo-prompt-*) ;; *) word=fine ;; esac
       echo "%begin 1 $n 1"; echo "$word"; echo "%end 1 $n 1" ;;
  esac
done
`,
  );
  chmodSync(path, 0o755);
  return path;
}

describe("a stream tmux would never send", () => {
  const ask = async (mode: string, timeoutMs = 2000) => {
    process.env.FAKE_TMUX_MODE = mode;
    try {
      // A new pane name for each case: a fresh client, no restart pause.
      return await askTmuxControl(fakeTmux(), socket, `%${mode}`, [controlLine(["x"])!], timeoutMs);
    } finally {
      delete process.env.FAKE_TMUX_MODE;
    }
  };

  it("well framed, with the random word last: the answer", async () => {
    assert.deepEqual(await ask("honest"), { ok: true, outputs: ["fine\n"] });
  });

  it("a frame that does not end with this question's random word: unavailable, never an answer", async () => {
    assert.deepEqual(await ask("forged"), { ok: false, reason: "unavailable" });
  });

  it("an %end with another time or number is content, not the end", async () => {
    const r = await ask("early-end");
    assert.deepEqual(r, { ok: false, reason: "unavailable" }, "content kept, word missing");
  });

  it("a flood beyond the cap: unavailable, the client killed", async () => {
    assert.deepEqual(await ask("flood", 10_000), { ok: false, reason: "unavailable" });
  });

  it("silence: unavailable at the deadline", async () => {
    const t0 = performance.now();
    assert.deepEqual(await ask("silent", 300), { ok: false, reason: "unavailable" });
    assert.ok(performance.now() - t0 < 2000);
  });
});
