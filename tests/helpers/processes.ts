/**
 * Small `/proc` queries for tests: find processes by their command line, and
 * wait for a condition with a deadline (never an unbounded loop).
 *
 * @module
 */
import { readdir, readFile } from "node:fs/promises";
import { parseStat } from "../../kernel/proc.ts";

/** Pids of processes whose NUL-joined cmdline contains `needle`. */
export async function pidsWithCmdline(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8");
      if (cmdline.includes(needle)) pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Polls `check` every 20 ms until it returns a value other than undefined, or throws at the deadline. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  deadlineMs = 10_000,
): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The process a refusal's notice names in `screen` ("process N (…)"), and
 * its ancestors: pid, state, start time and argv of each, for a failure's
 * message (what held the terminal). Empty when no process is named.
 */
export async function namedChain(screen: string): Promise<string> {
  const named = /process (\d+) \(/.exec(screen)?.[1];
  if (!named) return "";
  const lines: string[] = [];
  for (let p = Number(named), i = 0; p > 1 && i < 8; i++) {
    const stat = parseStat(await readFile(`/proc/${p}/stat`, "utf8").catch(() => ""));
    const argv = await readFile(`/proc/${p}/cmdline`, "utf8").catch(() => "");
    lines.push(
      `${p} ${stat?.state ?? "gone"} start=${stat?.startTime ?? "?"} ` +
        argv.replaceAll("\0", " ").slice(0, 300),
    );
    if (!stat) break;
    p = stat.ppid;
  }
  return `\nthe named process and its ancestors (pid state start argv):\n${lines.join("\n")}`;
}
