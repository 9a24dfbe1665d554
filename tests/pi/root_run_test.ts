/**
 * The modal shows what root will run (issue 22, ADR 0006), from real pi tool
 * calls with real sudo: a program name is passed to sudo as its absolute path
 * in root's directories (a look-alike planted first on `PATH`, in the
 * session's `bin`, never runs as root); a program the user could have
 * written, a bare name that is not in root's directories, `-s` with a planted
 * `SHELL`, `-E` with a planted variable and `VAR=value` are each named in red
 * before anyone types; and `--sudo-refuse-risky` refuses them instead.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FauxStep } from "./faux_provider.ts";
import { type PiSession, startPi } from "./pi_runner.ts";
import { testPassword } from "../helpers/test_env.ts";
import {
  assertNoLeak,
  EXTENSION,
  TITLE,
  toolResults,
  typeMasked,
  waitFor,
} from "./attack_scripts/pi_checks.ts";

const PASSWORD = testPassword();
/** The error colour's SGR in pi's default theme is a foreground colour: any one, on the ‼ row. */
// deno-lint-ignore no-control-regex -- an SGR sequence is what is looked for
const RED_ROW = /\x1b\[[0-9;]*m‼ /;

async function withPi(
  script: FauxStep[],
  run: (pi: PiSession) => Promise<void>,
  args: string[] = [],
): Promise<void> {
  const pi = await startPi({ script, extensions: [EXTENSION], args, rows: 50 });
  try {
    await run(pi);
    await assertNoLeak(pi, PASSWORD);
  } finally {
    await pi.close();
  }
}

function waitForResults(pi: PiSession, n: number): Promise<string[]> {
  return waitFor(`${n} tool result(s)`, async () => {
    const results = toolResults(await pi.readSessions());
    return results.length >= n ? results : undefined;
  }, 30_000);
}

/**
 * The modal on screen now: the text inside its frame (what lies beside the
 * overlay is the chat), rows joined with single spaces.
 */
async function modalText(pi: PiSession): Promise<{ flat: string; ansi: string }> {
  await pi.tmux.waitFor(TITLE, 30_000);
  // The whole modal: a capture can land while pi is still writing the frame.
  const screen = await pi.tmux.waitFor("Press Enter to submit", 10_000);
  const rows = screen.split("\n").flatMap((line) => {
    const first = line.indexOf("│");
    const last = line.lastIndexOf("│");
    return first >= 0 && last > first ? [line.slice(first + 1, last)] : [];
  });
  return {
    flat: rows.join(" ").replace(/\s+/g, " "),
    ansi: await pi.tmux.capture({ ansi: true }),
  };
}

// A look-alike apt-get and a tool of the agent's, in the first directory on the
// call's PATH (the session's own bin, which the user can write).
const PLANT = 'bin=${PATH%%:*}; mkdir -p "$bin"; ' +
  `printf '#!/bin/sh\\necho planted\\n' >"$bin/apt-get"; cp "$bin/apt-get" "$bin/mytool"; ` +
  'chmod +x "$bin/apt-get" "$bin/mytool"; echo "first on PATH: $(command -v apt-get)"; ';

describe("the modal shows what root will run (real pi, real sudo)", () => {
  it("a planted apt-get first on PATH never runs as root: sudo gets /usr/bin/apt-get, shown without a warning", async () => {
    await withPi(
      [{ bash: `${PLANT}sudo -k apt-get -v | head -n 1` }, { text: "FLOW-DONE" }],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        const { flat } = await modalText(pi);
        assert.match(flat, /Command: \/usr\/bin\/sudo -A -k \/usr\/bin\/apt-get -v/);
        assert.doesNotMatch(flat, /‼/, "nothing to warn about");
        assert.match(flat, /Approves: this one sudo\./);
        await typeMasked(pi, PASSWORD);
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor("FLOW-DONE", 30_000);
        const [out] = await waitForResults(pi, 1);
        assert.match(out, /first on PATH: \/\S+\/bin\/apt-get/);
        assert.match(out, /^apt \d/m, "root ran the real apt-get");
        assert.doesNotMatch(out, /planted/);
      },
    );
  });

  it("a program the user could have written, a bare name not in root's directories, -s with a planted SHELL, -E with a planted variable and VAR=value are each named in red", async () => {
    const cases: [string, RegExp][] = [
      [`${PLANT}sudo -k mytool`, /‼ mytool: not an absolute path; sudo looks it up/],
      [
        'sudo -k "$(command -v mytool)"',
        /‼ \/\S+\/bin\/mytool: the program is not root's: you, and the agent, could have changed it/,
      ],
      [
        // A link to a root-owned program, where the agent can re-point it after the modal.
        'ln -sf /usr/bin/id "${PATH%%:*}/id-link"; sudo -k "${PATH%%:*}/id-link" -u',
        /‼ \/\S+\/bin\/id-link: the program is not root's: you, and the agent, could have changed it/,
      ],
      [
        "SHELL=/tmp/planted-shell sudo -k -s -- id -u",
        /‼ -s: root runs the shell named by \$SHELL/,
      ],
      [
        "APT_CONFIG=/tmp/planted.conf sudo -k -E apt-get -v",
        /‼ -E: root keeps the command's environment: variables such as APT_CONFIG/,
      ],
      [
        "sudo -k DEBIAN_FRONTEND=noninteractive id -u",
        /‼ DEBIAN_FRONTEND=noninteractive: set in root's environment/,
      ],
    ];
    await withPi(
      [...cases.map(([bash]) => ({ bash: `${bash}; echo "rc=$?"` })), { text: "FLOW-DONE" }],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        for (const [i, [, warning]] of cases.entries()) {
          const { flat, ansi } = await modalText(pi);
          assert.match(flat, warning, `case ${i}`);
          assert.match(ansi, RED_ROW, `case ${i}: the warning is coloured`);
          // The human reads it and cancels: nothing runs as root.
          await pi.tmux.sendKeys("Escape");
          const results = await waitForResults(pi, i + 1);
          assert.match(results[i], /rc=1/, `case ${i}`);
        }
        await pi.tmux.waitFor("FLOW-DONE", 30_000);
      },
    );
  });

  it("--sudo-refuse-risky: such a sudo is refused (risky_sudo) with a notice, no modal; a plain sudo still works", async () => {
    await withPi(
      [
        { bash: 'sudo -k -E id -u; echo "rc=$?"' },
        { bash: "sudo -k id -u" },
        { text: "FLOW-DONE" },
      ],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        // The first modal that opens is the second call's.
        const { flat } = await modalText(pi);
        assert.match(flat, /Command: \/usr\/bin\/sudo -A -k \/usr\/bin\/id -u/);
        const [refused] = await waitForResults(pi, 1);
        assert.match(refused, /rc=1/);
        await typeMasked(pi, PASSWORD);
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor("FLOW-DONE", 30_000);
        const results = await waitForResults(pi, 2);
        assert.equal(results[1].trim(), "0");
        const notices = (await pi.tmux.capture({ history: true })).replace(/\s+/g, " ");
        assert.match(
          notices,
          /this sudo lets its environment choose what root runs \(risky_sudo, pid \d+\)\. Run the program by its root-owned absolute path/,
        );
      },
      ["--sudo-refuse-risky"],
    );
  });
});
