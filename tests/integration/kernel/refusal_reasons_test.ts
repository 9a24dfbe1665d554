/**
 * Five refusal reasons of the peer and broker verification, each made to
 * happen for real and asserted by its named constant
 * (`VERIFY_REFUSALS.PEER_IDS_MISMATCH`, `PEER_CHANGED`, `HELPER_TRACED`,
 * `BROKER_CMDLINE_MISMATCH`, `BROKER_PROOF_INVALID`). Runs as the throwaway
 * user of `tests/run.sh` (non-root, with a sudo password, the real broker
 * installed by the root phase), under `deno test -A` and `node --test`.
 *
 * - `peer_ids_mismatch` (kernel/peer_verification.ts): the process that
 *   connected is no longer running with our uid on all four `Uid:` fields.
 *   Real: a python process connects (SO_PEERCRED records our uid), hands the
 *   connection to a forked child and execs setuid `/usr/bin/sudo`; the child
 *   sends the request once `/proc` shows sudo's root ids.
 * - `peer_changed` (peer_verification.ts, and broker_verification.ts): the
 *   last re-check, after every other check passed, finds the helper or sudo
 *   no longer running as the process that was read (gone, another start
 *   time, a zombie, or stopped). A PID reuse cannot be forced in a test (row
 *   X10), but a stopped sudo can: real sudo runs a check-free stand-in pinned
 *   as the helper (tests/helpers/gated_helper.ts) that waits for a line on
 *   stdin; the test SIGSTOPs sudo first (the caller may: sudo's real uid is
 *   the caller's), then lets the helper connect. Everything the server reads
 *   is genuine, and only the re-check refuses. For the broker the same fact
 *   is changed under `verifyBroker` with the real broker's connection.
 * - `helper_traced` (peer_verification.ts), judged after the reads made at
 *   accept: the session reads a helper when it connects, and judges those
 *   reads when its request comes; a tracer that attached in between is seen
 *   by the judgement's own read of `TracerPid`. Real: the gated helper
 *   connects untraced and waits; a python tracer seizes it (PTRACE_SEIZE, no
 *   stop); then the helper sends its request.
 * - `broker_cmdline_mismatch` (broker_verification.ts): the broker's
 *   `/proc/<pid>/cmdline` is not the launcher's argv for this session's
 *   socket, label, cwd and arguments. Real, end to end: the installed broker
 *   (`sudo -n`, as the agent can) is pointed at a hard link to the session
 *   socket, reaches this session and is refused. Also at decision level.
 * - `broker_proof_invalid` (broker_verification.ts): the proof file the
 *   request names is not a root-owned file in a root-owned directory saying
 *   this request's id, pid and uid. The real broker always writes a valid
 *   proof, and only root can write elsewhere in `/run/pi-sudo-prompt`, so a
 *   bad proof cannot reach the session without root: `verifyBroker` is run on
 *   the facts of a real broker connection (SO_PEERCRED, its `/proc`, its
 *   proof file) with the proof changed (a forged copy the user owns, a name
 *   with no file, the real file claimed for another request id).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { link, mkdir, mkdtemp, readFile, realpath, rename, rm, writeFile } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import {
  type AskpassSession,
  type SessionEvent,
  startSession,
} from "../../../extension/channel/session_server.ts";
import { readStat, tracerOf, VERIFY_REFUSALS } from "../../../kernel/peer_verification.ts";
import {
  type ExpectedBroker,
  verifyBroker,
} from "../../../extension/channel/broker_verification.ts";
import { getPeerCredentials, type PeerCredentials } from "../../../kernel/peer_credentials.ts";
import { parseStatusIds } from "../../../kernel/proc.ts";
import { socketFd } from "../../../kernel/socket_fd.ts";
import {
  decodeIncoming,
  decodeReply,
  DENY_REASONS,
  encodeDenied,
  encodeRequest,
  FrameReader,
  newRequestId,
  type SecretRequest,
} from "../../../askpass/protocol.ts";
import { PROOF_DIR } from "../../../broker/paths.ts";
import { brokerArgsFor, runBroker } from "../../helpers/fake_pi.ts";
import { ScriptedPrompter } from "../../helpers/scripted_prompter.ts";
import { pidsWithCmdline, waitFor } from "../../helpers/processes.ts";
import { REPO_ROOT } from "../../helpers/test_env.ts";

const GATED_HELPER = join(REPO_ROOT, "tests/helpers/gated_helper.ts");
const CONNECT_THEN_EXEC = join(REPO_ROOT, "tests/helpers/connect_then_exec.py");
const UID = process.getuid?.() ?? -1;
/** python3 -c: PTRACE_SEIZE argv[1] (no interrupt, so it runs on, traced), then wait to be killed. */
const SEIZE_ONLY = [
  "import ctypes, sys, time",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]",
  "sys.exit(1) if libc.ptrace(0x4206, int(sys.argv[1]), None, None) != 0 else time.sleep(60)",
].join("\n");

/** Real sudo must ask for a password and the broker refuses root callers: not as root. */
function requireTestUser(): void {
  assert.notEqual(
    UID,
    0,
    "run as the throwaway non-root user of tests/run.sh (as root: PI_TEST_ONLY=<this file> sh tests/run.sh)",
  );
}

interface Fixture {
  session: AskpassSession;
  prompter: ScriptedPrompter;
  events: SessionEvent[];
  scratch: string;
}

async function withSession(
  opts: { helperPath?: string; prompter?: ScriptedPrompter },
  run: (f: Fixture) => Promise<void>,
): Promise<void> {
  requireTestUser();
  const prompter = opts.prompter ?? new ScriptedPrompter([]);
  const events: SessionEvent[] = [];
  const started = await startSession(
    { prompter, onEvent: (e) => events.push(e) },
    { helperPath: opts.helperPath, timeoutMs: 20_000, requestTimeoutMs: 10_000 },
  );
  assert.ok(started.ok, `session did not start: ${!started.ok && started.reason}`);
  const session = started.session;
  const scratch = await mkdtemp(join(tmpdir(), "pi-refusal-"));
  try {
    await run({ session, prompter, events, scratch });
  } finally {
    await session.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

function refusals(events: SessionEvent[]): string[] {
  return events.filter((e) => e.kind === "refused").map((e) =>
    e.kind === "refused" ? e.reason : ""
  );
}

/** A child whose exit is recorded from the start (so it is never missed). */
interface Tracked {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  exited: boolean;
}

function track(child: ChildProcess): Tracked {
  let err = "";
  child.stderr?.on("data", (d) => err += d);
  child.stdin?.on("error", () => {});
  const t: Tracked = { child, stderr: () => err, exited: false };
  child.once("exit", () => t.exited = true);
  child.once("error", () => t.exited = true);
  return t;
}

/** Waits up to `deadlineMs` for the child to exit, then SIGKILLs it and waits 5 s more. */
async function reap(t: Tracked, deadlineMs: number): Promise<void> {
  try {
    await waitFor("the child to exit", () => t.exited || undefined, deadlineMs);
  } catch {
    t.child.kill("SIGKILL");
    await waitFor("the killed child to be reaped", () => t.exited || undefined, 5_000);
  }
}

function killQuietly(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, signal);
  } catch { /* already gone */ }
}

/**
 * Real sudo running the session's launcher, which execs the gated helper;
 * `helper` resolves to the helper's pid once it runs under this sudo.
 */
function sudoWithGatedHelper(f: Fixture) {
  const sudo = track(spawn("/usr/bin/sudo", ["-k", "-A", "true"], {
    env: f.session.toolEnvironment(process.env),
    stdio: ["pipe", "ignore", "pipe"],
  }));
  const sudoPid = sudo.child.pid!;
  const helper = waitFor("the helper under sudo", async () => {
    for (const pid of await pidsWithCmdline(GATED_HELPER)) {
      if ((await readStat(pid))?.ppid === sudoPid) return pid;
    }
    return undefined;
  }, 30_000);
  helper.catch(() => {}); // awaited by the test, inside its try
  return { sudo, sudoPid, helper };
}

async function stateOf(pid: number): Promise<string | undefined> {
  return (await readStat(pid))?.state;
}

describe("refusal reasons produced by real processes", () => {
  it("peer_ids_mismatch: the process that connected execs setuid sudo before its request is read", async () => {
    await withSession({}, async (f) => {
      // sudo -S waits for a password on its stdin (our pipe) until we close it.
      const attacker = track(spawn(
        "python3",
        [CONNECT_THEN_EXEC, "/usr/bin/sudo", "-S", "-k", "true"],
        {
          env: { ...process.env, PI_ASKPASS_SOCKET: f.session.socketPath, ATTACK_DIR: f.scratch },
          stdio: ["pipe", "ignore", "pipe"],
        },
      ));
      let forkedChild: number | undefined;
      try {
        const file = (name: string) => () =>
          readFile(join(f.scratch, name), "utf8").then(Number, () => undefined);
        const pid = await waitFor("the connector's pid", file("pid"), 15_000);
        forkedChild = await waitFor("the forked child's pid", file("child"), 15_000);
        // Exec'd: /proc now shows setuid sudo, with root among its ids.
        const ids = await waitFor("the setuid exec", async () => {
          const stat = await readStat(pid);
          const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
          const ids = parseStatusIds(status);
          return stat?.comm === "sudo" && ids && ids.uid.some((u) => u !== UID) ? ids : undefined;
        }, 15_000);
        assert.ok(ids.uid.includes(0), `sudo runs with root ids: ${ids.uid.join(" ")}`);

        const id = newRequestId();
        const frame = encodeRequest({ id, prompt: "Password: ", pid });
        await writeFile(join(f.scratch, "frame.tmp"), frame);
        await rename(join(f.scratch, "frame.tmp"), join(f.scratch, "frame"));
        const reply = await waitFor(
          "the reply",
          () => readFile(join(f.scratch, "reply")).catch(() => undefined),
          15_000,
        );
        const decoded = decodeReply(new Uint8Array(reply).subarray(4), id);
        assert.ok(decoded.ok, "a well-formed reply");
        assert.deepEqual(decoded.message, {
          type: "password_denied",
          id,
          reason: DENY_REASONS.VERIFICATION_FAILED,
        });
        assert.deepEqual(refusals(f.events), [VERIFY_REFUSALS.PEER_IDS_MISMATCH]);
        assert.equal(f.prompter.seen.length, 0, "no prompt");
      } finally {
        attacker.child.stdin?.end(); // sudo reads EOF: no password, it exits
        await reap(attacker, 10_000);
        killQuietly(forkedChild, "SIGKILL");
      }
    });
  });

  it("peer_changed: sudo is stopped while its helper is verified, so the last re-check refuses", async () => {
    await withSession({ helperPath: GATED_HELPER }, async (f) => {
      const { sudo, sudoPid, helper: running } = sudoWithGatedHelper(f);
      try {
        const helper = await running;
        process.kill(sudoPid, "SIGSTOP");
        await waitFor("sudo stopped", async () => await stateOf(sudoPid) === "T" || undefined);
        assert.notEqual(await stateOf(helper), "T", "only sudo is stopped, not the helper");
        sudo.child.stdin!.write("go\n"); // the helper inherits sudo's stdin: it connects now
        await waitFor("the refusal", () => refusals(f.events).length > 0 || undefined, 20_000);
        assert.deepEqual(refusals(f.events), [VERIFY_REFUSALS.PEER_CHANGED]);
        assert.equal(f.prompter.seen.length, 0, "no prompt");
        await waitFor(
          "the helper's report",
          () => /gated: /.test(sudo.stderr()) || undefined,
          10_000,
        );
        assert.match(sudo.stderr(), /gated: DENIED verification_failed/);
        assert.doesNotMatch(sudo.stderr(), /GOT_PASSWORD|DELIVERED/);
      } finally {
        killQuietly(sudoPid, "SIGCONT");
        sudo.child.stdin?.end();
        await reap(sudo, 15_000);
      }
      assert.match(sudo.stderr(), /no password was provided/);
    });
  });

  it("helper_traced: a tracer attaches after the helper connected, before its request is judged", async () => {
    await withSession({ helperPath: GATED_HELPER }, async (f) => {
      const { sudo, helper: running } = sudoWithGatedHelper(f);
      let tracer: Tracked | undefined;
      try {
        const helper = await running;
        sudo.child.stdin!.write("connect\n"); // it connects, untraced, and waits
        await waitFor("the connection", () => /gated: connected/.test(sudo.stderr()) || undefined);
        // The session read the helper at accept (a few ms); attach only after that.
        await new Promise((r) => setTimeout(r, 500));
        // PTRACE_SEIZE without an interrupt: the helper keeps running, traced.
        tracer = track(spawn("python3", ["-c", SEIZE_ONLY, String(helper)], { stdio: "pipe" }));
        await waitFor("the tracer", async () => await tracerOf(helper) !== 0 || undefined, 10_000);
        sudo.child.stdin!.write("send\n");
        await waitFor(
          "a refusal or a prompt",
          () => refusals(f.events).length > 0 || f.prompter.seen.length > 0 || undefined,
          20_000,
        );
        assert.deepEqual(refusals(f.events), [VERIFY_REFUSALS.HELPER_TRACED]);
        assert.equal(f.prompter.seen.length, 0, "no prompt");
      } finally {
        // A traced helper's exit goes to its tracer first: end the tracer, then sudo.
        if (tracer) {
          tracer.child.kill("SIGKILL");
          await reap(tracer, 5_000);
        }
        sudo.child.stdin?.end();
        await reap(sudo, 15_000);
      }
      assert.match(sudo.stderr(), /gated: DENIED verification_failed/);
      assert.match(sudo.stderr(), /no password was provided/);
    });
  });

  it("broker_cmdline_mismatch: the real broker reaches this session through a hard link to its socket", async () => {
    // The control run is cancelled in the modal; the second run must never get one.
    const prompter = new ScriptedPrompter([{ cancel: true }]);
    await withSession({ prompter }, async (f) => {
      // A hard link is another name for the same socket: the broker's checks
      // (the caller's socket in the caller's 0700 directory) pass, and
      // connect() reaches this session, but the broker's argv names the link.
      const linkDir = await mkdtemp(join(dirname(f.session.dir), "pi-refusal-link-"));
      try {
        const other = join(linkDir, "askpass.sock");
        await link(f.session.socketPath, other);
        const control = await runBroker(brokerArgsFor(f.session.socketPath, ["/bin/true"])).done;
        assert.equal(control.stderr, "pi-secret-broker: cancelled\n", "control: the modal opened");
        assert.equal(prompter.secrets.length, 1);
        assert.deepEqual(refusals(f.events), []);

        const r = await runBroker(brokerArgsFor(other, ["/bin/true"])).done;
        assert.equal(r.code, 125, r.stderr);
        assert.equal(r.stderr, `pi-secret-broker: ${DENY_REASONS.VERIFICATION_FAILED}\n`);
        assert.deepEqual(refusals(f.events), [VERIFY_REFUSALS.BROKER_CMDLINE_MISMATCH]);
        assert.equal(prompter.secrets.length, 1, "no second modal");
      } finally {
        await rm(linkDir, { recursive: true, force: true });
      }
    });
  });
});

/** A real broker connected to a listener of the test, its request not yet answered. */
interface RealBroker {
  readonly creds: PeerCredentials;
  readonly request: SecretRequest;
  readonly sudoPid: number;
  /** What a session listening on this socket, in this process, expects. */
  readonly expected: ExpectedBroker;
  readonly scratch: string;
}

/**
 * Starts the installed broker (`sudo -n`, as the agent can) against a socket
 * of this process, takes SO_PEERCRED of its connection and its decoded
 * request, runs `check`, then denies the request and waits for the broker.
 */
async function withRealBroker(check: (b: RealBroker) => Promise<void>): Promise<void> {
  requireTestUser();
  const scratch = await realpath(await mkdtemp(join(tmpdir(), "pi-refusal-broker-")));
  const socketPath = join(scratch, "askpass.sock");
  const sockets = new Set<Socket>();
  let arrived: { socket: Socket; creds: PeerCredentials; request: SecretRequest } | undefined;
  let problem: string | undefined;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    // The kernel's word first, as the session server takes it.
    const fd = socketFd(socket);
    const creds = fd === undefined ? undefined : getPeerCredentials(fd);
    const reader = new FrameReader();
    socket.on("data", (chunk: Uint8Array) => {
      const step = reader.push(new Uint8Array(chunk));
      if (!step.ok) return void (problem = `bad frame: ${step.reason}`);
      if (!step.body) return;
      const decoded = decodeIncoming(step.body);
      if (!creds?.ok) return void (problem = "no SO_PEERCRED");
      if (!decoded.ok || decoded.message.type !== "secret_request") {
        return void (problem = "not a secret_request");
      }
      arrived = { socket, creds: creds.creds, request: decoded.message };
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  const broker = runBroker(brokerArgsFor(socketPath, ["/bin/true"]));
  let ended: { code: number | null; stderr: string } | undefined;
  const done = broker.done.then((r) => ended = r);
  try {
    const got = await waitFor("the broker's request", () => {
      if (problem) throw new Error(problem);
      if (!arrived && ended) {
        throw new Error(`the broker ended first (${ended.code}): ${ended.stderr}`);
      }
      return arrived;
    }, 30_000);
    await check({
      creds: got.creds,
      request: got.request,
      sudoPid: broker.sudoPid,
      expected: { socketPath, uid: UID, ownerPid: process.pid },
      scratch,
    });
    got.socket.end(encodeDenied(got.request.id, DENY_REASONS.CANCELLED));
    const r = await done;
    assert.equal(r.stderr, "pi-secret-broker: cancelled\n");
  } finally {
    killQuietly(broker.sudoPid, "SIGCONT");
    for (const s of sockets) s.destroy();
    await done; // runBroker kills sudo at its own deadline
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(scratch, { recursive: true, force: true });
  }
}

describe("refusal reasons of verifyBroker on a real broker's facts", () => {
  const refused = (reason: string) => ({ ok: false, reason });

  it("broker_proof_invalid: a forged copy of the proof, a missing proof, the proof of another request", async () => {
    await withRealBroker(async (b) => {
      const genuine = await verifyBroker(b.expected, b.creds, b.request);
      assert.ok(
        genuine.ok,
        `control: the genuine request passes (${!genuine.ok && genuine.reason})`,
      );

      // The agent copies the real proof, byte for byte, into a directory of its own.
      const text = await readFile(join(PROOF_DIR, b.request.proof), "utf8");
      assert.equal(text, `id=${b.request.id}\npid=${b.creds.pid}\nuid=${UID}\n`);
      const forgedDir = join(b.scratch, "proofs");
      await mkdir(forgedDir, { mode: 0o711 });
      await writeFile(join(forgedDir, b.request.proof), text, { mode: 0o644 });
      assert.deepEqual(
        await verifyBroker({ ...b.expected, proofDir: forgedDir }, b.creds, b.request),
        refused(VERIFY_REFUSALS.BROKER_PROOF_INVALID),
        "a proof the user wrote",
      );
      assert.deepEqual(
        await verifyBroker(b.expected, b.creds, { ...b.request, proof: "0".repeat(32) }),
        refused(VERIFY_REFUSALS.BROKER_PROOF_INVALID),
        "a proof name with no file",
      );
      assert.deepEqual(
        await verifyBroker(b.expected, b.creds, { ...b.request, id: newRequestId() }),
        refused(VERIFY_REFUSALS.BROKER_PROOF_INVALID),
        "the real proof, claimed for another request",
      );
      assert.deepEqual(
        await verifyBroker(b.expected, b.creds, { ...b.request, proof: "../../etc/passwd" }),
        refused(VERIFY_REFUSALS.BROKER_PROOF_INVALID),
        "a malformed proof name",
      );
    });
  });

  it("broker_cmdline_mismatch: a label, cwd, argument or socket that is not the broker's cmdline", async () => {
    await withRealBroker(async (b) => {
      const genuine = await verifyBroker(b.expected, b.creds, b.request);
      assert.ok(
        genuine.ok,
        `control: the genuine request passes (${!genuine.ok && genuine.reason})`,
      );
      const cases: [string, ExpectedBroker, SecretRequest][] = [
        ["another label", b.expected, { ...b.request, label: "another label" }],
        ["another cwd", b.expected, { ...b.request, cwd: "/tmp" }],
        ["an extra argument", b.expected, { ...b.request, argv: [...b.request.argv, "-x"] }],
        ["another session socket", {
          ...b.expected,
          socketPath: join(b.scratch, "other.sock"),
        }, b.request],
      ];
      for (const [what, expected, request] of cases) {
        assert.deepEqual(
          await verifyBroker(expected, b.creds, request),
          refused(VERIFY_REFUSALS.BROKER_CMDLINE_MISMATCH),
          what,
        );
      }
    });
  });

  it("peer_changed: the real broker's sudo stopped after every other check passed", async () => {
    await withRealBroker(async (b) => {
      const genuine = await verifyBroker(b.expected, b.creds, b.request);
      assert.ok(
        genuine.ok,
        `control: the genuine request passes (${!genuine.ok && genuine.reason})`,
      );
      process.kill(b.sudoPid, "SIGSTOP");
      try {
        await waitFor("sudo stopped", async () => await stateOf(b.sudoPid) === "T" || undefined);
        assert.deepEqual(
          await verifyBroker(b.expected, b.creds, b.request),
          refused(VERIFY_REFUSALS.PEER_CHANGED),
        );
      } finally {
        killQuietly(b.sudoPid, "SIGCONT");
      }
      await waitFor("sudo running", async () => await stateOf(b.sudoPid) !== "T" || undefined);
      const again = await verifyBroker(b.expected, b.creds, b.request);
      assert.ok(again.ok, "the same facts pass again once sudo runs");
    });
  });
});
