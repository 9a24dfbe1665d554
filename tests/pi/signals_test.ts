/**
 * Issue 18, attack 2, from a bash tool call of real pi (tmux, the scripted
 * model, real sudo as the throwaway user): while the modal is open, a
 * detached process of the agent stops pi's parent shell (SIGSTOP), sends
 * pi SIGTSTP, SIGSTOP, SIGKILL or SIGHUP, then tries for seconds to open
 * pi's terminal and read the keys the human types at the modal's image
 * (`attack_scripts/signal_attack.py`; docs/security-tests.md, rows S1–S6).
 *
 * For each: the terminal never opens for the agent (EBUSY), the modal is
 * erased with a warning, the keys typed there reach nobody, the tool call's
 * sudo ends within seconds with nothing, and once the human resumes the
 * shell it works: a sudo in the shell (pi gone) or a sudo in pi after `fg`.
 * pi runs from an interactive bash with job control, as a user starts it,
 * and, for SIGTSTP and SIGSTOP, as the tmux pane's own command.
 */
import assert from "node:assert/strict";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { startPi } from "./pi_runner.ts";
import type { TmuxSession } from "../helpers/tmux.ts";
import { testPassword } from "../helpers/test_env.ts";
import {
  ATTACK_SCRIPTS,
  EXTENSION,
  isRunning,
  parentPid,
  piProcessPid,
  TITLE,
  waitFor,
  withScratch,
} from "./attack_scripts/pi_checks.ts";
import { busy, flat, sudoInShell, withPiInBash } from "./shell_pi.ts";

const PASSWORD = testPassword();
const ATTACK = `${ATTACK_SCRIPTS}/signal_attack.py`;
/** How long the agent keeps trying to open the terminal after its signal. */
const ATTACK_SECONDS = 6;
const LEGIT = "sudo -k id -u";

/** The tool call: the attack in the background, then the sudo whose modal it targets. */
function attackCall(dir: string, signal: string, extra = ""): string {
  return `python3 '${ATTACK}' ${signal} "$PPID" '${dir}' ${ATTACK_SECONDS} ${extra}; ` +
    `${LEGIT} & echo $! > '${dir}/sudo.pid'; wait $!; echo "rc=$?" > '${dir}/rc'; cat '${dir}/rc'`;
}

const exists = (path: string) => stat(path).then(() => true as const, () => undefined);

/**
 * The checks common to every signal, from the moment the modal is open:
 * the signal goes out, the modal's image is gone (or replaced by the
 * warning), the human types the password at it anyway, sudo ends with
 * nothing within seconds, and the agent never opened the terminal.
 */
async function duringAttack(tmux: TmuxSession, dir: string, tty: string): Promise<void> {
  await waitFor("the agent's signal", () => exists(join(dir, "signalled")), 30_000);
  const sent = Date.now();
  const erased = await tmux.waitUntil(
    (s) =>
      !s.includes(TITLE) || /pi stopped while it asked|pi was stopped while it asked/.test(flat(s)),
    "the modal erased",
    5_000,
  );
  assert.ok(!erased.includes("•"), "the masked field is gone");
  // The human, who saw the modal a moment ago, types the password anyway.
  await tmux.sendText(PASSWORD);
  await tmux.sendKeys("Enter");
  // pi's own SIGHUP handling kills the tool call's shell, so its rc may never come.
  const sudo = Number(await readFile(join(dir, "sudo.pid"), "utf8"));
  await waitFor("the tool call's sudo to end", async () => {
    return await exists(join(dir, "rc")) || !await isRunning(sudo) ? true : undefined;
  }, 15_000);
  const ended = Date.now() - sent;
  assert.ok(ended < 12_000, `sudo ended ${ended} ms after the signal`);
  const rc = await readFile(join(dir, "rc"), "utf8").catch(() => "");
  assert.ok(rc === "" || rc.trim() === "rc=1", `sudo got no password (${rc.trim()})`);
  await waitFor("the agent's result", () => exists(join(dir, "result")), 20_000);
  const result = await readFile(join(dir, "result"), "utf8");
  assert.match(result, /^open: EBUSY/, `the agent opened pi's terminal: ${result}`);
  const keys = await readFile(join(dir, "keys"), "latin1").catch(() => "");
  assert.ok(!keys.includes(PASSWORD), "the agent read the password");
  assert.ok(busy(tty), "the terminal is still exclusive");
  assert.ok(!(await tmux.capture({ history: true })).includes(PASSWORD), "password on screen");
}

/** Starts the script, waits for the modal, and runs the attack while it shows. */
async function attackTheModal(tmux: TmuxSession, dir: string, tty: string): Promise<void> {
  await tmux.sendText("go");
  await tmux.sendKeys("Enter");
  await tmux.waitFor(TITLE, 30_000);
  await writeFile(join(dir, "modal-seen"), "");
  await duringAttack(tmux, dir, tty);
}

/** pi's parent shell (stopped by the agent) runs again: the human did it from elsewhere. */
async function resumeShell(pi: number): Promise<void> {
  const shell = await parentPid(pi);
  if (shell) process.kill(shell, "SIGCONT");
}

describe("job-control signals never hand the keys to another process (real pi, real sudo)", () => {
  for (const signal of ["SIGTSTP", "SIGSTOP"] as const) {
    it(`${signal} to pi in a job-control bash during the modal, shell stopped: terminal stays closed, sudo denied, fg resumes`, async () => {
      await withScratch("pi-signal-", async (dir) => {
        await withPiInBash(async ({ tmux, tty, pi }) => {
          await attackTheModal(tmux, dir, tty);
          assert.ok(busy(tty), "the terminal stays exclusive while pi is stopped");
          await resumeShell(pi);
          await tmux.waitFor(/Stopped/, 10_000);
          await tmux.sendText("fg");
          await tmux.sendKeys("Enter");
          // The next step of the script: a legitimate sudo in the same pi.
          await tmux.waitFor(TITLE, 30_000);
          await tmux.sendText(PASSWORD);
          await tmux.sendKeys("Enter");
          await tmux.waitFor("FLOW-DONE", 30_000);
          assert.match(flat(await tmux.capture({ history: true })), /rc=0/);
        }, {
          script: [
            { bash: attackCall(dir, signal), timeout: 60 },
            { bash: `${LEGIT}; echo "rc=$?"` },
            { text: "FLOW-DONE" },
          ],
        });
      });
    });
  }

  for (const signal of ["SIGKILL", "SIGHUP"] as const) {
    it(`${signal} to pi in a job-control bash during the modal, shell stopped: terminal stays closed, sudo denied, the shell's sudo works after`, async () => {
      await withScratch("pi-signal-", async (dir) => {
        await withPiInBash(async ({ tmux, tty, pi }) => {
          await attackTheModal(tmux, dir, tty);
          await waitFor("pi to end", async () => await isRunning(pi) ? undefined : true, 10_000);
          assert.ok(busy(tty), "the terminal stays exclusive while pi's shell is stopped");
          await resumeShell(pi);
          await waitFor("the terminal released to the shell", () => {
            return Promise.resolve(busy(tty) ? undefined : true);
          }, 10_000);
          await tmux.sendKeys("Enter");
          await sudoInShell(tmux, signal === "SIGKILL" ? "SUDO-44" : "SUDO-45");
        }, { script: [{ bash: attackCall(dir, signal), timeout: 60 }, { text: "FLOW-DONE" }] });
      });
    });
  }

  for (const signal of ["SIGTSTP", "SIGSTOP"] as const) {
    it(`${signal} to pi as the pane's command during the modal: terminal stays closed, sudo denied, SIGCONT resumes`, async () => {
      await withScratch("pi-signal-", async (dir) => {
        const pi = await startPi({
          script: [
            { bash: attackCall(dir, signal, "--no-shell-stop"), timeout: 60 },
            { bash: `${LEGIT}; echo "rc=$?"` },
            { text: "FLOW-DONE" },
          ],
          extensions: [EXTENSION],
        });
        try {
          const tty =
            (await pi.tmux.tmux("display-message", "-p", "-t", pi.tmux.target, "#{pane_tty}"))
              .stdout.trim();
          const pid = await piProcessPid(pi);
          await pi.tmux.sendText("go");
          await pi.tmux.sendKeys("Enter");
          await pi.tmux.waitFor(TITLE, 30_000);
          await writeFile(join(dir, "modal-seen"), "");
          await duringAttack(pi.tmux, dir, tty);
          assert.ok(busy(tty), "the terminal stays exclusive while pi is stopped");
          process.kill(pid, "SIGCONT");
          await pi.tmux.waitFor(TITLE, 30_000);
          await pi.tmux.sendText(PASSWORD);
          await pi.tmux.sendKeys("Enter");
          await pi.tmux.waitFor("FLOW-DONE", 30_000);
          assert.match(flat(await pi.tmux.capture({ history: true })), /rc=0/);
        } finally {
          await pi.close();
        }
      });
    });
  }
});
