/**
 * Issue 9, attack 2, from inside real pi (tmux + the scripted faux model,
 * this extension loaded, real sudo as the throwaway user): a bash tool call
 * runs the pipe swap (`tests/pi/attack_scripts/pipe_swap.sh`). A hidden
 * sudo's askpass hands its root-owned pipe to a decoy sudo's askpass, which
 * execs the session's real launcher with it. Before ADR 0005 the modal showed
 * the decoy (`sudo -A -k true`) and the password went to the hidden
 * `sh -c 'id -u > pwned'`, which ran as root.
 *
 * Now: no modal for the decoy, a named refusal (notice on screen and the
 * audit log), the hidden command never runs as root; then, in the same
 * session, a legitimate `sudo -k id -u` works, and so do two legitimate sudo
 * commands running at once. The canary password appears nowhere.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { startPi } from "./pi_runner.ts";
import { testPassword } from "../helpers/test_env.ts";
import { defaultAuditPath } from "../../extension/audit/entry.ts";
import {
  assertNoLeak,
  ATTACK_SCRIPTS,
  count,
  EXTENSION,
  mutatedExtension,
  startProcSampler,
  TITLE,
  toolResults,
  typeMasked,
  waitFor,
} from "./attack_scripts/pi_checks.ts";
import { ROOT_PAIRING_OFF } from "../helpers/mutated_copy.ts";

const PASSWORD = testPassword();

describe("the password reaches only the sudo the modal shows (real pi, real sudo)", () => {
  it("pipe swap from a tool call: no modal for the decoy, a named refusal, the hidden command never runs as root; legitimate sudo, alone and two at once, still works", async () => {
    const work = await mkdtemp(join(tmpdir(), "pi-pipe-swap-"));
    const both = `sudo -k id -u > '${work}/bg.out' 2>&1 & sudo -k id -un; wait; ` +
      `echo "bg: $(cat '${work}/bg.out')"`;
    const pi = await startPi({
      script: [
        { bash: `sh '${ATTACK_SCRIPTS}/pipe_swap.sh' '${work}'`, timeout: 60 },
        { bash: "sudo -k id -u" },
        { bash: both },
        { text: "FLOW-DONE" },
      ],
      extensions: [EXTENSION],
    });
    try {
      const results = async (n: number) =>
        await waitFor(`${n} tool result(s)`, async () => {
          const r = toolResults(await pi.readSessions());
          return r.length >= n ? r : undefined;
        }, 60_000);
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");

      // 1. The swap: its tool call ends without any modal having opened.
      await waitFor("the swap's result", async () => {
        const screen = await pi.tmux.capture();
        assert.equal(count(screen, TITLE), 0, `a modal opened for the decoy:\n${screen}`);
        return toolResults(await pi.readSessions()).length >= 1 ? true : undefined;
      }, 60_000);
      const [swap] = await results(1);
      assert.match(swap, /swap: the holder has sudo B's pipe/, swap);
      assert.match(swap, /^pwned: absent$/m, `the hidden command ran as root:\n${swap}`);
      await assert.rejects(readFile(join(work, "pwned")), "no pwned file");
      assert.match(swap, /no password was provided/);
      const audit = await readFile(defaultAuditPath(pi.launch.env), "utf8");
      // With the broker (the root phase installs it) root decides first.
      assert.match(
        audit,
        /"reason":"(other_sudo_foreign_askpass|root_pairing_refused)"/,
        "a named refusal in the audit",
      );

      await pi.tmux.waitFor(
        /(other_sudo_foreign_askpass|root_pairing_refused) \(pid \d+\)|root_pairing_refused/,
        10_000,
      );

      // 2. A legitimate sudo in the same session: one modal, answered, root.
      const modal = await pi.tmux.waitFor(TITLE, 30_000);
      assert.match(modal, /Command: \/usr\/bin\/sudo -A (-k )?-k \/usr\/bin\/id -u/);
      await answer(pi);
      assert.equal((await results(2))[1].trim(), "0", "the legitimate sudo ran as root");

      // 3. Two legitimate sudo commands at once: two modals, one after the other.
      await pi.tmux.waitUntil(
        (s) => s.includes(TITLE) && !s.includes("•"),
        "the first of two modals",
        30_000,
      );
      await answer(pi);
      await pi.tmux.waitUntil(
        (s) => s.includes(TITLE) && !s.includes("•"),
        "the second of two modals",
        30_000,
      );
      await answer(pi);
      await pi.tmux.waitFor("FLOW-DONE", 30_000);
      const third = (await results(3))[2];
      assert.match(third, /^root$/m, third);
      assert.match(third, /^bg: 0$/m, third);
      const after = await readFile(defaultAuditPath(pi.launch.env), "utf8");
      assert.equal(count(after, '"decision":"refused"'), 1, "no false refusal after the swap");
      await assertNoLeak(pi, PASSWORD, { extraDirs: [work] });
    } finally {
      await pi.close();
      await rm(work, { recursive: true, force: true });
    }
  });

  it("P16: the swap with sudo B started under a name that forges a kernel thread's status line, the user layer alone (root's check off in a copy): no modal for either sudo, both refused other_sudo_foreign_askpass, the hidden command never runs as root", async () => {
    const work = await mkdtemp(join(tmpdir(), "pi-pipe-swap-"));
    const copy = await mkdtemp(join(tmpdir(), "pi-pipe-swap-ext-"));
    try {
      const pi = await startPi({
        script: [
          { bash: `sh '${ATTACK_SCRIPTS}/pipe_swap.sh' '${work}' kthread`, timeout: 60 },
          { text: "FLOW-DONE" },
        ],
        extensions: [await mutatedExtension(copy, [ROOT_PAIRING_OFF])],
      });
      try {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        // A modal for either sudo would take the human's password to sudo B.
        const swap = await waitFor("the swap's result", async () => {
          const screen = await pi.tmux.capture();
          assert.equal(count(screen, TITLE), 0, `a modal opened:\n${screen}`);
          const r = toolResults(await pi.readSessions());
          return r.length >= 1 ? r[0] : undefined;
        }, 60_000);
        assert.match(swap, /swap: the holder has sudo B's pipe/, swap);
        assert.match(swap, /^first sudo rc=1$/m, swap);
        assert.match(swap, /^pwned: absent$/m, `the hidden command ran as root:\n${swap}`);
        await assert.rejects(readFile(join(work, "pwned")), "no pwned file");
        const audit = await readFile(defaultAuditPath(pi.launch.env), "utf8");
        assert.equal(count(audit, '"reason":"other_sudo_foreign_askpass"'), 2, audit);
        await pi.tmux.waitFor("FLOW-DONE", 30_000);
      } finally {
        await pi.close();
      }
    } finally {
      await rm(work, { recursive: true, force: true });
      await rm(copy, { recursive: true, force: true });
    }
  });
});

/** The human types the password into the open modal and presses Enter (with /proc sampled). */
async function answer(pi: Awaited<ReturnType<typeof startPi>>): Promise<void> {
  await typeMasked(pi, PASSWORD);
  const sampler = startProcSampler(PASSWORD);
  try {
    await pi.tmux.sendKeys("Enter");
    await pi.tmux.waitUntil((s) => !s.includes("•"), "the modal to take the password", 30_000);
  } finally {
    const { leaks } = await sampler.stop();
    assert.deepEqual(leaks, [], "password in /proc while it was in flight");
  }
}
