/**
 * `deno task compile` (broker/compile.sh) when it cannot build: "skipped"
 * with the one real cause in plain text, exit 2, no colour codes, no empty
 * output directory left behind. And which compiled binary a session would
 * use (extension/channel/pi_secret_run_binary.ts). The causes are produced without
 * the network: a runtime path that does not exist, one that is not denort,
 * and a download through a proxy that refuses the connection.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  chmod,
  mkdir,
  mkdtemp,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  COMPILED_BINARY_REFUSALS,
  COMPILED_PI_SECRET_RUN,
  compiledPiSecretRun,
  PI_SECRET_RUN_SOURCES,
} from "../../../extension/channel/pi_secret_run_binary.ts";
import { piSecretRunArgv } from "../../../broker/broker_permissions.ts";

const ROOT = new URL("../../../", import.meta.url).pathname.replace(/\/$/, "");
const DENO = `${ROOT}/node_modules/deno/deno`;
/** broker/compile.sh's exit status when it built nothing. */
const SKIPPED = 2;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, env, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

async function withTmp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "pi-compile-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** compile.sh into `dir/out` with `env` added to a minimal environment. */
async function compile(dir: string, env: Record<string, string>): Promise<Ran> {
  return await run("sh", ["broker/compile.sh", join(dir, "out")], {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    // An empty cache: a denort downloaded earlier must not make it succeed.
    DENO_DIR: join(dir, "deno-cache"),
    ...env,
  });
}

/** The checks every skipped build must pass; returns the cause. */
async function assertSkipped(dir: string, r: Ran): Promise<string> {
  assert.equal(r.code, SKIPPED, r.stderr);
  assert.equal(r.stdout, "");
  // deno-lint-ignore no-control-regex -- looking for colour codes is the point
  assert.doesNotMatch(r.stderr, /\u001b/);
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 2, r.stderr);
  assert.match(lines[1], /^compile: pi-secret-run still works without it: .* DENORT_BIN=/);
  await assert.rejects(stat(join(dir, "out")), "the output directory is removed");
  const m = /^compile: skipped: (.+)$/.exec(lines[0]);
  assert.ok(m, lines[0]);
  return m[1];
}

describe("deno task compile", () => {
  it("a runtime path that does not exist: that path and the OS error", async () => {
    await withTmp(async (dir) => {
      const r = await compile(dir, { DENORT_BIN: join(dir, "no-denort") });
      assert.equal(
        await assertSkipped(dir, r),
        `Could not find denort at '${
          join(dir, "no-denort")
        }': No such file or directory (os error 2)`,
      );
    });
  });

  it("a runtime that is not denort: the binary fails its smoke test, nothing is kept", async () => {
    await withTmp(async (dir) => {
      const r = await compile(dir, { DENORT_BIN: "/bin/true" });
      assert.equal(
        await assertSkipped(dir, r),
        "the built binary is not a working pi-secret-run (exit 0, no message; expected 125 and " +
          "its usage line): DENORT_BIN must name Deno's runtime, denort, not deno",
      );
    });
  });

  it("no download possible: the runtime's URL and the innermost error", async () => {
    await withTmp(async (dir) => {
      // Port 1 on localhost: nothing listens, the proxy connection is refused.
      const proxy = "http://127.0.0.1:1";
      const r = await compile(dir, { HTTPS_PROXY: proxy, https_proxy: proxy });
      assert.match(
        await assertSkipped(dir, r),
        /^could not download Deno's runtime \(denort\) from https:\/\/\S+\/denort-\S+\.zip: \S.*$/,
      );
    });
  });

  it("bakes in the permissions of the deno run launcher, no more", async () => {
    const script = await readFile(`${ROOT}/broker/compile.sh`, "utf8");
    const baked = script.match(/--allow-[a-z]+(=\S+)?/g) ?? [];
    const launcher = piSecretRunArgv("/deno", "/entry.ts").filter((a) => a.startsWith("--allow-"));
    assert.deepEqual([...new Set(baked)].sort(), [...launcher].sort());
  });

  it("a usage error exits 1", async () => {
    const r = await run("sh", ["broker/compile.sh", "a", "b"], { PATH: "/usr/bin:/bin" });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, "usage: sh broker/compile.sh [output dir]\n");
  });
});

describe("the compiled pi-secret-run a session uses", () => {
  /** A fake package root with the sources, their mtime 1000 s ago. */
  async function fakePackage(dir: string): Promise<string> {
    const old = new Date(Date.now() - 1_000_000);
    for (const source of PI_SECRET_RUN_SOURCES) {
      await mkdir(join(dir, source, ".."), { recursive: true });
      await writeFile(join(dir, source), "// source\n");
      await utimes(join(dir, source), old, old);
    }
    await mkdir(join(dir, "dist"));
    return dir;
  }

  it("uses a regular executable file not older than its sources", async () => {
    await withTmp(async (dir) => {
      const root = await fakePackage(dir);
      const bin = join(root, COMPILED_PI_SECRET_RUN);
      await writeFile(bin, "#!/bin/sh\n", { mode: 0o755 });
      assert.deepEqual(await compiledPiSecretRun(root), { ok: true, path: bin });
    });
  });

  it("refuses a missing, non-regular, non-executable or stale binary", async () => {
    await withTmp(async (dir) => {
      const root = await fakePackage(dir);
      const bin = join(root, COMPILED_PI_SECRET_RUN);
      const refused = async () => {
        const r = await compiledPiSecretRun(root);
        return r.ok ? "ok" : r.reason;
      };
      assert.equal(await refused(), COMPILED_BINARY_REFUSALS.ABSENT);
      await symlink("/bin/true", bin);
      assert.equal(await refused(), COMPILED_BINARY_REFUSALS.NOT_REGULAR_FILE);
      await rm(bin);
      await mkdir(bin);
      assert.equal(await refused(), COMPILED_BINARY_REFUSALS.NOT_REGULAR_FILE);
      await rm(bin, { recursive: true });
      await writeFile(bin, "#!/bin/sh\n", { mode: 0o644 });
      assert.equal(await refused(), COMPILED_BINARY_REFUSALS.NOT_EXECUTABLE);
      await chmod(bin, 0o755);
      assert.equal(await refused(), "ok");
      const later = new Date(Date.now() + 60_000);
      await utimes(join(root, "broker/paths.ts"), later, later);
      assert.equal(await refused(), COMPILED_BINARY_REFUSALS.STALE);
    });
  });

  it("its list of sources is the client's module graph", async () => {
    const r = await run(
      DENO,
      ["info", "--json", "--no-config", "--no-lock", "broker/pi_secret_run.ts"],
      { PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1", HOME: process.env.HOME ?? "/" },
    );
    assert.equal(r.code, 0, r.stderr);
    const graph: { modules: { specifier: string }[] } = JSON.parse(r.stdout);
    const local = graph.modules.map((m) => m.specifier)
      .filter((s) => s.startsWith("file://"))
      .map((s) => new URL(s).pathname.slice(ROOT.length + 1))
      .sort();
    assert.deepEqual(local, [...PI_SECRET_RUN_SOURCES].sort());
  });
});
