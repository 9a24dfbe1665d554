/**
 * What the root-phase suites (`tests/root/`) share: running a program with a
 * deadline and a root-owned PATH, and running one as the throwaway user with
 * the groups the test chooses.
 *
 * @module
 */
import { execFile } from "node:child_process";
import process from "node:process";

/** The checkout under test. */
export const REPO: string = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
/** The throwaway user tests/run.sh created. */
export const USER: string = process.env.PI_SUDO_PROMPT_TEST_USER ?? "";

/** Runs `file` with a deadline (120 s unless given) and PATH set to root's directories; output merged. */
export function run(
  file: string,
  args: string[],
  env: Record<string, string> = {},
  deadlineMs = 120_000,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, {
      timeout: deadlineMs,
      maxBuffer: 16 * 1024 * 1024,
      env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", ...env },
    }, (err, stdout, stderr) => {
      resolve({
        code: err ? (typeof err.code === "number" ? err.code : 1) : 0,
        out: stdout + stderr,
      });
    });
  });
}

/**
 * Runs `argv` as the throwaway user through setpriv (no fork: the caller's
 * groups are chosen): none, the user's own, or exactly the ids given.
 */
export async function asUser(
  groups: "clear" | "init" | readonly number[],
  argv: string[],
  env: Record<string, string> = {},
  deadlineMs?: number,
): Promise<{ code: number; out: string }> {
  const uid = (await run("/usr/bin/id", ["-u", USER])).out.trim();
  const gid = (await run("/usr/bin/id", ["-g", USER])).out.trim();
  const set = groups === "clear"
    ? "--clear-groups"
    : groups === "init"
    ? "--init-groups"
    : `--groups=${groups.join(",")}`;
  return await run(
    "/usr/bin/setpriv",
    [
      `--reuid=${uid}`,
      `--regid=${gid}`,
      set,
      "--reset-env",
      "--",
      ...Object.entries(env).length
        ? ["/usr/bin/env", ...Object.entries(env).map(([k, v]) => `${k}=${v}`)]
        : [],
      ...argv,
    ],
    {},
    deadlineMs,
  );
}
