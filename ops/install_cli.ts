/**
 * `pi-sudo-prompt install`: makes this copy usable by pi and says what it did; idempotent (run it
 * again after `git pull` or `npm ci`). Checks deno, koffi's peer credentials (without them every
 * request is refused) and sudo, then registers this copy with pi, else prints how to.
 *
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import { firstExecutable, resolveDenoBinary } from "../shared/executables.ts";
import { peerCredentialsAvailable } from "../kernel/peer_credentials.ts";
import { MIN_NODE, nodeVersionProblem } from "../bin/node_version.mjs";
import { spawnWithDeadline } from "../shared/spawn_deadline.ts";
import { msg } from "../shared/i18n/tools_locale.ts";
import { findPi, finish, onPath, packageRoot as repo, problem, say } from "./cli_report.ts";

/** Output kept of each stream of a step (what `execFile`'s default buffer held). */
const OUTPUT_CAP = 1024 * 1024;

/** Runs `cmd args` in the checkout; exit code 1 when it was killed at the deadline or never ran. */
async function run(cmd: string, args: string[], deadlineMs: number) {
  const r = await spawnWithDeadline(cmd, args, { cwd: repo, deadlineMs, outputCap: OUTPUT_CAP });
  return { code: r.code ?? 1, out: `${r.stdout}${r.stderr}`.trim() };
}

/** The line of a step that failed: its command, its exit code and its output's last line. */
function failed(command: string, r: { code: number; out: string }): string {
  return `${msg.cliStepFailed(command, r.code)}: ${r.out.split("\n").at(-1)}`;
}

say(msg.installSettingUp(repo));

const deno = await resolveDenoBinary();
if (deno) {
  const v = await run(deno, ["--version"], 10_000);
  say(msg.installDeno(deno, v.out.split("\n")[0]));
} else {
  problem(msg.installNoDeno);
}

if (peerCredentialsAvailable()) {
  say(msg.installPeerCredentials);
} else {
  problem(msg.installNoFfi);
}

const sudo = await firstExecutable(["/usr/bin/sudo", "/bin/sudo"]);
if (sudo) say(msg.installSudo(sudo));
else problem(msg.installNoSudo);

const { pi, localPi } = await findPi();
const pathNode = await onPath("node");
const pathNodeVersion = pathNode ? (await run(pathNode, ["--version"], 10_000)).out : undefined;
const oldNode = pathNodeVersion && nodeVersionProblem(pathNodeVersion) !== undefined
  ? msg.installOldNode(pathNodeVersion, MIN_NODE.join("."))
  : undefined;

if (pi) {
  if (oldNode) problem(oldNode);
  const r = await run(pi, ["install", repo], 120_000);
  if (r.code === 0) say(`  ✓ pi install ${repo}`);
  else problem(failed(`pi install ${repo}`, r));
} else if (localPi) {
  const nodeModules = join(repo, "node_modules");
  say(msg.installLocalPi(nodeModules, repo));
  if (oldNode) say(msg.installOldNodeLocal(oldNode));
  const r = await run(process.execPath, [localPi, "install", repo], 120_000);
  if (r.code === 0) say(`  ✓ npx pi install ${repo}`);
  else problem(failed(`npx pi install ${repo}`, r));
} else {
  if (oldNode) say(`  - ${oldNode}`);
  say(msg.installNoPi);
  say(`      pi install ${repo}`);
}

const start = pi ? msg.installStartPi : localPi ? msg.installStartNpx(repo) : msg.installGetPi;
finish(msg.installReady(start));
