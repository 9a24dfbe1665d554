/**
 * `deno task install`: makes this checkout usable by pi, and says what it did.
 * Idempotent: run it again after `git pull` or `npm ci`.
 *
 * 1. Finds the pinned deno binary the askpass launcher will exec.
 * 2. Checks that kernel peer credentials (koffi FFI) work here; without them
 *    every password request would be refused.
 * 3. Finds sudo.
 * 4. Registers the checkout with pi (`pi install <path>`) when a `pi` command
 *    is on PATH; otherwise prints the command to run.
 *
 * Per-session files (socket, launcher, `sudo` wrapper) are created by the
 * extension when a pi session starts, not here.
 *
 * Runs under Node 22 (`node_modules/.bin/node`), the runtime pi itself needs.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { realpath } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { firstExecutable, resolveDenoBinary } from "./deno_binary.ts";
import { peerCredentialsAvailable } from "./peer_credentials.ts";

const repo = await realpath(fileURLToPath(new URL("..", import.meta.url)));
let problems = 0;
const say = (line: string) => console.log(line);
const problem = (line: string) => {
  problems++;
  console.log(`  ✗ ${line}`);
};

function run(
  cmd: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, cwd: repo }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}`.trim() });
    });
  });
}

say(`pi-sudo-prompt: setting up ${repo}`);

const deno = await resolveDenoBinary();
if (deno) {
  const v = await run(deno, ["--version"], 10_000);
  say(`  ✓ deno binary: ${deno} (${v.out.split("\n")[0]})`);
} else {
  problem("deno binary not found: run `npm ci` (with allow-scripts=deno in .npmrc)");
}

if (peerCredentialsAvailable()) {
  say("  ✓ kernel peer credentials (SO_PEERCRED via koffi) available");
} else {
  problem("koffi FFI unavailable: every sudo password request would be refused (fail closed)");
}

const sudo = await firstExecutable(["/usr/bin/sudo", "/bin/sudo"]);
if (sudo) say(`  ✓ sudo: ${sudo}`);
else problem("sudo not installed (apt-get install sudo)");

const pathDirs = (process.env.PATH ?? "").split(delimiter).filter((d) => d.startsWith("/"));
const pi = await firstExecutable(pathDirs.map((d) => join(d, "pi")));
if (!pi) {
  say("  - pi not on PATH: after installing pi, run:");
  say(`      pi install ${repo}`);
} else {
  const r = await run(pi, ["install", repo], 120_000);
  if (r.code === 0) say(`  ✓ pi install ${repo}`);
  else problem(`pi install ${repo} failed (exit ${r.code}): ${r.out.split("\n").at(-1)}`);
}

if (problems === 0) say("pi-sudo-prompt: ready. Start `pi` and run a command that uses sudo.");
else say(`pi-sudo-prompt: ${problems} problem(s) above.`);
process.exitCode = problems === 0 ? 0 : 1;
