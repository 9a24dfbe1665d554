/**
 * The product in the real pi TUI: pi in tmux with the scripted faux model,
 * this extension loaded, real sudo as the throwaway test user, the password
 * typed on the keyboard. After each flow the password must appear nowhere:
 * not on screen, not in the session JSONL, not in pi's temp logs, not in any
 * readable /proc/<pid>/environ or cmdline.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { FauxStep } from "./faux_provider.ts";
import { type PiSession, preparePi, REPO_ROOT, runPiPrint, startPi } from "./pi_runner.ts";
import { testPassword } from "../helpers/test_env.ts";
import { toolResults } from "./attack_scripts/pi_checks.ts";

const PASSWORD = testPassword();
const EXTENSION = join(REPO_ROOT, "extension/index.ts");
const TITLE = "Sudo Authentication Required";

async function withPi(
  script: FauxStep[],
  run: (pi: PiSession) => Promise<void>,
  settings?: Record<string, unknown>,
  expectSessionFile = true,
): Promise<void> {
  const pi = await startPi({ script, extensions: [EXTENSION], settings });
  try {
    await run(pi);
    await assertNoLeak(pi, expectSessionFile);
  } finally {
    await pi.close();
  }
}

/** Every place the password must not be, checked while pi is still running. */
async function assertNoLeak(pi: PiSession, expectSessionFile: boolean): Promise<void> {
  const screen = await pi.tmux.capture({ history: true });
  assert.ok(!screen.includes(PASSWORD), "password on screen");
  const sessions = await pi.readSessions();
  // pi writes the session file at the first agent prompt, not for `!` alone.
  if (expectSessionFile) assert.ok(sessions.length > 0, "a session file was written");
  assert.ok(!sessions.includes(PASSWORD), "password in the session JSONL");
  for (const dir of [tmpdir(), pi.launch.tmpDir]) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (!name.startsWith("pi-bash-")) continue;
      const text = await readFile(join(dir, name), "utf8").catch(() => "");
      assert.ok(!text.includes(PASSWORD), `password in ${name}`);
    }
  }
  await assertNotInProc();
}

async function assertNotInProc(): Promise<void> {
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    for (const file of ["environ", "cmdline"]) {
      const text = await readFile(`/proc/${pid}/${file}`, "latin1").catch(() => "");
      assert.ok(!text.includes(PASSWORD), `password in /proc/${pid}/${file}`);
    }
  }
}

/** The last line of the only tool result. */
async function lastToolLine(pi: PiSession): Promise<string> {
  const results = toolResults(await pi.readSessions());
  assert.equal(results.length, 1, `one tool result, got ${JSON.stringify(results)}`);
  return results[0].trimEnd().split("\n").at(-1)!;
}

async function typePassword(pi: PiSession, text: string): Promise<void> {
  await pi.tmux.sendText(text);
  // One bullet per character, and never the text itself.
  await pi.tmux.waitFor("•".repeat([...text].length));
  assert.ok(!(await pi.tmux.capture()).includes(text));
  await pi.tmux.sendKeys("Enter");
}

describe("real pi + real sudo", () => {
  // No heartbeat here: the product runs inside pi's own process, not this
  // one, and this process's loop only drives tmux (each tmux client spawn
  // costs it a few ms). The server's loop is watched in tests/integration.

  it("the agent's sudo opens the modal; the typed password runs the command as root", async () => {
    await withPi([{ bash: "sudo -k id -u" }, { text: "FLOW-DONE" }], async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      const screen = await pi.tmux.waitFor(TITLE, 20_000);
      assert.match(screen, /Command: \/usr\/bin\/sudo -A -k \/usr\/bin\/id -u/);
      assert.match(screen, /sudo -k id -u/);
      assert.match(screen, /will not be visible to the AI model/);
      assert.match(screen, /auto-cancel in [12]:\d\d/);
      await typePassword(pi, PASSWORD);
      await pi.tmux.waitFor("FLOW-DONE", 20_000);
      assert.equal(await lastToolLine(pi), "0");
    });
  });

  it("a 20-line sh -c script can be read whole in the modal before typing (↓ scrolls; nothing is cut)", async () => {
    const lines = Array.from({ length: 19 }, (_, i) => `echo step-${i + 1}-of-the-script`);
    const command = ["sudo -k id -u", ...lines].join("\n");
    await withPi([{ bash: command }, { text: "FLOW-DONE" }], async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      const seen = new Set<number>();
      let screen = await pi.tmux.waitFor(TITLE, 20_000);
      assert.match(screen, /↑\/↓ to read it all/);
      for (let i = 0; i < 25; i++) {
        for (const m of screen.matchAll(/step-(\d+)-of-the-script/g)) seen.add(Number(m[1]));
        await pi.tmux.sendKeys("Down");
        await new Promise((r) => setTimeout(r, 60));
        screen = await pi.tmux.capture();
      }
      assert.equal(seen.size, 19, `every line was shown: ${[...seen].sort((a, b) => a - b)}`);
      assert.ok(!screen.includes("more line"), "nothing summarised away");
      await typePassword(pi, PASSWORD);
      await pi.tmux.waitFor("FLOW-DONE", 20_000);
    });
  });

  it("wrong then right: the modal says Incorrect password, try again (2/3)", async () => {
    await withPi([{ bash: "sudo -k id -u" }, { text: "FLOW-DONE" }], async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      await pi.tmux.waitFor(TITLE, 20_000);
      await typePassword(pi, "wrong-password-1");
      await pi.tmux.waitFor("Incorrect password, try again (2/3)", 15_000);
      await typePassword(pi, PASSWORD);
      await pi.tmux.waitFor("FLOW-DONE", 20_000);
      assert.equal(await lastToolLine(pi), "0");
    });
  });

  it("Escape: sudo reports no password was provided, and pi keeps working", async () => {
    await withPi(
      [{ bash: "sudo -k id -u; echo rc=$?" }, { text: "AFTER-ESCAPE" }],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor(TITLE, 20_000);
        await pi.tmux.sendKeys("Escape");
        await pi.tmux.waitFor("AFTER-ESCAPE", 20_000);
        const sessions = await pi.readSessions();
        assert.match(sessions, /no password was provided/);
        assert.match(sessions, /rc=1/);
        assert.ok(!(await pi.tmux.capture()).includes(TITLE), "the modal closed");
      },
    );
  });

  it("!sudo from the editor opens the same modal", async () => {
    await withPi(
      [],
      async (pi) => {
        await pi.tmux.sendText("!sudo -k id -un");
        await pi.tmux.sendKeys("Enter");
        const screen = await pi.tmux.waitFor(TITLE, 20_000);
        assert.match(screen, /Command: \/usr\/bin\/sudo -A -k \/usr\/bin\/id -un/);
        await typePassword(pi, PASSWORD);
        await pi.tmux.waitFor(/^\s*root\s*$/m, 20_000);
      },
      undefined,
      false,
    );
  });

  it("sudo inside a child script reaches the modal through the PATH wrapper", async () => {
    await withPi([{ bash: "sh -c 'sudo -k id -u'" }, { text: "FLOW-DONE" }], async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      const screen = await pi.tmux.waitFor(TITLE, 20_000);
      assert.match(screen, /Shell command:[\s│]+sudo -k id -u/);
      await typePassword(pi, PASSWORD);
      await pi.tmux.waitFor("FLOW-DONE", 20_000);
      assert.equal(await lastToolLine(pi), "0");
    });
  });

  it("the user's shellCommandPrefix still applies in the replaced bash tool", async () => {
    await withPi(
      [{ bash: "greet" }, { text: "FLOW-DONE" }],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor("FLOW-DONE", 20_000);
        assert.match(await pi.readSessions(), /hello-from-prefix/);
      },
      { shellCommandPrefix: "greet() { echo hello-from-prefix; }" },
    );
  });

  it("print mode: sudo fails fast with sudo's own message, no modal, no hang", async () => {
    const launch = await preparePi({
      script: [{ bash: "sudo -k true; echo rc=$?" }, { text: "PRINT-DONE" }],
      extensions: [EXTENSION],
    });
    try {
      const started = Date.now();
      const r = await runPiPrint(launch, "go", 30_000);
      assert.equal(r.timedOut, false);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /PRINT-DONE/);
      assert.ok(Date.now() - started < 20_000);
      const sessions = await readdir(launch.sessionDir).catch(() => [] as string[]);
      let text = "";
      for (const f of sessions) text += await readFile(join(launch.sessionDir, f), "utf8");
      assert.match(text, /a terminal is required|a password is required/);
      assert.match(text, /rc=1/);
    } finally {
      await launch.cleanup();
    }
  });
});
