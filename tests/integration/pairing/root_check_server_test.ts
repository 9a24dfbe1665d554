/**
 * The root check server (extension/pairing/root_check.ts,
 * broker/check_server.sh; ADR 0005's check-server amendment), against real
 * sudo and the installed broker: one `sudo -n` answers a process's
 * questions, an answer is taken only for the question it answers, and a
 * server that stalls or is tampered with is replaced.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { parseStat } from "../../../kernel/proc.ts";
import { runRootCheck } from "../../../extension/pairing/root_check.ts";
import { setDumpable } from "../../../extension/keyboard/terminal_control.ts";
import { waitFor } from "../../helpers/processes.ts";
import { WITHOUT_BROKER } from "../../helpers/test_env.ts";

const SUDO = "/usr/bin/sudo";
/** A terminal that does not exist: terminal-check's usage answer, exit 125. */
const NO_PTS = ["--terminal-holders", "999999"];
const NO_PTS_ANSWER = "pi-terminal: usage: no terminal /dev/pts/999999\n";

/** This process's descriptors that are the write end of a pipe. */
function pipeWriters(): Set<number> {
  const out = new Set<number>();
  for (const name of readdirSync("/proc/self/fd")) {
    try {
      if (!readlinkSync(`/proc/self/fd/${name}`).startsWith("pipe:")) continue;
      const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${name}`, "utf8"));
      if (flags && (parseInt(flags[1], 8) & 3) === 1) out.add(Number(name));
    } catch { /* closed meanwhile */ }
  }
  return out;
}

const SERVER_ARGV = [
  SUDO,
  "-n",
  "/usr/local/libexec/pi-sudo-prompt/pi-secret-broker",
  "--serve-checks",
];

/** pids of this process's children running the check server's sudo, from /proc. */
function serverSudos(): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const stat = parseStat(readFileSync(`/proc/${name}/stat`, "utf8"));
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").slice(0, -1);
      if (stat?.ppid === process.pid && argv.join(" ") === SERVER_ARGV.join(" ")) {
        out.push(Number(name));
      }
    } catch { /* gone meanwhile */ }
  }
  return out;
}

/**
 * The one check server's sudo started since `before` was listed. Other test
 * files of this process run in isolates of their own, each with its own
 * server, so a server is told by being new.
 */
function newServer(before: readonly number[]): number {
  const pids = serverSudos().filter((p) => !before.includes(p));
  assert.equal(
    pids.length,
    1,
    `new check servers: ${pids.join(" ")} (before: ${before.join(" ")})`,
  );
  return pids[0];
}

/** This process's children, from each of its threads' `children` (a thread's own forks). */
function children(): number[] {
  const out: number[] = [];
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const list = readFileSync(`/proc/self/task/${tid}/children`, "utf8").trim();
      if (list) out.push(...list.split(" ").map(Number));
    } catch { /* thread gone */ }
  }
  return out;
}

/**
 * The agent's move on a process that holds the server's pipes: open its
 * stdin and stdout through /proc (a new end of each pipe). Tries until the
 * kernel refuses, at most `tries` times; returns the fds it opened.
 */
function openPipesOf(pid: number, tries: number): string[] {
  const opened: string[] = [];
  for (let i = 0; i < tries; i++) {
    let refused = false;
    for (const [fd, mode] of [[0, constants.O_WRONLY], [1, constants.O_RDONLY]] as const) {
      try {
        closeSync(openSync(`/proc/${pid}/fd/${fd}`, mode | constants.O_NONBLOCK));
        opened.push(`${pid}/fd/${fd}`);
      } catch {
        refused = true;
      }
    }
    if (refused) break;
  }
  return opened;
}

/** Whether `pid` has left `/proc` (or is a zombie nobody will run again). */
function gone(pid: number): boolean {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"))?.state === "Z";
  } catch {
    return true;
  }
}

/**
 * Ends the current server: a check it does not know makes it answer with its
 * usage line, which carries no nonce, so pi gives the server up.
 */
async function endServer(): Promise<void> {
  const r = await runRootCheck(SUDO, ["--no-such-check"]);
  assert.equal(r.failure, "bad answer", JSON.stringify(r));
}

/** The one server started since `before` was listed, once a killed one has left /proc. */
function oneNewServer(before: readonly number[]): Promise<number> {
  return waitFor("one new check server", () => {
    const pids = serverSudos().filter((p) => !before.includes(p));
    return pids.length === 1 ? pids[0] : undefined;
  });
}

describe("root check server (real sudo, installed broker)", { skip: WITHOUT_BROKER }, () => {
  // No heartbeat here: these tests start server after server on purpose, and
  // in Deno each start copies the whole test process (`detached`). The
  // suites that ask a warm server (real_sudo_test, pipe_swap_test) watch the
  // loop while questions are asked and answered.

  it("one sudo answers every question of the module: the second question starts nothing", async () => {
    await endServer();
    const before = serverSudos();
    const first = await runRootCheck(SUDO, NO_PTS);
    const server = newServer(before);
    const second = await runRootCheck(SUDO, NO_PTS);
    assert.deepEqual([first.code, first.stdout], [125, NO_PTS_ANSWER], JSON.stringify(first));
    assert.deepEqual([second.code, second.stdout], [125, NO_PTS_ANSWER], JSON.stringify(second));
    assert.equal(newServer(before), server, "the second question started another sudo");
  });

  it("a question past its deadline fails, and the next one starts a new server", async () => {
    await endServer();
    const before = serverSudos();
    // A server that never answers, in the place of the server's sudo: root's
    // own cannot be stalled from here, and a deadline raced against a real
    // sudo's start is decided by the machine's load, not by the code.
    const dir = mkdtempSync(join(tmpdir(), "pi-stalled-server-"));
    try {
      const stalled = join(dir, "sudo");
      writeFileSync(stalled, "#!/bin/sh\nexec sleep 600\n", { mode: 0o700 });
      const earlier = children();
      const asked = runRootCheck(stalled, NO_PTS, 200);
      const standIns = children().filter((p) => !earlier.includes(p));
      assert.equal(standIns.length, 1, `new children: ${standIns.join(" ")}`);
      const late = await asked;
      assert.equal(late.failure, "timeout", JSON.stringify(late));
      // The late question's server is killed and gone.
      await waitFor("the stalled server gone", () => gone(standIns[0]) || undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const next = await runRootCheck(SUDO, NO_PTS);
    assert.deepEqual([next.code, next.stdout], [125, NO_PTS_ANSWER], JSON.stringify(next));
    await oneNewServer(before);
  });

  it("no process between pi and the server's sudo lets the agent open the server's pipes: a fork of a non-dumpable pi stays so into sudo", async () => {
    // pi is non-dumpable (ADR 0009); so is this process for the test.
    const off = setDumpable(false);
    assert.deepEqual(off, { ok: true, on: false }, JSON.stringify(off));
    try {
      const opened: string[] = [];
      for (let round = 0; round < 20; round++) {
        await endServer();
        const before = children();
        const asked = runRootCheck(SUDO, NO_PTS);
        // At once, as an agent polling pi's children: setsid(1) between pi
        // and sudo would be dumpable until it execs sudo.
        for (const pid of children().filter((p) => !before.includes(p))) {
          opened.push(...openPipesOf(pid, 200));
        }
        const answer = await asked;
        assert.deepEqual(
          [answer.code, answer.stdout],
          [125, NO_PTS_ANSWER],
          JSON.stringify(answer),
        );
      }
      assert.deepEqual(opened, [], "the agent opened the check server's pipes");
    } finally {
      setDumpable(true);
    }
  });

  it("an answer to a question someone else wrote into the server's input is refused, not taken for pi's", async () => {
    await endServer();
    const before = serverSudos();
    const writers = pipeWriters();
    const started = await runRootCheck(SUDO, NO_PTS);
    assert.equal(started.code, 125, JSON.stringify(started));
    const server = newServer(before);
    // The one pipe this process writes to that the new server brought.
    const input = [...pipeWriters()].filter((fd) => !writers.has(fd));
    assert.equal(input.length, 1, `new pipe writers: ${input.join(" ")}`);
    // The attacker's own copy of pi's end (what pidfd_getfd would give a
    // process allowed to trace pi), with its own question and a guessed
    // nonce, written just before pi asks: its answer comes first.
    const copy = openSync(`/proc/self/fd/${input[0]}`, "w");
    try {
      writeSync(copy, `0123456789abcdef ${NO_PTS.join(" ")}\n`);
    } finally {
      closeSync(copy);
    }
    const asked = await runRootCheck(SUDO, NO_PTS);
    assert.deepEqual(asked, {
      code: null,
      stdout: "",
      stderr: "",
      failure: "bad answer",
    });
    const next = await runRootCheck(SUDO, NO_PTS);
    assert.deepEqual([next.code, next.stdout], [125, NO_PTS_ANSWER], JSON.stringify(next));
    newServer([...before, server]); // a new one answered
    // Killed when pi gave it up: gone once the kernel has delivered that.
    await waitFor(
      "the tampered server's sudo to end",
      () => !serverSudos().includes(server) || undefined,
      10_000,
    );
  });
});
