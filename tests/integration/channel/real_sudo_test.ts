/**
 * The askpass channel against real sudo, as the throwaway test user: the real
 * launcher, the real Deno helper, the real session server with kernel peer
 * checks, and a scripted prompter in place of the human.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import process from "node:process";
import {
  type AskpassSession,
  type SessionEvent,
  startSession,
} from "../../../extension/channel/session_server.ts";
import { type ScriptedAnswer, ScriptedPrompter } from "../../helpers/scripted_prompter.ts";
import { runToolCommand } from "../../helpers/tool_command.ts";
import { type Heartbeat, startHeartbeat } from "../../helpers/heartbeat.ts";
import { suiteHeartbeat } from "../../helpers/pi_start.ts";
import { pidsWithCmdline, waitFor } from "../../helpers/processes.ts";
import { testPassword, WITHOUT_BROKER } from "../../helpers/test_env.ts";
import { ROOT_DENO, ROOT_SOURCES } from "../../../broker/paths.ts";

const PASSWORD = testPassword();
const WRONG = "definitely-not-the-password";

interface Fixture {
  session: AskpassSession;
  prompter: ScriptedPrompter;
  events: SessionEvent[];
}

async function withSession(
  script: ScriptedAnswer[],
  run: (f: Fixture) => Promise<void>,
  options: {
    timeoutMs?: number;
    queueCapacity?: number;
    hardened?: false;
    credentialCache?: "none" | "call";
    callInProgress?: () => boolean;
  } = {},
): Promise<void> {
  const prompter = new ScriptedPrompter(script);
  const events: SessionEvent[] = [];
  const { credentialCache, callInProgress, ...tuning } = options;
  const started = await startSession(
    { prompter, onEvent: (e) => events.push(e), credentialCache, callInProgress },
    tuning,
  );
  assert.ok(started.ok, `session did not start: ${!started.ok && started.reason}`);
  const heartbeat: Heartbeat = startHeartbeat();
  try {
    await run({ session: started.session, prompter, events });
    heartbeat.assertNoStall();
  } finally {
    heartbeat.stop();
    await started.session.close();
  }
}

describe("real sudo through the askpass channel", () => {
  const suite = suiteHeartbeat();
  before(suite.start);
  after(suite.finish);

  it("correct password: sudo -k id -u prints 0", async () => {
    await withSession([{ submit: PASSWORD }], async ({ session, prompter, events }) => {
      const r = await runToolCommand(session, "sudo -k id -u");
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "0\n");
      // pi wrote the password into sudo's pipe itself; the helper never held it (ADR 0008).
      const answered = events.find((e) => e.kind === "answered");
      assert.ok(answered?.kind === "answered" && answered.writer === "pi", JSON.stringify(events));
      assert.equal(prompter.seen.length, 1);
      const seen = prompter.seen[0].request;
      assert.deepEqual(seen.sudoArgv.slice(1), ["-A", "-k", "/usr/bin/id", "-u"]);
      assert.equal(seen.attempt, 1);
      assert.equal(seen.maxAttempts, 3);
      assert.match(seen.promptText, /password/i);
      // The modal shows the command as written, without our sudo() prelude.
      assert.deepEqual(seen.toolCommand?.slice(1), ["-c", "sudo -k id -u"]);
      assert.ok(!r.stdout.includes(PASSWORD) && !r.stderr.includes(PASSWORD));
    });
  });

  it("wrong then right: the second prompt is attempt 2 of 3", async () => {
    await withSession([{ submit: WRONG }, { submit: PASSWORD }], async ({ session, prompter }) => {
      const r = await runToolCommand(session, "sudo -k id -u");
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "0\n");
      assert.match(r.stderr, /Sorry, try again/);
      assert.deepEqual(prompter.seen.map((s) => s.request.attempt), [1, 2]);
      assert.ok(prompter.seen.every((s) => s.request.maxAttempts === 3));
    });
  });

  it("three wrong: sudo gives up after attempts 1/3, 2/3, 3/3", async () => {
    await withSession(
      [{ submit: WRONG }, { submit: WRONG }, { submit: WRONG }],
      async ({ session, prompter }) => {
        const r = await runToolCommand(session, "sudo -k id -u");
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /3 incorrect password attempts/);
        assert.deepEqual(prompter.seen.map((s) => s.request.attempt), [1, 2, 3]);
      },
    );
  });

  it("cancel: no password was provided, and no second request", async () => {
    await withSession(
      [{ cancel: true }, { submit: PASSWORD }],
      async ({ session, prompter, events }) => {
        const r = await runToolCommand(session, "sudo -k id -u");
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /no password was provided/);
        assert.equal(r.stdout, "");
        assert.equal(prompter.seen.length, 1);
        assert.ok(events.some((e) => e.kind === "denied" && e.reason === "cancelled"));
      },
    );
  });

  it("timeout: denied like a cancel, and the helper is gone within its deadline", async () => {
    await withSession([{ hang: true }], async ({ session, prompter, events }) => {
      const started = Date.now();
      const r = await runToolCommand(session, "sudo -k id -u");
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /no password was provided/);
      assert.equal(prompter.seen.length, 1);
      assert.equal(prompter.seen[0].aborted, true, "the prompt was closed by the deadline");
      assert.ok(Date.now() - started < 10_000);
      assert.ok(events.some((e) => e.kind === "denied" && e.reason === "timeout"));
      await waitFor(
        "helper to exit",
        async () => (await pidsWithCmdline(session.socketPath)).length === 0 ? true : undefined,
        5000,
      );
    }, { timeoutMs: 1500 });
  });

  it("two sudo commands at once: both succeed, answered one after the other", async () => {
    await withSession(
      // The first is answered once the second waits behind it, however slow the machine.
      [{ submit: PASSWORD, whenWaiting: 1 }, { submit: PASSWORD }],
      async ({ session, prompter }) => {
        const [a, b] = await Promise.all([
          runToolCommand(session, "sudo -k id -u"),
          runToolCommand(session, "sudo -k id -un"),
        ]);
        assert.equal(a.code, 0, a.stderr);
        assert.equal(b.code, 0, b.stderr);
        assert.equal(a.stdout, "0\n");
        assert.equal(b.stdout, "root\n");
        assert.equal(prompter.seen.length, 2);
        assert.equal(prompter.maxConcurrent, 1, "one prompt at a time");
        const [first, second] = prompter.seen;
        assert.ok(
          first.endedAt! <= second.startedAt,
          "the second prompt opened after the first closed",
        );
        assert.equal(first.waitingAtAnswer, 1, "the first prompt saw one more waiting");
        assert.equal(second.waiting, 0);
      },
    );
  });

  it("a full queue refuses the next request with queue_full", async () => {
    let release!: (pw: string) => void;
    const gate = new Promise<string>((r) => release = r);
    await withSession([{ gate }], async ({ session, prompter, events }) => {
      const first = runToolCommand(session, "sudo -k id -u");
      await waitFor("the first prompt", () => prompter.seen.length === 1 ? true : undefined);
      const second = await runToolCommand(session, "sudo -k true");
      assert.match(second.stderr, /no password was provided/);
      assert.ok(events.some((e) => e.kind === "denied" && e.reason === "queue_full"));
      release(PASSWORD);
      assert.equal((await first).stdout, "0\n");
      assert.equal(prompter.seen.length, 1);
    }, { queueCapacity: 1 });
  });

  for (const victim of ["helper", "sudo"] as const) {
    it(`killing the ${victim} while the prompt is open closes the prompt at once`, async () => {
      await withSession([{ hang: true }], async ({ session, prompter, events }) => {
        const run = runToolCommand(session, "sudo -k id -u");
        await waitFor("the prompt", () => prompter.seen.length === 1 ? true : undefined);
        const helper = await waitFor("the helper", async () => {
          const pids = await pidsWithCmdline(`--allow-net=unix:${session.socketPath}`);
          return pids.length === 1 ? pids[0] : undefined;
        });
        const stat = await readFile(`/proc/${helper}/stat`, "utf8");
        const sudoPid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        const killedAt = Date.now();
        process.kill(victim === "helper" ? helper : sudoPid, "SIGKILL");
        await waitFor("the prompt to close", () => prompter.seen[0].endedAt, 2000);
        assert.ok(prompter.seen[0].endedAt! - killedAt < 1000, "closed within 1 s");
        assert.equal(prompter.seen[0].aborted, true);
        assert.ok(events.some((e) => e.kind === "denied" && e.reason === "process_gone"));
        assert.equal(session.pendingCount(), 0, "the request left the queue");
        const r = await run;
        assert.notEqual(r.code, 0);
        assert.equal(r.stdout, "");
      });
    });
  }

  it("hardened mode: with the broker installed, the root-owned helper answers", {
    skip: WITHOUT_BROKER,
  }, async () => {
    await withSession([{ submit: PASSWORD }], async ({ session }) => {
      assert.equal(session.hardened, true, "tests/run.sh installs the broker before this suite");
      assert.equal(session.helperPath, `${ROOT_SOURCES}/askpass/helper.ts`);
      assert.equal(session.denoPath, ROOT_DENO);
      const r = await runToolCommand(session, "sudo -k id -u");
      assert.equal(r.stdout, "0\n", r.stderr);
    });
  });

  it("hardened: false uses the package's own helper", async () => {
    await withSession([{ submit: PASSWORD }], async ({ session }) => {
      assert.equal(session.hardened, false);
      assert.ok(session.helperPath.endsWith("/askpass/helper.ts"));
      assert.ok(!session.helperPath.startsWith(ROOT_SOURCES));
      const r = await runToolCommand(session, "sudo -k id -u");
      assert.equal(r.stdout, "0\n", r.stderr);
    }, { hardened: false });
  });

  it("default: the wrapper adds -k, so even inside one command nothing is cached", async () => {
    await withSession([{ submit: PASSWORD }], async ({ session, prompter }) => {
      const r = await runToolCommand(session, "sudo true; sudo -n true; echo rc=$?");
      assert.match(r.stdout, /rc=1/);
      assert.match(r.stderr, /a password is required/);
      assert.equal(prompter.seen.length, 1);
      assert.deepEqual(prompter.seen[0].request.sudoArgv.slice(1), ["-A", "-k", "/usr/bin/true"]);
    });
  });

  it("/usr/bin/sudo -A without -k is refused would_cache_credentials, and no prompt is shown", async () => {
    await withSession([{ submit: PASSWORD }], async ({ session, prompter, events }) => {
      const r = await runToolCommand(
        session,
        "/usr/bin/sudo -A true; echo rc=$?; /usr/bin/sudo -n true; echo rc2=$?",
      );
      assert.match(r.stdout, /rc=1/);
      assert.match(r.stdout, /rc2=1/, "no ticket either");
      assert.equal(prompter.seen.length, 0, "no prompt");
      assert.ok(
        events.some((e) => e.kind === "refused" && e.reason === "would_cache_credentials"),
        JSON.stringify(events),
      );
      assert.ok(!events.some((e) => e.kind === "queued" || e.kind === "prompted"));
    });
  });

  it("opt-in cache per call: within one call sudo caches (one prompt), without a call it refuses", async () => {
    let inCall = true;
    await withSession([{ submit: PASSWORD }], async ({ session, prompter, events }) => {
      const r = await runToolCommand(session, "sudo true && sudo -n id -u");
      assert.equal(r.stdout, "0\n", r.stderr);
      assert.equal(prompter.seen.length, 1);
      assert.deepEqual(prompter.seen[0].request.sudoArgv.slice(1), ["-A", "/usr/bin/true"]);
      inCall = false;
      const after = await runToolCommand(session, "sudo true; echo rc=$?");
      assert.match(after.stdout, /rc=1/);
      assert.equal(prompter.seen.length, 1, "no second prompt");
      assert.ok(events.some((e) => e.kind === "refused" && e.reason === "would_cache_credentials"));
    }, { credentialCache: "call", callInProgress: () => inCall });
  });

  it("a stopped helper (SIGSTOP) is treated as gone: the prompt closes", async () => {
    await withSession([{ hang: true }], async ({ session, prompter, events }) => {
      const run = runToolCommand(session, "sudo -k id -u");
      await waitFor("the prompt", () => prompter.seen.length === 1 ? true : undefined);
      const helper = await waitFor("the helper", async () => {
        const pids = await pidsWithCmdline(`--allow-net=unix:${session.socketPath}`);
        return pids.length === 1 ? pids[0] : undefined;
      });
      process.kill(helper, "SIGSTOP");
      try {
        await waitFor("the prompt to close", () => prompter.seen[0].endedAt, 2000);
        assert.ok(events.some((e) => e.kind === "denied" && e.reason === "process_gone"));
      } finally {
        process.kill(helper, "SIGCONT");
      }
      const r = await run;
      assert.match(r.stderr, /no password was provided/);
    });
  });

  it("scripts started by the command reach the modal through the PATH wrapper", async () => {
    await withSession([{ submit: PASSWORD }], async ({ session, prompter }) => {
      // A child script that runs plain `sudo` (no function in scope there).
      const r = await runToolCommand(
        session,
        "sh -c 'sudo -k id -u' && echo 'true' | xargs sudo -n true; echo done",
      );
      assert.match(r.stdout, /^0\n/);
      assert.match(r.stdout, /done/);
      assert.equal(prompter.seen.length, 1);
      assert.equal(prompter.seen[0].request.sudoArgv[0].endsWith("/sudo"), true);
    });
  });

  it("-S is left alone (sudo refuses -A with -S), and -A is not added twice", async () => {
    await withSession([{ submit: PASSWORD }], async ({ session, prompter }) => {
      const s = await runToolCommand(session, "echo wrong | sudo -k -S true; echo rc=$?");
      assert.match(s.stdout, /rc=1/);
      assert.doesNotMatch(s.stderr, /may not be used together/);
      assert.equal(prompter.seen.length, 0);
      const a = await runToolCommand(session, "sudo -A -k id -u");
      assert.equal(a.stdout, "0\n");
      assert.deepEqual(prompter.seen[0].request.sudoArgv.slice(1), [
        "-A",
        "-k",
        "/usr/bin/id",
        "-u",
      ]);
    });
  });
});
