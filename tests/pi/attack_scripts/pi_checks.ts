/**
 * Shared checks for the real-pi security suites (`tests/pi/agent_attacks_test.ts`,
 * `tests/pi/faults_test.ts`): where the canary password must not be, a
 * `/proc` sampler that runs while the password is in flight, and ways to
 * find the real processes of one pi (the pi node process, its session
 * directory, its askpass helper, the sudo above it).
 *
 * @module
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { type PiSession, REPO_ROOT, startPi } from "../pi_runner.ts";
import { mutatedCopy, type Mutation } from "../../helpers/mutated_copy.ts";
import type { FauxStep } from "../faux_provider.ts";
import { pidsWithCmdline, waitFor } from "../../helpers/processes.ts";
import { chooseRuntimeBase, SESSION_DIR_PREFIX } from "../../../extension/channel/session_dir.ts";

/** The extension under test. */
export const EXTENSION: string = join(REPO_ROOT, "extension/index.ts");
/** Directory of the attack scripts (absolute: the agent's shell has no repo-relative cwd). */
export const ATTACK_SCRIPTS: string = join(REPO_ROOT, "tests/pi/attack_scripts");
/** The Node 22 binary, by absolute path (the agent's PATH has no node_modules). */
export const NODE: string = join(REPO_ROOT, "node_modules/.bin/node");
/** The modal's title without the emoji (tmux may render the emoji's width differently). */
export const TITLE = "Sudo Authentication Required";

/** How many times `needle` occurs in `text`. */
export function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/**
 * Texts of the tool results recorded in a session JSONL (in order). Only
 * whole lines count: pi may be writing the last one while a test polls.
 */
export function toolResults(sessions: string): string[] {
  const texts: string[] = [];
  for (const line of sessions.split("\n").slice(0, -1)) {
    if (!line.trim()) continue;
    const entry = JSON.parse(line);
    if (entry.type !== "message" || entry.message?.role !== "toolResult") continue;
    const parts: string[] = [];
    for (const c of entry.message.content ?? []) if (c.type === "text") parts.push(c.text);
    texts.push(parts.join("\n"));
  }
  return texts;
}

/**
 * True for the test harness's own keyboard: a `tmux -S … send-keys -l -- TEXT`
 * client carries the typed text in its argv for the few milliseconds it
 * runs. It is how the test (the human) types, not part of the system under
 * test, and other suites running at the same time type the same canary.
 */
function isHarnessKeyboard(cmdline: string): boolean {
  const argv = cmdline.split("\0");
  return /(^|\/)tmux$/.test(argv[0] ?? "") && argv.includes("send-keys") && argv.includes("-l");
}

/** `/proc/<pid>/{environ,cmdline}` files readable by us that contain `secret`. */
export async function procLeaks(secret: string): Promise<string[]> {
  const found: string[] = [];
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return found;
  }
  for (const pid of names) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "latin1").catch(() => "");
    if (isHarnessKeyboard(cmdline)) continue;
    if (cmdline.includes(secret)) found.push(`/proc/${pid}/cmdline`);
    const environ = await readFile(`/proc/${pid}/environ`, "latin1").catch(() => "");
    if (environ.includes(secret)) found.push(`/proc/${pid}/environ`);
  }
  return found;
}

/** A background sweep of `/proc`, see {@link startProcSampler}. */
export interface ProcSampler {
  /** Stops sweeping; resolves with the number of full sweeps and every hit. */
  stop(): Promise<{ sweeps: number; leaks: string[] }>;
}

/**
 * Sweeps every readable `/proc/<pid>/environ` and `cmdline` for `secret`
 * again and again until stopped: the "during" sample, taken while the
 * password travels from the modal to the helper to sudo.
 */
export function startProcSampler(secret: string): ProcSampler {
  let running = true;
  let sweeps = 0;
  const leaks = new Set<string>();
  const loop = (async () => {
    while (running) {
      for (const hit of await procLeaks(secret)) leaks.add(hit);
      sweeps++;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { sweeps, leaks: [...leaks] };
    },
  };
}

/** Files under `dir` (recursive, bounded) whose bytes contain `secret`. */
async function filesContaining(dir: string, secret: string, depth = 4): Promise<string[]> {
  const hits: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return hits;
  }
  for (const name of names.slice(0, 2000)) {
    const path = join(dir, name);
    const st = await stat(path).catch(() => undefined);
    if (!st) continue;
    if (st.isDirectory() && depth > 0) hits.push(...await filesContaining(path, secret, depth - 1));
    else if (st.isFile() && st.size < 8 * 1024 * 1024) {
      const text = await readFile(path, "latin1").catch(() => "");
      if (text.includes(secret)) hits.push(path);
    }
  }
  return hits;
}

/**
 * Every place the password must not be, checked while pi still runs: the
 * screen with its history, the session JSONL, pi's `pi-bash-*` temp logs,
 * every readable `/proc/<pid>/environ` and `cmdline`, and `extraDirs`
 * (the agent's own scratch files).
 */
export async function assertNoLeak(
  pi: PiSession,
  secret: string,
  options: { extraDirs?: string[]; expectSessionFile?: boolean } = {},
): Promise<void> {
  const { extraDirs = [], expectSessionFile = true } = options;
  const screen = await pi.tmux.capture({ history: true });
  assert.ok(!screen.includes(secret), "password on screen");
  const sessions = await pi.readSessions();
  // pi writes the session file at the first agent prompt, not for `!` alone.
  if (expectSessionFile) assert.ok(sessions.length > 0, "a session file was written");
  assert.ok(!sessions.includes(secret), "password in the session JSONL");
  for (const dir of [tmpdir(), pi.launch.tmpDir]) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (!name.startsWith("pi-bash-")) continue;
      const text = await readFile(join(dir, name), "latin1").catch(() => "");
      assert.ok(!text.includes(secret), `password in ${name}`);
    }
  }
  for (const dir of extraDirs) {
    assert.deepEqual(await filesContaining(dir, secret), [], `password in files under ${dir}`);
  }
  assert.deepEqual(await procLeaks(secret), [], "password in /proc");
}

/** Types `text` into the focused modal and waits for one `•` per character. */
export async function typeMasked(pi: PiSession, text: string): Promise<void> {
  await pi.tmux.sendText(text);
  await pi.tmux.waitFor("•".repeat([...text].length), 10_000);
  assert.ok(!(await pi.tmux.capture()).includes(text), "typed text shown in clear");
}

/** Parent pid from `/proc/<pid>/stat` (comm may hold spaces and `)`). */
export async function parentPid(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (!stat) return undefined;
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/**
 * The pid of the pi node process running in `pi`'s tmux pane: the only child
 * of the pane's wrapper shell (pi renames its process title to `pi`, so its
 * cmdline no longer names the CLI).
 */
export async function piProcessPid(pi: PiSession): Promise<number> {
  return await waitFor("the pi process", async () => {
    const children: number[] = [];
    for (const name of await readdir("/proc")) {
      if (/^\d+$/.test(name) && await parentPid(Number(name)) === pi.tmux.pid) {
        children.push(Number(name));
      }
    }
    return children.length === 1 ? children[0] : undefined;
  }, 5_000);
}

/** Session directories (absolute paths) whose `owner` file names `pid`. */
export async function sessionDirsOf(pid: number): Promise<string[]> {
  const base = await chooseRuntimeBase(process.env);
  const dirs: string[] = [];
  for (const name of await readdir(base).catch(() => [] as string[])) {
    if (!name.startsWith(SESSION_DIR_PREFIX)) continue;
    const owner = await readFile(join(base, name, "owner"), "utf8").catch(() => "");
    if (owner.split(" ")[0] === String(pid)) dirs.push(join(base, name));
  }
  return dirs;
}

/** The one session directory of `pid` (waits until it exists). */
export async function sessionDirOf(pid: number): Promise<string> {
  return await waitFor("the session directory", async () => {
    const dirs = await sessionDirsOf(pid);
    return dirs.length === 1 ? dirs[0] : undefined;
  }, 5_000);
}

/** The askpass helper(s) of a session socket: deno with `--allow-net=unix:<socket>`. */
export function helperPids(socketPath: string): Promise<number[]> {
  return pidsWithCmdline(`--allow-net=unix:${socketPath}`);
}

/** True while `pid` exists and is not a zombie. */
export async function isRunning(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (!stat) return false;
  return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
}

/** Sends `sig` to one process by pid (ignores a process that is already gone). */
export function sendSignal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** Sends SIGKILL to one process by pid (ignores a process that is already gone). */
export function kill9(pid: number): void {
  sendSignal(pid, "SIGKILL");
}

/** The children of `pid`, from the parents in `/proc`. */
export async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await readdir("/proc")) {
    if (/^\d+$/.test(name) && await parentPid(Number(name)) === pid) out.push(Number(name));
  }
  return out;
}

export { waitFor };

/**
 * Submits the slash command typed in pi's editor. pi shows an argument
 * completion menu (`→ allow`) for `/sudo-prompt a…`; Enter in that menu only
 * applies the completion (it submits only from the command-name menu), so the
 * test waits for the menu, applies it, waits until it is gone, then submits.
 */
export async function submitCommand(pi: PiSession, completion: string): Promise<void> {
  const menu = `→ ${completion}`;
  const shown = await pi.tmux.waitFor(menu, 3_000).then(() => true, () => false);
  if (shown) {
    await pi.tmux.sendKeys("Enter");
    await pi.tmux.waitForGone(menu, 3_000);
  }
  await pi.tmux.sendKeys("Enter");
}

/** Runs `run` against a real pi with this extension loaded, and closes pi after. */
export async function withPi(
  script: FauxStep[],
  run: (pi: PiSession) => Promise<void>,
  options: { rows?: number; extension?: string } = {},
): Promise<void> {
  const { extension, ...rest } = options;
  const pi = await startPi({ script, extensions: [extension ?? EXTENSION], ...rest });
  try {
    await run(pi);
  } finally {
    await pi.close();
  }
}

/**
 * A scratch directory shared by the agent and the test (same user), removed
 * after `run`, after `cleanup` (which must not throw).
 */
export async function withScratch(
  prefix: string,
  run: (dir: string) => Promise<void>,
  cleanup?: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  try {
    await run(dir);
  } finally {
    await cleanup?.(dir);
    await rm(dir, { recursive: true, force: true });
  }
}

export type { Mutation } from "../../helpers/mutated_copy.ts";

/** {@link mutatedCopy}'s extension entry: what pi loads from the copy. */
export async function mutatedExtension(
  dir: string,
  mutations: readonly Mutation[],
): Promise<string> {
  return join(await mutatedCopy(dir, mutations), "extension/index.ts");
}
