/**
 * The password reaches only the sudo the modal shows (ADR 0005), against
 * real sudo as the throwaway user: the real launcher and Deno helper, the
 * real session server, and the pipe swap of issue 9 (attack 2) run the way a
 * tool call would. Each layer is proven alone: the user-level checks (every
 * install) with the root layer off, and the root-confirmed check of hardened
 * mode (the broker is installed by tests/run.sh's root phase) with the user
 * layer off. Neither may refuse legitimate requests, alone or at once. A
 * layer is switched off in a mutated copy of the sources
 * (`tests/helpers/mutated_copy.ts`): the product has no switch for it.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AskpassSession, SessionEvent } from "../../../extension/channel/session_server.ts";
import * as product from "../../../extension/channel/session_server.ts";
import { mutatedCopy, ROOT_PAIRING_OFF, USER_PAIRING_OFF } from "../../helpers/mutated_copy.ts";
import {
  PAIRING_CHECK,
  rootCheckInstalled,
  runRootPairing,
} from "../../../extension/pairing/root_check.ts";
import { PAIRING_REFUSALS } from "../../../extension/pairing/sudo_pairing.ts";
import { type ScriptedAnswer, ScriptedPrompter } from "../../helpers/scripted_prompter.ts";
import { runShell, runToolCommand } from "../../helpers/tool_command.ts";
import { type Heartbeat, startHeartbeat } from "../../helpers/heartbeat.ts";
import { suiteHeartbeat } from "../../helpers/pi_start.ts";
import { waitFor } from "../../helpers/processes.ts";
import process from "node:process";
import { REPO_ROOT, testPassword, WITHOUT_BROKER } from "../../helpers/test_env.ts";

/**
 * argv: HELPER MARKER. A thread unshares its descriptor table, copies the
 * helper's stdout pipe into it (`pidfd_getfd`: the pipe is root's, so /proc
 * cannot open it), writes MARKER and waits: the copy is in that thread's
 * table only.
 */
const THREAD_HOLDER = `
import ctypes, os, sys, threading, time
helper, marker = sys.argv[1], sys.argv[2]
def hold():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x400) != 0:  # CLONE_FILES
        sys.exit(1)
    pidfd = os.pidfd_open(int(helper))
    if libc.syscall(438, pidfd, 1, 0) < 0:  # pidfd_getfd
        sys.exit(1)
    os.close(pidfd)
    open(marker, "w").close()
    time.sleep(30)
threading.Thread(target=hold, daemon=True).start()
time.sleep(30)
`;

const PASSWORD = testPassword();
const SWAP = join(REPO_ROOT, "tests/pi/attack_scripts/pipe_swap.sh");

interface Fixture {
  session: AskpassSession;
  prompter: ScriptedPrompter;
  events: SessionEvent[];
  scratch: string;
}

/** Which pairing layers run: both (the product as it is), or one alone (a mutated copy). */
type Layers = "both" | "user" | "root";

/** The copy of each layer's sources, made once and removed at the end. */
const copies = new Map<Layers, { dir: string; server: typeof product }>();

/** `startSession` of the product, or of a copy with the other layer switched off. */
async function sessionServer(layers: Layers): Promise<typeof product> {
  if (layers === "both") return product;
  const made = copies.get(layers);
  if (made) return made.server;
  const mutation = layers === "user" ? ROOT_PAIRING_OFF : USER_PAIRING_OFF;
  const dir = await mutatedCopy(await mkdtemp(join(tmpdir(), `pi-pairing-${layers}-`)), [mutation]);
  const server: typeof product = await import(join(dir, "extension/channel/session_server.ts"));
  copies.set(layers, { dir, server });
  return server;
}

async function withSession(
  script: ScriptedAnswer[],
  layers: Layers,
  run: (f: Fixture) => Promise<void>,
): Promise<void> {
  const prompter = new ScriptedPrompter(script);
  const events: SessionEvent[] = [];
  const { startSession } = await sessionServer(layers);
  const started = await startSession(
    { prompter, onEvent: (e) => events.push(e) },
    { timeoutMs: 20_000 },
  );
  assert.ok(started.ok, `session did not start: ${!started.ok && started.reason}`);
  const scratch = await mkdtemp(join(tmpdir(), "pi-pipe-swap-"));
  const heartbeat: Heartbeat = startHeartbeat();
  try {
    await run({ session: started.session, prompter, events, scratch });
    heartbeat.assertNoStall();
  } finally {
    heartbeat.stop();
    await started.session.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

function refusals(events: SessionEvent[]): string[] {
  return events.flatMap((e) => e.kind === "refused" ? [e.reason] : []);
}

/** Runs the swap as a tool call; returns its output and whether the hidden command ran. */
async function pipeSwap(f: Fixture, mode?: "keep" | "kthread") {
  const r = await runToolCommand(
    f.session,
    `sh '${SWAP}' '${f.scratch}'${mode ? ` ${mode}` : ""}`,
    40_000,
  );
  const out = r.stdout + r.stderr;
  assert.match(out, /swap: the holder has sudo B's pipe/, out);
  assert.match(out, /^pwned: absent$/m, `the hidden command ran as root:\n${out}`);
  await assert.rejects(readFile(join(f.scratch, "pwned")), "no pwned file");
  assert.match(out, /no password was provided/, "the decoy got no password");
  assert.equal(f.prompter.seen.length, 0, "no prompt opened");
  return out;
}

const USER_ONLY: Layers = "user";
const ROOT_ONLY: Layers = "root";

describe("the password reaches only the sudo it shows (real sudo)", () => {
  // Both copies made, loaded and started before the suite's heartbeat.
  const suite = suiteHeartbeat(async () => {
    const layers = WITHOUT_BROKER ? [USER_ONLY] : [USER_ONLY, ROOT_ONLY];
    for (const l of layers) await sessionServer(l);
    return layers.map((l) => {
      const made = copies.get(l);
      assert.ok(made, `no copy for ${l}`);
      return made.dir;
    });
  });
  before(suite.start);
  after(async () => {
    suite.finish();
    for (const { dir } of copies.values()) await rm(dir, { recursive: true, force: true });
  });

  it("pipe swap, user layer: refused other_sudo_foreign_askpass, the hidden command never runs as root, no prompt", async () => {
    await withSession([{ submit: PASSWORD }], USER_ONLY, async (f) => {
      await pipeSwap(f);
      assert.deepEqual(refusals(f.events), [PAIRING_REFUSALS.OTHER_SUDO_FOREIGN_ASKPASS]);
      const refused = f.events.find((e) => e.kind === "refused");
      assert.ok(
        refused?.kind === "refused" && /\(other_sudo_foreign_askpass, pid \d+\)/.test(
          refused.notice ?? "",
        ),
        "the notice names the reason and the other sudo's pid",
      );
      // The same session still serves a legitimate sudo.
      const r = await runToolCommand(f.session, "sudo -k id -u");
      assert.equal(r.stdout, "0\n", r.stderr);
    });
  });

  it("pipe swap, user layer, sudo B named to forge a kernel thread's status line: refused other_sudo_foreign_askpass before and after a walk has seen it", async () => {
    // sudo B's name is `s\rKthread:\t1`: the kernel escapes only `\n` and `\\` in
    // status's `Name:` line, so a reader that takes `\r` for a line break sees a
    // kernel thread and may skip sudo B in every later walk.
    // Two answers: were either modal to open, the human's password would go to it.
    await withSession([{ submit: PASSWORD }, { submit: PASSWORD }], USER_ONLY, async (f) => {
      const out = await pipeSwap(f, "kthread");
      assert.match(out, /^first sudo rc=1$/m, out);
      assert.deepEqual(refusals(f.events), [
        PAIRING_REFUSALS.OTHER_SUDO_FOREIGN_ASKPASS,
        PAIRING_REFUSALS.OTHER_SUDO_FOREIGN_ASKPASS,
      ]);
    });
  });

  it("pipe swap with the holder keeping a copy: refused stdout_pipe_held_elsewhere at once", async () => {
    await withSession([], USER_ONLY, async (f) => {
      await pipeSwap(f, "keep");
      assert.deepEqual(refusals(f.events), [PAIRING_REFUSALS.STDOUT_PIPE_HELD_ELSEWHERE]);
    });
  });

  it("a sudo of the user's waiting at a terminal prompt is not a refusal: the modal names it, and the tool call's sudo works", async () => {
    await withSession([{ submit: PASSWORD }], USER_ONLY, async (f) => {
      // A real pty: sudo prints its tty prompt and waits, as in another terminal.
      // setsid(1), not `detached`, as runShell does (tests/helpers/tool_command.ts).
      const other = spawn("/usr/bin/setsid", [
        "/usr/bin/python3",
        "-c",
        "import pty,os,sys,time\npid,fd=pty.fork()\nif pid==0: os.execv('/usr/bin/sudo',['sudo','-k','true'])\n" +
        "buf=b''\nwhile b'assword' not in buf: buf+=os.read(fd,1024)\nprint('waiting',flush=True)\ntime.sleep(60)",
      ], { stdio: ["ignore", "pipe", "ignore"] });
      // One listener from the start: the line comes once, whenever it comes.
      let prompted = false;
      other.stdout.once("data", () => prompted = true);
      try {
        await waitFor("the tty sudo's prompt", () => prompted || undefined, 20_000);
        const r = await runToolCommand(f.session, "sudo -k id -u");
        assert.equal(r.stdout, "0\n", r.stderr);
        assert.deepEqual(refusals(f.events), []);
        assert.equal(f.prompter.seen.length, 1);
        const named = f.prompter.seen[0].unchecked;
        assert.equal(named.length, 1, JSON.stringify(named));
        assert.match(named[0].why, /another sudo of yours waits at a terminal prompt/);
        assert.match(named[0].command, /sudo -k true/);
        assert.match(named[0].started, /^\d\d:\d\d:\d\d$/);
      } finally {
        process.kill(-other.pid!, "SIGKILL");
      }
    });
  });

  it("two sudo tool calls at once, both layers: both modals, both run as root", async () => {
    let release!: (pw: string) => void;
    const gate = new Promise<string>((r) => release = r);
    await withSession([{ gate }, { submit: PASSWORD }], "both", async (f) => {
      const a = runToolCommand(f.session, "sudo -k id -u");
      const b = runToolCommand(f.session, "sudo -k id -un");
      // Both verified and queued before the first answer leaves.
      await waitFor("both queued", () => f.session.pendingCount() === 2 ? true : undefined, 15_000);
      release(PASSWORD);
      const [ra, rb] = await Promise.all([a, b]);
      assert.equal(ra.stdout, "0\n", ra.stderr);
      assert.equal(rb.stdout, "root\n", rb.stderr);
      assert.deepEqual(refusals(f.events), []);
      assert.equal(f.prompter.seen.length, 2);
    });
  });

  describe("hardened mode: root confirms the pairing", { skip: WITHOUT_BROKER }, () => {
    it("the broker's pairing check is installed (tests/run.sh's root phase)", async () => {
      assert.equal(
        await rootCheckInstalled(PAIRING_CHECK),
        true,
        `${PAIRING_CHECK} missing or not root-owned`,
      );
    });

    it("pipe swap, root layer alone: refused root_pairing_refused, the hidden command never runs as root", async () => {
      await withSession([], ROOT_ONLY, async (f) => {
        await pipeSwap(f);
        assert.deepEqual(refusals(f.events), [PAIRING_REFUSALS.ROOT_PAIRING_REFUSED]);
      });
    });

    it("root layer alone: a legitimate sudo is confirmed and runs as root", async () => {
      await withSession([{ submit: PASSWORD }], ROOT_ONLY, async (f) => {
        const r = await runToolCommand(f.session, "sudo -k id -u");
        assert.equal(r.stdout, "0\n", r.stderr);
        assert.deepEqual(refusals(f.events), []);
      });
    });

    it("the root check itself: paired for sudo's own askpass, not paired for a swapped pipe, usage for junk", async () => {
      const scratch = await mkdtemp(join(tmpdir(), "pi-pairing-root-"));
      try {
        // An askpass that just waits (exec: no child shares its fd 1).
        const askpass = join(scratch, "wait");
        await runShell(
          `printf '#!/bin/sh\\nexec sleep 60\\n' > '${askpass}'; chmod 700 '${askpass}'`,
          {
            PATH: "/usr/bin:/bin",
          },
        );
        const sudo = spawn("/usr/bin/setsid", ["/usr/bin/sudo", "-A", "-k", "true"], {
          env: { PATH: "/usr/bin:/bin", SUDO_ASKPASS: askpass },
          stdio: "ignore",
        });
        const helper = await waitFor("the askpass", async () => {
          const kids = await readFile(`/proc/${sudo.pid}/task/${sudo.pid}/children`, "utf8")
            .catch(() => "");
          const pid = Number(kids.trim().split(" ")[0]);
          return pid > 0 && (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => ""))
              .includes("sleep")
            ? pid
            : undefined;
        }, 10_000);
        const { readlink } = await import("node:fs/promises");
        const inode = Number(/\d+/.exec(await readlink(`/proc/${helper}/fd/1`))![0]);
        // Within its deadline (past it, not paired); what it costs is bench row r.
        const paired = await runRootPairing("/usr/bin/sudo", {
          helperPid: helper,
          sudoPid: sudo.pid!,
          pipeInode: inode,
        });
        assert.deepEqual(paired, { ok: true });
        // The same helper claimed under another sudo, or another pipe: not paired.
        for (const args of [{ sudoPid: process.pid }, { pipeInode: inode + 1 }]) {
          const v = await runRootPairing("/usr/bin/sudo", {
            helperPid: helper,
            sudoPid: sudo.pid!,
            pipeInode: inode,
            ...args,
          });
          assert.ok(!v.ok && v.reason === PAIRING_REFUSALS.ROOT_PAIRING_REFUSED, JSON.stringify(v));
        }
        // A process of the user holds the pipe only in a thread with a
        // table of its own (root walks every thread of the caller's).
        const marker = join(scratch, "held");
        const holder = spawn("/usr/bin/setsid", [
          "python3",
          "-c",
          THREAD_HOLDER,
          String(helper),
          marker,
        ], {
          stdio: "ignore",
        });
        try {
          await waitFor("the thread's copy", () => existsSync(marker) || undefined, 10_000);
          const held = await runRootPairing("/usr/bin/sudo", {
            helperPid: helper,
            sudoPid: sudo.pid!,
            pipeInode: inode,
          });
          assert.ok(
            !held.ok && held.reason === PAIRING_REFUSALS.ROOT_PAIRING_REFUSED,
            JSON.stringify(held),
          );
          // Refused for the copy, not because the askpass had gone.
          assert.ok(existsSync(`/proc/${helper}`), "the askpass exited during the check");
        } finally {
          process.kill(-holder.pid!, "SIGKILL");
        }
        const junk = await runShell(
          "/usr/bin/sudo -n /usr/local/libexec/pi-sudo-prompt/pi-secret-broker --verify-pairing 1 2 '3;id'",
          { PATH: "/usr/bin:/bin" },
        );
        assert.equal(junk.code, 125, junk.stderr);
        process.kill(-sudo.pid!, "SIGKILL");
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    });
  });
});
