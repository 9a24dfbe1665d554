/**
 * Fault injection with real processes in the real pi TUI (tmux + the scripted
 * faux model + this extension + real sudo as the throwaway test user): the
 * processes of a pending request are killed, the tool call times out, pi is
 * SIGKILLed, pi reloads its extensions mid-request, and pi quits. Each time
 * the modal must go away by itself, sudo must fail cleanly ("no password was
 * provided"), nothing may outlive its deadline, and no session directory or
 * socket may be left behind.
 *
 * Processes are found through `/proc`: the pi node process is the child of
 * the tmux pane's wrapper shell, its session directory is the one whose
 * `owner` file names that pid, and the helper is the deno process whose
 * cmdline holds `--allow-net=unix:<that session's socket>`.
 */
import assert from "node:assert/strict";
import { access, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { FauxStep } from "./faux_provider.ts";
import { type PiSession, startPi } from "./pi_runner.ts";
import { testPassword } from "../helpers/test_env.ts";
import { namedChain } from "../helpers/processes.ts";
import {
  assertNoLeak,
  ATTACK_SCRIPTS,
  EXTENSION,
  helperPids,
  isRunning,
  kill9,
  parentPid,
  piProcessPid,
  sessionDirOf,
  sessionDirsOf,
  TITLE,
  toolResults,
  typeMasked,
  waitFor,
} from "./attack_scripts/pi_checks.ts";

const PASSWORD = testPassword();
const RELOAD_TRIGGER = join(ATTACK_SCRIPTS, "reload_trigger.ts");
/** The modal must close within this time after its request died (docs/design.md §4.7). */
const CLOSE_WITHIN_MS = 1_000;

/**
 * Requests seen by {@link pendingRequest}. pi runs tool commands detached
 * (their own sessions), so closing tmux does not end them: a test that fails
 * half-way must not leave a helper and a sudo waiting for their deadlines.
 */
const seen: Pending[] = [];

/** SIGKILLs the helpers and sudos of `seen` that are still the same processes. */
async function reapSeen(): Promise<void> {
  for (const p of seen.splice(0)) {
    const helperArgv = await readFile(`/proc/${p.helper}/cmdline`, "utf8").catch(() => "");
    if (helperArgv.includes(`--allow-net=unix:${p.socket}`)) kill9(p.helper);
    const sudoComm = await readFile(`/proc/${p.sudo}/comm`, "utf8").catch(() => "");
    if (sudoComm.trim() === "sudo" && await parentPid(p.helper) === p.sudo) kill9(p.sudo);
  }
}

async function withPi(
  script: FauxStep[],
  run: (pi: PiSession) => Promise<void>,
  extensions: string[] = [EXTENSION],
): Promise<void> {
  const pi = await startPi({ script, extensions });
  try {
    await run(pi);
  } finally {
    await pi.close();
    await reapSeen();
  }
}

async function withScratch(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "pi-fault-"));
  try {
    await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const exists = (path: string) => access(path).then(() => true, () => false);

/** A process's start time (clock ticks since boot) from `/proc/<pid>/stat`. */
async function startTime(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
}

/** The pending request's processes, once its modal is on screen. */
interface Pending {
  piPid: number;
  dir: string;
  socket: string;
  helper: number;
  sudo: number;
}

async function pendingRequest(pi: PiSession): Promise<Pending> {
  const piPid = await piProcessPid(pi);
  const dir = await sessionDirOf(piPid);
  const socket = join(dir, "askpass.sock");
  const helper = await waitFor("the one helper", async () => {
    const pids = await helperPids(socket);
    return pids.length === 1 ? pids[0] : undefined;
  });
  const sudo = await parentPid(helper);
  assert.ok(sudo !== undefined, "the helper's parent");
  const comm = (await readFile(`/proc/${sudo}/comm`, "utf8")).trim();
  assert.equal(comm, "sudo", "the helper's parent is sudo");
  const pending = { piPid, dir, socket, helper, sudo };
  seen.push(pending);
  return pending;
}

/**
 * Polls the screen as fast as tmux answers until `TITLE` is gone; returns
 * the milliseconds from `since` to the first screen without it.
 */
async function modalGoneAfter(pi: PiSession, since: number, deadlineMs = 5_000): Promise<number> {
  for (;;) {
    const screen = await pi.tmux.capture();
    const now = Date.now();
    if (!screen.includes(TITLE)) return now - since;
    if (now - since > deadlineMs) {
      throw new Error(`the modal was still open ${now - since} ms later:\n${screen}`);
    }
  }
}

async function openModal(pi: PiSession): Promise<string> {
  await pi.tmux.sendText("go");
  await pi.tmux.sendKeys("Enter");
  return await pi.tmux.waitFor(TITLE, 30_000);
}

describe("fault injection (real pi, real sudo)", () => {
  for (const victim of ["helper", "sudo"] as const) {
    it(`${victim} killed while the modal is open: the modal closes within 1 s, the tool result shows sudo's failure`, async () => {
      await withPi(
        [{ bash: "sudo -k id -u; echo rc=$?" }, { text: "FLOW-DONE" }],
        async (pi) => {
          await openModal(pi);
          const p = await pendingRequest(pi);
          const killedAt = Date.now();
          kill9(victim === "helper" ? p.helper : p.sudo);
          const ms = await modalGoneAfter(pi, killedAt);
          assert.ok(ms <= CLOSE_WITHIN_MS, `the modal closed ${ms} ms after the kill`);
          await pi.tmux.waitFor("FLOW-DONE", 20_000);
          const [result] = toolResults(await pi.readSessions());
          if (victim === "helper") {
            // sudo saw its askpass die without an answer.
            assert.match(result, /no password was provided/);
            assert.match(result, /^rc=1$/m);
          } else {
            assert.match(result, /^rc=137$/m, "sudo died by SIGKILL");
          }
          assert.doesNotMatch(result, /^0$/m, "the command never ran as root");
          await waitFor("the helper to be gone", async () => {
            return (await isRunning(p.helper)) ? undefined : true;
          }, 3_000);
          assert.equal(await pi.tmux.capture().then((s) => s.includes(TITLE)), false);
          await assertNoLeak(pi, PASSWORD);
        },
      );
    });
  }

  it("the modal withdrawn while the human types: the rest of the password and its Enter are dropped, never in pi's editor", async () => {
    await withPi(
      [{ bash: "sudo -k id -u; echo rc=$?" }, { text: "FLOW-DONE" }],
      async (pi) => {
        await openModal(pi);
        const p = await pendingRequest(pi);
        const [typed, rest] = [PASSWORD.slice(0, 3), PASSWORD.slice(3)];
        await pi.tmux.sendText(typed);
        await pi.tmux.waitFor("•".repeat(typed.length), 10_000);
        const killedAt = Date.now();
        kill9(p.helper);
        await modalGoneAfter(pi, killedAt);
        // The human, not yet aware, finishes typing and presses Enter.
        await pi.tmux.sendText(rest);
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor("keys typed after the prompt closed were dropped", 10_000);
        await pi.tmux.waitFor("FLOW-DONE", 20_000);
        const screen = await pi.tmux.capture({ history: true });
        assert.ok(
          !screen.includes(rest),
          `the rest of the password reached pi:\n${screen.replaceAll(rest, "<rest>")}`,
        );
        assert.ok(!(await pi.readSessions()).includes(rest), "the rest of the password was sent");
        // The drop ended with the Enter: the next keys are pi's again.
        await pi.tmux.sendText("keys-are-back");
        await pi.tmux.waitFor("keys-are-back", 10_000);
        await assertNoLeak(pi, PASSWORD);
      },
    );
  });

  // J9, J10: the agent queues requests behind the first (sudos here;
  // pi-secret-run requests queue the same way) and withdraws each modal while
  // the human types, so that the next one would take the rest of the password.
  const queuedWithdrawal = (queued: number) => async () => {
    await withScratch(async (work) => {
      const names = Array.from({ length: queued + 1 }, (_, i) => `sudo${i + 1}`);
      const run = (name: string) =>
        `sudo -k id -u >'${work}/${name}' 2>&1; echo "rc=$?" >>'${work}/${name}'`;
      // Each sudo after the first starts once the test has seen the one before
      // it in the queue (it writes WORK/go-NAME): the helpers start, and queue,
      // in the order of `names` (the kills below go by start time). Bounded.
      const go = (name: string) => join(work, `go-${name}`);
      const after = (name: string) => {
        const file = go(name);
        return `i=0; while [ ! -e '${file}' ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; `;
      };
      const command = [
        `(${run(names[0])}) & `,
        ...names.slice(1, -1).map((n) => `(${after(n)}${run(n)}) & `),
        after(names.at(-1)!),
        run(names.at(-1)!),
        "; wait",
      ]
        .join("");
      await withPi([{ bash: command }, { text: "FLOW-DONE" }], async (pi) => {
        await openModal(pi);
        for (let i = 1; i <= queued; i++) {
          await writeFile(go(names[i]), "");
          await pi.tmux.waitFor(`${i} more waiting`, 20_000);
        }
        const piPid = await piProcessPid(pi);
        const socket = join(await sessionDirOf(piPid), "askpass.sock");
        const helpers = await helperPids(socket);
        assert.equal(helpers.length, queued + 1, "every helper waits");
        const byStart = await Promise.all(helpers.map(async (pid) => [await startTime(pid), pid]))
          .then((pairs) => pairs.sort((x, y) => x[0] - y[0]).map(([, pid]) => pid));
        const [typed, rest] = [PASSWORD.slice(0, 3), PASSWORD.slice(3)];
        await typeMasked(pi, typed);
        const dropping = (screen: string) => screen.includes("are dropped until Enter or a pause");
        // Each withdrawn in turn: the terminal stays locked and drops what is typed
        // (ADR 0009 §1), and the modals queued behind wait until the drop ends.
        // The drop also ends after a 1.5 s pause: nothing else is awaited between a
        // withdrawal and the next keys (a loaded machine must not make that pause).
        for (let i = 0; i < queued; i++) {
          kill9(byStart[i]);
          await waitFor(`the keys of modal ${i + 1} dropped`, async () => {
            const screen = await pi.tmux.capture();
            return !screen.includes(TITLE) && dropping(screen) ? true : undefined;
          }, 10_000);
        }
        // The human, not yet aware, finishes typing and presses Enter.
        await pi.tmux.sendText(rest);
        await pi.tmux.sendKeys("Enter");
        for (let i = 0; i < queued; i++) {
          await waitFor(`helper ${i + 1} gone`, async () => {
            return await isRunning(byStart[i]) ? undefined : true;
          }, 10_000);
        }
        const screen = await waitFor("the last modal, after the drop", async () => {
          const screen = await pi.tmux.capture();
          return !dropping(screen) && screen.includes(TITLE) ? screen : undefined;
        }, 10_000).catch(async (e) => {
          const last = (await pi.tmux.capture()).replaceAll(PASSWORD, "<password>")
            .replaceAll(rest, "<rest>");
          throw new Error(
            `${(e as Error).message}; last screen:\n${last}${await namedChain(last)}`,
          );
        });
        assert.ok(!screen.includes("more waiting"), "the withdrawn requests left the queue");
        assert.ok(
          screen.includes(TITLE),
          `the last modal closed:\n${screen.replaceAll(rest, "<rest>")}`,
        );
        assert.ok(!screen.includes("•"), "the rest of the password reached the last modal");
        const last = join(work, names.at(-1)!);
        assert.equal(
          await exists(last) && await readFile(last, "utf8"),
          "",
          "the last sudo got an answer",
        );
        // The human types into the last modal on purpose: it is theirs.
        await typeMasked(pi, PASSWORD);
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor("FLOW-DONE", 30_000);
        assert.match(await readFile(last, "utf8"), /rc=0/);
        for (const name of names.slice(0, -1)) {
          assert.match(await readFile(join(work, name), "utf8"), /rc=1/, `${name} ended rc=1`);
        }
        const history = await pi.tmux.capture({ history: true });
        assert.ok(!history.includes(rest), "the rest of the password reached pi's screen");
        assert.ok(!(await pi.readSessions()).includes(rest), "the rest of the password was sent");
        await assertNoLeak(pi, PASSWORD);
      });
    });
  };
  it(
    "the modal withdrawn while the human types, a second request queued behind it: the rest of the password and its Enter do not reach the last modal",
    queuedWithdrawal(1),
  );
  it(
    "the modal withdrawn while the human types, two requests queued and the second withdrawn too: the rest of the password and its Enter do not reach the last modal",
    queuedWithdrawal(2),
  );

  it("pi SIGKILLed while a helper waits: the helper exits by itself, sudo reports no password; the next pi removes the stale session directory", async () => {
    await withScratch(async (work) => {
      const command = `sudo -k id -u >'${work}/out' 2>&1; echo "rc=$?" >'${work}/rc'`;
      let stale = "";
      await withPi([{ bash: command }, { text: "FLOW-DONE" }], async (pi) => {
        await openModal(pi);
        const p = await pendingRequest(pi);
        stale = p.dir;
        const killedAt = Date.now();
        kill9(p.piPid);
        await waitFor("pi to be gone", async () => (await isRunning(p.piPid)) ? undefined : true);
        // The helper notices the closed socket; it does not wait for its own
        // deadline (135 s) and never outlives a dead pi.
        await waitFor("the helper to exit by itself", async () => {
          return (await isRunning(p.helper)) ? undefined : Date.now() - killedAt;
        }, 5_000);
        const rc = await waitFor(
          "the tool command's exit status",
          () => readFile(join(work, "rc"), "utf8").catch(() => undefined),
          5_000,
        );
        assert.equal(rc.trim(), "rc=1");
        const out = await readFile(join(work, "out"), "utf8");
        assert.match(out, /pi-askpass: the pi session closed the connection/);
        assert.match(out, /no password was provided/);
        await waitFor("sudo to be gone too", async () => {
          return (await isRunning(p.sudo)) ? undefined : true;
        }, 3_000);
        // A SIGKILLed pi cannot clean up after itself…
        assert.equal(await exists(stale), true, "the dead pi's directory is still there");
      });
      // …so the next interactive pi does it at its session_start.
      await withPi([], async (pi) => {
        const piPid = await piProcessPid(pi);
        await sessionDirOf(piPid);
        await waitFor("the stale directory to be removed", async () => {
          return (await exists(stale)) ? undefined : true;
        }, 5_000);
      });
    });
  });

  it("a bash tool call aborted by its own timeout: the modal closes by itself", async () => {
    // Long enough for the modal to open first on a slow host (2 s was not, at
    // 2/3 of a CPU), short enough that the modal is still open when it ends.
    const timeout = 8;
    await withPi(
      [{ bash: "sudo -k id -u; echo rc=$?", timeout }, { text: "FLOW-DONE" }],
      async (pi) => {
        const openedAt = Date.now();
        await openModal(pi);
        const p = await pendingRequest(pi);
        // No key is pressed: the tool's timeout kills bash, sudo and the helper.
        const ms = await modalGoneAfter(pi, openedAt, timeout * 1000 + 10_000);
        assert.ok(
          ms <= timeout * 1000 + 2 * CLOSE_WITHIN_MS,
          `the modal closed ${ms} ms after it opened`,
        );
        await pi.tmux.waitFor("FLOW-DONE", 20_000);
        const [result] = toolResults(await pi.readSessions());
        assert.match(result, new RegExp(`timed out after ${timeout} seconds`, "i"));
        for (const [what, pid] of [["helper", p.helper], ["sudo", p.sudo]] as const) {
          await waitFor(`the ${what} to be gone`, async () => {
            return (await isRunning(pid)) ? undefined : true;
          }, 3_000);
        }
        await assertNoLeak(pi, PASSWORD);
      },
    );
  });

  it("/reload cannot be typed into the open modal; the reload flow fired mid-request (!sudo) denies it, replaces the session, and sudo works after", async () => {
    await withScratch(async (work) => {
      const trigger = join(work, "reload-now");
      await withPi([], async (pi) => {
        const piPid = await piProcessPid(pi);
        const before = await sessionDirOf(piPid);
        await pi.tmux.sendText(`/test-reload-when ${trigger}`);
        await pi.tmux.sendKeys("Enter");
        // Output to files: pi rebuilds its chat on reload, and a `!` command
        // still running then may vanish from the screen.
        await pi.tmux.sendText(`!sudo -k id -u >'${work}/out' 2>&1; echo "rc=$?" >'${work}/rc'`);
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor(TITLE, 30_000);
        const p = await pendingRequest(pi);
        assert.equal(p.dir, before);
        // The modal holds the keyboard: "/reload" lands in the masked field.
        await pi.tmux.sendText("/reload");
        await pi.tmux.waitFor(/Password: •{7}(?!•)/, 5_000);
        await pi.tmux.sendKeys(...Array(7).fill("BSpace"));
        await pi.tmux.waitFor(/Password: (?!•)/, 5_000);
        assert.equal(await exists(before), true, "typing /reload reloaded nothing");

        await writeFile(trigger, "");
        const firedAt = Number(
          await waitFor(
            "the reload to fire",
            () => readFile(`${trigger}.fired`, "utf8").catch(() => undefined),
            5_000,
          ),
        );
        const ms = await modalGoneAfter(pi, firedAt);
        assert.ok(ms <= CLOSE_WITHIN_MS, `the modal closed ${ms} ms after the reload began`);
        await pi.tmux.waitFor("Reloaded keybindings, extensions", 15_000);
        const rc = await waitFor(
          "the !sudo exit status",
          () => readFile(join(work, "rc"), "utf8").catch(() => undefined),
          10_000,
        );
        assert.equal(rc.trim(), "rc=1");
        const out = await readFile(join(work, "out"), "utf8");
        // The request is denied cleanly, by the modal's teardown (cancelled)
        // or by the session's shutdown (session_closed): shutdown lets
        // denials already on their way arrive before it closes the sockets.
        assert.match(out, /pi-askpass: denied: (session_closed|cancelled)/);
        assert.match(out, /no password was provided/);
        assert.doesNotMatch(out, /^0$/m);
        // The old session is gone without a trace; the new one is live.
        await waitFor("the helper to exit", async () => {
          return (await isRunning(p.helper)) ? undefined : true;
        }, 3_000);
        assert.equal(await exists(before), false, "the old session directory was removed");
        assert.equal(await exists(p.socket), false, "the old socket was removed");
        const afterDir = await sessionDirOf(piPid);
        assert.notEqual(afterDir, before);

        await pi.tmux.sendText("!sudo -k id -un");
        await pi.tmux.sendKeys("Enter");
        const again = await pi.tmux.waitFor(TITLE, 30_000);
        assert.match(again, /Command: \/usr\/bin\/sudo -A -k \/usr\/bin\/id -un/);
        assert.equal((await pendingRequest(pi)).dir, afterDir);
        await typeMasked(pi, PASSWORD);
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor(/^\s*root\s*$/m, 20_000);
        await assertNoLeak(pi, PASSWORD, { expectSessionFile: false });
      }, [EXTENSION, RELOAD_TRIGGER]);
    });
  });

  it("a reload requested while the agent's tool call waits on the modal is refused by pi; the request stays valid", async () => {
    await withScratch(async (work) => {
      const trigger = join(work, "reload-now");
      await withPi([{ bash: "sudo -k id -u" }, { text: "FLOW-DONE" }], async (pi) => {
        await pi.tmux.sendText(`/test-reload-when ${trigger}`);
        await pi.tmux.sendKeys("Enter");
        await openModal(pi);
        const p = await pendingRequest(pi);
        await writeFile(trigger, "");
        await waitFor(
          "the reload to fire",
          () => exists(`${trigger}.fired`).then((e) => e || undefined),
        );
        // pi's warning "Wait for the current response to finish before
        // reloading.", in pi's pane (the modal is on the client's terminal).
        await pi.tmux.waitFor("Warning: Wait for t", { timeoutMs: 5_000, pane: true });
        const screen = await pi.tmux.capture();
        assert.match(screen, new RegExp(TITLE), "the modal is still open");
        assert.equal(await isRunning(p.helper), true, "the helper still waits");
        assert.equal(await sessionDirOf(p.piPid), p.dir, "same session");
        await typeMasked(pi, PASSWORD);
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor("FLOW-DONE", 20_000);
        assert.equal(toolResults(await pi.readSessions())[0].trim(), "0");
        await assertNoLeak(pi, PASSWORD);
      }, [EXTENSION, RELOAD_TRIGGER]);
    });
  });

  for (const how of ["/quit", "ctrl+d"] as const) {
    it(`after pi exits with ${how}, no pi-sudo-prompt-* directory and no socket is left`, async () => {
      await withPi([], async (pi) => {
        const piPid = await piProcessPid(pi);
        const dir = await sessionDirOf(piPid);
        const socket = join(dir, "askpass.sock");
        // The directory is made a moment before the socket listens in it.
        await waitFor("the session socket", async () => await exists(socket) || undefined, 5_000);
        if (how === "/quit") {
          await pi.tmux.sendText("/quit");
          await pi.tmux.sendKeys("Enter");
        } else {
          await pi.tmux.sendKeys("C-d");
        }
        const status = await waitFor("pi to exit", () => pi.tmux.exitStatus(), 10_000);
        assert.equal(status, 0);
        assert.equal(await exists(dir), false, `${dir} left behind`);
        assert.equal(await exists(socket), false, `${socket} left behind`);
        assert.deepEqual(await sessionDirsOf(piPid), []);
      });
    });
  }
});
