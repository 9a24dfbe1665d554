/**
 * Attacks on the askpass channel, each run for real as the throwaway user,
 * each refused before the prompter is asked. Two layers are proven apart:
 * the real helper's own self-checks, and the server's kernel checks (with a
 * check-free stand-in pinned as the helper, so only the server stands in the
 * way).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmod, copyFile, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { execFile } from "node:child_process";
import {
  type AskpassSession,
  type SessionEvent,
  startSession,
} from "../../../extension/channel/session_server.ts";
import { decodeReply, encodeRequest, newRequestId } from "../../../askpass/protocol.ts";
import { ScriptedPrompter } from "../../helpers/scripted_prompter.ts";
import { runShell, runToolCommand } from "../../helpers/tool_command.ts";
import { startHeartbeat } from "../../helpers/heartbeat.ts";
import { suiteHeartbeat } from "../../helpers/pi_start.ts";
import { pidsWithCmdline, waitFor } from "../../helpers/processes.ts";
import { rawExchange } from "../../helpers/raw_client.ts";
import { NODE_BINARY, REPO_ROOT, testPassword } from "../../helpers/test_env.ts";

const PASSWORD = testPassword();
const ROGUE = join(REPO_ROOT, "tests/helpers/rogue_helper.ts");

interface Fixture {
  session: AskpassSession;
  prompter: ScriptedPrompter;
  events: SessionEvent[];
  scratch: string;
}

async function withSession(
  opts: { rogue?: boolean; requestTimeoutMs?: number; answers?: ScriptedPrompter },
  run: (f: Fixture) => Promise<void>,
): Promise<void> {
  const prompter = opts.answers ?? new ScriptedPrompter([{ submit: PASSWORD }]);
  const events: SessionEvent[] = [];
  const started = await startSession(
    { prompter, onEvent: (e) => events.push(e) },
    {
      helperPath: opts.rogue ? ROGUE : undefined,
      requestTimeoutMs: opts.requestTimeoutMs,
      timeoutMs: 20_000,
    },
  );
  assert.ok(started.ok, `session did not start: ${!started.ok && started.reason}`);
  const session = started.session;
  const scratch = await mkdtemp(join(tmpdir(), "pi-sudo-attack-"));
  const heartbeat = startHeartbeat();
  try {
    await run({ session, prompter, events, scratch });
    heartbeat.assertNoStall();
  } finally {
    heartbeat.stop();
    await session.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

function refusals(events: SessionEvent[]): string[] {
  return events.filter((e) => e.kind === "refused").map((e) =>
    e.kind === "refused" ? e.reason : ""
  );
}

/** Writes an executable sh script. */
async function script(path: string, body: string): Promise<string> {
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o700);
  return path;
}

/** Runs real sudo with SUDO_ASKPASS pointing at `askpass` (the attacker's choice). */
function sudoWithAskpass(
  session: AskpassSession,
  askpass: string,
  extra: Record<string, string> = {},
) {
  return runShell("/usr/bin/sudo -k -A true", {
    ...session.toolEnvironment(process.env),
    SUDO_ASKPASS: askpass,
    ...extra,
  }, 20_000);
}

/** The launcher's text with one edit applied, written as a new script. */
async function editedLauncher(f: Fixture, name: string, edit: (text: string) => string) {
  const text = await readFile(f.session.launcherPath, "utf8");
  const edited = edit(text);
  assert.notEqual(edited, text, "the edit must change the launcher");
  return script(join(f.scratch, name), edited.replace(/^#!\/bin\/sh\n/, ""));
}

/** The launcher's text without its stdout check (the helper layer's first check). */
function withoutStdoutCheck(text: string): string {
  const check = /^if \[ ! -p \/proc\/self\/fd\/1 \][^\n]*\n[^\n]*\n {2}exit 1\nfi\n/m;
  assert.match(text, check, "the launcher has its stdout check");
  return text.replace(check, "");
}

describe("attacks", () => {
  const suite = suiteHeartbeat();
  before(suite.start);
  after(suite.finish);

  describe("the real helper refuses to run outside sudo", () => {
    const cases: [string, (launcher: string, scratch: string) => string][] = [
      ["run directly from a shell (stdout a socket)", (l) => `"${l}" 'Password: '`],
      ["stdout a regular file", (l, d) => `"${l}" 'Password: ' > "${d}/out"; cat "${d}/out"`],
      [
        "stdout a user FIFO",
        (l, d) => `mkfifo "${d}/fifo"; cat "${d}/fifo" & "${l}" 'Password: ' > "${d}/fifo"; wait`,
      ],
      ["stdout a user pipe", (l) => `"${l}" 'Password: ' | cat`],
    ];
    for (const [name, command] of cases) {
      it(name, async () => {
        await withSession({}, async (f) => {
          const r = await runShell(
            command(f.session.launcherPath, f.scratch),
            process.env as Record<string, string>,
            15_000,
          );
          assert.equal(r.stdout, "", "nothing on stdout");
          assert.match(r.stderr, /pi-askpass: stdout is not sudo's private pipe/);
          assert.equal(f.prompter.seen.length, 0);
          assert.deepEqual(f.events, [], "the helper never even connected");
        });
      });
    }

    for (const variable of ["LD_PRELOAD=/nonexistent/x.so", "NODE_OPTIONS=--require=/tmp/x.js"]) {
      it(`an injected ${variable.split("=")[0]} under real sudo`, async () => {
        await withSession({}, async (f) => {
          const evil = await editedLauncher(
            f,
            "evil",
            (t) => t.replace(" \\\n  -i \\\n", ` \\\n  -i '${variable}' \\\n`),
          );
          const r = await sudoWithAskpass(f.session, evil);
          assert.notEqual(r.code, 0);
          assert.match(r.stderr, new RegExp(`refusing to run with ${variable.split("=")[0]} set`));
          assert.match(r.stderr, /no password was provided/);
          assert.equal(f.prompter.seen.length, 0);
        });
      });
    }
  });

  describe("the server refuses a helper that is not sudo's", () => {
    const pipes: [string, (l: string, d: string) => string][] = [
      ["launcher run directly (stdout a socket)", (l) => `"${l}" 'Password: '`],
      ["stdout a regular file", (l, d) => `"${l}" 'Password: ' > "${d}/out"`],
      [
        "stdout a user FIFO",
        (l, d) =>
          `mkfifo "${d}/fifo"; cat "${d}/fifo" >/dev/null & "${l}" 'Password: ' > "${d}/fifo"; wait`,
      ],
      ["stdout a user pipe", (l) => `"${l}" 'Password: ' | cat`],
    ];
    for (const [name, command] of pipes) {
      it(name, async () => {
        await withSession({ rogue: true }, async (f) => {
          // The server layer alone: the launcher without its own stdout check.
          const launcher = await editedLauncher(f, "no-stdout-check", withoutStdoutCheck);
          const r = await runShell(
            command(launcher, f.scratch),
            process.env as Record<string, string>,
            15_000,
          );
          assert.match(r.stderr, /rogue: DENIED verification_failed/);
          assert.doesNotMatch(r.stderr, /GOT_PASSWORD|DELIVERED/);
          assert.deepEqual(refusals(f.events), ["peer_stdout_not_sudo_pipe"]);
          assert.equal(f.prompter.seen.length, 0);
        });
      });
    }

    it("a user-owned program named sudo as the parent", async () => {
      await withSession({ rogue: true }, async (f) => {
        const fakeSudo = join(f.scratch, "sudo");
        await copyFile("/bin/sh", fakeSudo);
        await chmod(fakeSudo, 0o700);
        // Real sudo runs this askpass, so stdout is sudo's root pipe; the
        // launcher is then started under the fake `sudo`.
        const middle = await script(
          join(f.scratch, "middle"),
          `"${fakeSudo}" -c '"$0" "$1"; exit $?' "${f.session.launcherPath}" "$1"`,
        );
        const r = await sudoWithAskpass(f.session, middle);
        assert.match(r.stderr, /rogue: DENIED verification_failed/);
        assert.match(r.stderr, /no password was provided/);
        assert.deepEqual(refusals(f.events), ["parent_not_setuid_root"]);
        assert.equal(f.prompter.seen.length, 0);
      });
    });

    it("a parent that is not sudo at all, holding sudo's pipe", async () => {
      await withSession({ rogue: true }, async (f) => {
        const middle = await script(
          join(f.scratch, "middle"),
          `"${f.session.launcherPath}" "$1"; exit $?`,
        );
        const r = await sudoWithAskpass(f.session, middle);
        assert.match(r.stderr, /rogue: DENIED verification_failed/);
        assert.deepEqual(refusals(f.events), ["parent_not_sudo"]);
        assert.equal(f.prompter.seen.length, 0);
      });
    });

    const envEdits: [string, string][] = [
      ["an extra environment variable (NODE_OPTIONS)", "NODE_OPTIONS=--require=/tmp/x.js"],
      ["an extra environment variable (LD_PRELOAD)", "LD_PRELOAD=/nonexistent/x.so"],
      ["an extra harmless-looking variable", "EXTRA=1"],
    ];
    for (const [name, variable] of envEdits) {
      it(`${name} under real sudo`, async () => {
        await withSession({ rogue: true }, async (f) => {
          const evil = await editedLauncher(
            f,
            "evil",
            (t) => t.replace(" \\\n  -i \\\n", ` \\\n  -i '${variable}' \\\n`),
          );
          const r = await sudoWithAskpass(f.session, evil);
          assert.match(r.stderr, /rogue: DENIED verification_failed/);
          assert.deepEqual(refusals(f.events), ["peer_environ_mismatch"]);
          assert.equal(f.prompter.seen.length, 0);
        });
      });
    }

    it("an extra flag in argv (--allow-run) under real sudo", async () => {
      await withSession({ rogue: true }, async (f) => {
        const evil = await editedLauncher(
          f,
          "evil",
          (t) => t.replace("'run' \\\n", "'run' \\\n  '--allow-run' \\\n"),
        );
        const r = await sudoWithAskpass(f.session, evil);
        assert.match(r.stderr, /rogue: DENIED verification_failed/);
        assert.deepEqual(refusals(f.events), ["peer_cmdline_mismatch"]);
        assert.equal(f.prompter.seen.length, 0);
      });
    });

    it("a sudo that pi did not start (outside this session's process tree)", async () => {
      await withSession({ rogue: true }, async (f) => {
        // setsid + a double fork re-parents the shell to init: not our descendant.
        const r = await runShell(
          `setsid sh -c '( /usr/bin/sudo -k -A true 2>"${f.scratch}/err" & ) ; sleep 0' ; sleep 0`,
          f.session.toolEnvironment(process.env),
          10_000,
        );
        assert.equal(r.code, 0);
        await waitFor(
          "the refusal",
          () => refusals(f.events).length > 0 ? true : undefined,
          10_000,
        );
        assert.deepEqual(refusals(f.events), ["not_from_this_session"]);
        assert.equal(f.prompter.seen.length, 0);
      });
    });
  });

  describe("forged requests on the socket", () => {
    it("a client claiming the pid of a real waiting helper never gets the password", async () => {
      let release!: (pw: string) => void;
      const gate = new Promise<string>((r) => release = r);
      const prompter = new ScriptedPrompter([{ gate }]);
      await withSession({ answers: prompter }, async (f) => {
        const real = runToolCommand(f.session, "sudo -k id -u");
        await waitFor("the real prompt", () => prompter.seen.length === 1 ? true : undefined);
        const helperPid = await waitFor("the real helper", async () => {
          const pids = await pidsWithCmdline(`--allow-net=unix:${f.session.socketPath}`);
          return pids.length === 1 ? pids[0] : undefined;
        });
        const prompt = (await readFile(`/proc/${helperPid}/cmdline`, "utf8")).split("\0").at(-2)!;
        for (const claimed of [helperPid, process.pid]) {
          const id = newRequestId();
          const x = await rawExchange(
            f.session.socketPath,
            encodeRequest({ id, prompt, pid: claimed }),
          );
          const reply = decodeReply(x.reply.subarray(4), id);
          assert.ok(reply.ok, "the forger gets a well-formed reply");
          assert.equal(reply.message.type, "password_denied", "…and it is a denial");
        }
        assert.deepEqual(refusals(f.events), ["claimed_pid_mismatch", "peer_exe_mismatch"]);
        assert.equal(prompter.seen.length, 1, "no second prompt opened");
        release(PASSWORD);
        const r = await real;
        assert.equal(r.stdout, "0\n", "the real helper still gets the password");
      });
    });

    for (const cloexec of [false, true]) {
      const how = cloexec ? "kept only by a forked child" : "inherited by the helper";
      it(`connect first, then exec the real helper (socket ${how}): refused, real request still served`, async () => {
        let release!: (pw: string) => void;
        const gate = new Promise<string>((r) => release = r);
        const prompter = new ScriptedPrompter([{ gate }]);
        await withSession({ answers: prompter }, async (f) => {
          const attacker = join(f.scratch, "askpass");
          await script(
            attacker,
            `exec python3 "${join(REPO_ROOT, "tests/helpers/exec_attack.py")}" "$1"`,
          );
          const sudo = sudoWithAskpass(f.session, attacker, {
            ATTACK_DIR: f.scratch,
            ATTACK_LAUNCHER: f.session.launcherPath,
            ATTACK_CLOEXEC: cloexec ? "1" : "0",
          });
          const pid = Number(
            await waitFor(
              "the attacker's pid",
              () => readFile(join(f.scratch, "pid"), "utf8").catch(() => undefined),
            ),
          );
          // Wait until the exec'd process is the real helper with its request in.
          await waitFor(
            "the real helper's prompt",
            () => prompter.seen.length === 1 ? true : undefined,
          );
          const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
          const prompt = argv.at(-2)!;
          const id = newRequestId();
          // Whole or not at all: the attacker sends the file as soon as it exists.
          await writeFile(
            join(f.scratch, "frame.tmp"),
            encodeRequest({ id, prompt, pid }),
          );
          await rename(join(f.scratch, "frame.tmp"), join(f.scratch, "frame"));
          const reply = await waitFor(
            "the attacker's reply",
            () => readFile(join(f.scratch, "reply")).catch(() => undefined),
          );
          const decoded = decodeReply(new Uint8Array(reply).subarray(4), id);
          assert.ok(
            decoded.ok && decoded.message.type === "password_denied",
            `the attacker is denied: ${JSON.stringify(decoded)} ${
              new Uint8Array(reply).subarray(0, 8)
            } ${JSON.stringify(f.events)}`,
          );
          assert.deepEqual(refusals(f.events), [
            cloexec ? "peer_does_not_hold_connection" : "peer_connection_inherited",
          ]);
          release(PASSWORD);
          const r = await sudo;
          assert.equal(r.code, 0, r.stderr);
          assert.equal(prompter.seen.length, 1);
        });
      });
    }

    it("a malformed request is dropped without a reply", async () => {
      await withSession({}, async (f) => {
        const frame = encodeRequest({ id: newRequestId(), prompt: "x", pid: 0 });
        const x = await rawExchange(f.session.socketPath, frame);
        assert.equal(x.ended, "closed");
        assert.equal(x.reply.length, 0);
        assert.deepEqual(refusals(f.events), ["bad_field"]);
        assert.equal(f.prompter.seen.length, 0);
      });
    });

    it("a replayed request id is refused", async () => {
      await withSession({}, async (f) => {
        const frame = encodeRequest({
          id: newRequestId(),
          prompt: "x",
          pid: process.pid,
        });
        await rawExchange(f.session.socketPath, frame);
        await rawExchange(f.session.socketPath, frame);
        assert.deepEqual(refusals(f.events), ["peer_exe_mismatch", "replayed_request"]);
        assert.equal(f.prompter.seen.length, 0);
      });
    });

    it("an oversized frame is dropped at once", async () => {
      await withSession({}, async (f) => {
        const big = new Uint8Array(64 * 1024);
        new DataView(big.buffer).setUint32(0, big.length - 4);
        const x = await rawExchange(f.session.socketPath, big);
        assert.equal(x.ended, "closed");
        assert.equal(x.reply.length, 0);
        assert.deepEqual(refusals(f.events), ["frame_too_large"]);
      });
    });

    it("a frame that never finishes is dropped by the deadline", async () => {
      await withSession({ requestTimeoutMs: 300 }, async (f) => {
        const started = Date.now();
        const x = await rawExchange(
          f.session.socketPath,
          new Uint8Array([0, 0, 0, 100, 1, 2]),
          5000,
        );
        assert.equal(x.ended, "closed", "the server closed it");
        assert.ok(Date.now() - started < 2000);
        assert.deepEqual(refusals(f.events), ["request_timeout"]);
      });
    });

    it("1000 connections at once and a sender that never finishes: all end, no stall; real sudo works after", async () => {
      // The product's own request deadline (2 s): the real sudo after the
      // flood must get its request in within it on a loaded machine too.
      await withSession({}, async (f) => {
        // The flood runs in its own process: the heartbeat measures the server alone.
        const flooder = join(REPO_ROOT, "tests/bench/flood_client.ts");
        const heapBefore = process.memoryUsage().heapUsed;
        const slow = rawExchange(f.session.socketPath, new Uint8Array([0, 0, 0, 100, 1]), 5000);
        const summary = await new Promise<{ stillOpen: number; connectErrors: number }>(
          (resolve, reject) => {
            execFile(
              NODE_BINARY,
              [flooder, f.session.socketPath, "1000", "8000"],
              {
                timeout: 20_000,
              },
              (err, stdout) =>
                err ? reject(err) : resolve(JSON.parse(stdout.trim().split("\n").at(-1)!)),
            );
          },
        );
        assert.equal(summary.stillOpen, 0, "every flood connection was ended by the server");
        assert.equal(
          (await slow).ended,
          "closed",
          "the half-sent frame was dropped by its deadline",
        );
        const growthMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
        assert.ok(growthMb < 20, `heap grew ${growthMb.toFixed(1)} MB`);
        // Over for the server too: the kernel lists no connection of the
        // socket besides the listener, none accepted and none in its backlog
        // (the flood's last ones are accepted after the flooder has exited;
        // until then the server is at its connection cap and drops new ones).
        await waitFor("the flood drained from the server", async () => {
          const table = await readFile("/proc/net/unix", "utf8");
          const ours = table.split("\n").filter((l) => l.endsWith(` ${f.session.socketPath}`));
          return ours.length === 1 ? true : undefined;
        }, 20_000);
        const since = f.events.length;
        const r = await runToolCommand(f.session, "sudo -k id -u");
        const refused = f.events.slice(since).filter((e) => e.kind === "refused");
        assert.equal(r.stdout, "0\n", `${r.stderr}\nrefused: ${JSON.stringify(refused)}`);
        assert.equal(f.prompter.seen.length, 1);
      });
    });
  });
});
