/**
 * `pi-secret-run` in the real pi TUI: pi in tmux with the scripted faux model,
 * this extension loaded, the real root broker (installed by the root phase of
 * tests/run.sh, `sudo -n`, NOPASSWD for the broker only) and the root-owned
 * test consumer (`/usr/local/libexec/pi-sudo-prompt-test/consumer MODE NAME`:
 * reads one line, prints its length and sha256, never the line itself). The
 * secret is typed on the keyboard into the "🔑 Secret request" modal; it is a
 * canary that must appear nowhere: not on screen, not in the session JSONL,
 * not in pi's temp logs, not in the audit log, not in any readable
 * /proc/<pid>/environ or cmdline.
 *
 * The second test drives `/sudo-prompt allow` end to end: pi's editor dialog,
 * the confirm dialog, and the root-owned `allowlist-append` through `sudo -A`
 * with the test user's password typed into the sudo modal.
 *
 * **The allowlist.** That test really appends one line to
 * /etc/pi-sudo-prompt/allowlist, and it runs as the unprivileged test user,
 * so it cannot restore the file itself. The line is harmless and unique to
 * each run: `<consumer> verify<random hex> <name>` (a literal first argument
 * no other test uses, for the test consumer only). It stays in the file after
 * the test; tests/run.sh's root phase saved the whole /etc/pi-sudo-prompt
 * before the user suites (`broker_state_save`) and puts it back afterwards
 * (`broker_state_restore`). On a machine where the broker was installed by
 * hand, remove the `verify…` lines yourself if they bother you.
 *
 * No event-loop heartbeat here: pi runs in its own process, and the only
 * stalls such a watchdog sees in this file come from the harness itself
 * (spawning a `tmux` client every 100 ms while pi starts on a loaded machine;
 * measured 57–98 ms, none while idle).
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type PiSession, REPO_ROOT, startPi } from "./pi_runner.ts";
import { testPassword } from "../helpers/test_env.ts";
import { submitCommand, toolResults } from "./attack_scripts/pi_checks.ts";

const PASSWORD = testPassword();
const EXTENSION = join(REPO_ROOT, "extension/index.ts");
const CONSUMER = "/usr/local/libexec/pi-sudo-prompt-test/consumer";
const SECRET_TITLE = "🔑 Secret request";
const SUDO_TITLE = "Sudo Authentication Required";
const WARNING = "Not on the allowlist";
const EDITOR_TITLE = "Allowlist entry:";
const CONFIRM_TITLE = "Add this entry to the allowlist?";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const canary = () => `Secret-Canary-${randomBytes(12).toString("hex")}`;

/** Types `text` into a masked modal: bullets only, never the text; then Enter. */
async function typeMasked(pi: PiSession, text: string): Promise<void> {
  await pi.tmux.sendText(text);
  await pi.tmux.waitFor("•".repeat([...text].length));
  assert.ok(!(await pi.tmux.capture()).includes(text), "typed text shown on screen");
  await pi.tmux.sendKeys("Enter");
}

/** Types a prompt into pi's editor and submits it. */
async function prompt(pi: PiSession, text: string): Promise<void> {
  await pi.tmux.sendText(text);
  await pi.tmux.sendKeys("Enter");
}

/** Every place the canaries must not be, checked while pi is still running. */
async function assertNoLeak(pi: PiSession, canaries: string[]): Promise<void> {
  const where: [string, string][] = [
    ["the screen (with history)", await pi.tmux.capture({ history: true })],
    ["the session JSONL", await pi.readSessions()],
  ];
  const audit = join(pi.launch.tmpDir, "home/.local/state/pi-sudo-prompt/audit.jsonl");
  const auditText = await readFile(audit, "utf8");
  assert.ok(auditText.length > 0, "the audit log was written");
  where.push(["the audit log", auditText]);
  for (const dir of [tmpdir(), pi.launch.tmpDir]) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (!name.startsWith("pi-bash-")) continue;
      where.push([name, await readFile(join(dir, name), "utf8").catch(() => "")]);
    }
  }
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    for (const file of ["environ", "cmdline"]) {
      const text = await readFile(`/proc/${pid}/${file}`, "latin1").catch(() => "");
      where.push([`/proc/${pid}/${file}`, text]);
    }
  }
  for (const [name, text] of where) {
    for (const c of canaries) assert.ok(!text.includes(c), `a canary in ${name}`);
  }
}

describe("pi-secret-run in the real pi TUI", () => {
  it("allowlisted: the Secret request modal, no warning; the consumer gets the secret", async () => {
    const secret = canary();
    const pi = await startPi({
      script: [
        { bash: `pi-secret-run --label "test db" -- ${CONSUMER} report db1` },
        { text: "SECRET-DONE" },
      ],
      extensions: [EXTENSION],
    });
    try {
      await prompt(pi, "go");
      const screen = await pi.tmux.waitFor(SECRET_TITLE, 20_000);
      assert.ok(!screen.includes(SUDO_TITLE), "not the sudo modal");
      assert.ok(screen.includes(`Command: ${CONSUMER} report db1`), screen);
      assert.match(screen, /Label: «test db» \(unverified\)/);
      assert.ok(!screen.includes(WARNING), "no red warning for an allowlisted argv");
      // This machine has no Yama: the agent could trace the command, and the modal says so.
      const scope = await readFile("/proc/sys/kernel/yama/ptrace_scope", "utf8").catch(() => "");
      if (scope.trim() === "" || Number(scope) === 0) {
        assert.match(screen.replace(/\s+/g, " "), /the agent can trace it and read the secret/);
      }
      await typeMasked(pi, secret);
      await pi.tmux.waitFor("SECRET-DONE", 20_000);
      const results = toolResults(await pi.readSessions());
      assert.equal(results.length, 1, JSON.stringify(results));
      assert.match(
        results[0],
        new RegExp(`consumer: got ${secret.length} bytes sha256=${sha256(secret)}`),
      );
      await assertNoLeak(pi, [secret]);
    } finally {
      await pi.close();
    }
  });

  it("/sudo-prompt allow: editor, confirm, sudo modal; then the same command has no warning", async () => {
    const word = `verify${randomBytes(4).toString("hex")}`;
    const entry = `${CONSUMER} ${word} <name>`;
    const secret = canary();
    const pi = await startPi({
      script: [
        { bash: `pi-secret-run --label first -- ${CONSUMER} ${word} abc` },
        { text: "TURN1-DONE" },
        { bash: `pi-secret-run --label second -- ${CONSUMER} ${word} def` },
        { text: "TURN2-DONE" },
      ],
      extensions: [EXTENSION],
    });
    try {
      // Turn 1: not on the allowlist, red warning; cancelled with Escape.
      await prompt(pi, "first");
      let screen = await pi.tmux.waitFor(SECRET_TITLE, 20_000);
      assert.ok(screen.includes(`Command: ${CONSUMER} ${word} abc`), screen);
      assert.ok(screen.includes(WARNING), "the red warning");
      await pi.tmux.sendKeys("Escape");
      await pi.tmux.waitFor("TURN1-DONE", 20_000);
      assert.match(toolResults(await pi.readSessions())[0], /pi-secret-broker: cancelled/);

      // /sudo-prompt allow: the editor dialog, pre-filled with the argv as literals.
      await pi.tmux.sendText("/sudo-prompt allow");
      await submitCommand(pi, "allow");
      screen = await pi.tmux.waitFor(EDITOR_TITLE, 10_000);
      assert.ok(screen.includes(`${CONSUMER} ${word} abc`), screen);
      // The cursor is at the end of the prefill: turn `abc` into a marker.
      await pi.tmux.sendKeys("BSpace", "BSpace", "BSpace");
      await pi.tmux.sendText("<name>");
      await pi.tmux.waitFor(entry, 5_000);
      await pi.tmux.sendKeys("Enter");

      // The confirm dialog: "Yes" is selected first; Enter picks it.
      screen = await pi.tmux.waitFor(CONFIRM_TITLE, 10_000);
      assert.ok(screen.includes(entry), screen);
      assert.match(screen, /→ Yes/);
      await pi.tmux.sendKeys("Enter");

      // The sudo modal for allowlist-append; the user's password.
      screen = await pi.tmux.waitFor(SUDO_TITLE, 20_000);
      assert.match(screen, /Command: \/usr\/bin\/sudo -A -k[\s│]+\S*\/allowlist-append /);
      await typeMasked(pi, PASSWORD);
      await pi.tmux.waitFor(`allowlist-append: added: ${entry}`, 20_000);
      const allowlist = await readFile("/etc/pi-sudo-prompt/allowlist", "utf8");
      assert.ok(allowlist.split("\n").includes(entry), allowlist);

      // Turn 2: the same command (another value for <name>) now has no warning.
      await prompt(pi, "second");
      screen = await pi.tmux.waitFor(SECRET_TITLE, 20_000);
      assert.ok(screen.includes(`Command: ${CONSUMER} ${word} def`), screen);
      assert.match(screen, /Label: «second» \(unverified\)/);
      assert.ok(!screen.includes(WARNING), "no red warning once allowlisted");
      await typeMasked(pi, secret);
      await pi.tmux.waitFor("TURN2-DONE", 20_000);
      const results = toolResults(await pi.readSessions());
      assert.equal(results.length, 2, JSON.stringify(results));
      assert.match(results[1], new RegExp(`sha256=${sha256(secret)}`));
      await assertNoLeak(pi, [secret, PASSWORD]);
    } finally {
      await pi.close();
    }
  });
});
