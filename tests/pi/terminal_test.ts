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
 * - a tmux binding for a printable key refuses the modal
 *   (`multiplexer_keys_bound`), and it really is a key logger when a real
 *   client types through it;
 * - pi killed with SIGKILL: the guardian releases the terminal and `sudo`
 *   in the same shell prompts again.
 *
 * After each attack a legitimate sudo in the same session still works, and
 * the canary password is nowhere.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import type { FauxStep } from "./faux_provider.ts";
import type { PiSession } from "./pi_runner.ts";
import { testPassword } from "../helpers/test_env.ts";
import {
  assertNoLeak,
  ATTACK_SCRIPTS,
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
import { shQuote } from "../../extension/channel/shell_injection.ts";
import { busy, flat, opens, sudoInShell, withPiInBash } from "./shell_pi.ts";
import { rootTerminalCheckInstalled } from "../../extension/keyboard/root_terminal.ts";
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

/** Starts the key logger of the issue in the background of a tool call. */
function stealCommand(dir: string, seconds: number, delay = 0, mode = "steal"): string {
  const steal = `python3 '${ATTACKS}' ${mode} "$PPID" '${dir}/keys' '${dir}/marker' ${seconds}`;
  return `(sleep ${delay}; exec setsid ${steal}) </dev/null >/dev/null 2>&1 &`;
}

/** The logger's pid, once it holds the terminal. */
function loggerPid(dir: string): Promise<number> {
  return waitFor("the key logger to hold the terminal", async () => {
    const marker = await readFile(join(dir, "marker"), "utf8").catch(() => "");
    assert.doesNotMatch(marker, /^failed/, `the logger could not copy the terminal: ${marker}`);
    const m = /^holding (\d+)$/m.exec(marker);
    return m ? Number(m[1]) : undefined;
  }, 15_000);
}

/** The human's tmux client, as an agent's shell finds it (not a control-mode client). */
const HUMAN_CLIENT =
  "$(tmux list-clients -F '#{?client_control_mode,,#{client_name}}' | grep . | head -n 1)";

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
      assert.match(doctor, /✓ tmux key tables/);
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

  it("a tmux client switched into the agent's key table refuses the modal (multiplexer_keys_bound)", async () => {
    await withLoggerScratch(async (dir) => {
      const log = join(dir, "tmux-keys");
      // The client stays in the table until its next key arrives.
      const table = `tmux bind -r -T logger a run-shell "printf a >> '${log}'" \\; ` +
        `switch-client -c "${HUMAN_CLIENT}" -T logger`;
      const script: FauxStep[] = [
        {
          bash: `while [ ! -e '${dir}/attached' ]; do sleep 0.1; done; ${table}; ${LEGIT}; ` +
            `echo "rc=$?"`,
        },
        { bash: `while [ ! -e '${dir}/reset' ]; do sleep 0.1; done; ${LEGIT}` },
        { text: "FLOW-DONE" },
      ];
      await withPi(script, async (pi) => {
        await withAttachedClient(pi, async (client) => {
          await pi.tmux.sendText("go");
          await pi.tmux.sendKeys("Enter");
          await writeFile(join(dir, "attached"), "");
          const results = await waitForResults(pi, 1);
          assert.match(results[0], /no password was provided/, results[0]);
          const screen = await pi.tmux.waitUntil(
            (t) => /a tmux client of this session types into the key table logger/.test(flat(t)),
            "the notice",
            { timeoutMs: 10_000, history: true },
          );
          assert.equal(count(screen, TITLE), 0, "no modal");
          await pi.tmux.tmux("switch-client", "-c", client.name, "-T", "root");
          await writeFile(join(dir, "reset"), "");
          await answerLegit(pi, "FLOW-DONE");
          const all = await waitForResults(pi, 2);
          assert.equal(all[1].trim(), "0");
          await assertNoLeak(pi, PASSWORD, { extraDirs: [dir] });
        });
      });
    });
  });

  it("a tmux binding for a printable key refuses the modal (multiplexer_keys_bound); through a real attached client it does log keys", async () => {
    await withLoggerScratch(async (dir) => {
      const log = join(dir, "tmux-keys");
      const bind = `tmux bind -n a run-shell "printf a >> '${log}'" \\; send-keys a`;
      const script: FauxStep[] = [
        { bash: `${bind}; ${LEGIT}; echo "rc=$?"` },
        { bash: `while [ ! -e '${dir}/unbound' ]; do sleep 0.1; done; ${LEGIT}` },
        { text: "FLOW-DONE" },
      ];
      await withPi(script, async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        const results = await waitForResults(pi, 1);
        assert.match(results[0], /no password was provided/, results[0]);
        // The notice is drawn a moment after the result is recorded.
        const screen = await pi.tmux.waitUntil(
          (t) => /tmux has printable keys bound where you type \(a\)/.test(flat(t)),
          "the notice",
          { timeoutMs: 10_000, history: true },
        );
        assert.equal(count(screen, TITLE), 0, "no modal");
        // The binding is real: a client attached through a pty (send-keys
        // would bypass the key tables) types "a", and the log records it.
        await typeThroughClient(pi, "a");
        await waitFor(
          "the binding to log the key",
          async () =>
            (await readFile(log, "utf8").catch(() => "")).includes("a") ? true : undefined,
        );
        await pi.tmux.tmux("unbind-key", "-n", "a");
        await writeFile(join(dir, "unbound"), "");
        await answerLegit(pi, "FLOW-DONE");
        const all = await waitForResults(pi, 2);
        assert.equal(all[1].trim(), "0");
        await assertNoLeak(pi, PASSWORD, { extraDirs: [dir] });
      });
    });
  });

  /**
   * How each focus attack starts (`setup`, before the sudo: a second pane
   * made without taking the focus, `$p`), what the agent runs once the modal
   * shows, and where the notice says the keys would go.
   */
  const FOCUS_MOVES = {
    "split-window": {
      setup: "",
      attack: (keys: string) => `tmux split-window -v -l 3 -t "$TMUX_PANE" "cat > '${keys}'"`,
      goesTo: /would go to another pane,/,
    },
    "copy-mode": {
      setup: "",
      // With bindings: in copy mode a printable key runs the agent's logger.
      attack: (keys: string) =>
        `tmux bind -T copy-mode a run-shell "printf a >> '${keys}'" \\; ` +
        `bind -T copy-mode-vi a run-shell "printf a >> '${keys}'" \\; ` +
        `copy-mode -t "$TMUX_PANE"`,
      goesTo: /would go to a mode of pi's pane/,
    },
    "new-window": {
      setup: "",
      attack: (keys: string) => `tmux new-window "cat > '${keys}'"`,
      goesTo: /would go to another window is the active one/,
    },
    "select-pane": {
      setup: "split",
      attack: () => `tmux select-pane -t "$p"`,
      goesTo: /would go to another pane,/,
    },
    "resize-pane -Z": {
      setup: "split",
      attack: () => `tmux resize-pane -Z -t "$p"`,
      goesTo: /would go to another pane is zoomed over pi's/,
    },
    "display-popup": {
      setup: "",
      // The popup draws a look-alike prompt and records what is typed.
      attack: (keys: string) =>
        `tmux display-popup -c "${HUMAN_CLIENT}" -E ` +
        `"printf '[sudo] password:'; cat > '${keys}'" &`,
      goesTo: /would go to a popup \(\d+ /,
    },
  } as const;

  for (const move of Object.keys(FOCUS_MOVES) as (keyof typeof FOCUS_MOVES)[]) {
    it(`F: inside tmux, ${move} takes the keys while the modal shows (a real client attached): the modal is withdrawn (focus_moved), a later sudo works`, async () => {
      const { setup, attack, goesTo } = FOCUS_MOVES[move];
      await withLoggerScratch(async (dir) => {
        const keys = join(dir, "keys");
        const split = setup === "split"
          ? `p=$(tmux split-window -d -v -l 3 -P -F '#{pane_id}' -t "$TMUX_PANE" "cat > '${keys}'"); `
          : "";
        const script: FauxStep[] = [
          {
            bash: `${split}(while [ ! -e '${dir}/shown' ]; do sleep 0.05; done; ${
              attack(keys)
            }) & ${LEGIT}; echo "rc=$?"`,
          },
          { bash: `while [ ! -e '${dir}/back' ]; do sleep 0.1; done; ${LEGIT}` },
          { text: "FLOW-DONE" },
        ];
        await withPi(script, async (pi) => {
          const paneId =
            (await pi.tmux.tmux("display-message", "-p", "-t", pi.tmux.target, "#{pane_id}"))
              .stdout.trim();
          const piPane = () =>
            pi.tmux.tmux("capture-pane", "-p", "-t", paneId).then((r) => r.stdout);
          await withAttachedClient(pi, async (client) => {
            await pi.tmux.sendText("go");
            await pi.tmux.sendKeys("Enter");
            await pi.tmux.waitFor(TITLE, 30_000);
            await writeFile(join(dir, "shown"), "");
            // The human looks at pi's pane: the modal must be gone before they type.
            const moved = Date.now();
            await waitFor("the modal withdrawn", async () => {
              return (await piPane()).includes(TITLE) ? undefined : true;
            }, 5_000);
            const after = Date.now() - moved;
            assert.ok(after < 2_500, `the modal stayed ${after} ms after the focus moved`);
            const results = await waitForResults(pi, 1);
            assert.match(results[0], /rc=1/, results[0]);
            const screen = flat(await piPane() + await pi.tmux.capture({ history: true }));
            assert.match(screen, /keys typed now would go to/);
            assert.match(screen, goesTo);
            assert.match(screen, /details: \/sudo-prompt doctor focus_moved/);
            // Focus back on pi: close the popup, leave the mode, unzoom, kill
            // the agent's pane or window.
            if (move === "display-popup") {
              await pi.tmux.tmux("display-popup", "-C", "-c", client.name);
            }
            if (move === "copy-mode") await pi.tmux.tmux("send-keys", "-X", "-t", paneId, "cancel");
            const zoomed = await pi.tmux.tmux(
              "display-message",
              "-p",
              "-t",
              paneId,
              "#{window_zoomed_flag}",
            );
            if (zoomed.stdout.trim() === "1") {
              await pi.tmux.tmux("resize-pane", "-Z", "-t", paneId);
            }
            if (move === "new-window") await pi.tmux.tmux("kill-window", "-a", "-t", paneId);
            else await pi.tmux.tmux("kill-pane", "-a", "-t", paneId);
            await pi.tmux.tmux("select-window", "-t", paneId);
            await pi.tmux.tmux("select-pane", "-t", paneId);
            client.type("");
          });
          await writeFile(join(dir, "back"), "");
          await answerLegit(pi, "FLOW-DONE");
          const all = await waitForResults(pi, 2);
          assert.equal(all[1].trim(), "0");
          const logged = await readFile(keys, "utf8").catch(() => "");
          assert.ok(!logged.includes(PASSWORD), "the agent's pane got the password");
          await assertNoLeak(pi, PASSWORD, { extraDirs: [dir] });
        });
      });
    });
  }

  it("F: a tmux user key (user-keys[0] = a, bind -n User0) refuses the modal (multiplexer_keys_bound); through a real client it does log keys", async () => {
    await withLoggerScratch(async (dir) => {
      const log = join(dir, "tmux-keys");
      const bind =
        `tmux set -s 'user-keys[0]' a \\; bind -n User0 run-shell "printf a >> '${log}'"`;
      const script: FauxStep[] = [
        { bash: `${bind}; ${LEGIT}; echo "rc=$?"` },
        { bash: `while [ ! -e '${dir}/unbound' ]; do sleep 0.1; done; ${LEGIT}` },
        { text: "FLOW-DONE" },
      ];
      await withPi(script, async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        const results = await waitForResults(pi, 1);
        assert.match(results[0], /no password was provided/, results[0]);
        const screen = await pi.tmux.waitUntil(
          (t) => /tmux has printable keys bound where you type \(User0\)/.test(flat(t)),
          "the notice",
          { timeoutMs: 10_000, history: true },
        );
        assert.equal(count(screen, TITLE), 0, "no modal");
        assert.match(flat(screen), /details: \/sudo-prompt doctor multiplexer_keys_bound/);
        // The user key is real: "a" typed through an attached client runs the binding.
        await typeThroughClient(pi, "a");
        await waitFor(
          "the user key to log",
          async () =>
            (await readFile(log, "utf8").catch(() => "")).includes("a") ? true : undefined,
        );
        await pi.tmux.tmux("unbind-key", "-n", "User0");
        await pi.tmux.tmux("set", "-su", "user-keys[0]");
        await writeFile(join(dir, "unbound"), "");
        await answerLegit(pi, "FLOW-DONE");
        const all = await waitForResults(pi, 2);
        assert.equal(all[1].trim(), "0");
        await assertNoLeak(pi, PASSWORD, { extraDirs: [dir] });
      });
    });
  });

  it("pi killed with SIGKILL while its terminal is exclusive: the guardian releases it and sudo -v in that shell prompts and works", async () => {
    await withPiInBash(async ({ tmux, tty, pi }) => {
      kill9(pi);
      await tmux.waitFor(/Killed/, 10_000);
      await waitFor("the terminal to be released", () => Promise.resolve(opens(tty)), 5_000);
      await sudoInShell(tmux, "SUDO-42");
    });
  });

  it("hardened mode: a reader that opened the terminal before pi and then hid itself (non-dumpable) is found by root: terminal_shared, no modal", async () => {
    assert.ok(await rootTerminalCheckInstalled(), "the root phase installs the broker");
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
    await withPiInBash(async ({ tmux, tty }) => {
      await tmux.sendKeys("C-z");
      await tmux.waitFor(/Stopped/, 10_000);
      await waitFor("the terminal to be released", () => Promise.resolve(opens(tty)), 5_000);
      await sudoInShell(tmux, "SUDO-43");
      await tmux.sendText("fg");
      await tmux.sendKeys("Enter");
      await waitFor("the terminal to be exclusive again", () => Promise.resolve(busy(tty)), 10_000);
    });
  });
});

/**
 * A logger started in the background of the legitimate call takes the
 * terminal 2 s later, while the modal is open: the modal must close within a
 * second and the notice name the logger; once it is stopped, sudo works.
 */
async function loggerDuringModal(mode: string, notice: RegExp): Promise<void> {
  await withLoggerScratch(async (dir) => {
    const script: FauxStep[] = [
      { bash: `${stealCommand(dir, 120, 2, mode)} ${LEGIT}; echo "rc=$?"` },
      { bash: `while [ ! -e '${dir}/stopped' ]; do sleep 0.1; done; ${LEGIT}` },
      { text: "FLOW-DONE" },
    ];
    await withPi(script, async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      await pi.tmux.waitFor(TITLE, 30_000);
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
      { bash: `${stealCommand(dir, 120, 0, mode)} sleep 1; cat '${dir}/marker'` },
      { bash: `${LEGIT}; echo "rc=$?"` },
      // The human stops the logger; the agent's next sudo then gets a modal.
      { bash: `while [ ! -e '${dir}/stopped' ]; do sleep 0.1; done; ${LEGIT}` },
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

/**
 * Runs `run` while a real tmux client is attached to pi's session through a
 * pseudo-terminal (`script` makes one): keys written to it go through tmux's
 * key tables as a human's would. `run` gets the client's name and a writer.
 */
async function withAttachedClient(
  pi: PiSession,
  run: (client: { name: string; type(text: string): void }) => Promise<void>,
): Promise<void> {
  const socket = pi.tmux.socket;
  const client = spawn(
    "script",
    ["-qfc", `tmux -S ${shQuote(socket)} attach -t test`, "/dev/null"],
    {
      stdio: ["pipe", "ignore", "ignore"],
      env: { ...process.env, TERM: "xterm-256color" },
    },
  );
  try {
    const name = await waitFor("the client to attach", async () => {
      // Not pi's own control-mode client (extension/keyboard/tmux_control.ts).
      const r = await pi.tmux.tmux("list-clients", "-F", "#{?client_control_mode,,#{client_name}}");
      return r.stdout.split("\n").find((name) => name !== "") || undefined;
    }, 10_000);
    await run({ name, type: (text) => client.stdin.write(text) });
  } finally {
    // Detach first: killing `script` alone can leave the tmux client behind.
    await pi.tmux.tmux("detach-client", "-s", "test").catch(() => {});
    client.kill("SIGKILL");
  }
}

/** Types `text` through a real attached client (see {@link withAttachedClient}). */
function typeThroughClient(pi: PiSession, text: string): Promise<void> {
  return withAttachedClient(pi, async (client) => {
    client.type(text);
    await new Promise((r) => setTimeout(r, 500));
  });
}
