/**
 * Issue 34 (ADR 0009), from bash tool calls of real pi with real sudo as the
 * throwaway user, every key typed through a real tmux client on a pty
 * (`tests/helpers/tmux.ts`):
 *
 * - **a popup over the modal** and **an alias hiding key bindings that copy
 *   every key**: pi takes the client's own terminal while tmux is locked,
 *   so neither gets a key; in a mutated copy that draws the modal in pi's
 *   pane (as before), both take the password;
 * - **a forged ssh-agent** that copied the client's terminal and hid: the
 *   modal names it as started by the agent (it carries pi's mark), beside
 *   the user's real ssh-agent, which it does not; with root's check
 *   installed, it is refused; in a copy without pi's provenance, it reads
 *   the password;
 * - **the guardian killed until it stops respawning**: the terminal never
 *   opens to the agent, and no modal opens without a guardian;
 * - **`sudo -K` starved by the call (`prlimit --nproc` on pi)**: the process
 *   holding the ticket dies with the call, no later `sudo -n` runs as root,
 *   and later calls wait until `sudo -K` works; in a copy without that, the
 *   leftover runs `id -u` as root;
 * - **daily use**: pi as a pane's command with two clients attached asks on
 *   both, and the password typed in the second works; a modal queued behind
 *   one the human closed still comes when the old lock ends late (pi locks
 *   again: tmux ignores a lock asked while the last one holds the client).
 *
 * tests/run.sh runs this file before the broker is installed and after.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import type { PiSession } from "./pi_runner.ts";
import type { FauxStep } from "./faux_provider.ts";
import { testPassword } from "../helpers/test_env.ts";
import { namedChain } from "../helpers/processes.ts";
import {
  assertNoLeak,
  ATTACK_SCRIPTS,
  childrenOf,
  isRunning,
  mutatedExtension,
  type Mutation,
  sendSignal,
  TITLE,
  toolResults,
  typeMasked,
  waitFor,
  withPi,
  withScratch,
} from "./attack_scripts/pi_checks.ts";
import { TERMINAL_CHECK } from "../../extension/keyboard/root_terminal.ts";
import { rootCheckInstalled } from "../../extension/pairing/root_check.ts";
import { msg } from "../../shared/i18n/locale.ts";
import { CREDENTIALS_NOT_REMOVED } from "../../extension/channel/session_notices.ts";

const PASSWORD = testPassword();
const ATTACK = `${ATTACK_SCRIPTS}/tmux_attacks.py`;
const LEGIT = `sudo -k id -u; echo "rc=$?"`;

/** The modal drawn in pi's pane inside tmux, as before ADR 0009. */
const MODAL_IN_PANE: readonly Mutation[] = [
  {
    file: "extension/index.ts",
    from: "const place = tmuxPlace(process.env);",
    to: "const place = undefined as ReturnType<typeof tmuxPlace>;",
  },
  {
    file: "extension/index.ts",
    from: "const tmuxUnseen = !place && await tmuxAmongAncestors();",
    to: "const tmuxUnseen = false && await tmuxAmongAncestors();",
  },
];

/** No provenance: neither pi's mark nor the calls' windows. */
const NO_PROVENANCE: readonly Mutation[] = [
  {
    file: "extension/keyboard/terminal_guard.ts",
    from: "s.mark = markSelf();",
    to: "s.mark = undefined;",
  },
  {
    file: "extension/index.ts",
    from: "duringCall: (t) => calls.ranAt(t)",
    to: "duringCall: (t) => t < 0n && calls.ranAt(t)",
  },
];

/** No modal refusal without a guardian. */
const NO_GUARDIAN_CHECK: readonly Mutation[] = [{
  file: "extension/keyboard/terminal_gate.ts",
  from: "if (guard.ttyPath && (!guard.exclusive || guard.guardianPid === undefined)) {",
  to: "if (guard.ttyPath && !guard.exclusive) {",
}];

/** A failed `sudo -K` only warns, as before ADR 0009 §4. */
const TICKETS_ONLY_WARNED: readonly Mutation[] = [
  {
    file: "extension/channel/call_credentials.ts",
    from: "const killed = await killTicketHolders(holders);",
    to: "const killed = holders.length * 0;",
  },
  {
    file: "extension/index.ts",
    from: "    ticketsLeft = true;\n",
    to: "    ticketsLeft = false;\n",
  },
];

const read = (path: string) => readFile(path, "utf8").catch(() => "");
const exists = (path: string) => stat(path).then(() => true, () => false);

/** The tool results so far, once there are `n`. */
function resultsOf(pi: PiSession, n: number): Promise<string[]> {
  return waitFor(`${n} tool results`, async () => {
    const r = toolResults(await pi.readSessions());
    return r.length >= n ? r : undefined;
  }, 60_000);
}

/** `run` against pi with this extension, or with a copy that has `mutations`. */
async function withExtension(
  mutations: readonly Mutation[],
  script: FauxStep[],
  run: (pi: PiSession) => Promise<void>,
): Promise<void> {
  const copy = await mkdtemp(join(tmpdir(), "pi-mutant-"));
  try {
    const extension = mutations.length ? await mutatedExtension(copy, mutations) : undefined;
    await withPi(script, run, { extension });
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

async function go(pi: PiSession): Promise<void> {
  await pi.tmux.sendText("go");
  await pi.tmux.sendKeys("Enter");
}

describe("the keys inside tmux reach only pi, by construction (real pi, real sudo)", () => {
  const popupScript = (d: string): FauxStep[] => [
    {
      bash:
        `python3 '${ATTACK}' popup '${d}'; i=0; while [ ! -e '${d}/ready' ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; ` +
        LEGIT,
      timeout: 60,
    },
    { text: "FLOW-DONE" },
  ];

  it("a popup opened over the modal gets no key: the password reaches sudo", async () => {
    await withScratch("pi-tmux-popup-", async (d) => {
      await withPi(popupScript(d), async (pi) => {
        await go(pi);
        await pi.tmux.waitFor(TITLE, 30_000);
        await waitFor(
          "the popups",
          () => exists(join(d, "popped")).then((e) => e || undefined),
          30_000,
        );
        await typeMasked(pi, PASSWORD);
        await pi.tmux.sendKeys("Enter");
        const [result] = await resultsOf(pi, 1);
        if (!/^0$/m.test(result)) {
          // The refusal's notice is on pi's screen: name what it named.
          const screen = (await pi.tmux.capture()).replaceAll(PASSWORD, "<password>");
          assert.fail(`${result}\nscreen:\n${screen}${await namedChain(screen)}`);
        }
        assert.match(result, /rc=0/);
        assert.ok(!(await read(join(d, "popup-keys"))).includes(PASSWORD), "the popup got it");
        await assertNoLeak(pi, PASSWORD, { extraDirs: [d] });
      });
    });
  });

  it("mutation check: with the modal in pi's pane, the popup takes the password", async () => {
    await withScratch("pi-tmux-popup-", async (d) => {
      await withExtension(MODAL_IN_PANE, popupScript(d), async (pi) => {
        await go(pi);
        await waitFor(
          "the popups",
          () => exists(join(d, "popped")).then((e) => e || undefined),
          30_000,
        );
        await pi.tmux.sendText(PASSWORD);
        await pi.tmux.sendKeys("Enter");
        await waitFor("the popup to record", async () => {
          return (await read(join(d, "popup-keys"))).includes(PASSWORD) ? true : undefined;
        }, 10_000);
      });
    });
  });

  const aliasScript = (d: string): FauxStep[] => [
    { bash: `python3 '${ATTACK}' alias-bind '${d}'; ${LEGIT}`, timeout: 60 },
    { text: "FLOW-DONE" },
  ];
  const recorded = async (pi: PiSession) =>
    (await pi.tmux.tmux("show-options", "-gv", "@opt").catch(() => ({ stdout: "" }))).stdout.trim();

  it("list-keys aliased empty and every key bound to copy itself: no key of the password is copied", async () => {
    await withScratch("pi-tmux-alias-", async (d) => {
      await withPi(aliasScript(d), async (pi) => {
        await go(pi);
        await pi.tmux.waitFor(TITLE, 30_000);
        const before = await recorded(pi);
        await typeMasked(pi, PASSWORD);
        await pi.tmux.sendKeys("Enter");
        const [result] = await resultsOf(pi, 1);
        assert.match(result, /^0$/m, result);
        assert.equal(await recorded(pi), before, "tmux copied typed keys");
        await assertNoLeak(pi, PASSWORD, { extraDirs: [d] });
      });
    });
  });

  it("mutation check: with the modal in pi's pane, the bindings copy the whole password", async () => {
    await withScratch("pi-tmux-alias-", async (d) => {
      await withExtension(MODAL_IN_PANE, aliasScript(d), async (pi) => {
        await go(pi);
        await pi.tmux.waitFor(TITLE, 30_000);
        await pi.tmux.sendText(PASSWORD);
        await pi.tmux.sendKeys("Enter");
        await waitFor("the option to hold it", async () => {
          return (await recorded(pi)).includes(PASSWORD) ? true : undefined;
        }, 10_000);
      });
    });
  });

  const fakeScript = (d: string): FauxStep[] => [
    {
      bash: `python3 '${ATTACK}' fake-agent '${d}'; ` +
        `i=0; while [ ! -e '${d}/ready' ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; ${LEGIT}`,
      timeout: 60,
    },
    { text: "FLOW-DONE" },
  ];

  /** The user's own ssh-agent, started before pi, killed after `run`. */
  async function withRealAgent(run: (pid: number) => Promise<void>): Promise<void> {
    const agent: ChildProcess = spawn("ssh-agent", [
      "-D",
      "-a",
      join(tmpdir(), `agent-${process.pid}-${Date.now()}`),
    ], {
      stdio: "ignore",
      detached: true,
    });
    try {
      await run(agent.pid!);
    } finally {
      agent.kill("SIGKILL");
    }
  }

  it("a forged ssh-agent that copied the client's terminal and hid: named as started by the agent (or, with root's check, refused)", async () => {
    const root = await rootCheckInstalled(TERMINAL_CHECK);
    await withRealAgent(async (real) => {
      await withScratch("pi-tmux-fake-", async (d) => {
        await withPi(fakeScript(d), async (pi) => {
          await go(pi);
          const fake = Number(
            await waitFor("the fake", () => read(join(d, "fake.pid")).then((t) => t || undefined)),
          );
          if (root) {
            const notice = await pi.tmux.waitFor(`process ${fake}`, {
              timeoutMs: 30_000,
              history: true,
            });
            assert.match(notice.replace(/\s+/g, " "), /has this terminal open/);
            const [result] = await resultsOf(pi, 1);
            assert.match(result, /rc=1/, "refused: sudo got nothing");
            return;
          }
          const screen = await pi.tmux.waitFor(TITLE, 30_000);
          const flat = screen.replace(/[│\s]+/g, " ");
          assert.match(flat, new RegExp(`• ${fake}\\b.*${msg.originAgent.slice(0, 40)}`));
          assert.match(flat, /calls itself: ssh-agent/);
          assert.doesNotMatch(
            flat,
            new RegExp(`• ${real}\\b`),
            "the user's own ssh-agent is named",
          );
          assert.match(flat, new RegExp(`stop it: kill ${fake}`));
          // The human, warned, stops it as the modal says (it reads the same
          // terminal, so it may eat their Escape), then presses Escape.
          process.kill(fake, "SIGKILL");
          await pi.tmux.sendKeys("Escape");
          const [result] = await resultsOf(pi, 1);
          assert.match(result, /no password was provided/);
          assert.ok(!(await read(join(d, "fake-keys"))).includes(PASSWORD));
        });
      });
    });
  });

  it("mutation check: without pi's provenance, the forged ssh-agent reads the password typed at the modal (with root's check, it is still refused)", async () => {
    const root = await rootCheckInstalled(TERMINAL_CHECK);
    await withScratch("pi-tmux-fake-", async (d) => {
      await withExtension(NO_PROVENANCE, fakeScript(d), async (pi) => {
        await go(pi);
        if (root) {
          // Root lists the holder: provenance is not what stops it here.
          const fake = Number(
            await waitFor("the fake", () => read(join(d, "fake.pid")).then((t) => t || undefined)),
          );
          await pi.tmux.waitFor(`process ${fake}`, { timeoutMs: 30_000, history: true });
          const [result] = await resultsOf(pi, 1);
          assert.match(result, /rc=1/, "refused: sudo got nothing");
          return;
        }
        const screen = await pi.tmux.waitFor(TITLE, 30_000);
        assert.doesNotMatch(screen.replace(/[│\s]+/g, " "), /started by the agent/);
        await pi.tmux.sendText(PASSWORD);
        await waitFor("the fake to read keys", async () => {
          return (await read(join(d, "fake-keys"))).length > 0 ? true : undefined;
        }, 10_000);
        await pi.tmux.sendKeys("Escape");
      });
    });
  });

  /** Kills pi's guardian four times in a row (three respawns a minute), then runs the sudo. */
  const guardianScript = (d: string): FauxStep[] => [
    {
      bash: `python3 '${ATTACK_SCRIPTS}/guardian_attack.py' "$PPID" '${d}'; ${LEGIT}`,
      timeout: 60,
    },
    { text: "FLOW-DONE" },
  ];

  it("the guardian killed until pi stops respawning it: the terminal never opens, and no modal opens without a guardian", async () => {
    await withScratch("pi-tmux-guardian-", async (d) => {
      await withPi(guardianScript(d), async (pi) => {
        await go(pi);
        const [result] = await resultsOf(pi, 1);
        assert.match(
          await read(join(d, "result")),
          /^opened: 0$/m,
          "the agent opened pi's terminal",
        );
        assert.match(result, /rc=1/, result);
        const pane = await pi.tmux.capturePane();
        assert.match(pane.replace(/\s+/g, " "), /guardian is not running/);
      });
    });
  });

  it("mutation check: without the guardian check, a modal opens with no guardian", async () => {
    await withScratch("pi-tmux-guardian-", async (d) => {
      await withExtension(NO_GUARDIAN_CHECK, guardianScript(d), async (pi) => {
        await go(pi);
        await pi.tmux.waitFor(TITLE, 30_000);
        await pi.tmux.sendKeys("Escape");
      });
    });
  });

  const ticketScript = (d: string): FauxStep[] => [
    { bash: `sh '${ATTACK_SCRIPTS}/ticket_kill.sh' '${d}'`, timeout: 60 },
    { bash: "echo second-call" },
    { text: "FLOW-DONE" },
  ];

  it("sudo -K starved by the approved call (prlimit on pi): the ticket's holder dies, nothing runs as root later, and the next call waits", async () => {
    await withScratch("pi-tmux-ticket-", async (d) => {
      await withPi(ticketScript(d), async (pi) => {
        await go(pi);
        await pi.tmux.waitFor(TITLE, 30_000);
        await typeMasked(pi, PASSWORD);
        await pi.tmux.sendKeys("Enter");
        const results = await resultsOf(pi, 2);
        assert.match(results[0], /approved/, results[0]);
        assert.ok(results[1].includes(CREDENTIALS_NOT_REMOVED), `not blocked: ${results[1]}`);
        // The leftover's own `sudo -n` was due once both of pi's `sudo -K` were
        // killed. Once the leftover is gone nothing can run it any more (the
        // event, not a guessed delay): killed, it never did; left alive, it ran it
        // and exited.
        const leftover = Number(await read(join(d, "leftover.pid")));
        assert.ok(leftover > 0, "the leftover's pid");
        await waitFor("the ticket's holder to be gone", async () => {
          return await isRunning(leftover) ? undefined : true;
        }, 30_000).catch(() => {
          throw new Error("the ticket's holder still runs");
        });
        assert.equal(await exists(join(d, "late")), false, "the leftover ran sudo -n");
        await assertNoLeak(pi, PASSWORD, { extraDirs: [d] });
      });
    });
  });

  it("mutation check: when a failed sudo -K only warns, the leftover runs id -u as root", async () => {
    await withScratch("pi-tmux-ticket-", async (d) => {
      await withExtension(TICKETS_ONLY_WARNED, ticketScript(d), async (pi) => {
        await go(pi);
        await pi.tmux.waitFor(TITLE, 30_000);
        await typeMasked(pi, PASSWORD);
        await pi.tmux.sendKeys("Enter");
        await waitFor("the leftover's sudo -n", async () => {
          return /^0$/m.test(await read(join(d, "late"))) ? true : undefined;
        }, 20_000).catch(async (e) => {
          throw new Error(`${e.message}; it wrote: ${JSON.stringify(await read(join(d, "late")))}`);
        });
      });
    });
  });

  it("pi as a pane's command with two clients attached: the modal shows on both, and the password typed in the second works", async () => {
    await withPi([{ bash: LEGIT }, { text: "FLOW-DONE" }], async (pi) => {
      const second = await pi.tmux.attachClient(120, 40, undefined, "1");
      await go(pi);
      await pi.tmux.waitFor(TITLE, 30_000);
      await waitFor("the modal on the second client", async () => {
        const screen = (await pi.tmux.terminal("capture-pane", "-p", "-t", second)).stdout;
        return screen.includes(TITLE) ? true : undefined;
      }, 10_000);
      await pi.tmux.sendText(PASSWORD, second);
      await pi.tmux.terminal("send-keys", "-t", second, "Enter");
      const [result] = await resultsOf(pi, 1);
      assert.match(result, /^0$/m, result);
      await assertNoLeak(pi, PASSWORD);
    });
  });

  it("the modal queued behind one the human closed, while the old lock ends late (its keeper stopped): it still comes on the client", async () => {
    await withScratch("pi-tmux-relock-", async (d) => {
      const sudo = (n: string) => `(sudo -k id -u >'${d}/${n}' 2>&1; echo "rc=$?" >>'${d}/${n}')`;
      const locks = join(d, "locks");
      const lockLines = async () => (await read(locks)).split("\n").length - 1;
      let keeper: number | undefined;
      const resume = () => keeper !== undefined && sendSignal(keeper, "SIGCONT");
      await withPi(
        [{ bash: `${sudo("a")} & ${sudo("b")}; wait` }, { text: "FLOW-DONE" }],
        async (pi) => {
          // pi's lock sets the session's lock-command, locks, and unsets it: two lines here.
          await pi.tmux.tmux(
            "set-hook",
            "-g",
            "after-set-option",
            `run-shell "echo >> '${locks}'"`,
          );
          await go(pi);
          await pi.tmux.waitFor("1 more waiting", 30_000);
          const client = Number((await pi.tmux.tmux("list-clients", "-F", "#{client_pid}")).stdout);
          // The keeper is the client's only child (the lock command `exec`s it).
          keeper = await waitFor(
            "the first lock's keeper",
            async () => (await childrenOf(client))[0],
            10_000,
          );
          sendSignal(keeper, "SIGSTOP");
          const first = await lockLines();
          try {
            await pi.tmux.sendKeys("Escape");
            // The next request has asked for its lock while the old one still holds the client.
            await waitFor("the next request's lock", async () => {
              return await lockLines() >= first + 2 ? true : undefined;
            }, 30_000);
          } finally {
            resume();
          }
          await waitFor("the queued modal on the client", async () => {
            const screen = await pi.tmux.capture();
            return screen.includes(TITLE) && !screen.includes("more waiting") ? true : undefined;
          }, 15_000).catch(async (e) => {
            throw new Error(`${e.message}; last screen:\n${await pi.tmux.capture()}`);
          });
          await typeMasked(pi, PASSWORD);
          await pi.tmux.sendKeys("Enter");
          await pi.tmux.waitFor("FLOW-DONE", 30_000);
          const rcs = [await read(join(d, "a")), await read(join(d, "b"))]
            .map((out) => out.match(/rc=(\d+)/)?.[1]).sort();
          assert.deepEqual(rcs, ["0", "1"], "one sudo closed by the human, the other answered");
          await assertNoLeak(pi, PASSWORD);
        },
      ).finally(resume);
    });
  });
});
