/**
 * The installed root broker called DIRECTLY, as the agent can: the
 * throwaway user runs `sudo -n /usr/local/libexec/pi-sudo-prompt/pi-secret-broker …`
 * (NOPASSWD) with arguments of its choosing, against a fake pi socket
 * server of its own (tests/helpers/fake_pi.ts) that answers without any
 * modal. Rows R1–R5 of docs/security-tests.md ("The broker called directly").
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { lstat, mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  brokerArgsFor,
  FAKE_SECRET,
  type FakePi,
  runBroker,
  startFakePi,
} from "../../helpers/fake_pi.ts";
import { BROKER_REFUSALS as R, MAX_BROKERS_PER_UID } from "../../../broker/broker_permissions.ts";
import { PROOF_DIR } from "../../../broker/paths.ts";
import { NODE_BINARY, testPassword } from "../../helpers/test_env.ts";
import { waitFor } from "../../helpers/processes.ts";

const CONSUMER = "/usr/local/libexec/pi-sudo-prompt-test/consumer";
const refusal = (reason: string) => `pi-secret-broker: ${reason}\n`;

/** True while `pid` exists (a root process: kill(0) says EPERM). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function proofGone(name: string): Promise<boolean> {
  return await lstat(join(PROOF_DIR, name)).then(() => false, () => true);
}

describe("the broker called directly (hostile review)", () => {
  let scratch: string;
  before(async () => scratch = await realpath(await mkdtemp(join(tmpdir(), "broker-direct-"))));
  after(() => rm(scratch, { recursive: true, force: true }));

  const withFake = async (
    answer: Parameters<typeof startFakePi>[0],
    f: (p: FakePi) => Promise<void>,
  ) => {
    const fake = await startFakePi(answer);
    try {
      await f(fake);
    } finally {
      await fake.close();
    }
  };

  it("R1: --cwd a directory the caller cannot enter (another user's home, /proc/1/root) is refused as the caller, before pi is asked", async () => {
    await withFake("secret", async (fake) => {
      for (const cwd of ["/root", "/proc/1/root/root", "/root/no-such-dir"]) {
        const r = await runBroker(
          brokerArgsFor(fake.socketPath, ["/bin/sh", "-c", "cat .env; pwd"], cwd),
        ).done;
        assert.equal(r.code, 125, r.stderr);
        assert.equal(r.stderr, refusal(R.CWD_UNREACHABLE), cwd);
        assert.equal(r.stdout, "");
      }
      // A symlink to a directory: the real path only, so the modal shows where it runs.
      await symlink("/tmp", join(scratch, "to-tmp"));
      const link = await runBroker(
        brokerArgsFor(fake.socketPath, ["/bin/pwd"], join(scratch, "to-tmp")),
      ).done;
      assert.equal(link.stderr, refusal(R.CWD_NOT_REAL));
      assert.equal(fake.stats.connections, 0, "pi was never asked");
    });
  });

  it("R1: the consumer starts in the caller's directory, entered as the caller; the request carries it", async () => {
    await withFake("secret", async (fake) => {
      const r = await runBroker(
        brokerArgsFor(fake.socketPath, ["/bin/sh", "-c", 'pwd; id -u; read s; echo "$s"'], scratch),
      ).done;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${scratch}\n${process.getuid!()}\n${FAKE_SECRET}\n`);
      assert.equal(fake.requests.length, 1);
      assert.equal(fake.requests[0].cwd, scratch);
    });
  });

  it("R2: no proof file is left behind by any refusal (deny, closed, no socket, parent killed)", async () => {
    const names: string[] = [];
    for (const answer of ["deny", "close"] as const) {
      await withFake(answer, async (fake) => {
        for (let i = 0; i < 3; i++) {
          const r = await runBroker(brokerArgsFor(fake.socketPath, ["/bin/true"]))
            .done;
          assert.equal(r.code, 125, r.stderr);
          assert.equal(r.stderr, refusal(answer === "deny" ? "cancelled" : R.CLOSED));
        }
        names.push(...fake.requests.map((q) => q.proof));
      });
    }
    assert.equal(names.length, 6);
    for (const name of names) assert.ok(await proofGone(name), `proof ${name} left behind`);
    await withFake("hold", async (fake) => {
      const noSocket = await runBroker(
        brokerArgsFor(join(fake.dir, "gone", "askpass.sock"), ["/bin/true"]),
      ).done;
      assert.equal(noSocket.stderr, refusal(R.NO_SOCKET));
    });
    // Had any of these refusals leaked its slot, fewer than the cap would fit now.
    await withFake("hold", async (fake) => {
      const runs = Array.from(
        { length: MAX_BROKERS_PER_UID },
        () => runBroker(brokerArgsFor(fake.socketPath, ["/bin/true"])),
      );
      await waitFor(
        "every broker's request",
        () => fake.requests.length === MAX_BROKERS_PER_UID ? true : undefined,
        20_000,
      );
      for (const run of runs) process.kill(run.sudoPid, "SIGKILL");
      for (const request of fake.requests) {
        await waitFor("the broker to stop", () => alive(request.pid) ? undefined : true, 5_000);
        assert.ok(await proofGone(request.proof), "proof removed when sudo was killed");
      }
    });
  });

  it("R4: at most MAX_BROKERS_PER_UID brokers per user; a broker whose sudo is killed stops at once", async () => {
    await withFake("hold", async (fake) => {
      const runs = Array.from(
        { length: MAX_BROKERS_PER_UID },
        () => runBroker(brokerArgsFor(fake.socketPath, ["/bin/true"])),
      );
      await waitFor(
        "every broker's request",
        () => fake.requests.length === MAX_BROKERS_PER_UID ? true : undefined,
        20_000,
      );
      const extra = await runBroker(brokerArgsFor(fake.socketPath, ["/bin/true"]))
        .done;
      assert.equal(extra.code, 125);
      assert.equal(extra.stderr, refusal(R.TOO_MANY));
      // kill -9 sudo (the caller may: its real uid is the caller's): the root broker goes too.
      const started = Date.now();
      process.kill(runs[0].sudoPid, "SIGKILL");
      await waitFor("the orphaned brokers to stop", () => {
        const gone = fake.requests.filter((q) => !alive(q.pid)).length;
        return gone >= 1 ? true : undefined;
      }, 5_000);
      assert.ok(Date.now() - started < 3_000, "stopped within 3 s");
      // A slot is free again.
      const again = runBroker(brokerArgsFor(fake.socketPath, ["/bin/true"]));
      await waitFor(
        "the new request",
        () => fake.requests.length === MAX_BROKERS_PER_UID + 1 ? true : undefined,
        20_000,
      );
      for (const run of [...runs, again]) {
        try {
          process.kill(run.sudoPid, "SIGKILL");
        } catch { /* gone */ }
      }
      for (const q of fake.requests) {
        await waitFor("every broker to stop", () => alive(q.pid) ? undefined : true, 5_000);
      }
    });
  });

  it("R18: the consumer runs outside the caller's process tree (Yama 1 then keeps the agent from tracing it), and its exit status still passes through", async () => {
    await withFake("secret", async (fake) => {
      const chain = 'p=$$; c=""; while [ "$p" -gt 1 ]; do c="$c $p"; ' +
        'p=$(sed "s/.*) //" /proc/$p/stat | cut -d" " -f2); done; echo "chain:$c"; ' +
        'read -r line; echo "got ${#line}"; exit 7';
      const run = runBroker(brokerArgsFor(fake.socketPath, ["/bin/sh", "-c", chain]));
      const r = await run.done;
      assert.equal(r.code, 7, r.stderr);
      const ancestors = (/^chain:(.*)$/m.exec(r.stdout)?.[1] ?? "").trim().split(" ").map(Number);
      assert.ok(ancestors.length >= 1, r.stdout);
      const broker = fake.requests[0].pid;
      for (const caller of [process.pid, run.sudoPid, broker]) {
        assert.ok(!ancestors.slice(1).includes(caller), `${caller} is an ancestor: ${ancestors}`);
      }
      assert.match(r.stdout, new RegExp(`^got ${FAKE_SECRET.length}$`, "m"));
    });
  });

  it("R4: once the consumer runs, a killed sudo leaves the broker alive exactly as long as the consumer", async () => {
    await withFake("secret", async (fake) => {
      const run = runBroker(
        brokerArgsFor(fake.socketPath, [CONSUMER, "hold", scratch]),
      );
      await waitFor(
        "the consumer's pid",
        () => lstat(join(scratch, "pid")).then(() => true, () => undefined),
        20_000,
      );
      const broker = fake.requests[0].pid;
      process.kill(run.sudoPid, "SIGKILL");
      await new Promise((r) => setTimeout(r, 800));
      assert.ok(alive(broker), "the broker waits for its consumer");
      await import("node:fs/promises").then((fs) => fs.writeFile(join(scratch, "release"), ""));
      await waitFor("the broker to stop", () => alive(broker) ? undefined : true, 10_000);
      assert.ok(await proofGone(fake.requests[0].proof));
      await run.done;
    });
  });

  it("R3: a socket the caller owns but another process serves (not this pi, or root) gets not one byte", async () => {
    // Not an ancestor of the broker: a pi of another session of the same user.
    const other = spawn(NODE_BINARY, [
      "-e",
      `const n=require("node:net");let b=0;n.createServer(c=>{c.on("data",d=>{b+=d.length;console.log("bytes",b)});c.on("close",()=>console.log("closed"))}).listen(process.argv[1],()=>console.log("ready"));setTimeout(()=>process.exit(0),20000)`,
      join(scratch, "other.sock"),
    ], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    other.stdout.on("data", (d) => out += d);
    try {
      await waitFor("the other server", () => out.includes("ready") ? true : undefined);
      await withFake("secret", async (fake) => {
        const sock = join(fake.dir, "askpass.sock");
        await rm(sock);
        await symlink(join(scratch, "other.sock"), sock); // would fail the path check itself
        const viaLink = await runBroker(brokerArgsFor(sock, ["/bin/true"])).done;
        assert.equal(viaLink.stderr, refusal(R.NO_SOCKET));
      });
      const dir = await mkdtemp(join(tmpdir(), "other-pi-"));
      await import("node:fs/promises").then((fs) =>
        fs.rename(join(scratch, "other.sock"), join(dir, "askpass.sock"))
      );
      const r = await runBroker(brokerArgsFor(join(dir, "askpass.sock"), ["/bin/true"])).done;
      assert.equal(r.code, 125);
      assert.equal(r.stderr, refusal(R.SOCKET_PEER));
      // Its connection closed: whatever the broker sent was read before that.
      await waitFor("the connection closed", () => out.includes("closed") || undefined, 10_000);
      assert.ok(!out.includes("bytes"), "the other server received nothing");
      await rm(dir, { recursive: true, force: true });
    } finally {
      other.kill("SIGKILL");
    }
    // Root's listener behind a file the caller owns (what swapping the path
    // for a symlink after the check achieves, without the race): uid 0 ≠ caller.
    const dir = await mkdtemp(join(tmpdir(), "root-pi-"));
    const server = spawn("/usr/bin/sudo", [
      "-S",
      "-k",
      "-p",
      "",
      "/usr/bin/python3",
      "-c",
      ROOT_SERVER,
      join(dir, "askpass.sock"),
      String(process.getuid!()),
    ], { stdio: ["pipe", "pipe", "inherit"] });
    let rootOut = "";
    server.stdout.on("data", (d) => rootOut += d);
    server.stdin.write(`${testPassword()}\n`);
    try {
      await waitFor("root's server", () => rootOut.includes("ready") ? true : undefined, 10_000);
      const st = await lstat(join(dir, "askpass.sock"));
      assert.equal(st.uid, process.getuid!(), "the socket file is the caller's");
      const r = await runBroker(brokerArgsFor(join(dir, "askpass.sock"), ["/bin/true"])).done;
      assert.equal(r.stderr, refusal(R.SOCKET_PEER));
      await waitFor("the connection closed", () => rootOut.includes("closed") || undefined, 10_000);
      assert.match(rootOut, /connected/, "the broker did connect");
      assert.doesNotMatch(rootOut, /bytes/, "root's server received not one byte");
    } finally {
      server.stdin.end();
      await new Promise((r) => server.once("close", r));
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("R5: the program and the cwd are resolved as the caller: the same generic message whether a root-only path exists or not", async () => {
    await withFake("secret", async (fake) => {
      await symlink("/root/.bashrc", join(scratch, "bashrc-link"));
      const cases: [string, string][] = [
        ["/root/.bashrc", refusal("program not found: /root/.bashrc")],
        ["/root/no-such-file", refusal("program not found: /root/no-such-file")],
        [
          join(scratch, "bashrc-link"),
          refusal(`program not found: ${join(scratch, "bashrc-link")}`),
        ],
      ];
      for (const [program, expected] of cases) {
        const r = await runBroker(brokerArgsFor(fake.socketPath, [program])).done;
        assert.equal(r.stderr, expected);
        assert.ok(!r.stderr.includes("passwords") && !r.stderr.includes("executable"));
      }
      const a = await runBroker(brokerArgsFor(fake.socketPath, ["/bin/true"], "/root"))
        .done;
      const b = await runBroker(
        brokerArgsFor(fake.socketPath, ["/bin/true"], "/root/no-such-dir"),
      ).done;
      assert.equal(a.stderr, b.stderr, "a root-only directory and a missing one look the same");
      assert.equal(fake.stats.connections, 0);
    });
  });
});

/** Root's socket server (python3, run through sudo -S): a socket file chowned to the caller. */
const ROOT_SERVER = `
import os, socket, sys, select
p, uid = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(4); os.chown(p, uid, -1)
print("ready", flush=True)
conns = []
while True:
    r, _, _ = select.select([s, sys.stdin] + conns, [], [], 30)
    if not r: break
    for x in r:
        if x is s:
            c, _ = s.accept(); conns.append(c); print("connected", flush=True)
        elif x is sys.stdin:
            if not sys.stdin.readline():
                os.unlink(p); sys.exit(0)
        else:
            b = x.recv(4096)
            if b: print("bytes", len(b), flush=True)
            else: conns.remove(x); x.close(); print("closed", flush=True)
os.unlink(p)
`;
