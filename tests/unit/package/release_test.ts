/**
 * Release readiness: the three version numbers agree, and the npm package
 * holds what the extension needs and nothing it does not (no tests, no
 * oversized media).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { PACKAGE_VERSION } from "../../../askpass/version.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const json = (name: string) => JSON.parse(readFileSync(`${ROOT}${name}`, "utf8"));

interface PackedFile {
  path: string;
  size: number;
}

function npmPackFiles(): Promise<PackedFile[]> {
  return new Promise((resolve, reject) => {
    execFile(
      "npm",
      ["pack", "--dry-run", "--json", "--ignore-scripts"],
      { cwd: ROOT, timeout: 60_000, env: { ...process.env, npm_config_loglevel: "error" } },
      (err, stdout) => {
        if (err) return reject(err);
        resolve(JSON.parse(stdout)[0].files);
      },
    );
  });
}

describe("release", () => {
  it("package.json, deno.json and PACKAGE_VERSION agree", () => {
    assert.equal(json("package.json").version, PACKAGE_VERSION);
    assert.equal(json("deno.json").version, PACKAGE_VERSION);
    assert.match(
      readFileSync(`${ROOT}CHANGELOG.md`, "utf8"),
      new RegExp(`## ${PACKAGE_VERSION.replaceAll(".", "\\.")} `),
    );
  });

  it("npm pack ships the extension, helper, broker and docs, and no tests", async () => {
    const files = await npmPackFiles();
    const paths = files.map((f) => f.path);
    for (
      const needed of [
        "package.json",
        "README.md",
        "LICENSE",
        "CHANGELOG.md",
        "mod.ts",
        "index.ts",
        "extension/index.ts",
        "bin/pi-sudo-prompt",
        "bin/pi-sudo-prompt.mjs",
        "bin/node_version.mjs",
        "ops/uninstall_cli.ts",
        "ops/doctor_cli.ts",
        "ops/doctor/runner.ts",
        "ops/doctor/checks/hardened.ts",
        "shared/spawn_deadline.ts",
        "askpass/helper.ts",
        "askpass/protocol.ts",
        "broker/install.sh",
        "broker/broker.ts",
        "broker/pi_secret_run.ts",
        "broker/pi-secret-broker.sh",
        "broker/allowlist-append.sh",
      ]
    ) assert.ok(paths.includes(needed), `${needed} missing from the package`);
    for (const p of paths) {
      assert.ok(!/^(tests|node_modules|\.ci|dist)\//.test(p), `${p} must not be packed`);
      assert.ok(!/_test\.ts$/.test(p), `${p} is a test`);
    }
    for (const f of files) {
      const limit = /\.(png|jpe?g|gif)$/.test(f.path) ? 300_000 : 100_000;
      assert.ok(f.size <= limit, `${f.path} is ${f.size} bytes (limit ${limit})`);
    }
  });

  it("every task of the shipped deno.json names only files the package ships", async () => {
    const paths = new Set((await npmPackFiles()).map((f) => f.path));
    const tasks: Record<string, string> = json("deno.json").tasks;
    assert.ok(Object.keys(tasks).length > 0);
    for (const [name, command] of Object.entries(tasks)) {
      // Every word with a slash is a path in the package (there are no absolute ones).
      const files = command.split(/\s+/).filter((w) => w.includes("/"));
      assert.ok(files.length > 0, `task ${name}: ${command}`);
      for (const file of files) {
        assert.ok(paths.has(file), `task ${name} runs ${file}, which the package does not ship`);
      }
    }
  });
});
