/**
 * Every step of the suite that reaches the npm registry carries the
 * machine's npm settings (registry, proxy, CA file): a fresh user, or a step
 * with its own `--prefix`, reads none of them by itself, and on a machine
 * whose registry needs a CA file the step then fails. In the newcomer walk
 * (`tests/newcomer/run.sh`) the one way is `registry_env` (as root) or
 * `as_newcomer` (as the fresh user), which pass the same words on; `.ci/run`
 * runs npm as root with the machine's own configuration. Runs under Node and
 * Deno.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const WALK = "tests/newcomer/run.sh";

/** npm or npx run against the registry (outside quotes: quoted text is a message). */
const NPM_STEP = /(^|[\s;&|(])npm\s+(install|i|ci|update|exec|view)\b|(^|[\s;&|(])npx\s/;
/** The README's commands, run from their variables (they install packages). */
const README_STEP = /"\$get_pi" \| \(|sh -c "\$setup_install"/;

/** True when a shell line runs a registry step. */
function reachesRegistry(line: string): boolean {
  const code = line.replace(/#.*$/, "");
  return README_STEP.test(code) || NPM_STEP.test(code.replace(/"[^"]*"|'[^']*'/g, '""'));
}

/**
 * Lines of `text` (a shell script) that reach the registry without going
 * through `registry_env` or `as_newcomer` on the same logical line (a line
 * and the lines it continues with a trailing backslash).
 */
export function bypasses(text: string): string[] {
  const lines = text.split("\n");
  const found: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*#/.test(line) || !reachesRegistry(line)) continue;
    let logical = line;
    for (let j = i - 1; j >= 0 && /\\$/.test(lines[j]); j--) logical = lines[j] + logical;
    for (let j = i; j + 1 < lines.length && /\\$/.test(lines[j]); j++) logical += lines[j + 1];
    if (!/\b(registry_env|as_newcomer)\b/.test(logical)) found.push(`${i + 1}: ${line.trim()}`);
  }
  return found;
}

/** Shell scripts under `dir` (recursive), relative to the repository. */
function scripts(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(REPO_ROOT, dir))) {
    const rel = join(dir, name);
    if (name === "node_modules") continue;
    if (statSync(join(REPO_ROOT, rel)).isDirectory()) out.push(...scripts(rel));
    else if (name.endsWith(".sh")) out.push(rel);
  }
  return out;
}

describe("every step that reaches the npm registry carries the machine's npm settings", () => {
  it("the newcomer walk runs every registry step through registry_env or as_newcomer", () => {
    const text = readFileSync(join(REPO_ROOT, WALK), "utf8");
    assert.deepEqual(bypasses(text), []);
    assert.match(text, /for key in registry cafile proxy https-proxy/, "the settings it passes");
  });

  it("no other script of the suite reaches the registry (CI's npm ci runs as root with the machine's config)", () => {
    const others = [...scripts("tests"), ...scripts("broker"), ...scripts("bin")]
      .filter((f) => f !== WALK);
    for (const file of others) {
      const text = readFileSync(join(REPO_ROOT, file), "utf8");
      assert.deepEqual(
        text.split("\n").filter((l) => !/^\s*#/.test(l) && reachesRegistry(l)),
        [],
        file,
      );
    }
  });

  it("the check finds a planted bypass", () => {
    assert.deepEqual(bypasses('x\nnpm install -g foo\nas_newcomer "$h" npm ci\n'), [
      "2: npm install -g foo",
    ]);
    assert.deepEqual(
      bypasses("runuser -u u -- env -i \\\n  npm_config_x=1 \\\n  npm install x\n"),
      ["3: npm install x"],
    );
    assert.deepEqual(bypasses('fail "npm install of the tarball"\n'), []);
    assert.deepEqual(bypasses(`printf '%s\\n' "$get_pi" | (sh -eu)\n`), [
      `1: printf '%s\\n' "$get_pi" | (sh -eu)`,
    ]);
  });
});
