/**
 * Daily use is never refused (issue 20), with real pi, real sudo and the
 * throwaway user: a second pi session, ssh-agent and a non-dumpable
 * stand-in for gpg-agent started after pi, a sudo of the user waiting at its
 * prompt in another terminal, a setuid-root program that is not sudo (a
 * stand-in for Xorg's wrapper), pi as a pane's command and pi in an
 * interactive bash. Each time a legitimate `sudo -k id -u` shows its modal
 * and runs as root (docs/security-tests-2.md, rows D1–D4). D4 is the attack
 * the old refusal stopped: it must still be caught.
 *
 * tests/run.sh runs this file twice: before the broker is installed (this
 * machine has no Yama: the modal names what the user's uid could not check,
 * and the sudo works when the human goes on) and after (root decides: nothing
 * is named).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { describe, it } from "node:test";
import { type PiSession, startPi } from "./pi_runner.ts";
import { testPassword } from "../helpers/test_env.ts";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ATTACK_SCRIPTS,
  EXTENSION,
  piProcessPid,
  TITLE,
  toolResults,
  waitFor,
} from "./attack_scripts/pi_checks.ts";
import { flat, withPiInBash } from "./shell_pi.ts";
import { TERMINAL_CHECK } from "../../extension/keyboard/root_terminal.ts";
import { rootCheckInstalled } from "../../extension/pairing/root_check.ts";
import type { TmuxSession } from "../helpers/tmux.ts";

const PASSWORD = testPassword();
const LEGIT = `sudo -k id -u; echo "rc=$?"`;
const NOT_CHECKED = "Not checked";
const XORG_STANDIN = "/usr/local/libexec/pi-sudo-prompt-test/Xorg.wrap";

/** Background processes of the user, killed at the end. */
function background(argv: string[]): ChildProcess {
  return spawn(argv[0], argv.slice(1), { stdio: "ignore", detached: true });
}

function killAll(children: ChildProcess[]): void {
  for (const c of children) {
    try {
      process.kill(-c.pid!, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/**
 * A non-dumpable process of the user (like gpg-agent and every pi). Resolves
 * once it has made itself non-dumpable (its line on stdout): before that,
 * the modal could read its files and rightly leave it out.
 */
async function hiddenAgent(): Promise<ChildProcess> {
  const child = spawn("/usr/bin/python3", [
    "-c",
    "import ctypes,time; ctypes.CDLL(None).prctl(4,0,0,0,0); print('hidden',flush=True); time.sleep(120)",
  ], { stdio: ["ignore", "pipe", "ignore"], detached: true });
  let hidden = false;
  child.stdout!.on("data", () => hidden = true);
  await waitFor("the non-dumpable stand-in", () => hidden || undefined, 30_000);
  return child;
}

/**
 * The human runs the agent's legitimate sudo: `go`, the modal, the password.
 * Returns the modal's screen; checks that sudo ran as root.
 */
async function sudoThroughModal(
  tmux: TmuxSession,
  results: () => Promise<string[]>,
  n: number,
): Promise<string> {
  await tmux.sendText("go");
  await tmux.sendKeys("Enter");
  const screen = await tmux.waitFor(TITLE, 30_000);
  await tmux.sendText(PASSWORD);
  await tmux.waitFor("•".repeat(PASSWORD.length), 10_000);
  await tmux.sendKeys("Enter");
  const all = await waitFor(`${n} tool result(s)`, async () => {
    const r = await results();
    return r.length >= n ? r : undefined;
  }, 30_000);
  assert.match(all[n - 1], /^0\nrc=0$/m, all[n - 1]);
  return screen;
}

const resultsOf = (pi: PiSession) => async () => toolResults(await pi.readSessions());

/** What the modal must say about `pids`, by phase: named without root, nothing with it. */
async function assertNamed(screen: string, pids: number[]): Promise<void> {
  const text = flat(screen);
  if (await rootCheckInstalled(TERMINAL_CHECK)) {
    assert.ok(!text.includes(NOT_CHECKED), `root decides, nothing to name:\n${screen}`);
    return;
  }
  assert.ok(text.includes(NOT_CHECKED), `the modal names what it could not check:\n${screen}`);
  for (const pid of pids) assert.match(text, new RegExp(`• ${pid}, started \\d\\d:\\d\\d:\\d\\d`));
}

describe("daily use is never refused (real pi, real sudo)", () => {
  it("D1: two pi sessions, ssh-agent and a non-dumpable agent started after the first: each pi's sudo shows its modal and runs", async () => {
    const script = [{ bash: LEGIT }, { text: "DONE" }];
    const first = await startPi({ script, extensions: [EXTENSION] });
    const kids: ChildProcess[] = [];
    let second: PiSession | undefined;
    try {
      second = await startPi({ script, extensions: [EXTENSION] });
      kids.push(background(["/usr/bin/ssh-agent", "-D"]), await hiddenAgent());
      const secondPid = await piProcessPid(second);
      const hidden = kids[1].pid!;
      await waitFor("the stand-ins", () => Promise.resolve(kids[0].pid ? true : undefined));
      // The first pi asks while the second runs (younger, non-dumpable).
      const screen = await sudoThroughModal(first.tmux, resultsOf(first), 1);
      await assertNamed(screen, [secondPid, hidden]);
      // The second asks while the first runs (older: never a question).
      await sudoThroughModal(second.tmux, resultsOf(second), 1);
    } finally {
      killAll(kids);
      await second?.close();
      await first.close();
    }
  });

  it("D2: a sudo of the user waiting at its prompt in another terminal, and a setuid-root program that is not sudo: the modal shows, sudo runs", async () => {
    const pi = await startPi({
      script: [{ bash: LEGIT }, { text: "DONE" }],
      extensions: [EXTENSION],
    });
    const kids: ChildProcess[] = [];
    try {
      kids.push(background([XORG_STANDIN, "120"]));
      const tty = spawn("/usr/bin/python3", [
        "-c",
        "import pty,os,time\npid,fd=pty.fork()\nif pid==0: os.execv('/usr/bin/sudo',['sudo','-k','true'])\n" +
        "buf=b''\nwhile b'assword' not in buf: buf+=os.read(fd,1024)\nprint('waiting',flush=True)\ntime.sleep(120)",
      ], { stdio: ["ignore", "pipe", "ignore"], detached: true });
      kids.push(tty);
      await new Promise<void>((resolve) => tty.stdout!.once("data", () => resolve()));
      const screen = await sudoThroughModal(pi.tmux, resultsOf(pi), 1);
      await assertNamed(screen, [kids[0].pid!]);
      if (!await rootCheckInstalled(TERMINAL_CHECK)) {
        assert.match(flat(screen), /a setuid-root program of yours waits/);
        assert.match(flat(screen), /another sudo of yours waits at a terminal prompt/);
      }
    } finally {
      killAll(kids);
      await pi.close();
    }
  });

  it("D3: pi in an interactive bash with job control, a non-dumpable process started after it: the modal shows, sudo runs", async () => {
    const kids: ChildProcess[] = [];
    try {
      await withPiInBash(async ({ tmux, launch }) => {
        kids.push(await hiddenAgent());
        const results = async () => {
          const { readSessions } = await import("./pi_runner.ts");
          return toolResults(await readSessions(launch));
        };
        const screen = await sudoThroughModal(tmux, results, 1);
        await assertNamed(screen, [kids[0].pid!]);
      }, { script: [{ bash: LEGIT }, { text: "DONE" }] });
    } finally {
      killAll(kids);
    }
  });

  it("D4: the key logger that copies pi's terminal out of its shell and then hides, during the modal, is still caught: withdrawn (terminal_shared) or named in the modal, never silently allowed", async () => {
    const attacks = `${ATTACK_SCRIPTS}/terminal_attacks.py`;
    const dir = await mkdtemp(join(tmpdir(), "pi-daily-logger-"));
    const steal = `python3 '${attacks}' steal-then-hide "$PPID" '${dir}/keys' '${dir}/marker' 60`;
    // The logger starts once the test has seen the modal (DIR/modal-seen), not
    // after a guessed delay; bounded, and never once the test removed DIR.
    const seen = `${dir}/modal-seen`;
    const afterModal = `i=0; while [ -d '${dir}' ] && [ ! -e '${seen}' ] && [ "$i" -lt 1200 ]; ` +
      `do sleep 0.05; i=$((i + 1)); done; [ -e '${seen}' ] && exec setsid ${steal}`;
    const pi = await startPi({
      script: [
        { bash: `(${afterModal}) </dev/null >/dev/null 2>&1 & ${LEGIT}` },
        { text: "DONE" },
      ],
      extensions: [EXTENSION],
    });
    let logger = 0;
    try {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      await pi.tmux.waitFor(TITLE, 30_000);
      await writeFile(seen, "");
      logger = await waitFor("the logger to hold the terminal", async () => {
        const m = /^holding (\d+)$/m.exec(
          await readFile(join(dir, "marker"), "utf8").catch(() => ""),
        );
        return m ? Number(m[1]) : undefined;
      }, 30_000);
      // Within a few re-checks: the modal is gone (a holder, or root's list), or it names the logger.
      const screen = await pi.tmux.waitUntil(
        (t) => !t.includes(TITLE) || new RegExp(`• ${logger}, started`).test(flat(t)),
        "the logger caught",
        5_000,
      );
      if (screen.includes(TITLE)) {
        assert.ok(
          !await rootCheckInstalled(TERMINAL_CHECK),
          "with the broker, root withdraws the modal",
        );
        assert.match(flat(screen), /Not checked/);
      }
    } finally {
      if (logger > 0) {
        try {
          process.kill(logger, "SIGKILL");
        } catch {
          // gone
        }
      }
      await pi.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
