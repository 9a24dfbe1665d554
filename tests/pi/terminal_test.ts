/**
 * Only pi reads the keys (ADR 0007), proven the way the agent would attack,
 * from bash tool calls of the real pi TUI (tmux + the scripted faux model)
 * against real sudo as the throwaway user:
 *
 * - the terminal is exclusive: opening it to read or to draw fails (EBUSY);
 *   pi and its guardian are non-dumpable: `/proc/<pi>/mem`, `ptrace` and
 *   `pidfd_getfd` fail;
 * - a key logger that copied the terminal out of pi's shell (the one door
 *   exclusive mode leaves open without Yama) is found: no modal opens while
 *   it runs (`terminal_shared`), and a modal already open closes;
 * - (tmux's own attacks, which the lock makes moot: `tmux_lock_test.ts`);
 * - pi killed with SIGKILL: the guardian releases the terminal and `sudo`
 *   in the same shell prompts again.
 *
 * After each attack a legitimate sudo in the same session still works, and
 * the canary password is nowhere.
 */
import assert from "node:assert/strict";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { FauxStep } from "./faux_provider.ts";
import type { PiSession } from "./pi_runner.ts";
import { testPassword } from "../helpers/test_env.ts";
import {
  assertNoLeak,
  ATTACK_SCRIPTS,
  childrenOf,
  count,
  isRunning,
  kill9,
  submitCommand,
  TITLE,
  toolResults,
  typeMasked,
  waitFor,
  withPi,
  withScratch,
} from "./attack_scripts/pi_checks.ts";
import { busy, flat, opens, sudoInShell, withPiInBash } from "./shell_pi.ts";
import { TERMINAL_CHECK } from "../../extension/keyboard/root_terminal.ts";
import { rootCheckInstalled } from "../../extension/pairing/root_check.ts";
import { ROOT_DENO, ROOT_SOURCES } from "../../broker/paths.ts";

const PASSWORD = testPassword();
const LEGIT = "sudo -k id -u";
const ATTACKS = `${ATTACK_SCRIPTS}/terminal_attacks.py`;

/** A scratch directory; a logger the test started through the agent must not outlive it. */
function withLoggerScratch(run: (dir: string) => Promise<void>): Promise<void> {
  return withScratch("pi-terminal-attack-", run, async (dir) => {
    const pid = Number((await readFile(join(dir, "marker"), "utf8").catch(() => "")).split(" ")[1]);
    if (pid > 0) kill9(pid);
  });
}

function waitForResults(pi: PiSession, n: number): Promise<string[]> {
  return waitFor(`${n} tool result(s) in the session file`, async () => {
    const results = toolResults(await pi.readSessions());
    return results.length >= n ? results : undefined;
  }, 30_000);
}

/** The human answers the legitimate modal; it must show `id -u`. */
async function answerLegit(pi: PiSession, done: string): Promise<void> {
  const screen = await pi.tmux.waitFor(TITLE, 30_000);
  assert.equal(count(screen, TITLE), 1, "exactly one modal");
  assert.match(screen, /Command: \/usr\/bin\/sudo .*id -u/);
  await typeMasked(pi, PASSWORD);
  await pi.tmux.sendKeys("Enter");
  await pi.tmux.waitFor(done, 30_000);
}

/** The file the test writes once it has seen the modal: a logger waiting for it starts then. */
const MODAL_SEEN = "modal-seen";

/**
 * Starts the key logger of the issue in the background of a tool call: at
 * once, or with `afterModal` once the test has seen the modal (it writes
 * DIR/modal-seen; no guessed delay). The wait is bounded and ends when the
 * test removed DIR; the logger then never starts.
 */
function stealCommand(dir: string, seconds: number, afterModal = false, mode = "steal"): string {
  const steal = `python3 '${ATTACKS}' ${mode} "$PPID" '${dir}/keys' '${dir}/marker' ${seconds}`;
  const seen = `${dir}/${MODAL_SEEN}`;
  const start = afterModal
    ? `i=0; while [ -d '${dir}' ] && [ ! -e '${seen}' ] && [ "$i" -lt 1200 ]; ` +
      `do sleep 0.05; i=$((i + 1)); done; [ -e '${seen}' ] && exec setsid ${steal}`
    : `exec setsid ${steal}`;
  return `(${start}) </dev/null >/dev/null 2>&1 &`;
}

/** Shell: waits (bounded) until the logger wrote its marker (holding, or failed), then prints it. */
function loggerMarker(dir: string): string {
  const marker = `${dir}/marker`;
  return `i=0; while [ ! -s '${marker}' ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; ` +
    `cat '${marker}'`;
}

/** The logger's pid, once it holds the terminal. */
function loggerPid(dir: string): Promise<number> {
  return waitFor("the key logger to hold the terminal", async () => {
    const marker = await readFile(join(dir, "marker"), "utf8").catch(() => "");
    assert.doesNotMatch(marker, /^failed/, `the logger could not copy the terminal: ${marker}`);
    const m = /^holding (\d+)$/m.exec(marker);
    return m ? Number(m[1]) : undefined;
  }, 30_000);
}

/**
 * Waits until pi's guardian holds the terminal: pi's child running
 * terminal_guardian.ts that has made itself non-dumpable (its /proc stat
 * turns root's), the step just before its `held`. pi makes the terminal
 * exclusive before the guardian is up, and only the guardian releases it
 * when pi dies or is suspended: a test that acts before then tests nothing.
 */
async function guardianHolding(pi: number): Promise<number> {
  return await waitFor("pi's guardian to hold the terminal", async () => {
    for (const pid of await childrenOf(pi)) {
      const argv = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
      const owner = await stat(`/proc/${pid}/stat`).then((s) => s.uid, () => -1);
      if (argv.includes("terminal_guardian.ts") && owner === 0) return pid;
    }
    return undefined;
  }, 30_000);
}

describe("only pi reads the keys (real pi, real sudo)", () => {
  it("opening pi's terminal to read or to draw fails (EBUSY); /proc/<pi>/mem, ptrace and pidfd_getfd on pi and on its guardian fail", async () => {
    // …and /sudo-prompt doctor says so (exclusive terminal, pi non-dumpable, tmux).
    const probe = `python3 '${ATTACKS}' probe "$PPID"`;
    await withPi([{ bash: probe }, { bash: LEGIT }, { text: "FLOW-DONE" }], async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      const results = await waitForResults(pi, 1);
      const out = new Map<string, string>();
      for (const m of results[0].matchAll(/^ATTACK (\S+): (.*)$/gm)) out.set(m[1], m[2]);
      assert.match(out.get("tty") ?? "", /^\/dev\/pts\/\d+$/, results[0]);
      assert.equal(out.get("open-read"), "EBUSY", results[0]);
      assert.equal(out.get("open-write"), "EBUSY", results[0]);
      assert.match(out.get("open-via-proc-fd") ?? "", /^(EACCES|EPERM|EBUSY)$/, results[0]);
      assert.match(out.get("mem") ?? "", /^(EACCES|EPERM|EIO)$/, results[0]);
      assert.equal(out.get("ptrace"), "EPERM", results[0]);
      assert.equal(out.get("pidfd_getfd"), "EPERM", results[0]);
      assert.match(out.get("guardian") ?? "", /^\d+$/, "the guardian runs");
      // Hardened mode (the root phase installed the broker): the guardian,
      // exempt from the holder scans, runs root-owned deno and sources only.
      const guardian = await readFile(`/proc/${out.get("guardian")}/cmdline`, "utf8");
      const argv = guardian.split("\0");
      assert.equal(argv[0], ROOT_DENO, guardian);
      assert.ok(
        argv.includes(`${ROOT_SOURCES}/extension/keyboard/terminal_guardian.ts`),
        guardian,
      );
      assert.equal(out.get("guardian-ptrace"), "EPERM", results[0]);
      assert.equal(out.get("guardian-pidfd_getfd"), "EPERM", results[0]);
      await answerLegit(pi, "FLOW-DONE");
      const all = await waitForResults(pi, 2);
      assert.equal(all[1].trim(), "0", "the legitimate sudo ran as root");
      await assertNoLeak(pi, PASSWORD);
      // The human's view of the same: /sudo-prompt doctor inside pi.
      await pi.tmux.sendText("/sudo-prompt doctor");
      await submitCommand(pi, "doctor");
      const doctor = await pi.tmux.waitFor(/X11 keyboard/, 30_000);
      assert.match(doctor, /✓ exclusive terminal/);
      assert.match(doctor, /✓ pi non-dumpable/);
      assert.match(doctor, /✓ terminal multiplexer/);
      await pi.tmux.sendKeys("Escape");
    }, { rows: 100 }); // tall enough for the whole doctor panel
  });

  it("a key logger that copied the terminal out of pi's shell before the modal: terminal_shared, no modal; once it is stopped sudo works", async () => {
    await loggerBeforeModal("steal");
  });

  it("the same key logger hiding the copy in a thread with its own descriptor table: terminal_shared, no modal", async () => {
    await loggerBeforeModal("steal-in-thread");
  });

  it("the same key logger in a thread whose main thread exited (a zombie leader): terminal_shared, no modal", async () => {
    await loggerBeforeModal("steal-leaderless");
  });

  it("a key logger that copies the terminal while the modal is open: the modal closes within a second (terminal_shared)", async () => {
    await loggerDuringModal("steal", /has this terminal open/);
  });

  it("the same logger hiding itself (non-dumpable) once it holds the copy: the modal closes within a second", async () => {
    // The user's scan sees a young hidden process (terminal_unverifiable);
    // with the broker, root's re-check sees the holder (terminal_shared).
    await loggerDuringModal("steal-then-hide", /(has this terminal open|hides its open files)/);
  });

  it("pi killed with SIGKILL while its terminal is exclusive: the guardian releases it and sudo -v in that shell prompts and works", async () => {
    await withPiInBash(async ({ tmux, tty, pi }) => {
      await guardianHolding(pi);
      kill9(pi);
      await tmux.waitFor(/Killed/, 10_000);
      await waitFor("the terminal to be released", () => Promise.resolve(opens(tty)), 30_000);
      await sudoInShell(tmux, "SUDO-42");
    });
  });

  it("hardened mode: a reader that opened the terminal before pi and then hid itself (non-dumpable) is found by root: terminal_shared, no modal", async () => {
    assert.ok(await rootCheckInstalled(TERMINAL_CHECK), "the root phase installs the broker");
    await withLoggerScratch(async (dir) => {
      const script: FauxStep[] = [{ bash: `${LEGIT}; echo "rc=$?"` }, { text: "FLOW-DONE" }];
      await withPiInBash(async ({ tmux }) => {
        const logger = await loggerPid(dir);
        await tmux.sendText("go");
        await tmux.sendKeys("Enter");
        await tmux.waitFor("FLOW-DONE", 30_000);
        const screen = await tmux.capture({ history: true });
        assert.equal(count(screen, TITLE), 0, "no modal");
        assert.match(flat(screen), /rc=1/);
        assert.match(flat(screen), new RegExp(`process ${logger} \\(.*has this terminal open`));
      }, {
        script,
        // Started from the shell before pi: the terminal is not exclusive yet.
        before: async (tmux, tty) => {
          const hold =
            `python3 '${ATTACKS}' hold-hidden '${tty}' '${dir}/keys' '${dir}/marker' 120`;
          await tmux.sendText(`setsid ${hold} </dev/null >/dev/null 2>&1 &`);
          await tmux.sendKeys("Enter");
          await loggerPid(dir);
        },
      });
    });
  });

  it("Ctrl+Z releases the terminal for the shell (sudo prompts there); fg takes it back", async () => {
    await withPiInBash(async ({ tmux, tty, pi }) => {
      await guardianHolding(pi);
      await tmux.sendKeys("C-z");
      await tmux.waitFor(/Stopped/, 10_000);
      await waitFor("the terminal to be released", () => Promise.resolve(opens(tty)), 30_000);
      await sudoInShell(tmux, "SUDO-43");
      await tmux.sendText("fg");
      await tmux.sendKeys("Enter");
      await waitFor("the terminal to be exclusive again", () => Promise.resolve(busy(tty)), 10_000);
    });
  });
});

/**
 * A logger started in the background of the legitimate call takes the
 * terminal once the modal is open (the test has seen it): the modal must
 * close within a second and the notice name the logger; once it is stopped,
 * sudo works.
 */
async function loggerDuringModal(mode: string, notice: RegExp): Promise<void> {
  await withLoggerScratch(async (dir) => {
    const script: FauxStep[] = [
      { bash: `${stealCommand(dir, 120, true, mode)} ${LEGIT}; echo "rc=$?"` },
      {
        bash:
          `i=0; while [ ! -e '${dir}/stopped' ] && [ "$i" -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; ${LEGIT}`,
      },
      { text: "FLOW-DONE" },
    ];
    await withPi(script, async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      await pi.tmux.waitFor(TITLE, 30_000);
      await writeFile(join(dir, MODAL_SEEN), "");
      const logger = await loggerPid(dir);
      const seen = Date.now();
      await pi.tmux.waitForGone(TITLE, 5_000);
      const closedAfter = Date.now() - seen;
      assert.ok(
        closedAfter < 1_500,
        `the modal stayed ${closedAfter} ms after the logger took hold`,
      );
      const results = await waitForResults(pi, 1);
      assert.match(results[0], /rc=1/, results[0]);
      const named = new RegExp(`process ${logger} \\(.*${notice.source}`);
      await pi.tmux.waitUntil((t) => named.test(flat(t)), "the notice", {
        timeoutMs: 10_000,
        history: true,
      });
      kill9(logger);
      await waitFor("the logger to die", async () => await isRunning(logger) ? undefined : true);
      await writeFile(join(dir, "stopped"), "");
      await answerLegit(pi, "FLOW-DONE");
      const all = await waitForResults(pi, 2);
      assert.equal(all[1].trim(), "0");
      await assertNoLeak(pi, PASSWORD, { extraDirs: [dir] });
    });
  });
}

/**
 * A logger started by one tool call copies the terminal; the next tool
 * call's sudo gets no modal; once the human stops the logger, it does.
 */
async function loggerBeforeModal(mode: string): Promise<void> {
  await withLoggerScratch(async (dir) => {
    const script: FauxStep[] = [
      // The next call starts once the logger holds the terminal (its marker).
      { bash: `${stealCommand(dir, 120, false, mode)} ${loggerMarker(dir)}` },
      { bash: `${LEGIT}; echo "rc=$?"` },
      // The human stops the logger; the agent's next sudo then gets a modal.
      {
        bash:
          `i=0; while [ ! -e '${dir}/stopped' ] && [ "$i" -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; ${LEGIT}`,
      },
      { text: "FLOW-DONE" },
    ];
    await withPi(script, async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      const logger = await loggerPid(dir);
      const refused = await waitForResults(pi, 2);
      assert.match(refused[1], /no password was provided/, refused[1]);
      assert.match(refused[1], /rc=1/);
      // The notice is drawn a moment after the result is recorded.
      const notice = new RegExp(`process ${logger} \\(.*has this terminal open`);
      const screen = await pi.tmux.waitUntil((t) => notice.test(flat(t)), "the notice", {
        timeoutMs: 10_000,
        history: true,
      });
      assert.equal(count(screen, TITLE), 0, "no modal opened while the logger ran");
      assert.match(flat(screen), /details: \/sudo-prompt doctor terminal_shared/);
      kill9(logger);
      await waitFor("the logger to die", async () => await isRunning(logger) ? undefined : true);
      await writeFile(join(dir, "stopped"), "");
      await answerLegit(pi, "FLOW-DONE");
      const all = await waitForResults(pi, 3);
      assert.equal(all[2].trim(), "0", "the legitimate sudo ran as root");
      if (mode === "steal") {
        // The notice's pointer works: doctor explains the reason inside pi
        // (typed once pi is idle: while the agent works, pi queues it).
        await pi.tmux.waitFor("FLOW-DONE", 15_000);
        await pi.tmux.sendText("/sudo-prompt doctor terminal_shared");
        await submitCommand(pi, "doctor terminal_shared");
        const panel = await pi.tmux.waitFor(/what to do: +stop the process/, 15_000);
        assert.match(flat(panel), /what happened: another process has pi's terminal open/);
        await pi.tmux.sendKeys("Escape");
        await pi.tmux.waitForGone("what to do:", 5_000);
      }
      const keys = await readFile(join(dir, "keys"), "utf8").catch(() => "");
      assert.ok(!keys.includes(PASSWORD), "the logger got the password");
      await assertNoLeak(pi, PASSWORD, { extraDirs: [dir] });
    });
  });
}
