/**
 * `pi install <checkout>` loads the extension in the newest pi, and the
 * npm package contains every module the extension imports.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { describe, it } from "node:test";
import { nodeBinary, piCliPath, preparePi, REPO_ROOT, waitForPiReady } from "./pi_runner.ts";
import { TmuxSession } from "../helpers/tmux.ts";

function run(file: string, args: string[], env: Record<string, string>, cwd: string) {
  return new Promise<{ code: number; out: string }>((resolve) => {
    execFile(file, args, { env, cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) || 1 : 0, out: stdout + stderr });
    });
  });
}

/** Relative `.ts` imports reachable from `entry`, as repo-relative paths. */
async function localImports(entry: string, seen = new Set<string>()): Promise<Set<string>> {
  const rel = relative(REPO_ROOT, entry);
  if (seen.has(rel)) return seen;
  seen.add(rel);
  const text = await readFile(entry, "utf8");
  for (const m of text.matchAll(/from\s+"(\.{1,2}\/[^"]+\.m?[jt]s)"/g)) {
    await localImports(join(dirname(entry), m[1]), seen);
  }
  return seen;
}

describe("installation", () => {
  it("pi install <checkout> loads the extension and starts the askpass session", async () => {
    const launch = await preparePi({ script: [] });
    const env = { ...launch.env };
    try {
      const installed = await run(
        nodeBinary(),
        [piCliPath(), "install", REPO_ROOT],
        env,
        launch.cwd,
      );
      assert.equal(installed.code, 0, installed.out);
      // Twice is fine (idempotent).
      const again = await run(nodeBinary(), [piCliPath(), "install", REPO_ROOT], env, launch.cwd);
      assert.equal(again.code, 0, again.out);
      const listed = await run(nodeBinary(), [piCliPath(), "list"], env, launch.cwd);
      assert.equal(
        listed.out.split("\n").filter((l) =>
          l.includes("pi-sudo-prompt") || l.endsWith(REPO_ROOT.replace(/\/$/, ""))
        ).length > 0,
        true,
        listed.out,
      );
      const tmux = await TmuxSession.start({
        argv: launch.argv,
        env,
        cwd: launch.cwd,
        cols: 120,
        rows: 40,
        tmuxConf: ["set -g extended-keys on"],
      });
      try {
        const screen = await waitForPiReady(tmux);
        assert.doesNotMatch(screen, /pi-sudo-prompt: disabled/);
        assert.doesNotMatch(screen, /Failed to load extension|conflicts with/);
        await tmux.sendText("!echo askpass=$SUDO_ASKPASS");
        await tmux.sendKeys("Enter");
        await tmux.waitFor(/askpass=\/\S+\/pi-sudo-prompt-\w+\/pi-askpass/, 15_000);
      } finally {
        await tmux.kill();
      }
    } finally {
      await launch.cleanup();
    }
  });

  it("the npm package ships every module the extension and helper import", async () => {
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8"));
    const shipped: string[] = pkg.files;
    const needed = new Set<string>();
    await localImports(join(REPO_ROOT, "index.ts"), needed);
    await localImports(join(REPO_ROOT, "bin/pi-sudo-prompt.mjs"), needed);
    for (const cli of ["doctor", "audit", "install", "uninstall"]) {
      await localImports(join(REPO_ROOT, `ops/${cli}_cli.ts`), needed);
    }
    await localImports(join(REPO_ROOT, "askpass/helper.ts"), needed);
    assert.ok(needed.has("askpass/protocol.ts"));
    for (const file of needed) {
      assert.ok(
        shipped.some((f) => f === file || (f.endsWith("/") && file.startsWith(f))),
        `${file} not in package.json files`,
      );
    }
    // pi names an extension after its entry file's folder: the package root.
    assert.deepEqual(pkg.pi, { extensions: ["./index.ts"] });
    assert.deepEqual(pkg.bin, { "pi-sudo-prompt": "bin/pi-sudo-prompt" });
    assert.equal(pkg.engines.node, ">=22.19.0");
    assert.ok(pkg.keywords.includes("pi-package"));
    // pi 1.6 is the first with the tool-renderer resolver and Markdown transformers it relies on.
    assert.equal(pkg.peerDependencies["@earendil-works/pi-coding-agent"], ">=1.6.0");
    // Optional: npm must not install a second pi into the package (pi aliases its own).
    assert.equal(pkg.peerDependenciesMeta["@earendil-works/pi-coding-agent"].optional, true);
    assert.ok(pkg.dependencies.deno && pkg.dependencies.koffi);
  });
});
