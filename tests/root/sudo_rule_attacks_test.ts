/**
 * The root broker, second hostile round (docs/security-tests.md, rows
 * R10–R17; docs/security-tests-2.md, R19–R21): each attack runs through the
 * installed broker with `sudo -n` as the throwaway user (or as root: the
 * installer, the way a human runs it, and R21's server, the way a sudo that
 * keeps the caller's core size runs it), after root arranged what the attack
 * needs: a sudoers drop-in without `secure_path`, a group-writable
 * `/usr/local`, a root-only path, a caller with thousands of groups, a pts
 * bind mount, a planted `/tmp/node_modules`, a `find` that fails, bound in a
 * mount namespace of the test's own, one endless line to root's check server.
 *
 * Needs: root, PI_SUDO_PROMPT_TEST_USER, the broker installed by
 * install_test.ts (which runs first: the files run in name order).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  chmod,
  chown,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BROKER_LAUNCHER, BROKER_ROOT, SUDOERS_FILE } from "../../broker/paths.ts";
import { BROKER_REFUSALS as R } from "../../broker/broker_permissions.ts";
import { asUser, REPO, run, USER } from "./root_helpers.ts";

const refusal = (reason: string) => `pi-secret-broker: ${reason}\n`;
const NODE = join(REPO, "node_modules/.bin/node");
const FAKE_PI = join(REPO, "tests/helpers/fake_pi.ts");
/** Programs a caller might plant where root's scripts look them up. */
const PLANTED = [
  "uname",
  "id",
  "env",
  "sed",
  "find",
  "stat",
  "cat",
  "realpath",
  "setpriv",
  "mktemp",
  "install",
  "dirname",
  "chmod",
  "visudo",
];

let uid = 0;
let gid = 0;
before(async () => {
  uid = Number((await run("/usr/bin/id", ["-u", USER])).out.trim());
  gid = Number((await run("/usr/bin/id", ["-g", USER])).out.trim());
});

describe("the root broker, second round (hostile review)", () => {
  describe("R10: the caller's PATH never runs as root", () => {
    let dir = "";
    const dropIn = "/etc/sudoers.d/zz-pi-sudo-prompt-test-path";
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "planted-path-"));
      await chmod(dir, 0o755);
      for (const name of PLANTED) {
        const real = (await run("/bin/sh", ["-c", `command -v ${name}`])).out.trim();
        await writeFile(
          join(dir, name),
          `#!/bin/sh\n[ "$(/usr/bin/id -u)" != 0 ] || echo "$0 $*" >> ${dir}/ran-as-root\n` +
            `exec ${real || "/bin/false"} "$@"\n`,
          { mode: 0o755 },
        );
      }
      await chown(dir, uid, gid);
      // Arch's default, a custom sudoers file, or exempt_group: sudo keeps PATH.
      // printenv only, to show that sudo really hands the planted PATH to root.
      await writeFile(
        dropIn,
        `Defaults:${USER} !secure_path\n${USER} ALL=(root) NOPASSWD: /usr/bin/printenv PATH\n`,
        { mode: 0o440 },
      );
      assert.equal((await run("/usr/sbin/visudo", ["-c"])).code, 0);
    });
    after(async () => {
      await rm(dropIn, { force: true });
      await rm(dir, { recursive: true, force: true });
    });

    it("R10: no secure_path and uname, id, env… planted first on PATH: nothing of the caller's runs as root", async () => {
      const path = `${dir}:/usr/local/bin:/usr/bin:/bin`;
      const sudo = (args: string) =>
        asUser(
          "init",
          ["/bin/sh", "-c", `/usr/bin/sudo -n ${BROKER_LAUNCHER} ${args} </dev/null`],
          {
            PATH: path,
          },
        );
      // sudo really keeps the planted PATH for this user: the drop-in works.
      const kept = await asUser("init", ["/usr/bin/sudo", "-n", "/usr/bin/printenv", "PATH"], {
        PATH: path,
      });
      assert.equal(kept.out.trim(), path, "root gets the caller's PATH");
      const usage = await sudo("");
      assert.equal(usage.code, 125, usage.out);
      await sudo("--verify-pairing 1 2 3");
      await sudo("--terminal-holders 0");
      // The check server (ADR 0005's amendment): two questions, then one it refuses.
      const served = await asUser("init", [
        "/bin/sh",
        "-c",
        `printf '%s\\n' '0123456789abcdef --terminal-holders 0' ` +
        `'0123456789abcdee --verify-pairing 1 2 3' 'x --terminal-holders 0' | ` +
        `/usr/bin/sudo -n ${BROKER_LAUNCHER} --serve-checks`,
      ], { PATH: path });
      assert.equal(served.code, 125, served.out);
      assert.match(
        served.out,
        /^0123456789abcdef 125 pi-terminal: usage: [^\n]*\n0123456789abcdee 1 pi-pairing: not-paired [^\n]*\n0 125 pi-checks: usage: NONCE must be lowercase hex\n$/,
      );
      const broker = await sudo(
        "--socket /tmp/no-such-session/askpass.sock --label x --cwd / -- /bin/true",
      );
      assert.equal(broker.out, refusal(R.NO_SOCKET));
      // As root with the planted PATH: a human's sudo without secure_path.
      await run("/bin/sh", ["/usr/local/libexec/pi-sudo-prompt/allowlist-append", "not an entry"], {
        PATH: path,
      });
      const reinstall = await run("/bin/sh", [join(REPO, "broker/install.sh"), "--user", USER], {
        PATH: path,
      });
      assert.equal(reinstall.code, 0, reinstall.out);
      const ran = await readFile(join(dir, "ran-as-root"), "utf8").catch(() => "");
      assert.equal(ran, "", `ran as root from the caller's PATH:\n${ran}`);
    });
  });

  it("R11: a group-writable /usr/local: the installer refuses and writes no sudoers rule; doctor fails", async () => {
    const before = await stat("/usr/local");
    const rule = await readFile(SUDOERS_FILE, "utf8");
    await chmod("/usr/local", (before.mode & 0o7777) | 0o020);
    try {
      const r = await run("/bin/sh", [join(REPO, "broker/install.sh"), "--user", USER]);
      assert.notEqual(r.code, 0, r.out);
      assert.match(
        r.out,
        /\/usr\/local is writable by group or others \(mode \d+\).*chmod go-w \/usr\/local/,
      );
      assert.equal(await readFile(SUDOERS_FILE, "utf8"), rule, "the sudoers file is untouched");
      const doctor = await asUser("init", [
        NODE,
        "--no-warnings",
        "--input-type=module",
        "-e",
        `const d = await import(${JSON.stringify(join(REPO, "ops/doctor/runner.ts"))});` +
        'console.log(JSON.stringify(await d.runCheck("broker")));',
      ]);
      const broker = JSON.parse(doctor.out.trim().split("\n").at(-1) ?? "{}");
      assert.equal(broker.status, "fail", doctor.out);
      assert.match(broker.detail, /\/usr\/local .*not a root-owned install/);
    } finally {
      await chmod("/usr/local", before.mode & 0o7777);
    }
  });

  it("R12: a present and an absent root-only socket path get the same refusal, checked as the caller", async () => {
    const present = await mkdtemp("/root/pi-present-");
    await writeFile(join(present, "askpass.sock"), "");
    try {
      const ask = (sock: string) =>
        asUser("init", [
          "/bin/sh",
          "-c",
          `/usr/bin/sudo -n ${BROKER_LAUNCHER} --socket ${sock} --label x --cwd / -- /bin/true </dev/null`,
        ]);
      const a = await ask(join(present, "askpass.sock"));
      const b = await ask("/root/pi-absent-dir/askpass.sock");
      assert.equal(a.out, refusal(R.NO_SOCKET));
      assert.equal(b.out, a.out, "the same words whether the root-only path exists or not");
      // A path that is not a session socket never becomes part of a write grant.
      const slash = await ask("/");
      assert.equal(slash.code, 125);
      assert.match(slash.out, /must be a pi session's/);
    } finally {
      await rm(present, { recursive: true, force: true });
    }
  });

  it("R13: a caller whose stderr is a full pipe nobody reads: the refusal never waits, the broker exits at once", async () => {
    const script = `
import fcntl, os, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
try:
    while True: os.write(w, b"x" * 4096)
except BlockingIOError:
    pass
fcntl.fcntl(w, fcntl.F_SETFL, 0)
t = time.monotonic()
p = subprocess.Popen(["/usr/bin/sudo", "-n", "${BROKER_LAUNCHER}", "--socket", "/tmp/no-such/askpass.sock",
    "--label", "x", "--cwd", "/", "--", "/bin/true"], stdin=subprocess.DEVNULL, stderr=w)
try:
    code = p.wait(timeout=20)
except subprocess.TimeoutExpired:
    p.kill(); code = "stuck"
print("exit", code, "after", round(time.monotonic() - t, 1))
`;
    const r = await asUser("init", ["/usr/bin/python3", "-c", script]);
    const m = /^exit (\S+) after ([0-9.]+)$/m.exec(r.out);
    assert.ok(m, r.out);
    assert.equal(m[1], "125", r.out);
    assert.ok(Number(m[2]) < 10, `the broker took ${m[2]} s with a stuck stderr`);
  });

  it("R14: 2,000 groups (a status past 8 KiB) reach the consumer whole; 14,000 are refused, never read in part", async () => {
    const many = Array.from({ length: 2000 }, (_, i) => 200_000 + i);
    const held = await asUser(many, [NODE, FAKE_PI, "secret", "--", "/usr/bin/id", "-G"]);
    assert.match(held.out, /FAKE_PI \{"code":0,"requests":1\}/, held.out.slice(-2000));
    const got = held.out.split("\n")[0].trim().split(" ").map(Number).sort((a, b) => a - b);
    assert.deepEqual(got, [gid, ...many].sort((a, b) => a - b));
    const huge = Array.from({ length: 14_000 }, (_, i) => 300_000 + i);
    const cut = await asUser(huge, [NODE, FAKE_PI, "secret", "--", "/usr/bin/id", "-G"]);
    assert.match(
      cut.out,
      new RegExp(`pi-secret-broker: ${R.PROC_TOO_LARGE}`),
      cut.out.slice(-2000),
    );
    assert.match(cut.out, /FAKE_PI \{"code":125,"requests":0\}/);
  });

  it("R15: terminal-check lists a holder through a pts bind mount and one holding /dev/tty after setsid", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pts-bind-"));
    await chown(dir, uid, gid);
    const script = `
import os, pty, subprocess, sys, time
d = sys.argv[1]
master, slave = pty.openpty()
n = os.ttyname(slave).rsplit("/", 1)[1]
os.close(slave)
open(d + "/mnt", "w").close()
# 1. through a bind mount of the pts, in a user and mount namespace of its own
bound = subprocess.Popen(["/usr/bin/unshare", "-Urm", "/bin/sh", "-c",
    'mount --bind "$1" "$2" && exec python3 -c "import os,time; f=os.open(\\'$2\\', os.O_RDWR|os.O_NOCTTY); open(\\'$2.ready\\', \\'w\\'); time.sleep(30)"',
    "sh", "/dev/pts/" + n, d + "/mnt"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# 2. /dev/tty opened as the controlling terminal, then setsid: no ctty any more
setsid = subprocess.Popen(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, args=["/usr/bin/python3", "-c",
    "import os,sys,time,fcntl,termios,signal\\n"
    "signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the session leader's exit hangs up\\n"
    "os.setsid(); t=os.open(sys.argv[1], os.O_RDWR); fcntl.ioctl(t, termios.TIOCSCTTY, 0)\\n"
    "h=os.open('/dev/tty', os.O_RDWR); os.close(t)\\n"
    "pid=os.fork()\\n"
    "if pid: os._exit(0)\\n"
    "os.setsid(); open(sys.argv[2], 'w').write(str(os.getpid())); time.sleep(30)",
    "/dev/pts/" + n, d + "/holder.pid"])
setsid.wait()
deadline = time.monotonic() + 20
while time.monotonic() < deadline and not (os.path.exists(d + "/mnt.ready") and os.path.exists(d + "/holder.pid")):
    time.sleep(0.05)
out = subprocess.run(["/usr/bin/sudo", "-n", "${BROKER_LAUNCHER}", "--terminal-holders", n],
    capture_output=True, text=True).stdout
print("bound", bound.pid)
print(out.strip())
holders = out.split()[2:]
kids = [int(x) for x in subprocess.run(["/usr/bin/pgrep", "-P", str(bound.pid)], capture_output=True, text=True).stdout.split()]
print("bound-listed", any(int(h) in [bound.pid] + kids for h in holders))
print("setsid-listed", any(open("/proc/%s/cmdline" % h).read().find("setsid") >= 0 for h in holders if os.path.exists("/proc/%s" % h)))
bound.kill()
os.kill(int(open(d + "/holder.pid").read()), 9)
`;
    try {
      const r = await asUser("init", ["/usr/bin/python3", "-c", script, dir]);
      assert.match(r.out, /^pi-terminal: holders/m, r.out);
      assert.match(r.out, /^bound-listed True$/m, r.out);
      assert.match(r.out, /^setsid-listed True$/m, r.out);
    } finally {
      // A holder of /dev/tty left behind would refuse every later modal.
      const holder = Number(await readFile(join(dir, "holder.pid"), "utf8").catch(() => "0"));
      if (holder > 0) await run("/bin/kill", ["-9", String(holder)]);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("R16: a planted /tmp/node_modules deno beside a package without node_modules: refused, never run", async () => {
    const base = await mkdtemp("/tmp/pi-plant-");
    const pkg = join(base, "pkg");
    await mkdir(pkg);
    for (const part of ["broker", "askpass", "shared", "kernel", "extension"]) {
      await cp(join(REPO, part), join(pkg, part), { recursive: true });
    }
    const planted = join(base, "node_modules/@deno/linux-x64-glibc");
    const arm = join(base, "node_modules/@deno/linux-arm64-glibc");
    const marker = join(base, "planted-ran");
    for (const d of [planted, arm]) {
      await mkdir(d, { recursive: true });
      await writeFile(join(d, "deno"), `#!/bin/sh\necho "$@" >> ${marker}\n`, { mode: 0o755 });
    }
    try {
      const r = await run("/bin/sh", [join(pkg, "broker/install.sh"), "--user", USER]);
      assert.notEqual(r.code, 0, r.out);
      assert.match(r.out, /not installed in the package's node_modules/);
      assert.equal(await readFile(marker, "utf8").catch(() => ""), "", "the planted deno ran");
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it("R17: a source that is a symlink (to /etc/shadow) is refused, never published", async () => {
    const base = await mkdtemp("/tmp/pi-symlink-src-");
    const pkg = join(base, "pkg");
    for (const part of ["broker", "askpass", "shared", "kernel", "extension"]) {
      await cp(join(REPO, part), join(pkg, part), { recursive: true });
    }
    const { symlink, unlink } = await import("node:fs/promises");
    await symlink(join(REPO, "node_modules"), join(pkg, "node_modules"));
    await unlink(join(pkg, "shared/errno.ts"));
    await symlink("/etc/shadow", join(pkg, "shared/errno.ts"));
    try {
      const r = await run("/bin/sh", [join(pkg, "broker/install.sh"), "--user", USER]);
      assert.notEqual(r.code, 0, r.out);
      assert.match(r.out, /errno\.ts is not a regular file: refusing to copy it/);
      const installed = await readFile(
        "/usr/local/libexec/pi-sudo-prompt/src/shared/errno.ts",
        "utf8",
      );
      assert.doesNotMatch(installed, /^root:/m, "/etc/shadow published");
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it("R19: pairing-check's walk cut short (find exits 2 after the real links): not paired", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pairing-walk-"));
    await chmod(dir, 0o755);
    // The askpass helper sudo starts: it asks root about its own pairing (the
    // question pi asks for it), from a subshell, so that its own fd 1 stays the
    // pipe (the shell would park it on another fd while redirecting).
    await writeFile(
      join(dir, "askpass"),
      `#!/bin/sh\nino=$(/usr/bin/readlink /proc/$$/fd/1 | /usr/bin/tr -dc 0-9)\n` +
        `(exec /usr/bin/sudo -n ${BROKER_LAUNCHER} --verify-pairing $$ $PPID "$ino" ` +
        `>"$OUT" 2>&1 </dev/null)\necho "exit $?" >>"$OUT"\nexit 1\n`,
      { mode: 0o755 },
    );
    // A find that prints what the real one finds, then fails as a cut walk does.
    await cp("/usr/bin/find", join(dir, "real-find"));
    await writeFile(join(dir, "find"), `#!/bin/sh\n"${dir}/real-find" "$@"\nexit 2\n`, {
      mode: 0o755,
    });
    const ask = async (bindFind: boolean) => {
      const out = join(dir, bindFind ? "bound.out" : "real.out");
      await writeFile(out, "");
      await chown(out, uid, gid);
      // In a mount namespace of its own, so only this sudo's checks see the bound find.
      await run("/usr/bin/unshare", [
        "-m",
        "--propagation",
        "private",
        "/bin/sh",
        "-c",
        `${bindFind ? `mount --bind "$1/find" /usr/bin/find || exit 99; ` : ""}` +
        `exec /usr/bin/setpriv --reuid=${uid} --regid=${gid} --init-groups --reset-env -- ` +
        `/usr/bin/env SUDO_ASKPASS="$1/askpass" OUT="$2" /usr/bin/sudo -A -k /bin/true`,
        "sh",
        dir,
        out,
      ]);
      return await readFile(out, "utf8");
    };
    try {
      // The same question with the real find: paired (the setup is right).
      assert.match(await ask(false), /^pi-pairing: paired\nexit 0\n$/);
      assert.match(await ask(true), /^pi-pairing: not-paired walk_failed\nexit 1\n$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  /**
   * One endless line to the check server started by `start` (an argv) in
   * `cwd`, with the core size as high as it may go: the MiB written before the
   * server stopped reading, how it ended, and what it printed after its first
   * answer. As the throwaway user unless `asRoot`.
   */
  const endlessLine = async (start: string[], cwd: string, asRoot = false) => {
    // dash reads the line a byte at a time (about 50 MiB before it dies: 5 s
    // here, 8 s in a 2/3-CPU cgroup beside two busy loops): a slow host gets minutes.
    const script = `
import os, resource, subprocess
hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
os.chdir(${JSON.stringify(cwd)})
p = subprocess.Popen(${JSON.stringify(start)},
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
p.stdin.write(b"0123456789abcdef --terminal-holders 0\\n"); p.stdin.flush()
print("first", p.stdout.readline().decode().strip(), flush=True)
chunk, wrote = b"x" * (1 << 20), 0
try:
    while wrote < (96 << 20):
        p.stdin.write(chunk); p.stdin.flush(); wrote += len(chunk)
    p.stdin.write(b"\\n"); p.stdin.close()
except BrokenPipeError:
    pass
try:
    code = p.wait(timeout=240)
except subprocess.TimeoutExpired:
    print("wrote", wrote >> 20, "exit stuck then ''", flush=True)
    os._exit(1)
print("wrote", wrote >> 20, "exit", code, "then", repr(p.stdout.read().decode()))
`;
    const argv = ["/usr/bin/python3", "-c", script];
    const r = asRoot
      ? await run(argv[0], argv.slice(1), {}, 300_000)
      : await asUser("init", argv, {}, 300_000);
    assert.match(r.out, /^first 0123456789abcdef 125 pi-terminal: usage/m, r.out);
    const m = /^wrote (\d+) exit (\S+) then (.*)$/m.exec(r.out);
    assert.ok(m, r.out);
    return { mib: Number(m[1]), exit: m[2], then: m[3], out: r.out };
  };

  it("R20: an endless line to root's check server: it dies at its 64 MB limit, never reads on", {
    timeout: 320_000,
  }, async () => {
    // The agent may run its own check server (the NOPASSWD rule): dash reads a
    // line whole before its length is checked, so only the server's `ulimit -v`
    // bounds root's memory.
    const cwd = await mkdtemp(join(tmpdir(), "endless-"));
    await chown(cwd, uid, gid);
    try {
      const line = await endlessLine(
        ["/usr/bin/sudo", "-n", BROKER_LAUNCHER, "--serve-checks"],
        cwd,
      );
      // It read many MiB (the server was really reading), and stopped before the
      // line could fill the limit; it never answered the line.
      assert.ok(line.mib >= 8 && line.mib < 64, `stopped after ${line.mib} MiB: ${line.out}`);
      assert.notEqual(line.exit, "stuck", line.out);
      assert.equal(line.then, "''", line.out);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  /**
   * R21. sudo 1.9 sets the command's core size to 0 unless sudoers says
   * otherwise (`Defaults rlimit_core=default`, sudoers(5)'s "historic
   * behaviour"), and another sudo may not. This sandbox has no
   * CAP_SYS_RESOURCE, so its sudo cannot hand a core size on: root starts the
   * installed server itself, in the caller's directory, with the caller's
   * unlimited core size and the launcher's environment, as such a sudo would.
   */
  describe("R21: root's check server crashes where the caller stands", () => {
    const patternFile = "/proc/sys/kernel/core_pattern";
    const server = `${BROKER_ROOT}/check-server`;
    let pattern = "";
    let dir = "";
    before(async () => {
      // A core named `core` in the crashing process's directory, Debian's
      // default; a pipe to a handler (systemd-coredump, apport) for the test's length.
      pattern = await readFile(patternFile, "utf8");
      await writeFile(patternFile, "core");
      dir = await mkdtemp(join(tmpdir(), "core-"));
      await chmod(dir, 0o755);
    });
    after(async () => {
      if (pattern) await writeFile(patternFile, pattern);
      await rm(dir, { recursive: true, force: true });
    });

    it(
      "R21: with the caller's core size, its crash at the memory limit leaves no core of root's there",
      {
        timeout: 320_000,
      },
      async () => {
        const here = async (name: string) => {
          const cwd = join(dir, name);
          await mkdir(cwd, { mode: 0o755 });
          await chown(cwd, uid, gid);
          return cwd;
        };
        const cores = async (cwd: string) => (await readdir(cwd)).filter((n) => /^core/.test(n));
        // The setup is right: root's shell crashing there leaves root's core.
        const control = await here("control");
        await run("/bin/sh", [
          "-c",
          'cd "$1" && ulimit -c unlimited && sh -c "kill -SEGV \\$\\$"',
          "sh",
          control,
        ]);
        assert.equal((await cores(control)).length, 1, "the control crash left no core");
        const attacked = await here("attacked");
        const line = await endlessLine(
          [
            "/bin/sh",
            "-c",
            `ulimit -c unlimited; exec /usr/bin/env -i SUDO_UID=${uid} /bin/sh ${server}`,
          ],
          attacked,
          true,
        );
        assert.ok(line.mib < 64, line.out);
        assert.deepEqual(await cores(attacked), [], `root's server left a core: ${line.out}`);
      },
    );
  });
});
