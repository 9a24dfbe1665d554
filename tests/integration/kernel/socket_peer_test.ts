/**
 * Tests of `kernel/socket_peer.ts` against real sockets and real
 * processes: a `node:net` server on a Unix socket in a temp dir, and python3
 * children that connect, fork, dup and exec the way an attacker would. The
 * pid checked is always the one `SO_PEERCRED` reports, as in the server.
 * One test runs a real Deno client to pin down the fd table of the runtime.
 *
 * Run: node --test tests/integration/kernel/socket_peer_test.ts (needs python3 on PATH).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { fdStatSync, socketFd } from "../../../kernel/socket_fd.ts";
import { mkdtemp, readlink, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { getPeerCredentials, peerCredentialsAvailable } from "../../../kernel/peer_credentials.ts";
import { resolveDenoBinary } from "../../../shared/executables.ts";
import {
  peerOwnsConnection,
  SOCKET_PEER_ERRORS,
  socketInodesOf,
  unixPeerInodeByInode,
} from "../../../kernel/socket_peer.ts";

/**
 * The tempting "exactly one socket" rule, kept here only as a counterexample:
 * the real Deno helper holds several sockets (so it would refuse every
 * genuine request), and a process that inherited the connection across exec
 * and has not opened a socket yet would pass. The tests below show both.
 */
const PEER_HOLDS_OTHER_SOCKETS = "peer_holds_other_sockets";
/**
 * The product's rule (`peerOwnsConnection`), for a connection known by our end's
 * descriptor; when it accepts, with the peer's socket descriptors for the tests to look at.
 */
async function peerOwnsThisConnection(acceptedFd: number, peerPid: number) {
  const owns = await peerOwnsConnection(fdStatSync(acceptedFd)?.ino ?? -1, peerPid);
  if (!owns.ok) return owns;
  const held = await socketInodesOf(peerPid);
  assert.ok(held.ok, `socketInodesOf failed: ${!held.ok && held.reason}`);
  return { ...owns, peerSockets: held.sockets };
}

/** Inodes of our end of a connection (`fstat`) and of its other end (`SOCK_DIAG`). */
function peerInodes(acceptedFd: number) {
  const inode = fdStatSync(acceptedFd)?.ino ?? 0;
  const peer = unixPeerInodeByInode(inode);
  return peer.ok ? { ok: true as const, inode, peerInode: peer.peerInode } : peer;
}

async function peerHoldsOnlyThisConnection(acceptedFd: number, peerPid: number) {
  const peer = peerInodes(acceptedFd);
  if (!peer.ok) return peer;
  const held = await socketInodesOf(peerPid);
  if (!held.ok) return held;
  if (!held.sockets.some((s) => s.inode === peer.peerInode)) {
    return { ok: false as const, reason: SOCKET_PEER_ERRORS.PEER_DOES_NOT_HOLD_CONNECTION };
  }
  if (held.sockets.length !== 1) return { ok: false as const, reason: PEER_HOLDS_OTHER_SOCKETS };
  return { ok: true as const, inode: peer.inode, peerInode: peer.peerInode };
}

async function waitUntil(cond: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await cond()) return;
    } catch { /* not yet */ }
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The child. It first closes every fd above 2 (as sudo does before it runs
 * the askpass), then behaves as `argv[2]` says. Each connection sends one
 * JSON line: its pid, the inode of its socket by fstat and by
 * /proc/self/fd, and the pid of a forked grandchild if there is one.
 */
const CHILD = String.raw`
import json, os, socket, sys, time
os.closerange(3, 65536)
path, mode = sys.argv[1], sys.argv[2]

def connect(extra=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    msg = {"pid": os.getpid(), "fd": s.fileno(), "ino": os.fstat(s.fileno()).st_ino,
           "link": os.readlink("/proc/self/fd/%d" % s.fileno())}
    msg.update(extra or {})
    return s, msg

def send(s, msg):
    s.sendall((json.dumps(msg) + "\n").encode())

if mode == "one":
    s, m = connect(); send(s, m)
elif mode == "two":
    a, ma = connect(); b, mb = connect(); send(a, ma); send(b, mb)
elif mode == "dup":
    s, m = connect(); d = os.dup(s.fileno()); send(s, m)
elif mode in ("fork", "fork-exit"):
    s, m = connect()
    r, w = os.pipe()
    kid = os.fork()
    if kid == 0:
        os.close(w); os.read(r, 1)  # wait until the parent has reported
        while True: time.sleep(60)
    m["grandchild"] = kid
    send(s, m)
    s.close(); os.close(w)  # the grandchild now holds the only copy
    if mode == "fork-exit": os._exit(0)
elif mode == "exec":
    s, m = connect()
    s.set_inheritable(True)  # like a program that connects, then execs the helper
    send(s, m)
    os.execvp("sleep", ["sleep", "60"])
else:
    sys.exit("unknown mode " + mode)
while True: time.sleep(60)
`;

interface ChildReport {
  pid: number;
  fd: number;
  ino: number;
  link: string;
  grandchild?: number;
}

interface Accepted {
  socket: net.Socket;
  fd: number;
  peerPid: number;
  report: ChildReport;
}

let dir: string;
let socketPath: string;
let server: net.Server;
const pending: net.Socket[] = [];
let waiters: ((s: net.Socket) => void)[] = [];
const children: ChildProcess[] = [];
const extraPids: number[] = [];

before(async () => {
  assert.ok(peerCredentialsAvailable(), "koffi/libc must be available for these tests");
  dir = await mkdtemp(join(tmpdir(), "socket-peer-test-"));
  socketPath = join(dir, "s.sock");
  server = net.createServer((s) => {
    const w = waiters.shift();
    if (w) w(s);
    else pending.push(s);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
});

after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const pid of extraPids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch { /* already gone */ }
  }
  for (const s of pending) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

function nextConnection(timeoutMs: number, why: () => string): Promise<net.Socket> {
  const ready = pending.shift();
  if (ready) return Promise.resolve(ready);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiters = waiters.filter((w) => w !== take);
      reject(new Error(`no connection within ${timeoutMs} ms: ${why()}`));
    }, timeoutMs);
    const take = (s: net.Socket) => {
      clearTimeout(timer);
      resolve(s);
    };
    waiters.push(take);
  });
}

function readLine(s: net.Socket, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error("no report line from the child")), timeoutMs);
    const onData = (d: Buffer) => {
      buf += d.toString("utf8");
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        clearTimeout(timer);
        s.off("data", onData);
        s.pause();
        resolve(buf.slice(0, nl));
      }
    };
    s.on("data", onData);
  });
}

function fdOf(s: net.Socket): number {
  const fd = socketFd(s);
  assert.equal(typeof fd, "number");
  return fd!;
}

/** Starts the python child in `mode`; stderr goes to a file, so fds 0-2 hold no socket. */
function startChild(mode: string): { child: ChildProcess; stderr: () => string } {
  const errPath = join(dir, `${mode}-${children.length}.err`);
  const errFd = openSync(errPath, "w");
  const child = spawn("python3", ["-c", CHILD, socketPath, mode], {
    stdio: ["ignore", "ignore", errFd],
  });
  closeSync(errFd);
  children.push(child);
  child.on("error", () => {/* reported through the accept timeout */});
  return { child, stderr: () => readFileSync(errPath, "utf8") };
}

/** Accepts `count` connections from a fresh child in `mode`. */
async function childConnections(
  mode: string,
  count = 1,
): Promise<{ child: ChildProcess; conns: Accepted[] }> {
  const { child, stderr } = startChild(mode);
  const conns: Accepted[] = [];
  for (let i = 0; i < count; i++) {
    const socket = await nextConnection(10_000, () => `${mode}: ${stderr()}`);
    const fd = fdOf(socket);
    const creds = getPeerCredentials(fd);
    assert.ok(creds.ok, "SO_PEERCRED must work");
    const report = JSON.parse(await readLine(socket, 10_000)) as ChildReport;
    assert.equal(report.pid, creds.creds.pid, "the child's pid is the SO_PEERCRED pid");
    if (report.grandchild) extraPids.push(report.grandchild);
    conns.push({ socket, fd, peerPid: creds.creds.pid, report });
  }
  return { child, conns };
}

function stop(child: ChildProcess, conns: Accepted[]): Promise<void> {
  for (const c of conns) c.socket.destroy();
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

describe("unixPeerInodeByInode", () => {
  it("names the inode the connected child sees for its own socket", async () => {
    const { child, conns: [c] } = await childConnections("one");
    try {
      const r = peerInodes(c.fd);
      assert.ok(r.ok, `unixPeerInodeByInode failed: ${!r.ok && r.reason}`);
      assert.equal(r.inode, fdStatSync(c.fd)?.ino);
      assert.equal(r.peerInode, c.report.ino);
      assert.equal(c.report.link, `socket:[${r.peerInode}]`);
      assert.notEqual(r.peerInode, r.inode);
    } finally {
      await stop(child, [c]);
    }
  });

  it("finds no peer for a listening socket, an inode that is no socket, or no inode", () => {
    const unknown = { ok: false, reason: SOCKET_PEER_ERRORS.CONNECTION_OWNER_UNKNOWN };
    // A listening server has the same internal handle as a socket.
    const listenFd = socketFd(server as unknown as net.Socket)!;
    assert.deepEqual(peerInodes(listenFd), unknown);
    // A regular file's inode: the kernel answers ENOENT, which must be parsed, not waited for.
    const fileFd = openSync(join(dir, "plain-file"), "w");
    const fileIno = fstatSync(fileFd).ino;
    closeSync(fileFd);
    assert.deepEqual(unixPeerInodeByInode(fileIno), unknown);
    assert.deepEqual(unixPeerInodeByInode(0), unknown);
  });
});

describe("socketInodesOf", () => {
  it("lists exactly the child's one socket, with its fd and inode", async () => {
    const { child, conns: [c] } = await childConnections("one");
    try {
      const r = await socketInodesOf(c.peerPid);
      assert.ok(r.ok, `socketInodesOf failed: ${!r.ok && r.reason}`);
      assert.deepEqual(r.sockets, [{ fd: c.report.fd, inode: c.report.ino }]);
    } finally {
      await stop(child, [c]);
    }
  });

  it("lists every socket of our own process", async () => {
    const r = await socketInodesOf(process.pid);
    assert.ok(r.ok);
    // A listening server has the same internal handle as a socket.
    const listenFd = socketFd(server as unknown as net.Socket)!;
    assert.ok(r.sockets.some((s) => s.fd === listenFd && s.inode === fdStatSync(listenFd)?.ino));
    for (const s of r.sockets) {
      assert.equal(await readlink(`/proc/self/fd/${s.fd}`), `socket:[${s.inode}]`);
    }
  });

  it("refuses a table larger than the cap, a bad pid, and a process that is gone", async () => {
    const unknown = { ok: false, reason: SOCKET_PEER_ERRORS.CONNECTION_OWNER_UNKNOWN };
    assert.deepEqual(await socketInodesOf(process.pid, 2), unknown);
    assert.deepEqual(await socketInodesOf(0), unknown);
    const { child } = startChild("one");
    const conn = await nextConnection(10_000, () => "child for the gone test");
    const pid = child.pid!;
    await stop(child, []);
    conn.destroy();
    assert.deepEqual(await socketInodesOf(pid), {
      ok: false,
      reason: SOCKET_PEER_ERRORS.PEER_GONE,
    });
  });
});

describe("peerHoldsOnlyThisConnection (strict) and peerOwnsThisConnection", () => {
  it("accepts a child that holds exactly its one connection", async () => {
    const { child, conns: [c] } = await childConnections("one");
    try {
      const strict = await peerHoldsOnlyThisConnection(c.fd, c.peerPid);
      assert.ok(strict.ok, `strict refused: ${!strict.ok && strict.reason}`);
      assert.equal(strict.peerInode, c.report.ino);
      const owns = await peerOwnsThisConnection(c.fd, c.peerPid);
      assert.ok(owns.ok, `owns refused: ${!owns.ok && owns.reason}`);
      assert.deepEqual(owns.peerSockets, [{ fd: c.report.fd, inode: c.report.ino }]);
    } finally {
      await stop(child, [c]);
    }
  });

  it("strict: refuses each of two connections from one child", async () => {
    const { child, conns } = await childConnections("two", 2);
    try {
      assert.notEqual(conns[0].report.ino, conns[1].report.ino);
      for (const c of conns) {
        assert.deepEqual(await peerHoldsOnlyThisConnection(c.fd, c.peerPid), {
          ok: false,
          reason: PEER_HOLDS_OTHER_SOCKETS,
        });
        // The ownership rule allows other sockets: each is the child's own.
        const owns = await peerOwnsThisConnection(c.fd, c.peerPid);
        assert.ok(owns.ok, `owns refused: ${!owns.ok && owns.reason}`);
        assert.ok(owns.peerSockets.some((s) => s.fd === c.report.fd && s.inode === c.report.ino));
        assert.equal(owns.peerSockets.length, 2);
      }
    } finally {
      await stop(child, conns);
    }
  });

  it("refuses when the connector handed the socket to a forked child and closed its own", async () => {
    const { child, conns: [c] } = await childConnections("fork");
    try {
      const gc = c.report.grandchild!;
      assert.ok(gc > 0);
      // Wait until the connector has closed its copy (it does so right after reporting).
      await waitUntil(async () => {
        const r = await socketInodesOf(c.peerPid);
        return r.ok && r.sockets.length === 0;
      });
      for (const check of [peerHoldsOnlyThisConnection, peerOwnsThisConnection]) {
        assert.deepEqual(await check(c.fd, c.peerPid), {
          ok: false,
          reason: SOCKET_PEER_ERRORS.PEER_DOES_NOT_HOLD_CONNECTION,
        });
      }
      // The grandchild does hold it: the checks are only as good as the pid
      // they are given, which must be the SO_PEERCRED pid.
      const held = await socketInodesOf(gc);
      assert.ok(held.ok);
      assert.deepEqual(held.sockets.map((s) => s.inode), [c.report.ino]);
    } finally {
      await stop(child, [c]);
    }
  });

  it("refuses with peer_gone when the connector has exited but its socket lives on", async () => {
    const { child, conns: [c] } = await childConnections("fork-exit");
    try {
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.once("exit", () => resolve());
      });
      // The connection is still up (the grandchild holds it).
      const peer = peerInodes(c.fd);
      assert.ok(peer.ok);
      assert.equal(peer.peerInode, c.report.ino);
      for (const check of [peerHoldsOnlyThisConnection, peerOwnsThisConnection]) {
        assert.deepEqual(await check(c.fd, c.peerPid), {
          ok: false,
          reason: SOCKET_PEER_ERRORS.PEER_GONE,
        });
      }
    } finally {
      await stop(child, [c]);
    }
  });

  it("connect-then-exec: the strict rule alone accepts it, the O_CLOEXEC rule refuses", async () => {
    const { child, conns: [c] } = await childConnections("exec");
    try {
      await waitUntil(async () => (await readlink(`/proc/${c.peerPid}/exe`)).endsWith("/sleep"));
      // After exec the process holds nothing but the inherited connection.
      const strict = await peerHoldsOnlyThisConnection(c.fd, c.peerPid);
      assert.ok(strict.ok, `strict: ${!strict.ok && strict.reason}`);
      assert.deepEqual(await peerOwnsThisConnection(c.fd, c.peerPid), {
        ok: false,
        reason: SOCKET_PEER_ERRORS.PEER_CONNECTION_INHERITED,
      });
    } finally {
      await stop(child, [c]);
    }
  });

  it("refuses a peer that holds the connection on two descriptors", async () => {
    const { child, conns: [c] } = await childConnections("dup");
    try {
      assert.deepEqual(await peerOwnsThisConnection(c.fd, c.peerPid), {
        ok: false,
        reason: SOCKET_PEER_ERRORS.PEER_HOLDS_CONNECTION_TWICE,
      });
      assert.deepEqual(await peerHoldsOnlyThisConnection(c.fd, c.peerPid), {
        ok: false,
        reason: PEER_HOLDS_OTHER_SOCKETS,
      });
    } finally {
      await stop(child, [c]);
    }
  });

  it("a real Deno client: strict refuses (runtime sockets), ownership accepts", async () => {
    const deno = await resolveDenoBinary();
    assert.ok(deno, "the pinned deno binary must be installed");
    const script = join(dir, "client.ts");
    await writeFile(
      script,
      [
        'import { fstatSync } from "node:fs";',
        'import process from "node:process";',
        "fstatSync(0);",
        "process.exitCode = 0;",
        'const conn = await Deno.connect({ transport: "unix", path: Deno.args[0] });',
        'await conn.write(new TextEncoder().encode(JSON.stringify({ pid: Deno.pid }) + "\\n"));',
        "await conn.read(new Uint8Array(16));",
        "",
      ].join("\n"),
    );
    // stderr a pipe, as under pi's bash tool: libuv makes that a socketpair.
    const child = spawn(deno, [
      "run",
      "--no-prompt",
      "--no-config",
      "--no-lock",
      `--allow-read=${socketPath},${script}`,
      `--allow-write=${socketPath}`,
      `--allow-net=unix:${socketPath}`,
      script,
      socketPath,
    ], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { DENO_DIR: join(dir, "deno-dir"), NO_COLOR: "1" },
    });
    children.push(child);
    let err = "";
    child.stderr!.on("data", (d) => err += d);
    const socket = await nextConnection(30_000, () => `deno: ${err}`);
    const conns: Accepted[] = [];
    try {
      const fd = fdOf(socket);
      const creds = getPeerCredentials(fd);
      assert.ok(creds.ok);
      const report = JSON.parse(await readLine(socket, 10_000)) as ChildReport;
      conns.push({ socket, fd, peerPid: creds.creds.pid, report });
      assert.equal(report.pid, creds.creds.pid);
      const strict = await peerHoldsOnlyThisConnection(fd, creds.creds.pid);
      assert.deepEqual(strict, { ok: false, reason: PEER_HOLDS_OTHER_SOCKETS });
      const owns = await peerOwnsThisConnection(fd, creds.creds.pid);
      assert.ok(owns.ok, `owns refused: ${!owns.ok && owns.reason}`);
      assert.ok(owns.peerSockets.length >= 3, "Deno holds sockets of its own");
      if (!("Deno" in globalThis)) {
        // Node (libuv) makes a child's piped stderr a socketpair; Deno makes it a pipe.
        assert.ok(owns.peerSockets.some((s) => s.fd === 2), "stderr is a socketpair here");
      }
    } finally {
      await stop(child, conns.length > 0 ? conns : [{ socket } as Accepted]);
    }
  });
});
