/**
 * `pi-secret-run` through the real root broker (installed by the root phase
 * of tests/run.sh), as the throwaway user: a real session server, real sudo
 * (`sudo -n`, NOPASSWD for the broker only), a root-installed consumer
 * (`/usr/local/libexec/pi-sudo-prompt-test/consumer`, allowlisted as
 * `report <name>` and `hold <dir>`), and a scripted prompter for the
 * "Secret request" modal. The secret is a canary: it must appear nowhere.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, open, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  type AskpassSession,
  type SessionEvent,
  startSession,
} from "../../../extension/channel/session_server.ts";
import { encodeSecretRequest, newRequestId } from "../../../askpass/protocol.ts";
import { ScriptedPrompter } from "../../helpers/scripted_prompter.ts";
import { runToolCommand } from "../../helpers/tool_command.ts";
import { startHeartbeat } from "../../helpers/heartbeat.ts";
import { suiteHeartbeat } from "../../helpers/pi_start.ts";
import { waitFor } from "../../helpers/processes.ts";
import { rawExchange } from "../../helpers/raw_client.ts";

const CONSUMER = "/usr/local/libexec/pi-sudo-prompt-test/consumer";
const SECRET = `Secret-Canary-${crypto.randomUUID()}`;
const SHA = createHash("sha256").update(SECRET).digest("hex");

interface Fixture {
  session: AskpassSession;
  prompter: ScriptedPrompter;
  events: SessionEvent[];
  scratch: string;
}

async function withSession(
  prompter: ScriptedPrompter,
  run: (f: Fixture) => Promise<void>,
  options: { timeoutMs?: number } = {},
): Promise<void> {
  const events: SessionEvent[] = [];
  const started = await startSession({ prompter, onEvent: (e) => events.push(e) }, options);
  assert.ok(started.ok);
  const scratch = await mkdtemp(join(tmpdir(), "pi-secret-test-"));
  const beat = startHeartbeat();
  try {
    await run({ session: started.session, prompter, events, scratch });
    beat.assertNoStall();
  } finally {
    beat.stop();
    await started.session.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

const refusals = (events: SessionEvent[]) =>
  events.filter((e) => e.kind === "refused").map((e) => e.kind === "refused" ? e.reason : "");

describe("pi-secret-run and the root broker", () => {
  const suite = suiteHeartbeat();
  before(suite.start);
  after(suite.finish);

  it("an allowlisted consumer gets exactly the secret on stdin; the normal modal", async () => {
    const prompter = new ScriptedPrompter([{ submit: SECRET }]);
    await withSession(prompter, async ({ session }) => {
      const r = await runToolCommand(
        session,
        `pi-secret-run --label "test database" -- ${CONSUMER} report db1`,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `consumer: got ${SECRET.length} bytes sha256=${SHA}\n`);
      assert.equal(prompter.secrets.length, 1);
      const seen = prompter.secrets[0].request;
      assert.deepEqual(seen.argv, [CONSUMER, "report", "db1"]);
      assert.equal(seen.label, "test database");
      assert.equal(seen.allowlisted, true);
      assert.equal(prompter.seen.length, 0, "no sudo password modal");
      assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET));
    });
  });

  it("while the consumer runs: no secret in environ/cmdline, stdin unopenable, caller's ids", async () => {
    const prompter = new ScriptedPrompter([{ submit: SECRET }]);
    await withSession(prompter, async ({ session, scratch }) => {
      const run = runToolCommand(session, `pi-secret-run -- ${CONSUMER} hold ${scratch}`);
      const pid = Number(
        await waitFor(
          "the consumer's pid",
          () => readFile(join(scratch, "pid"), "utf8").catch(() => undefined),
        ),
      );
      try {
        const environ = await readFile(`/proc/${pid}/environ`, "latin1");
        const cmdline = await readFile(`/proc/${pid}/cmdline`, "latin1");
        assert.ok(!environ.includes(SECRET), "secret in environ");
        assert.ok(!cmdline.includes(SECRET), "secret in cmdline");
        assert.deepEqual(cmdline.split("\0").filter(Boolean).slice(-3), [
          CONSUMER,
          "hold",
          scratch,
        ]);
        await assert.rejects(open(`/proc/${pid}/fd/0`, "r"), { code: "EACCES" });
        const status = await readFile(`/proc/${pid}/status`, "utf8");
        const mine = await readFile("/proc/self/status", "utf8");
        for (const field of ["Uid", "Gid", "Groups"]) {
          const line = (text: string) => new RegExp(`^${field}:(.*)$`, "m").exec(text)?.[1].trim();
          assert.equal(line(status), line(mine), `${field} is the caller's`);
        }
        assert.match(status, new RegExp(`^Uid:\\t${process.getuid!()}\\t`, "m"), "never root");
      } finally {
        await writeFile(join(scratch, "release"), "");
      }
      const r = await run;
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`sha256=${SHA}`));
    });
  });

  const notAllowed: [string, (scratch: string) => Promise<string>, string[] | undefined][] = [
    ["an extra argument", () => Promise.resolve(`${CONSUMER} report db1 extra`), undefined],
    ["a marker value starting with -", () => Promise.resolve(`${CONSUMER} report -x`), undefined],
    ["another program", () => Promise.resolve("/usr/bin/sha256sum"), ["/usr/bin/sha256sum"]],
    [
      "a symlink to another program (shown resolved)",
      async (scratch) => {
        await symlink("/usr/bin/sha256sum", join(scratch, "consumer"));
        return join(scratch, "consumer");
      },
      ["/usr/bin/sha256sum"],
    ],
  ];
  for (const [name, command, shown] of notAllowed) {
    it(`not allowlisted: ${name} gets the red-warning modal`, async () => {
      const prompter = new ScriptedPrompter([{ submit: SECRET }]);
      await withSession(prompter, async ({ session, scratch }) => {
        const cmd = await command(scratch);
        const r = await runToolCommand(session, `pi-secret-run --label x -- ${cmd}`);
        assert.equal(prompter.secrets.length, 1, r.stderr);
        const seen = prompter.secrets[0].request;
        assert.equal(seen.allowlisted, false, "red warning");
        if (shown) assert.deepEqual(seen.argv, shown);
        assert.deepEqual(
          session.lastUnverifiedArgv(),
          seen.argv,
          "remembered for /sudo-prompt allow",
        );
        assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET));
      });
    });
  }

  it("a consumer that never reads its stdin: the write cannot block, the exit status passes through", async () => {
    // At most 1 KiB: it fits the pipe buffer, so the broker's write (which
    // also has a 10 s deadline) returns at once; the broker then just waits
    // for the program, like any caller would.
    const prompter = new ScriptedPrompter([{ submit: SECRET }, { submit: SECRET }]);
    await withSession(prompter, async ({ session }) => {
      const started = Date.now();
      const slow = await runToolCommand(session, "pi-secret-run -- /bin/sleep 1; echo rc=$?");
      assert.match(slow.stdout, /rc=0/);
      assert.ok(Date.now() - started < 8000);
      const failing = await runToolCommand(session, "pi-secret-run -- /bin/false; echo rc=$?");
      assert.match(failing.stdout, /rc=1/, "the program's exit status");
    });
  });

  it("cancel: exit 125 with the reason, and the consumer never starts", async () => {
    const prompter = new ScriptedPrompter([{ cancel: true }]);
    await withSession(prompter, async ({ session, scratch }) => {
      const r = await runToolCommand(session, `pi-secret-run -- ${CONSUMER} hold ${scratch}`);
      assert.equal(r.code, 125);
      assert.equal(r.stderr.trim(), "pi-secret-broker: cancelled");
      await assert.rejects(readFile(join(scratch, "started")), { code: "ENOENT" });
    });
  });

  it("timeout: exit 125 with the reason, and the consumer never starts", async () => {
    const prompter = new ScriptedPrompter([{ hang: true }]);
    await withSession(prompter, async ({ session, scratch }) => {
      const r = await runToolCommand(session, `pi-secret-run -- ${CONSUMER} hold ${scratch}`);
      assert.equal(r.code, 125);
      assert.equal(r.stderr.trim(), "pi-secret-broker: timed out: nobody answered in pi");
      await assert.rejects(readFile(join(scratch, "started")), { code: "ENOENT" });
    }, { timeoutMs: 1500 });
  });

  it("a user process pretending to be the broker is refused before any modal", async () => {
    const prompter = new ScriptedPrompter([{ submit: SECRET }]);
    await withSession(prompter, async ({ session, events }) => {
      const frame = encodeSecretRequest({
        id: newRequestId(),
        argv: [CONSUMER, "report", "x"],
        label: "forged",
        cwd: "/",
        allowlisted: true,
        proof: "0".repeat(32),
        pid: process.pid,
      });
      const x = await rawExchange(session.socketPath, frame);
      assert.equal(x.ended, "closed");
      assert.deepEqual(refusals(events), ["broker_not_root"]);
      assert.equal(prompter.secrets.length, 0);
    });
  });

  it("outside an interactive pi session: a one-line refusal", async () => {
    const prompter = new ScriptedPrompter([]);
    await withSession(prompter, async ({ session }) => {
      const r = await runToolCommand(
        session,
        `env -u PI_ASKPASS_SOCKET pi-secret-run -- ${CONSUMER} report x`,
      );
      assert.equal(r.code, 125);
      assert.equal(
        r.stderr.trim(),
        "pi-secret-run: not inside an interactive pi session (run it from pi's bash tool or a ! command)",
      );
      const usage = await runToolCommand(session, "pi-secret-run --bogus");
      assert.equal(usage.code, 125);
      assert.match(usage.stderr, /^pi-secret-run: usage: /);
    });
  });

  it("another user's session socket is refused by the broker", async () => {
    const prompter = new ScriptedPrompter([{ submit: SECRET }]);
    await withSession(prompter, async ({ session }) => {
      // /run/sudo is root's, not ours: the broker must refuse to talk to it.
      const r = await runToolCommand(
        session,
        `PI_ASKPASS_SOCKET=/run/sudo/askpass.sock pi-secret-run -- ${CONSUMER} report x`,
      );
      assert.equal(r.code, 125);
      assert.match(
        r.stderr,
        /pi-secret-broker: no pi session socket of the caller at that path/,
      );
      assert.equal(prompter.secrets.length, 0);
    });
  });
});
