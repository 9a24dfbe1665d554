/**
 * The session's files on disk: a private directory, the XDG fallback, stale
 * directories of dead pi processes removed at start, and nothing left after
 * close, even with a request pending.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { lstat, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { NODE_BINARY } from "../../helpers/test_env.ts";
import { SESSION_START_ERRORS, startSession } from "../../../extension/channel/session_server.ts";
import {
  chooseRuntimeBase,
  createSessionDir,
  removeStaleSessionDirs,
  SESSION_DIR_PREFIX,
} from "../../../extension/channel/session_dir.ts";
import { ScriptedPrompter } from "../../helpers/scripted_prompter.ts";
import { runToolCommand } from "../../helpers/tool_command.ts";
import { waitFor } from "../../helpers/processes.ts";

async function scratch(): Promise<string> {
  return await mkdtemp(join(tmpdir(), "pi-sudo-lifecycle-"));
}

describe("session directory and lifecycle", () => {
  it("creates a private 0700 directory with launcher, wrapper and socket; close removes it", async () => {
    const base = await scratch();
    try {
      const started = await startSession({ prompter: new ScriptedPrompter([]) }, {
        runtimeBase: base,
      });
      assert.ok(started.ok);
      const s = started.session;
      const dir = await lstat(s.dir);
      assert.ok(dir.isDirectory());
      assert.equal(dir.mode & 0o777, 0o700);
      assert.equal(dir.uid, process.getuid!());
      assert.ok(s.dir.startsWith(join(base, SESSION_DIR_PREFIX)));
      assert.ok((await stat(s.socketPath)).isSocket());
      assert.equal((await stat(s.launcherPath)).mode & 0o777, 0o700);
      const launcher = await readFile(s.launcherPath, "utf8");
      assert.match(launcher, /^#!\/bin\/sh\n/);
      assert.match(launcher, /'-i'|-i \\/);
      assert.doesNotMatch(launcher, /--allow-all|--allow-read=\/proc|--allow-run|--allow-ffi/);
      assert.match(await readFile(join(s.binDir, "sudo"), "utf8"), /-A "\$@"/);
      const env = s.toolEnvironment({ PATH: "/usr/bin:/bin", KEEP: "1" });
      assert.equal(env.SUDO_ASKPASS, s.launcherPath);
      assert.equal(env.PATH, `${s.binDir}:/usr/bin:/bin`);
      assert.equal(env.KEEP, "1");
      assert.equal(env.PI_ASKPASS_SOCKET, s.socketPath);
      assert.equal(env.PI_ASKPASS_SECRET, undefined, "no key: nothing is signed");
      await s.close();
      await assert.rejects(lstat(s.dir));
      await s.close(); // idempotent
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it("uses XDG_RUNTIME_DIR only when it is ours and private, else /tmp", async () => {
    const base = await scratch();
    try {
      assert.equal(await chooseRuntimeBase({ XDG_RUNTIME_DIR: base }), base);
      assert.equal(await chooseRuntimeBase({}), "/tmp");
      assert.equal(await chooseRuntimeBase({ XDG_RUNTIME_DIR: "relative" }), "/tmp");
      assert.equal(await chooseRuntimeBase({ XDG_RUNTIME_DIR: "/nonexistent-xdg" }), "/tmp");
      const link = join(await scratch(), "link");
      await symlink(base, link);
      assert.equal(await chooseRuntimeBase({ XDG_RUNTIME_DIR: link }), "/tmp", "no symlinks");
      await rm(join(link, ".."), { recursive: true, force: true });
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it("removes the directories of dead pi processes, and only those", async () => {
    const base = await scratch();
    try {
      const dead = await createSessionDir(base);
      const alive = await createSessionDir(base);
      assert.ok(dead.ok && alive.ok);
      // A process that has exited owns `dead`; `alive` stays ours (this process).
      const child = spawn("/bin/true");
      await new Promise((r) => child.on("close", r));
      await writeFile(join(dead.dir, "owner"), `${child.pid} 1\n`);
      const foreign = join(base, `${SESSION_DIR_PREFIX}notours`);
      await writeFile(foreign, "a file, not a session dir");
      const removed = await removeStaleSessionDirs(base);
      assert.deepEqual(removed, [dead.dir]);
      assert.deepEqual(
        (await readdir(base)).sort(),
        [alive.dir, foreign].map((p) => p.slice(base.length + 1)).sort(),
      );
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  // tests/run.sh mounts two tiny tmpfs for the test user: one full, one with
  // a single free page (room for the owner file, not for the launcher).
  for (
    const [variable, what, reason] of [
      ["PI_SUDO_PROMPT_TEST_FULL_FS", "a full disk", SESSION_START_ERRORS.SESSION_DIR],
      [
        "PI_SUDO_PROMPT_TEST_ONE_PAGE_FS",
        "a disk with one free page",
        SESSION_START_ERRORS.SESSION_FILES,
      ],
    ] as const
  ) {
    const base = process.env[variable];
    it(`on ${what}: a typed failure (${reason}) and nothing left behind`, {
      skip: base ? false : `${variable} is not set (tests/run.sh mounts it as root)`,
    }, async () => {
      const before = (await readdir(base!)).sort();
      const started = await startSession({ prompter: new ScriptedPrompter([]) }, {
        runtimeBase: base,
      });
      assert.deepEqual(started, { ok: false, reason });
      assert.deepEqual((await readdir(base!)).sort(), before);
    });
  }

  it("close() with a request pending denies it and leaves nothing behind", async () => {
    const base = await scratch();
    try {
      const prompter = new ScriptedPrompter([{ hang: true }]);
      const started = await startSession({ prompter }, { runtimeBase: base });
      assert.ok(started.ok);
      const s = started.session;
      const run = runToolCommand(s, "sudo -k id -u");
      await waitFor("the prompt", () => prompter.seen.length === 1 ? true : undefined);
      await s.close();
      assert.equal(prompter.seen[0].aborted, true);
      const r = await run;
      assert.match(r.stderr, /no password was provided/);
      assert.deepEqual(await readdir(base), []);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});

describe("fail closed", () => {
  it("without FFI (no kernel peer credentials) every request is refused before any prompt", async () => {
    const node = NODE_BINARY;
    const child = spawn(node, [
      "--require",
      new URL("../../helpers/no_koffi.cjs", import.meta.url).pathname,
      new URL("../../helpers/no_ffi_session.ts", import.meta.url).pathname,
    ], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => out += d);
    const code = await new Promise((r) => child.on("close", r));
    assert.equal(code, 0);
    const result = JSON.parse(out.trim().split("\n").at(-1)!);
    assert.equal(result.prompts, 0);
    assert.deepEqual(result.refusals, ["ffi_unavailable"]);
    assert.match(result.stderr, /no password was provided/);
    assert.equal(result.stdout, "");
  });
});
