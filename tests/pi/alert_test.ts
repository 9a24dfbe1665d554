/**
 * A modal that waits calls the user (issue 36): real pi in tmux, the human's
 * client on another window of pi's session, the agent's real sudo. When the
 * modal opens, tmux marks pi's window with the bell, pi's pane carries the
 * request in its title, and the desktop notifications (OSC 9 and 777, passed
 * through tmux) are in pi's output; after Escape the title is pi's again,
 * and the tool result tells the agent in one plain line that the user declined.
 * With `PI_SUDO_PROMPT_QUIET=1` none of it happens, and the modal still opens.
 * With a reply typed after Tab, the agent reads the user's words in that line;
 * the password field got none of it, and the audit log holds none of it.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, it } from "node:test";
import { type PiSession, REPO_ROOT, startPi } from "./pi_runner.ts";
import { waitFor } from "../helpers/processes.ts";
import { toolResults } from "./attack_scripts/pi_checks.ts";
import { defaultAuditPath } from "../../extension/audit/entry.ts";

const EXTENSION = join(REPO_ROOT, "extension/index.ts");
const TITLE = "Sudo Authentication Required";
const CALL = "pi: sudo asks for your password";

/** What tmux knows of pi's window and pane. */
async function piWindow(pi: PiSession): Promise<{ bell: string; title: string }> {
  const out = await pi.tmux.tmux(
    "display-message",
    "-p",
    "-t",
    pi.tmux.target,
    "#{window_bell_flag} #{pane_title}",
  );
  const [bell, ...title] = out.stdout.trim().split(" ");
  return { bell, title: title.join(" ") };
}

/**
 * Starts the flow with the human elsewhere: the agent's command waits for a
 * file, the client switches to a new window of pi's session, then the file
 * lets sudo run. Resolves with pi's raw output file once the modal is drawn.
 */
async function modalWhileElsewhere(pi: PiSession, dir: string): Promise<string> {
  const raw = join(dir, "pane.raw");
  await pi.tmux.tmux("pipe-pane", "-o", "-t", pi.tmux.target, `cat >> '${raw}'`);
  await pi.tmux.sendText("go");
  await pi.tmux.sendKeys("Enter");
  await waitFor(
    "the command waiting",
    () => stat(join(dir, "waiting")).then(() => true, () => undefined),
    20_000,
  );
  // The human's client now shows another window: pi's is in the background.
  await pi.tmux.tmux("new-window", "-t", "test", "exec sleep 600");
  assert.equal((await piWindow(pi)).bell, "0", "no bell before the modal");
  await writeFile(join(dir, "go"), "");
  await pi.tmux.waitFor(TITLE, 20_000);
  return raw;
}

function script(dir: string) {
  return [
    {
      // Bounded (60 s): a failed test must not leave the loop running.
      bash: `: > '${dir}/waiting'; i=0; while [ ! -e '${dir}/go' ] && [ "$i" -lt 1200 ]; ` +
        `do sleep 0.05; i=$((i + 1)); done; sudo -k id -u`,
    },
    { text: "FLOW-DONE" },
  ];
}

/** Runs `check` on a pi whose agent runs {@link script}, with `env` added; cleans up. */
async function withPi(
  env: Record<string, string>,
  check: (pi: PiSession, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "pi-alert-"));
  const pi = await startPi({ script: script(dir), extensions: [EXTENSION], env });
  try {
    await check(pi, dir);
  } finally {
    await pi.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe("a modal calls the user (real pi in tmux)", () => {
  it("with the user in another window: the bell marks pi's window, the title and the notifications carry the request; the title comes back", async () => {
    await withPi({}, async (pi, dir) => {
      const raw = await modalWhileElsewhere(pi, dir);
      const during = await waitFor("the bell and the title", async () => {
        const w = await piWindow(pi);
        return w.bell === "1" && w.title === CALL ? w : undefined;
      }, 10_000);
      assert.deepEqual(during, { bell: "1", title: CALL });
      const out = await waitFor("the notifications in pi's output", async () => {
        const text = await readFile(raw, "latin1").catch(() => "");
        return text.includes("777;notify") ? text : undefined;
      }, 10_000);
      // Passed through tmux (ESC doubled inside its DCS), one of each.
      assert.ok(
        out.includes(`\x1bPtmux;\x1b\x1b]9;${CALL}\x07\x1b\\`),
        JSON.stringify(out.slice(-400)),
      );
      assert.ok(out.includes(`\x1bPtmux;\x1b\x1b]777;notify;pi;${CALL}\x07\x1b\\`));
      await pi.tmux.sendKeys("Escape");
      await pi.tmux.tmux("select-window", "-t", "test:0"); // the user comes back to pi
      await pi.tmux.waitFor("FLOW-DONE", 20_000);
      // The agent hears that the user declined, in one plain line of the tool result.
      const results = toolResults(await pi.readSessions());
      assert.equal(results.length, 1, JSON.stringify(results));
      assert.match(
        results[0],
        /\npi-sudo-prompt: the user declined the sudo password request\. Ask the user before you run sudo again\.$/,
      );
      await waitFor("pi's own title back", async () => {
        const w = await piWindow(pi);
        return w.title === `π - ${basename(pi.launch.cwd)}` ? true : undefined;
      }, 10_000);
    });
  });

  it("Tab, a reply, Escape: the agent reads the user's words; the password field and the audit log have none of them", async () => {
    await withPi({}, async (pi, dir) => {
      await modalWhileElsewhere(pi, dir);
      await pi.tmux.tmux("select-window", "-t", "test:0"); // the user comes back to pi
      await pi.tmux.waitFor("Tab: decline with a reply to the agent", 10_000);
      await pi.tmux.sendKeys("Tab");
      await pi.tmux.sendText("no root today, use the venv");
      const screen = await pi.tmux.waitFor(
        "Reply to the agent: no root today, use the venv",
        10_000,
      );
      assert.match(screen, /Password: (?!•)/, "not one character reached the password field");
      await pi.tmux.sendKeys("Escape");
      await pi.tmux.waitFor("FLOW-DONE", 20_000);
      const results = toolResults(await pi.readSessions());
      assert.equal(results.length, 1, JSON.stringify(results));
      assert.match(
        results[0],
        /\npi-sudo-prompt: the user declined the sudo password request, and replied \(the user's own words\): «no root today, use the venv»\. Ask the user before you run sudo again\.$/,
      );
      const audit = await readFile(defaultAuditPath(pi.launch.env), "utf8");
      assert.match(audit, /"reason":"cancelled"/, "the decline is audited");
      assert.ok(!audit.includes("venv"), "the reply is not");
    });
  });

  it("PI_SUDO_PROMPT_QUIET=1: the modal opens with no bell, no title and no notification", async () => {
    await withPi({ PI_SUDO_PROMPT_QUIET: "1" }, async (pi, dir) => {
      const raw = await modalWhileElsewhere(pi, dir);
      // The modal is on screen: had pi called, the bytes would be in its output by now.
      await pi.tmux.sendKeys("Escape");
      await waitFor("the tool result", async () => {
        return toolResults(await pi.readSessions()).length > 0 ? true : undefined;
      }, 20_000);
      const w = await piWindow(pi);
      assert.equal(w.bell, "0", "no bell");
      assert.notEqual(w.title, CALL);
      const out = await readFile(raw, "latin1").catch(() => "");
      assert.ok(!out.includes("]9;") && !out.includes("777;notify"), "no notification");
      assert.ok(!out.includes(CALL), "no title");
    });
  });
});
