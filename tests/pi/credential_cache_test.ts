/**
 * An approval ends with its call (issue 9, attack 3; docs/design.md §2 promise 3;
 * ADR 0006), from bash tool calls of the real pi TUI in tmux, with this
 * extension and real sudo as the throwaway test user. The test plays the
 * human and types the password into the real modal.
 *
 * The attack: a tool call starts a background shell that outlives it; that
 * shell runs `sudo true` through pi's wrapper (the modal, approved), then
 * waits on a FIFO and runs `/usr/bin/sudo -n sh -c LINE` for what a later
 * tool call writes. With no tty sudo keys its ticket to that shell, so
 * without this protection the later call runs as root with no modal.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import type { FauxStep } from "./faux_provider.ts";
import { type PiSession, startPi } from "./pi_runner.ts";
import { testPassword } from "../helpers/test_env.ts";
import { defaultAuditPath } from "../../extension/audit/entry.ts";
import {
  assertNoLeak,
  ATTACK_SCRIPTS,
  count,
  EXTENSION,
  TITLE,
  toolResults,
  typeMasked,
  waitFor,
} from "./attack_scripts/pi_checks.ts";

const PASSWORD = testPassword();
const SETUP = `sh '${ATTACK_SCRIPTS}/ticket_setup.sh'`;
const TRIGGER = `sh '${ATTACK_SCRIPTS}/ticket_trigger.sh'`;

async function withPi(
  script: FauxStep[],
  run: (pi: PiSession) => Promise<void>,
  args: string[] = [],
): Promise<void> {
  const pi = await startPi({ script, extensions: [EXTENSION], args });
  try {
    await run(pi);
    await assertNoLeak(pi, PASSWORD);
  } finally {
    await killBackgroundShell(pi);
    await pi.close();
  }
}

/** The attack's background shell, if it is still there (it exits by itself after the trigger). */
async function killBackgroundShell(pi: PiSession): Promise<void> {
  const pid = Number(await readFile(join(home(pi), "attack3", "pid"), "utf8").catch(() => ""));
  if (pid > 0) {
    try {
      process.kill(pid, "SIGKILL");
    } catch { /* already gone */ }
  }
}

function home(pi: PiSession): string {
  return join(pi.launch.tmpDir, "home");
}

/** Waits until the session JSONL holds `n` tool results and returns them. */
function waitForResults(pi: PiSession, n: number, timeoutMs = 30_000): Promise<string[]> {
  return waitFor(`${n} tool result(s) in the session file`, async () => {
    const results = toolResults(await pi.readSessions());
    return results.length >= n ? results : undefined;
  }, timeoutMs);
}

/** The human answers the modal on screen now: the password, then Enter. */
async function answer(pi: PiSession): Promise<void> {
  await typeMasked(pi, PASSWORD);
  await pi.tmux.sendKeys("Enter");
}

/** What the root command of the trigger left: the file's content, or undefined. */
async function pwned(pi: PiSession): Promise<string | undefined> {
  return await readFile(join(home(pi), "pwned"), "utf8").catch(() => undefined);
}

describe("an approval ends with its call (real pi, real sudo)", () => {
  it("per sudo (--sudo-strict), background-shell ticket: the approved sudo true works, a later tool call gets no root", async () => {
    await withPi([{ bash: SETUP }, { bash: TRIGGER }, { text: "FLOW-DONE" }], async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      const screen = await pi.tmux.waitFor(TITLE, 30_000);
      // The wrapper added -k: the modal shows exactly what sudo will do.
      assert.match(screen, /Command: \/usr\/bin\/sudo -A -k \/usr\/bin\/true/);
      await answer(pi);
      await pi.tmux.waitFor("FLOW-DONE", 60_000);
      const [setup, trigger] = await waitForResults(pi, 2);
      assert.match(setup, /approved rc=0/, "the legitimate, approved sudo ran");
      assert.match(setup, /a password is required/, "no ticket even while the call ran");
      assert.match(trigger, /after:\s+sudo: a password is required\s+rc=1/, trigger);
      assert.match(trigger, /pwned: absent/);
      assert.equal(await pwned(pi), undefined, "the later call ran nothing as root");
      assert.equal(count(await pi.tmux.capture(), TITLE), 0, "no second modal");
    }, ["--sudo-strict"]);
  });

  it("per sudo (--sudo-strict), /usr/bin/sudo -A true without -k: refused would_cache_credentials, no modal; a legitimate sudo after it works", async () => {
    await withPi(
      [
        { bash: "/usr/bin/sudo -A true; echo rc=$?" },
        { bash: "sudo id -u" },
        { text: "FLOW-DONE" },
      ],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        // The first modal that ever opens is the second call's: a modal for
        // the first would have blocked it before its result was recorded.
        const screen = await pi.tmux.waitFor(TITLE, 30_000);
        assert.match(screen, /Command: \/usr\/bin\/sudo -A -k \/usr\/bin\/id -u/);
        const [refused] = await waitForResults(pi, 1);
        assert.match(refused, /rc=1/);
        assert.match(refused, /no password was provided|a password is required/);
        await answer(pi);
        await pi.tmux.waitFor("FLOW-DONE", 30_000);
        const results = await waitForResults(pi, 2);
        assert.equal(results[1].trim(), "0", "the legitimate sudo ran as root");
        // The notice says why and what to do (read once the modal is gone).
        const notices = (await pi.tmux.capture({ history: true })).replace(/\s+/g, " ");
        assert.match(notices, /\(would_cache_credentials\): use plain `sudo`/);
        const audit = await readFile(defaultAuditPath(pi.launch.env), "utf8");
        assert.match(audit, /"reason":"would_cache_credentials"/, "an audit entry");
      },
      ["--sudo-strict"],
    );
  });

  it("the default (one approval per call): one modal for sudo true && sudo -n id -u, and the background-shell ticket is gone once its call ended", async () => {
    await withPi(
      [
        { bash: "sudo true && sudo -n id -u" },
        { bash: SETUP },
        { bash: TRIGGER },
        { text: "FLOW-DONE" },
      ],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        let screen = await pi.tmux.waitFor(TITLE, 30_000);
        assert.match(screen, /Command: \/usr\/bin\/sudo -A \/usr\/bin\/true/, "no -k in this mode");
        await answer(pi);
        const [cached] = await waitForResults(pi, 1);
        assert.equal(cached.trim(), "0", "the cache worked within the call (one modal)");
        // The background shell's own sudo: a different parent, so its own modal.
        screen = await pi.tmux.waitFor(TITLE, 30_000);
        assert.match(screen, /Command: \/usr\/bin\/sudo -A \/usr\/bin\/true/);
        await answer(pi);
        await pi.tmux.waitFor("FLOW-DONE", 60_000);
        const [, setup, trigger] = await waitForResults(pi, 3);
        assert.match(setup, /approved rc=0/);
        // While its call ran, the background shell held a working ticket...
        assert.match(setup, /during:\s+0\s+rc=0/, setup);
        // ...and after the call ended it was gone.
        assert.match(trigger, /after:\s+sudo: a password is required\s+rc=1/, trigger);
        assert.equal(await pwned(pi), undefined, "the later call ran nothing as root");
      },
    );
  });

  it("the default: sudo apt-get -v && sudo id -u asks once and prints 0; a process the call left behind gets no root; the next call asks again", async () => {
    // The leftover tries its sudo once the call has ended: when the next call
    // has started (it writes bg.go; pi runs calls one after another, and the
    // approval ends before a call's result returns). The next call reads its
    // output once the leftover wrote its rc= line. Both waits are bounded.
    const bounded = (cond: string) =>
      `i=0; while ${cond} && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done`;
    const first = "sudo apt-get -v >/dev/null && sudo id -u; " +
      `(${bounded("[ ! -e bg.go ]")}; [ -e bg.go ] && ` +
      '{ /usr/bin/sudo -n id -u >bg.out 2>&1; echo "rc=$?" >>bg.out; }) >/dev/null 2>&1 &';
    const next = `: >bg.go; ${bounded("! grep -q '^rc=' bg.out 2>/dev/null")}; ` +
      "cat bg.out; sudo id -u";
    await withPi(
      [
        { bash: first },
        { bash: next },
        { text: "FLOW-DONE" },
      ],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        let screen = await pi.tmux.waitFor(TITLE, 30_000);
        const flat = screen.replace(/[\s│]+/g, " ");
        assert.match(flat, /Command: \/usr\/bin\/sudo -A \/usr\/bin\/apt-get -v/);
        // The modal says what the password approves: the whole command, until it ends.
        assert.match(flat, /Approves: everything the shell command above runs until it ends/);
        await answer(pi);
        const [once] = await waitForResults(pi, 1);
        assert.equal(once.trim(), "0", "the second sudo of the call used the approval: no modal");
        // The next call asks again.
        screen = await pi.tmux.waitFor(TITLE, 30_000);
        assert.match(
          screen.replace(/[\s│]+/g, " "),
          /Command: \/usr\/bin\/sudo -A \/usr\/bin\/id -u/,
        );
        await answer(pi);
        await pi.tmux.waitFor("FLOW-DONE", 30_000);
        const [, second] = await waitForResults(pi, 2);
        assert.match(second, /a password is required\s+rc=1/, "the leftover process got no root");
        assert.match(second, /^0$/m, "the second call's own sudo ran as root");
      },
    );
  });
});
