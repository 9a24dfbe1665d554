/**
 * `deno task demo` (tests/pi/demo.ts) in tmux, as the throwaway test user:
 * once the TUI has started and while the modal is open, the screen says
 * which password to type (a line printed before pi starts is wiped by the
 * TUI). Escape cancels, Ctrl+D quits the demo.
 */
import assert from "node:assert/strict";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { TmuxSession } from "../helpers/tmux.ts";
import { demoHint } from "./demo_hint.ts";
import { nodeBinary, REPO_ROOT } from "./pi_runner.ts";

const TITLE = "Sudo Authentication Required";
const FINAL_TEXT = "it never reached me";
const EXIT_TIMEOUT_MS = 15_000;

describe("deno task demo", () => {
  it("shows which password to type inside pi, while the modal is open on the terminal", {
    skip: process.getuid?.() === 0 ? "the demo refuses root (sudo never asks root)" : false,
  }, async () => {
    // The demo keeps its agent dir under os.tmpdir(): a private one, removed here.
    const tmp = await realpath(await mkdtemp(join(tmpdir(), "pi-demo-test-")));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !k.startsWith("NODE_TEST") && k !== "TMUX" && k !== "TMUX_PANE") {
        env[k] = v;
      }
    }
    const tmux = await TmuxSession.start({
      argv: [nodeBinary(), join(REPO_ROOT, "tests/pi/demo.ts")],
      env: { ...env, TMPDIR: tmp, HOME: tmp },
      cwd: tmp,
      // Wide enough that pi does not wrap the hint.
      cols: 200,
      rows: 50,
      tmuxConf: ["set -g extended-keys on"],
    });
    try {
      const hint = demoHint(userInfo().username);
      await tmux.waitFor(TITLE, 60_000);
      // Inside tmux the modal is on the client's terminal; the hint stays in pi's pane.
      const pane = await tmux.capturePane();
      assert.ok(pane.includes(hint), `hint not in pi's pane with the modal:\n${pane}`);
      await tmux.sendKeys("Escape");
      const after = await tmux.waitFor(FINAL_TEXT, 30_000);
      assert.ok(after.includes(hint), "the hint stays after the modal closed");
      await tmux.sendKeys("C-d");
      let status: number | undefined;
      for (const end = Date.now() + EXIT_TIMEOUT_MS; status === undefined && Date.now() < end;) {
        await new Promise((r) => setTimeout(r, 100));
        status = await tmux.exitStatus();
      }
      assert.equal(status, 0, "the demo exits 0 after Ctrl+D");
    } finally {
      await tmux.kill();
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
