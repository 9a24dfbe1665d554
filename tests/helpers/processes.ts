/**
 * Small `/proc` queries for tests: find processes by their command line, and
 * wait for a condition with a deadline (never an unbounded loop).
 *
 * @module
 */
import { readdir, readFile } from "node:fs/promises";

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
