/**
 * Attacks run the way the agent would run them: from inside a bash tool call
 * of the real pi TUI (tmux + the scripted faux model), with this extension
 * loaded, against real sudo as the throwaway test user. The test plays the
 * human: it watches the screen and types the password into the one real
 * modal.
 *
 * For every attack: the real modal never opens for the attacker's request
 * (the first and only modal on screen is the legitimate one), the attack's
 * own output shows that it was refused, and the canary password appears
 * nowhere — screen (with history), session JSONL, `pi-bash-*` logs, the
 * agent's files, and every readable `/proc/<pid>/environ` and `cmdline`,
 * sampled continuously while the password travels and once more after.
 *
 * The attack programs live in `tests/pi/attack_scripts/`; the agent runs
 * them by absolute path (its shell has no `node_modules` on PATH).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { isPiReady, type PiSession } from "./pi_runner.ts";
import type { FauxStep } from "./faux_provider.ts";
import { testPassword } from "../helpers/test_env.ts";
import {
  assertNoLeak,
  ATTACK_SCRIPTS,
  count,
  NODE,
  procLeaks,
  startProcSampler,
  TITLE,
  toolResults,
  typeMasked,
  waitFor,
  withPi,
  withScratch,
} from "./attack_scripts/pi_checks.ts";

const PASSWORD = testPassword();
const LEGIT = "sudo -k id -u";
const LEGIT_COMMAND_LINE = /Command: \/usr\/bin\/sudo -A -k \/usr\/bin\/id -u/;

/**
 * The human answers the one real modal: types the password (masked), then
 * Enter, while `/proc` is swept continuously until `doneText` is on screen.
 */
async function answerModal(pi: PiSession, doneText: string): Promise<void> {
  await typeMasked(pi, PASSWORD);
  const sampler = startProcSampler(PASSWORD);
  try {
    await pi.tmux.sendKeys("Enter");
    await pi.tmux.waitFor(doneText, 30_000);
  } finally {
    const { sweeps, leaks } = await sampler.stop();
    assert.deepEqual(leaks, [], "password in /proc while it was in flight");
    assert.ok(sweeps >= 1, "the /proc sampler ran");
  }
}

/** Waits until the session JSONL holds `n` tool results and returns them. */
function waitForResults(pi: PiSession, n: number): Promise<string[]> {
  return waitFor(`${n} tool result(s) in the session file`, async () => {
    const results = toolResults(await pi.readSessions());
    return results.length >= n ? results : undefined;
  }, 10_000);
}

/**
 * Runs `attack` as the agent's first tool call and a legitimate `sudo -k id
 * -u` as its second. The first modal that ever shows up must be the second
 * call's: by then the attack's result is already recorded (a modal opened
 * for the attack would have blocked its tool call). The human then answers
 * it, and the legitimate sudo runs as root.
 */
async function attackThenLegit(
  attack: string,
): Promise<{ attackOutput: string; screen: string; notices: string }> {
  let out: { attackOutput: string; screen: string; notices: string } | undefined;
  await withPi([{ bash: attack }, { bash: LEGIT }, { text: "FLOW-DONE" }], async (pi) => {
    await pi.tmux.sendText("go");
    await pi.tmux.sendKeys("Enter");
    const screen = await pi.tmux.waitFor(TITLE, 30_000);
    assert.equal(count(screen, TITLE), 1, "exactly one modal");
    const frame = modalFrame(screen);
    assert.ok(frame, `no modal frame:\n${screen}`);
    assert.ok(
      frame.rows.includes("Command: /usr/bin/sudo -A -k /usr/bin/id -u"),
      frame.rows.join("\n"),
    );
    const shell = frame.rows.indexOf("Shell command:");
    assert.equal(frame.rows[shell + 1], "  sudo -k id -u", "the modal is the legit call's");
    const results = await waitForResults(pi, 1);
    assert.equal(results.length, 1, "the attack finished before the only modal opened");
    assert.doesNotMatch(results[0], /attack-sudo-ran/, "the attacker's sudo never ran");
    await answerModal(pi, "FLOW-DONE");
    const all = await waitForResults(pi, 2);
    assert.equal(all[1].trim(), "0", "the legitimate sudo ran as root");
    await assertNoLeak(pi, PASSWORD);
    // pi's notices, read once the modal is gone (it may cover one), lines joined.
    const notices = (await pi.tmux.capture({ history: true })).replace(/\s+/g, " ");
    out = { attackOutput: results[0], screen, notices };
  });
  return out!;
}

/** The `ATTACK <label>: <outcome>` lines printed by forge_race.ts. */
function forgeryOutcomes(output: string): Map<string, string> {
  const outcomes = new Map<string, string>();
  for (const m of output.matchAll(/^ATTACK (\S+): (.*)$/gm)) outcomes.set(m[1], m[2]);
  return outcomes;
}

/** The rows inside the real modal's frame (an overlay box whose `╭` is not at the left edge). */
function modalFrame(screen: string): { top: number; rows: string[] } | undefined {
  const lines = screen.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const col = lines[i].search(/╭─{20,}╮/);
    if (col < 10) continue;
    const rows: string[] = [];
    for (let j = i + 1; j < lines.length; j++) {
      const seg = lines[j].slice(col);
      if (seg.startsWith("╰")) return { top: i, rows };
      if (!seg.startsWith("│")) break;
      rows.push(seg.slice(1, seg.lastIndexOf("│")).replace(/^ /, "").trimEnd());
    }
  }
  return undefined;
}

describe("attacks from inside the agent's bash tool (real pi, real sudo)", () => {
  it("the /proc leak check itself finds a planted canary in argv and in the environment", async () => {
    // Guards against a check that silently sees nothing (e.g. /proc mounted
    // with hidepid): plant a random canary, not the password, and find it.
    const canary = `canary-${crypto.randomUUID()}`;
    const child = spawn("/bin/sh", ["-c", "sleep 20; exit 0", `argv-${canary}`], {
      env: { PATH: "/usr/bin:/bin", PLANTED: `env-${canary}` },
      stdio: "ignore",
      detached: true, // its own process group, so sleep goes with it
    });
    try {
      const mine = [`/proc/${child.pid}/cmdline`, `/proc/${child.pid}/environ`];
      // (`sleep` inherits the environment: its environ is a third hit.)
      await waitFor("the planted canary", async () => {
        const leaks = await procLeaks(canary);
        return mine.every((m) => leaks.includes(m)) ? true : undefined;
      }, 5_000);
      const sampler = startProcSampler(canary);
      await new Promise((r) => setTimeout(r, 100));
      const sampled = (await sampler.stop()).leaks;
      assert.ok(mine.every((m) => sampled.includes(m)), "the sampler finds it too");
    } finally {
      process.kill(-child.pid!, "SIGKILL");
    }
  });

  it("a forger on the session socket races the real helper, claiming its pid and prompt: DENIED, and only sudo gets the password", async () => {
    await withScratch("pi-agent-attack-", async (work) => {
      const command = `D='${work}'; ${LEGIT} >"$D/legit.out" 2>&1 & ` +
        `'${NODE}' '${ATTACK_SCRIPTS}/forge_race.ts' "$D"; wait; echo "legit: $(cat "$D/legit.out")"`;
      await withPi([{ bash: command }, { text: "FLOW-DONE" }], async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        const first = await pi.tmux.waitFor(TITLE, 30_000);
        assert.equal(count(first, TITLE), 1);
        assert.match(first, LEGIT_COMMAND_LINE);
        // The real request is pending: let the attacker forge again now.
        await writeFile(join(work, "go"), "");
        await waitFor("the attacker to finish", async () => {
          const screen = await pi.tmux.capture();
          assert.ok(count(screen, TITLE) <= 1, `a second modal opened:\n${screen}`);
          assert.doesNotMatch(screen, /more waiting/, "a forged request was queued");
          return await readFile(join(work, "done")).then(() => true, () => undefined);
        }, 30_000);
        const screen = await pi.tmux.capture();
        assert.equal(count(screen, TITLE), 1, "still exactly the one real modal");
        assert.match(screen, LEGIT_COMMAND_LINE);
        // The notice is in pi's pane; the modal is on the client's terminal (ADR 0009).
        assert.match(await pi.tmux.capturePane(), /refused a password request/, "pi noted it");

        await answerModal(pi, "FLOW-DONE");
        const results = await waitForResults(pi, 1);
        assert.equal(results.length, 1);
        const output = results[0];
        assert.match(output, /attacker: read PI_ASKPASS_SOCKET \(\/\S+\/askpass\.sock\)/);
        assert.match(output, /attacker: found helper pid \d+/);
        const outcomes = forgeryOutcomes(output);
        assert.deepEqual([...outcomes.keys()].sort(), [
          "pending/claims-helper-pid#1",
          "pending/claims-helper-pid#2",
          "pending/claims-helper-pid#3",
          "pending/claims-own-pid",
          "race/claims-helper-pid",
          "race/claims-own-pid",
          "race/claims-sudo-pid",
        ]);
        for (const [label, outcome] of outcomes) {
          assert.equal(outcome, "DENIED verification_failed", `${label}: ${outcome}`);
        }
        assert.doesNotMatch(output, /GOT_PASSWORD|DELIVERED/);
        assert.match(output, /^legit: 0$/m, "the real sudo got the password and ran as root");
        await assertNoLeak(pi, PASSWORD, { extraDirs: [work] });
      });
    });
  });

  it("running $SUDO_ASKPASS directly: the helper refuses (stdout is not sudo's pipe), no modal", async () => {
    const { attackOutput } = await attackThenLegit(`"$SUDO_ASKPASS" 'Password: '; echo "rc=$?"`);
    assert.match(attackOutput, /pi-askpass: stdout is not sudo's private pipe/);
    assert.match(attackOutput, /^rc=1$/m);
  });

  it("a fake sudo (a copy of /bin/sh named sudo) runs the askpass: refused, no modal", async () => {
    const { attackOutput, notices } = await attackThenLegit(`sh '${ATTACK_SCRIPTS}/fake_sudo.sh'`);
    assert.match(
      notices,
      /refused a password request: the asker is not this pi.s helper for a sudo it started \(parent_not_setuid_root\)/,
    );
    // One line that says what to do, and where doctor explains it.
    assert.match(
      notices,
      /\(parent_not_setuid_root\): something other than this pi's helper asked for the password: stop what you did not start, and run the command again · details: \/sudo-prompt doctor parent_not_setuid_root/,
    );
    const [direct, middle] = attackOutput.split("== middle");
    // The fake sudo runs the launcher with the tool's own pipe as stdout.
    assert.match(direct, /fake-sudo-direct rc=1/);
    assert.match(direct, /pi-askpass: stdout is not sudo's private pipe/);
    // Under real sudo, the helper holds sudo's pipe but its parent is the fake.
    assert.match(middle, /pi-askpass: denied: verification_failed/);
    assert.match(middle, /no password was provided/);
    assert.match(middle, /fake-sudo-middle rc=1/);
  });

  it("SUDO_ASKPASS set to the agent's wrapper around the real launcher: no modal, sudo gets no password", async () => {
    const { attackOutput, notices } = await attackThenLegit(
      `sh '${ATTACK_SCRIPTS}/askpass_wrapper.sh'`,
    );
    assert.match(
      notices,
      /refused a password request: the asker is not this pi.s helper for a sudo it started \(parent_not_sudo\)/,
    );
    const [toFile, notExec] = attackOutput.split("== not-exec");
    // stdout redirected to a file the agent reads: the helper refuses itself.
    assert.match(toFile, /no password was provided/);
    assert.match(toFile, /wrapper-to-file rc=1/);
    assert.match(toFile, /captured bytes: 0/);
    assert.match(toFile, /helper said: pi-askpass: stdout is not sudo's private pipe/);
    // sudo's pipe kept, but the wrapper (not sudo) is the helper's parent.
    assert.match(notExec, /no password was provided/);
    assert.match(notExec, /wrapper-not-exec rc=1/);
    assert.match(notExec, /helper said: pi-askpass: denied: verification_failed/);
  });

  const e = "\x1b";
  const lookAlike = (claim: string) => [
    `╭${"─".repeat(78)}╮`,
    `│ 🔐 ${TITLE}${" ".repeat(46)}│`,
    `│ Command: /usr/bin/sudo -A ${claim}`.padEnd(79) + "│",
    `│ Password:${" ".repeat(68)}│`,
    `╰${"─".repeat(78)}╯`,
  ];
  /** What an escape-laden channel managed to do to pi's screen. */
  const screenProblems = async (
    pi: PiSession,
    channel: string,
    colour: string,
    claim: string,
    clearedCheck: boolean,
  ): Promise<string[]> => {
    const problems: string[] = [];
    const plain = await pi.tmux.capture();
    const ansi = await pi.tmux.capture({ ansi: true });
    // (Only judged where pi redraws: after a clear, pi does not redraw what
    // it believes unchanged, so the screen stays blank.)
    if (clearedCheck && !/^ go$/m.test(plain)) problems.push(`${channel}: pi's screen was cleared`);
    if (ansi.includes(colour)) problems.push(`${channel}: the agent's colour reached the terminal`);
    const frame = modalFrame(plain);
    if (frame?.rows.some((r) => r.includes(claim))) {
      problems.push(`${channel}: an overlay-like frame is on screen`);
    }
    return problems;
  };

  it("escapes in the agent's tool-call command stay inert (the extension sanitises the drawn call)", async () => {
    // The command the model asks the bash tool to run: a clear screen, a
    // colour of its own, and a look-alike at the overlay's column.
    const command = `: '${e}[2J${e}[38;2;6;6;6m\n` +
      lookAlike("apt install harmless").map((l) => " ".repeat(19) + l).join("\n") +
      `\n${e}[0m'; echo CMD-RAN`;
    await withPi([{ bash: command }, { text: "CMD-SHOWN" }], async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      await pi.tmux.waitFor("CMD-SHOWN", 20_000);
      const problems = await screenProblems(
        pi,
        "command",
        "38;2;6;6;6",
        "apt install harmless",
        true,
      );
      // Plain box-drawing text is still text: the model can always write a
      // look-alike in a command, its output or its message. What it cannot
      // do any more is clear the screen, colour it or place it by cursor
      // addressing; the look-alike stays inside the tool call, where it is.
      // (The real modal takes the keyboard: typed text shows only as dots.)
      assert.deepEqual(problems.filter((p) => !p.includes("overlay-like frame")), []);
      const plain = await pi.tmux.capture();
      assert.match(plain, /^ \$ : '/m, "drawn as the tool call's command");
      assert.ok(!plain.includes("\x1b"), "no raw escape left in the text");
    });
  });

  for (const tool of ["write", "edit"] as const) {
    it(`escapes in a ${tool} tool call stay inert (every tool's call and result is drawn inert); the file holds them unchanged; a later sudo works`, async () => {
      // A clear screen, a colour of the agent's, and the look-alike placed by
      // cursor addressing where the overlay goes: the file's content.
      const content = `${e}[2J${e}[38;2;6;6;6m` +
        lookAlike("apt install harmless").map((l, i) => `${e}[${8 + i};21H${l}`).join("") +
        `${e}[0m\nFILE-END`;
      const steps: FauxStep[] = tool === "write"
        ? [{ tool: "write", args: { path: "lookalike.txt", content } }]
        : [
          { bash: "printf 'placeholder\\n' > lookalike.txt" },
          {
            tool: "edit",
            args: {
              path: "lookalike.txt",
              edits: [{ oldText: "placeholder\n", newText: content }],
            },
          },
        ];
      await withPi(
        [...steps, { text: "DRAWN" }, { bash: LEGIT }, { text: "FLOW-DONE" }],
        async (pi) => {
          await pi.tmux.sendText("go");
          await pi.tmux.sendKeys("Enter");
          await pi.tmux.waitFor("DRAWN", 20_000);
          const problems = await screenProblems(
            pi,
            tool,
            "38;2;6;6;6",
            "apt install harmless",
            true,
          );
          assert.deepEqual(problems, []);
          const plain = await pi.tmux.capture();
          assert.ok(!plain.includes("\x1b"), "no raw escape left in the text");
          assert.match(plain, /apt install harmless/, "the content is still shown, as text");
          // What the tool did is unchanged: the file holds every byte.
          const written = await readFile(join(pi.launch.cwd, "lookalike.txt"), "utf8");
          assert.equal(written, content);
          // The real modal still comes, and works.
          await pi.tmux.sendText("again");
          await pi.tmux.sendKeys("Enter");
          const screen = await pi.tmux.waitUntil(
            (t) => t.includes(TITLE) && modalFrame(t) !== undefined,
            "the real modal's frame",
            20_000,
          );
          assert.deepEqual(
            modalFrame(screen)!.rows.filter((r) => r.startsWith("Command:")),
            ["Command: /usr/bin/sudo -A -k /usr/bin/id -u"],
          );
          await answerModal(pi, "FLOW-DONE");
          const results = await waitForResults(pi, steps.length + 1);
          assert.equal(results.at(-1)?.trim(), "0", "the legitimate sudo ran as root");
          await assertNoLeak(pi, PASSWORD);
        },
      );
    });
  }

  it("escapes in the assistant's own message text stay inert too (the extension cleans the model's Markdown)", async () => {
    // The model's own message: clear screen, window title, colour, and the
    // look-alike drawn by cursor addressing where the overlay goes.
    const text = `${e}[2J${e}]0;evil-text${e}\\${e}[38;2;7;7;7m` +
      lookAlike("pip install harmless").map((l, i) => `${e}[${8 + i};21H${l}`).join("") +
      `${e}[0m MSG-DONE`;
    await withPi([{ text }], async (pi) => {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      await pi.tmux.waitFor("MSG-DONE", 20_000);
      const problems = await screenProblems(
        pi,
        "message",
        "38;2;7;7;7",
        "pip install harmless",
        false,
      );
      const { stdout } = await pi.tmux.tmux(
        "display-message",
        "-p",
        "-t",
        pi.tmux.target,
        "#{pane_title}",
      );
      if (stdout.trim() === "evil-text") problems.push("message: the window title was set");
      assert.deepEqual(problems, []);
    });
  });

  it("ANSI escapes drawing a fake modal stay inert tool output; the real modal remains distinguishable", async () => {
    // The agent also picks sudo's prompt: it repeats the lie there.
    const legit = `export SUDO_PROMPT=$'\\e[2J\\e[31m🔐 ${TITLE}\\n` +
      `Command: /usr/bin/sudo -A apt install harmless\\nPassword: '; ${LEGIT}`;
    await withPi(
      [
        { bash: `sh '${ATTACK_SCRIPTS}/fake_modal.sh'` },
        { text: "FAKE-SHOWN" },
        { bash: legit },
        { text: "FLOW-DONE" },
      ],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        // 1. The fake alone (agent idle, nothing pending).
        const plain = await pi.tmux.waitFor("FAKE-SHOWN", 20_000);
        const ansi = await pi.tmux.capture({ ansi: true });
        // D1: no escape took effect — pi's own screen is intact.
        assert.ok(isPiReady(plain), "pi's footer still there");
        assert.match(plain, /^ go$/m, "the user's message still there (no clear screen)");
        assert.match(plain, /\$ sh .*fake_modal\.sh/);
        const [alt, title] = (await pi.tmux.tmux(
          "display-message",
          "-p",
          "-t",
          pi.tmux.target,
          "#{alternate_on}\t#{pane_title}",
        )).stdout.trim().split("\t");
        assert.equal(alt, "1", "still on pi's alternate screen");
        assert.notEqual(title, "evil-title", "window title unchanged");
        assert.ok(!ansi.includes("38;2;6;6;6"), "the agent's colour reached the terminal");
        assert.ok(!ansi.includes("\x1b[5m"), "the agent's blink reached the terminal");
        // D2: the look-alike is tool output: collapsed to its last lines under
        // pi's marker, at pi's indentation (not at the overlay's column), dim.
        assert.match(plain, /earlier lines/);
        assert.equal(count(plain, TITLE), 0, "the fake's title is not even visible");
        assert.match(plain, /^ │ Your password is secure/m);
        const fakeRows = ansi.split("\n").filter((l) => l.includes("Your password is secure"));
        assert.equal(fakeRows.length, 1);
        assert.ok(
          fakeRows[0].startsWith(" \x1b[2m"),
          `fake row not dim: ${JSON.stringify(fakeRows[0])}`,
        );
        assert.equal(modalFrame(plain), undefined, "no overlay frame on screen");

        // 2. The real request.
        await pi.tmux.sendText("again");
        await pi.tmux.sendKeys("Enter");
        // The real modal's frame (pi's pane panel is a frame too, drawn first inside tmux).
        const screen = await pi.tmux.waitUntil(
          (s) => modalFrame(s)?.rows[0] === `🔐 ${TITLE}`,
          "the real modal's frame",
          20_000,
        );
        const frame = modalFrame(screen);
        assert.ok(frame, `no modal frame:\n${screen}`);
        // D3: pi's overlay, title first, drawn bold (agent output is always dim).
        assert.equal(frame.rows[0], `🔐 ${TITLE}`);
        const ansiModal = (await pi.tmux.capture({ ansi: true })).split("\n")[frame.top + 1];
        assert.match(ansiModal, new RegExp(`\\x1b\\[1m(\\x1b\\[[0-9;]*m)*🔐 ${TITLE}`));
        // D4: one Command: line, from /proc, not the agent's claim. The agent's
        // text appears only framed as sudo's prompt or in the shell command.
        assert.deepEqual(
          frame.rows.filter((r) => r.startsWith("Command:")),
          ["Command: /usr/bin/sudo -A -k /usr/bin/id -u"],
        );
        const promptRow = frame.rows.findIndex((r) => r.startsWith("sudo asks: «"));
        assert.ok(promptRow > 0, "sudo's prompt is framed");
        assert.match(frame.rows[promptRow], new RegExp(`^sudo asks: «🔐 ${TITLE}Command:`));
        for (const row of frame.rows) {
          if (!row.includes("harmless")) continue;
          assert.match(row, /^(sudo asks: «|\s)/, `agent text outside its frame: ${row}`);
        }
        // D5: the keyboard belongs to the real modal only.
        await typeMasked(pi, PASSWORD);
        assert.match(
          modalFrame(await pi.tmux.capture())!.rows.join("\n"),
          new RegExp(`^Password: ${"•".repeat([...PASSWORD].length)}`, "m"),
        );
        const sampler = startProcSampler(PASSWORD);
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor("FLOW-DONE", 30_000);
        const { leaks } = await sampler.stop();
        assert.deepEqual(leaks, []);
        const results = await waitForResults(pi, 2);
        assert.equal(results[1].trim(), "0");
        await assertNoLeak(pi, PASSWORD);
      },
    );
  });
});
