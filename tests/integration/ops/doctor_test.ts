/**
 * Tests of `ops/doctor/` (each check run by id through `runCheck`) and
 * `pi-sudo-prompt doctor`: the checks that pass on this machine run for real
 * (platform, FFI round trip, the helper under the pinned deno flags, sudo),
 * and every other verdict is provoked on purpose with real files and fake
 * binaries in a temp directory: a fake
 * `/proc` tree, world-writable runtime directories, fake `sudo` and `doas`
 * scripts, broker VERSION files, unsafe allowlists, user-owned installs.
 *
 * Works as root and as a non-root user (CI runs it as a throwaway user).
 * A non-root user cannot create root-owned files, so the "safe" cases use
 * existing root-owned files (`/etc/passwd`) and the unsafe ones use files
 * owned by the caller (root chowns its copies to `nobody` instead).
 *
 * Run: node_modules/.bin/node --test tests/integration/ops/doctor_test.ts
 */
import { NOT_COVERED } from "../../../ops/doctor/checks/hardened.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  chmod,
  chown,
  copyFile,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { NODE_BINARY } from "../../helpers/test_env.ts";
import { after, before, describe, it } from "node:test";
import {
  DOCTOR_CHECK_IDS,
  type DoctorCheck,
  doctorExitCode,
  renderDoctor,
  runCheck,
  runDoctor,
} from "../../../ops/doctor/runner.ts";
import {
  compareVersions,
  parseSudoVersion,
  SUDO_RS_ASKPASS_SINCE,
} from "../../../ops/doctor/checks/sudo.ts";
import { PROTOCOL_VERSION } from "../../../askpass/protocol.ts";
import { ROOT_SOURCE_FILES } from "../../../broker/root_files.ts";
import { DEFAULT_OUTPUT_CAP, spawnWithDeadline } from "../../../shared/spawn_deadline.ts";

const REPO = new URL("../../../", import.meta.url).pathname.replace(/\/$/, "");
const NODE = NODE_BINARY;
const uid = process.getuid!();
const isRoot = uid === 0;
const NOBODY = 65534;
/** The uid the "agent" has in the ownership tests: files owned by it are the agent's. */
const agentUid = isRoot ? NOBODY : uid;

let tmp: string;
let counter = 0;

/** A fresh directory inside the suite's temp dir. */
async function freshDir(mode = 0o700): Promise<string> {
  const dir = join(tmp, `d${++counter}`);
  await mkdir(dir);
  await chmod(dir, mode);
  return dir;
}

/** A file owned by the "agent" (chowned to nobody when we are root). */
async function agentFile(path: string, text: string, mode = 0o644): Promise<string> {
  await writeFile(path, text);
  await chmod(path, mode);
  if (isRoot) await chown(path, NOBODY, NOBODY);
  return path;
}

/** An executable shell script. */
async function script(path: string, body: string): Promise<string> {
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

/** A fake /proc tree with the given files (relative paths). */
async function fakeProc(files: Record<string, string>): Promise<string> {
  const root = await freshDir(0o755);
  for (const [rel, text] of Object.entries(files)) {
    const p = join(root, rel);
    await mkdir(join(p, ".."), { recursive: true });
    await writeFile(p, text);
  }
  return root;
}

function runCli(
  args: string[],
  nodeArgs: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [...nodeArgs, join(REPO, "ops/doctor_cli.ts"), ...args], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => stdout += b);
    child.stderr.on("data", (b) => stderr += b);
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("doctor_cli did not finish within 60 s"));
    }, 60_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function assertNoControlChars(c: DoctorCheck): void {
  // deno-lint-ignore no-control-regex -- the point of the test
  const control = /[\u0000-\u001f\u007f-\u009f]/;
  assert.ok(!control.test(c.detail), `control character in detail: ${JSON.stringify(c.detail)}`);
  assert.ok(!control.test(c.fix ?? ""), `control character in fix: ${JSON.stringify(c.fix)}`);
}

before(async () => {
  tmp = await realpath(await mkdtemp(join(tmpdir(), "pi-doctor-test-")));
});

after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("doctor: checks that pass on this machine", () => {
  it("platform: Linux with /proc", async () => {
    const c = await runCheck("platform");
    assert.equal(c.status, "ok", c.detail);
    assert.match(c.detail, /^Linux /);
  });

  it("ffi: koffi loads, a real SO_PEERCRED round trip and SOCK_DIAG lookup work", async () => {
    const c = await runCheck("ffi");
    assert.equal(c.status, "ok", c.detail);
    assert.match(c.detail, /SO_PEERCRED round trip gave our pid and uid/);
    assert.match(c.detail, /SOCK_DIAG named the peer socket/);
  });

  it("deno: the real helper under the pinned flags refuses a plain stdout pipe", async () => {
    const c = await runCheck("deno");
    assert.equal(c.status, "ok", c.detail);
    assert.match(c.detail, /^deno 2\.\d+\.\d+ at \//);
    assert.match(c.detail, /pinned flags/);
  });

  it("sudo: the installed sudo is recognised and setuid root", async () => {
    const c = await runCheck("sudo");
    assert.equal(c.status, "ok", `${c.detail} / ${c.fix}`);
    assert.match(c.detail, /^(Sudo version 1\.9|sudo-rs )/);
  });

  it("runDoctor: every check, in the fixed order, each with a verdict", async () => {
    const checks = await runDoctor();
    assert.deepEqual(checks.map((c) => c.id), [...DOCTOR_CHECK_IDS]);
    for (const c of checks) {
      assert.ok(["ok", "warn", "fail", "info"].includes(c.status), c.id);
      assert.ok(c.title.length > 0 && c.detail.length > 0, c.id);
      assertNoControlChars(c);
      if (c.status === "warn" || c.status === "fail") assert.ok(c.fix, `${c.id} has no fix`);
    }
    assert.equal(doctorExitCode(checks), checks.some((c) => c.status === "fail") ? 1 : 0);
  });

  it("runCheck: each id gives the check runDoctor lists under that id and title", async () => {
    // Everything that could change between the two runs is pinned; ffi and deno details
    // (a pidfd note, a version) are the machine's and checked elsewhere.
    const options = { env: {}, procRoot: await fakeProc({}) };
    const all = await runDoctor(options);
    for (const [i, id] of DOCTOR_CHECK_IDS.entries()) {
      const one = await runCheck(id, options);
      assert.equal(one.id, id);
      assert.equal(one.title, all[i].title, id);
      if (id !== "ffi" && id !== "deno") assert.equal(one.detail, all[i].detail, id);
    }
  });

  it("deno task doctor (--json) prints the same checks and exits by the verdicts", async () => {
    const r = await runCli(["--json"]);
    const checks = JSON.parse(r.stdout) as DoctorCheck[];
    assert.deepEqual(checks.map((c) => c.id), [...DOCTOR_CHECK_IDS]);
    assert.equal(r.code, doctorExitCode(checks), r.stderr);
    assert.equal(checks.find((c) => c.id === "ffi")?.status, "ok");
  });

  it("--explain REASON: what a refusal of a notice means and what to do; a bad name exits 2 in one line", async () => {
    const r = await runCli(["--explain", "terminal_shared"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split("\n").slice(0, 3), [
      "terminal_shared",
      "  what happened: another process has pi's terminal open and could read what you type",
      "  what to do:    stop the process the notice names (`kill <pid>`) and run the command again",
    ]);
    const bad = await runCli(["--explain", "no_such\x1b[2Jreason"]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, "");
    assert.match(
      bad.stderr,
      /^doctor: no refusal is named "no_such\?\?2Jreason"; known: .*terminal_shared/,
    );
    assert.equal(bad.stderr.trimEnd().split("\n").length, 1, bad.stderr);
    // A group's name that is no reason (every reason has its detail line) is no refusal either.
    const group = await runCli(["--explain", "not_our_helper"]);
    assert.equal(group.code, 2);
    assert.match(group.stderr, /^doctor: no refusal is named "not_our_helper"; known: /);
    assert.doesNotMatch(group.stderr, /known: .*\bnot_our_helper\b/);
    const missing = await runCli(["--explain"]);
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /usage: pi-sudo-prompt doctor \[--json\] \[--width N\] \[--explain REASON\]/,
    );
  });

  it("--inside-pi: pi's terminal guard status as pi hands it over is judged; a bent one exits 2 in one line", async () => {
    const piState = {
      started: true,
      ttyPath: "/dev/pts/9",
      rdev: 34825,
      exclusive: true,
      nonDumpable: true,
      dumpableByChoice: false,
      guardianPid: 4242,
      guardianRootOwned: false,
      problems: [],
    };
    const r = await runCli(["--json", "--inside-pi", JSON.stringify({ piState })]);
    const checks = JSON.parse(r.stdout) as DoctorCheck[];
    assert.equal(checks.find((c) => c.id === "terminal")?.status, "ok");
    assert.match(checks.find((c) => c.id === "terminal")!.detail, /guardian pid 4242/);
    assert.equal(checks.find((c) => c.id === "dumpable")?.status, "ok");
    const open = await runCli([
      "--json",
      "--inside-pi",
      JSON.stringify({ piState: { ...piState, exclusive: false } }),
    ]);
    const terminal = (JSON.parse(open.stdout) as DoctorCheck[]).find((c) => c.id === "terminal");
    assert.equal(terminal?.status, "fail");
    for (const bent of ['{"piState": {"started": "yes"}}', "{", '{"session":{"denoPath":"rel"}}']) {
      const bad = await runCli(["--inside-pi", bent]);
      assert.equal(bad.code, 2, bent);
      assert.match(bad.stderr, /^doctor: --inside-pi: not the JSON \/sudo-prompt doctor writes\n/);
    }
  });
});

describe("doctor: rendering", () => {
  it("one marker line per check, fix indented, at most 100 columns except long paths", async () => {
    const checks = await runDoctor();
    const long = "/very/long/" + "x".repeat(130) + "/path";
    const synthetic: DoctorCheck = {
      id: "synthetic",
      title: "synthetic",
      status: "fail",
      detail: `a detail that mentions ${long} and then keeps going with enough ordinary words ` +
        "to need wrapping onto a second and maybe a third line of output",
      fix: "a fix that is also long enough to wrap: ".repeat(4),
    };
    const lines = renderDoctor([...checks, synthetic]);
    for (const line of lines) {
      // deno-lint-ignore no-control-regex -- no ANSI: the TUI colours the lines
      assert.ok(!/[\u0000-\u001f]/.test(line), `control character in ${JSON.stringify(line)}`);
      if (line.length > 100) {
        const words = line.trim().split(" ");
        assert.ok(words.some((w) => w.length > 60), `line over 100 columns: ${line}`);
      }
    }
    const markers = lines.filter((l) => /^[✓!✗i] /.test(l));
    assert.equal(markers.length, checks.length + 1);
    for (const [i, c] of checks.entries()) {
      assert.ok(markers[i].startsWith({ ok: "✓", warn: "!", fail: "✗", info: "i" }[c.status]));
      assert.ok(markers[i].includes(c.title));
    }
    assert.ok(lines.some((l) => l === long || l.trim() === long), "the long path on its own line");
    assert.ok(lines.some((l) => /^ {19}fix: a fix that/.test(l)), "fix indented under the detail");
    assert.match(
      lines.at(-1)!,
      new RegExp(`^${checks.length + 1} checks: \\d+ ok, \\d+ warnings, \\d+ failed, \\d+ info$`),
    );
  });

  it("a narrower width wraps more", () => {
    const c: DoctorCheck = {
      id: "x",
      title: "x",
      status: "warn",
      detail: "word ".repeat(40).trim(),
      fix: "fix ".repeat(30).trim(),
    };
    for (const line of renderDoctor([c], 60)) assert.ok(line.length <= 60, line);
  });
});

describe("doctor: checks that fail or warn on purpose", () => {
  it("platform: not Linux, unsupported architecture, /proc not mounted", async () => {
    const mac = await runCheck("platform", { platform: "darwin" });
    assert.equal(mac.status, "fail");
    assert.match(mac.detail, /needs Linux/);
    const s390 = await runCheck("platform", { arch: "s390x" });
    assert.equal(s390.status, "fail");
    assert.match(s390.detail, /s390x is not supported/);
    const noProc = await runCheck("platform", { procRoot: await fakeProc({}) });
    assert.equal(noProc.status, "fail");
    assert.match(noProc.detail, /not mounted/);
    assert.ok(noProc.fix);
  });

  it("ptrace_scope: 0 and missing warn; 1, 2 and 3 are fine", async () => {
    const key = "sys/kernel/yama/ptrace_scope";
    const zero = await runCheck("ptrace_scope", { procRoot: await fakeProc({ [key]: "0\n" }) });
    assert.equal(zero.status, "warn");
    assert.match(zero.detail, /ptrace_scope=0: any process of yours/);
    assert.match(zero.fix!, /sysctl kernel\.yama\.ptrace_scope=1/);
    const missing = await runCheck("ptrace_scope", { procRoot: await fakeProc({}) });
    assert.equal(missing.status, "warn");
    assert.match(missing.detail, /no Yama LSM/);
    assert.match(missing.fix!, /Yama/);
    const one = await runCheck("ptrace_scope", { procRoot: await fakeProc({ [key]: "1\n" }) });
    assert.equal(one.status, "ok");
    assert.match(one.detail, /ancestor of a pi-secret-run command/);
    for (const v of ["2", "3"]) {
      const c = await runCheck("ptrace_scope", { procRoot: await fakeProc({ [key]: `${v}\n` }) });
      assert.equal(c.status, "ok", v);
    }
    const odd = await runCheck("ptrace_scope", {
      procRoot: await fakeProc({ [key]: "\u001b[31m7\n" }),
    });
    assert.equal(odd.status, "warn");
    assertNoControlChars(odd);
  });

  it("legacy_tiocsti: 1 warns, 0 is fine, missing is info (kernel < 6.2)", async () => {
    const key = "sys/dev/tty/legacy_tiocsti";
    const on = await runCheck("legacy_tiocsti", { procRoot: await fakeProc({ [key]: "1\n" }) });
    assert.equal(on.status, "warn");
    assert.match(on.fix!, /sysctl dev\.tty\.legacy_tiocsti=0/);
    const off = await runCheck("legacy_tiocsti", { procRoot: await fakeProc({ [key]: "0\n" }) });
    assert.equal(off.status, "ok");
    const missing = await runCheck("legacy_tiocsti", { procRoot: await fakeProc({}) });
    assert.equal(missing.status, "info");
    assert.match(missing.detail, /kernel < 6\.2/);
  });

  it("XDG_RUNTIME_DIR: private dir ok; unset, relative, open, symlink, foreign warn", async () => {
    const good = await freshDir(0o700);
    const ok = await runCheck("runtime_dir", { env: { XDG_RUNTIME_DIR: good } });
    assert.equal(ok.status, "ok", ok.detail);

    const unset = await runCheck("runtime_dir", { env: {} });
    assert.equal(unset.status, "warn");
    assert.match(unset.detail, /not set: falling back to .*\/tmp/);

    const relative = await runCheck("runtime_dir", { env: { XDG_RUNTIME_DIR: "run/user/1000" } });
    assert.equal(relative.status, "warn");
    assert.match(relative.detail, /not an absolute path/);

    const open = await freshDir(0o777);
    const worldWritable = await runCheck("runtime_dir", { env: { XDG_RUNTIME_DIR: open } });
    assert.equal(worldWritable.status, "warn");
    assert.match(worldWritable.detail, /mode 0777: group or others have access/);

    const link = join(tmp, `link${++counter}`);
    await symlink(good, link);
    const linked = await runCheck("runtime_dir", { env: { XDG_RUNTIME_DIR: link } });
    assert.equal(linked.status, "warn");
    assert.match(linked.detail, /is a symlink/);

    // Someone else's directory: as root, one owned by nobody; otherwise root's /etc.
    let foreign = "/etc";
    if (isRoot) {
      foreign = await freshDir(0o700);
      await chown(foreign, NOBODY, NOBODY);
    }
    const notOurs = await runCheck("runtime_dir", { env: { XDG_RUNTIME_DIR: foreign } });
    assert.equal(notOurs.status, "warn");
    assert.match(notOurs.detail, /owned by uid \d+, not by you/);
  });

  it("XDG_RUNTIME_DIR: a path the launcher refuses or too long for a socket fails", async () => {
    const comma = join(tmp, `a,b${++counter}`);
    await mkdir(comma, { mode: 0o700 });
    const bad = await runCheck("runtime_dir", { env: { XDG_RUNTIME_DIR: comma } });
    assert.equal(bad.status, "fail");
    assert.match(bad.detail, /characters the launcher refuses/);

    let deep = await freshDir(0o700);
    while (deep.length < 100) {
      deep = join(deep, "abcdefghij");
      await mkdir(deep, { mode: 0o700 });
    }
    const long = await runCheck("runtime_dir", { env: { XDG_RUNTIME_DIR: deep } });
    assert.equal(long.status, "fail");
    assert.match(long.detail, /longer than a Unix socket path may be/);
  });

  it("sudo: version strings are classified", () => {
    assert.deepEqual(parseSudoVersion("Sudo version 1.9.13p3\nConfigure options: …\n"), {
      flavour: "sudo",
      version: "1.9.13p3",
      line: "Sudo version 1.9.13p3",
    });
    assert.equal(parseSudoVersion("sudo-rs 0.2.11\n").version, "0.2.11");
    assert.equal(parseSudoVersion("sudo-rs 0.2.11\n").flavour, "sudo-rs");
    assert.equal(parseSudoVersion("Sudo versão 1.9.13p3").flavour, "unknown");
    assert.equal(compareVersions("0.2.3", SUDO_RS_ASKPASS_SINCE), -1);
    assert.equal(compareVersions("0.2.13", SUDO_RS_ASKPASS_SINCE), 1);
    assert.equal(compareVersions("1.9.13p3", "1.9"), 1);
    assert.equal(compareVersions("1.8.31", "1.9"), -1);
  });

  /** A fake sudo; as root it is made setuid root so only the version decides. */
  async function fakeSudo(output: string, extra = ""): Promise<string> {
    const dir = await freshDir(0o755);
    const path = await script(join(dir, "sudo"), `${extra}printf '%s\\n' '${output}'`);
    if (isRoot) await chmod(path, 0o4755);
    return path;
  }

  it("sudo: sudo-rs before 0.2.11 has no askpass and fails", async () => {
    const c = await runCheck("sudo", { sudoCandidates: [await fakeSudo("sudo-rs 0.2.3")] });
    assert.equal(c.status, "fail");
    assert.match(c.detail, /sudo-rs 0\.2\.3: no -A\/askpass before sudo-rs 0\.2\.11/);
    assert.match(c.fix!, /upgrade sudo-rs/);
  });

  it("sudo: a recent sudo-rs passes when setuid root, and a non-setuid sudo fails", async () => {
    const c = await runCheck("sudo", { sudoCandidates: [await fakeSudo("sudo-rs 0.2.13")] });
    assert.match(c.detail, /sudo-rs 0\.2\.13 \(askpass since 0\.2\.11/);
    if (isRoot) assert.equal(c.status, "ok", c.detail);
    else {
      assert.equal(c.status, "fail");
      assert.match(c.detail, /is not setuid root/);
    }
    const dir = await freshDir(0o755);
    const plain = await script(join(dir, "sudo"), "echo 'Sudo version 1.9.16'");
    const notSetuid = await runCheck("sudo", { sudoCandidates: [plain] });
    assert.equal(notSetuid.status, "fail");
    assert.match(notSetuid.detail, /Sudo version 1\.9\.16; .* is not setuid root/);
    assert.match(notSetuid.fix!, /chmod 4755/);
  });

  it("sudo: older than 1.9 and unrecognised output warn; escapes are neutralised", async () => {
    const old = await runCheck("sudo", { sudoCandidates: [await fakeSudo("Sudo version 1.8.31")] });
    assert.match(old.detail, /older than 1\.9/);
    assert.equal(old.status, isRoot ? "warn" : "fail");
    const weird = await runCheck("sudo", {
      sudoCandidates: [await fakeSudo("\u001b[2J\u001b]0;owned\u0007Totally sudo")],
    });
    assert.match(weird.detail, /unrecognised/);
    assert.equal(weird.status, isRoot ? "warn" : "fail");
    assertNoControlChars(weird);
  });

  it("sudo: doas only fails (OpenDoas has no askpass); nothing at all fails", async () => {
    const dir = await freshDir(0o755);
    const doas = await script(join(dir, "doas"), "exit 1");
    const c = await runCheck("sudo", {
      sudoCandidates: [join(dir, "sudo")],
      doasCandidates: [doas],
    });
    assert.equal(c.status, "fail");
    assert.match(c.detail, /only doas found .*OpenDoas has no askpass/);
    assert.match(c.fix!, /install sudo/);
    const none = await runCheck("sudo", {
      sudoCandidates: [join(dir, "sudo")],
      doasCandidates: [],
    });
    assert.equal(none.status, "fail");
    assert.match(none.detail, /sudo not found/);
  });

  it("sudo: a sudo that hangs is killed at the deadline", async () => {
    const dir = await freshDir(0o755);
    const pidFile = join(dir, "pid");
    const hang = await script(join(dir, "sudo"), `echo $$ > ${pidFile}\nexec sleep 60`);
    const started = Date.now();
    const c = await runCheck("sudo", { sudoCandidates: [hang], commandTimeoutMs: 500 });
    assert.ok(Date.now() - started < 5_000, "returned promptly");
    assert.equal(c.status, "fail");
    assert.match(c.detail, /did not answer in time/);
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    assert.throws(() => process.kill(pid, 0), /ESRCH/, "the hung process was killed");
  });

  it("deno: a binary that does not enforce the helper's checks fails", async () => {
    const dir = await freshDir(0o755);
    const fake = await script(
      join(dir, "deno"),
      'if [ "$1" = --version ]; then echo "deno 2.9.6 (fake)"; exit 0; fi\nexit 0',
    );
    const c = await runCheck("deno", { denoPath: fake });
    assert.equal(c.status, "fail");
    assert.match(c.detail, /did not refuse a code-loading variable \(NODE_OPTIONS\): it exited 0$/);
    const leaky = await script(
      join(dir, "deno-leaky"),
      'if [ "$1" = --version ]; then echo "deno 2.9.6"; exit 0; fi\n' +
        'echo password; echo "pi-askpass: refusing to run with NODE_OPTIONS set" >&2; exit 1',
    );
    const wrote = await runCheck("deno", { denoPath: leaky });
    assert.equal(wrote.status, "fail");
    assert.match(wrote.detail, /exited 1: pi-askpass: .* and wrote to stdout$/);
  });

  it("deno: a helper run that hangs is killed at the deadline", async () => {
    const dir = await freshDir(0o755);
    const pidFile = join(dir, "pid");
    const fake = await script(
      join(dir, "deno"),
      `if [ "$1" = --version ]; then echo "deno 2.9.6"; exit 0; fi\necho $$ > ${pidFile}\n` +
        "exec sleep 60",
    );
    const started = Date.now();
    const c = await runCheck("deno", { denoPath: fake, commandTimeoutMs: 400 });
    assert.ok(Date.now() - started < 5_000, "returned promptly");
    assert.equal(c.status, "fail");
    assert.match(c.detail, /before its deadline and was killed/);
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    assert.throws(() => process.kill(pid, 0), /ESRCH/);
  });

  it("deno: a missing binary or helper fails", async () => {
    const missing = await runCheck("deno", { denoPath: join(tmp, "no-such-deno") });
    assert.equal(missing.status, "fail");
    assert.match(missing.detail, /is not executable/);
    const noHelper = await runCheck("deno", { helperPath: join(tmp, "no-such-helper.ts") });
    assert.equal(noHelper.status, "fail");
    assert.match(noHelper.detail, /helper .* is missing/);
  });

  async function broker(versionText: string | undefined, launcher = true) {
    const dir = await freshDir(0o755);
    const versionFile = join(dir, "VERSION");
    const launcherPath = join(dir, "pi-secret-broker");
    if (versionText !== undefined) await writeFile(versionFile, versionText, { mode: 0o644 });
    if (launcher) {
      await script(launcherPath, "exit 0");
      // The installer's copies of the package's sources, as they are right after an install.
      for (const f of ROOT_SOURCE_FILES) {
        await mkdir(dirname(join(dir, "src", f)), { recursive: true, mode: 0o755 });
        await copyFile(join(REPO, f), join(dir, "src", f));
      }
    }
    return { brokerVersionFile: versionFile, brokerLauncher: launcherPath };
  }

  it("broker: a different protocol version fails with 'reinstall'", async () => {
    const other = PROTOCOL_VERSION + 1;
    const c = await runCheck("broker", await broker(`version=9.9.9\nprotocol=${other}\n`));
    assert.equal(c.status, "fail");
    assert.match(c.detail, new RegExp(`protocol ${other}; this extension speaks protocol`));
    assert.match(c.fix!, /reinstall the broker: \/sudo-prompt install-broker/);
    assert.match(c.fix!, /sudo sh \/.*\/broker\/install\.sh/);
  });

  it("broker: not installed is info; broken or incomplete installs fail", async () => {
    const missing = await runCheck("broker", await broker(undefined, false));
    assert.equal(missing.status, "info");
    assert.match(missing.detail, /not installed \(only needed for pi-secret-run\)/);
    assert.match(missing.fix!, /install-broker/);
    const noProtocol = await runCheck("broker", await broker("version=0.1.0\n"));
    assert.equal(noProtocol.status, "fail");
    assert.match(noProtocol.detail, /no protocol= line/);
    const noLauncher = await runCheck(
      "broker",
      await broker(`version=0.1.0\nprotocol=${PROTOCOL_VERSION}\n`, false),
    );
    assert.equal(noLauncher.status, "fail");
    assert.match(noLauncher.detail, /incomplete install/);
  });

  it("broker: a matching install is ok only when root-owned", async () => {
    const c = await runCheck(
      "broker",
      await broker(`version=0.1.0\nprotocol=${PROTOCOL_VERSION}\n`),
    );
    assert.match(c.detail, new RegExp(`protocol ${PROTOCOL_VERSION}`));
    if (isRoot) assert.equal(c.status, "ok", c.detail);
    else {
      assert.equal(c.status, "fail");
      assert.match(c.detail, /not a root-owned install, and whoever can change it can run/);
      assert.match(c.fix!, /chmod go-w DIR/);
    }
  });

  it("allowlist: missing is info; a root-owned file in root-owned directories is ok", async () => {
    const missing = await runCheck("allowlist", { allowlistPath: join(tmp, "no-such-allowlist") });
    assert.equal(missing.status, "info");
    assert.match(missing.detail, /absent/);
    // /etc/shells is root-owned 0644 in root's /etc, and its lines (absolute program paths,
    // comments) happen to be valid allowlist entries: the safe case without needing root.
    const shells = await runCheck("allowlist", { allowlistPath: "/etc/shells" });
    assert.equal(shells.status, "ok", shells.detail);
    assert.match(shells.detail, /root-owned, not writable by others, \d+ entr(y|ies)$/);
    // /etc/passwd is just as safe, but its lines are not entries: one bad line voids the file.
    const passwd = await runCheck("allowlist", { allowlistPath: "/etc/passwd" });
    assert.equal(passwd.status, "warn");
    assert.match(passwd.detail, /line 1 is malformed .*counts as empty/);
  });

  it("allowlist: group-writable counts as empty", async () => {
    const dir = await freshDir(0o755);
    const file = await agentFile(join(dir, "allowlist"), "/usr/bin/true\n", 0o664);
    if (isRoot) await chown(file, 0, 0); // root-owned, so only the mode is wrong
    const c = await runCheck("allowlist", { allowlistPath: file });
    assert.equal(c.status, "warn");
    assert.match(c.detail, /counts as empty/);
    // Non-root cannot make a root-owned file: its own file fails on the owner first.
    assert.match(c.detail, isRoot ? /writable by group or others \(mode 0664\)/ : /not root/);
  });

  it("allowlist: a symlink counts as empty, even to a root-owned file", async () => {
    const dir = await freshDir(0o755);
    const link = join(dir, "allowlist");
    await symlink("/etc/passwd", link);
    const c = await runCheck("allowlist", { allowlistPath: link });
    assert.equal(c.status, "warn");
    assert.match(c.detail, /is a symlink \(never followed\); the allowlist counts as empty/);
    assert.match(c.fix!, /replace the symlink/);
  });

  it("allowlist: owned by a non-root user counts as empty", async () => {
    const dir = await freshDir(0o755);
    const file = await agentFile(join(dir, "allowlist"), "/usr/bin/true\n");
    const c = await runCheck("allowlist", { allowlistPath: file, uid: agentUid });
    assert.equal(c.status, "warn");
    assert.match(c.detail, new RegExp(`owned by uid ${agentUid} \\(you\\), not root`));
    assert.match(c.fix!, /chown root:root/);
  });

  it("allowlist: a root-owned file under a world-writable directory counts as empty", async () => {
    const dir = await freshDir(0o777);
    const file = await agentFile(join(dir, "allowlist"), "/usr/bin/true\n");
    if (isRoot) await chown(file, 0, 0);
    const c = await runCheck("allowlist", { allowlistPath: file });
    assert.equal(c.status, "warn");
    // As non-root the file's owner is reported first.
    assert.match(c.detail, isRoot ? new RegExp(`its directory ${dir} `) : /not root/);
  });

  it("hardened: running as root is info", async () => {
    const c = await runCheck("hardened", { uid: 0 });
    assert.equal(c.status, "info");
  });

  it("hardened: lists what the agent could modify, with the root-owned install as fix", async () => {
    const pkg = await freshDir(0o755);
    await mkdir(join(pkg, "extension"));
    await agentFile(join(pkg, "extension", "index.ts"), "export default () => {};\n");
    await agentFile(join(pkg, "package.json"), "{}\n");
    const helper = await agentFile(join(pkg, "helper.ts"), "\n");
    const deno = await agentFile(join(pkg, "deno"), "\n", 0o755);
    if (isRoot) {
      await chown(pkg, NOBODY, NOBODY);
      await chown(join(pkg, "extension"), NOBODY, NOBODY);
    }
    const options = {
      uid: agentUid,
      packageRoot: pkg,
      helperPath: helper,
      denoPath: deno,
      koffiDir: "/etc/passwd",
      rootHelperPath: join(tmp, "no-root-helper.ts"),
      rootDenoPath: join(tmp, "no-root-deno"),
    };
    const c = await runCheck("hardened", options);
    assert.equal(c.status, "warn");
    assert.match(c.detail, /^not hardened: the agent could modify the extension \(/);
    assert.ok(c.detail.endsWith(NOT_COVERED), "what hardened mode does not cover is said");
    assert.match(c.detail, /\(you\), not root/);
    assert.match(c.detail, /the askpass helper \(/);
    assert.match(c.detail, /the deno binary \(/);
    assert.match(c.detail, /the helper's Deno cache \(a per-session deno-cache/);
    // Not an npm install: the fix packs this copy (pi_sources_test.ts covers each kind).
    assert.match(c.fix!, /npm pack \S+ && sudo npm install -g \.\/pi-sudo-prompt-[0-9.]+\.tgz/);
    assert.match(c.fix!, /pi install "\$\(sudo npm root -g\)\/pi-sudo-prompt"/);
    assert.match(c.fix!, /install-broker/);
    assert.doesNotMatch(c.detail, /root-owned helper copy exists/);

    // With the broker's root-owned copy installed but not in use, the doctor says so.
    const withCopy = await runCheck("hardened", {
      ...options,
      rootHelperPath: "/etc/passwd",
      rootDenoPath: await realpath("/bin/sh"),
    });
    assert.equal(withCopy.status, "warn");
    assert.match(
      withCopy.detail,
      /^not hardened \(a root-owned helper copy exists \(\/etc\/passwd\) but is not the one in use\)/,
    );
    assert.match(withCopy.fix!, /turn on hardened mode/);
  });

  it("hardened: root-owned helper, deno, extension and cache are ok", async () => {
    const c = await runCheck("hardened", {
      uid: isRoot ? NOBODY : uid,
      // A root-owned directory with none of the package's entries (/ has a /bin symlink).
      packageRoot: "/etc",
      helperPath: "/etc/passwd",
      denoPath: await realpath("/bin/sh"),
      koffiDir: "/etc/passwd",
      denoCacheDir: "/etc",
    });
    assert.equal(c.status, "ok", c.detail);
    assert.match(c.detail, /^hardened:/);
  });
});

describe("doctor: never throws, always ends", () => {
  it("an exception inside a check becomes a fail with a one-line detail", async () => {
    const c = await runCheck("sudo", {
      runCommand: () => {
        throw new Error("boom\nsecond line");
      },
    });
    assert.equal(c.status, "fail");
    assert.equal(c.detail, "unexpected error: boom second line");
  });

  it("a check that never finishes is cut off by the check deadline", async () => {
    const started = Date.now();
    const c = await runCheck("sudo", {
      runCommand: () => new Promise(() => {}),
      checkTimeoutMs: 200,
    });
    assert.ok(Date.now() - started < 3_000);
    assert.equal(c.status, "fail");
    assert.match(c.detail, /did not finish within 200 ms/);
  });

  it("deno task doctor without FFI prints ✗ for the FFI check and exits 1", async () => {
    const noKoffi = join(REPO, "tests/helpers/no_koffi.cjs");
    const r = await runCli([], ["--require", noKoffi]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^✗ FFI peer creds +koffi FFI does not load here/m);
    assert.match(r.stdout, /^\d+ checks: .* [1-9]\d* failed/m);
  });
});

describe("shared spawnWithDeadline (the doctor's command runner)", () => {
  it("captures both streams, exit code and signal; never rejects on a missing program", async () => {
    const r = await spawnWithDeadline("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], {
      deadlineMs: 5_000,
    });
    assert.deepEqual(
      { code: r.code, signal: r.signal, stdout: r.stdout, stderr: r.stderr, to: r.timedOut },
      { code: 3, signal: null, stdout: "out\n", stderr: "err\n", to: false },
    );
    const missing = await spawnWithDeadline(join(tmp, "no-such-program"), [], {
      deadlineMs: 5_000,
    });
    assert.equal(missing.code, null);
    assert.equal(missing.spawnError, "ENOENT");
  });

  it("keeps at most the cap of each stream; mergeStderr keeps arrival order", async () => {
    const flood = await spawnWithDeadline(
      "/bin/sh",
      ["-c", `head -c ${DEFAULT_OUTPUT_CAP * 4} /dev/zero | tr '\\0' x`],
      { deadlineMs: 10_000 },
    );
    assert.equal(flood.code, 0);
    assert.equal(flood.stdout.length, DEFAULT_OUTPUT_CAP);
    assert.equal(flood.truncated, true, "a cut output must say so: a parser must not read it");
    const small = await spawnWithDeadline("/bin/sh", ["-c", "echo 0123456789"], {
      deadlineMs: 5_000,
      outputCap: 4,
    });
    assert.equal(small.stdout, "0123");
    assert.equal(small.truncated, true);
    const whole = await spawnWithDeadline("/bin/sh", ["-c", "printf 0123"], {
      deadlineMs: 5_000,
      outputCap: 4,
    });
    assert.deepEqual([whole.stdout, whole.truncated], ["0123", false]);
    const merged = await spawnWithDeadline(
      "/bin/sh",
      ["-c", "echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three"],
      { deadlineMs: 5_000, mergeStderr: true },
    );
    assert.equal(merged.stdout, "one\ntwo\nthree\n");
    assert.equal(merged.stderr, "");
  });

  it("env and cwd are the child's; the deadline kills a detached group, grandchildren too", async () => {
    const dir = await freshDir(0o755);
    const r = await spawnWithDeadline("/bin/sh", ["-c", 'echo "$ONLY $(pwd)"'], {
      deadlineMs: 5_000,
      env: { ONLY: "set", PATH: "/usr/bin:/bin" },
      cwd: dir,
    });
    assert.equal(r.stdout, `set ${dir}\n`);
    const pidFile = join(dir, "grandchild");
    const started = Date.now();
    const hung = await spawnWithDeadline(
      "/bin/sh",
      ["-c", `sleep 60 & echo $! > ${pidFile}; wait`],
      { deadlineMs: 300, detached: true },
    );
    assert.ok(Date.now() - started < 5_000, "returned promptly");
    assert.equal(hung.timedOut, true);
    // An abort (the owner shuts down) kills it the same way, long before the deadline.
    const abort = new AbortController();
    const aborted = spawnWithDeadline("/bin/sleep", ["60"], {
      deadlineMs: 60_000,
      signal: abort.signal,
    });
    setTimeout(() => abort.abort(), 100);
    const ended = await aborted;
    assert.deepEqual([ended.signal, ended.timedOut], ["SIGKILL", false]);
    assert.ok(Date.now() - started < 10_000, "the abort did not kill it");
    assert.equal(hung.code, null);
    const grandchild = Number((await readFile(pidFile, "utf8")).trim());
    // Killed: gone, or a zombie until whoever inherited it reaps it.
    const stat = await readFile(`/proc/${grandchild}/stat`, "utf8").catch(() => "");
    assert.ok(stat === "" || / Z /.test(stat.slice(stat.lastIndexOf(")"))), stat);
  });
});

describe("doctor: the system-log copy of the audit log", () => {
  it("ok with a datagram socket there; a warning naming the reason without one", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pi-doctor-syslog-"));
    const path = join(dir, "log");
    // A syslog daemon stand-in: an AF_UNIX datagram socket bound at `path`.
    const daemon = spawn("python3", [
      "-c",
      "import socket,sys\ns=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM)\ns.bind(sys.argv[1])\n" +
      "print('ready',flush=True)\nsys.stdin.read()",
      path,
    ], { stdio: ["pipe", "pipe", "inherit"] });
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error("python3 receiver not ready in 10 s")),
          10_000,
        );
        daemon.stdout!.once("data", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      const ok = await runCheck("syslog", { syslogPath: path });
      assert.equal(ok.status, "ok", ok.detail);
      assert.match(ok.detail, /journalctl -t pi-sudo-prompt/);

      const missing = await runCheck("syslog", { syslogPath: join(dir, "none") });
      assert.equal(missing.status, "warn");
      assert.match(missing.detail, /there is none \(syslog_socket_missing\)/);
      assert.match(missing.fix!, /systemd-journald or rsyslog/);

      await writeFile(join(dir, "file"), "");
      const file = await runCheck("syslog", { syslogPath: join(dir, "file") });
      assert.match(file.detail, /not a socket \(syslog_not_a_socket\)/);
    } finally {
      daemon.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });
});
