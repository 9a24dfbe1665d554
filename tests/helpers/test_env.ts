/**
 * What the real-sudo tests need from `tests/run.sh`: the throwaway user's
 * password, read from a 0600 file (never from the environment or argv, where
 * other processes could see it). Missing setup is a failure, never a skip.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import process from "node:process";

/** The throwaway user's sudo password (a canary: it must appear nowhere else). */
export function testPassword(): string {
  const file = process.env.PI_SUDO_PROMPT_TEST_PASSWORD_FILE;
  if (!file) {
    throw new Error(
      "PI_SUDO_PROMPT_TEST_PASSWORD_FILE is not set: run the suite through `npm test` (tests/run.sh) as root",
    );
  }
  const password = readFileSync(file, "utf8");
  if (password.length < 12) throw new Error("test password file is too short");
  return password;
}

/**
 * Set (to why) only by `tests/stall/beside_full_run.sh`, whose user has no
 * broker while a full run beside it installs one for its own: the cases
 * that need the installed broker are then reported skipped, never passed.
 * `tests/run.sh` never sets it: there, a missing broker fails them.
 */
export const WITHOUT_BROKER: string | false = process.env.PI_TEST_WITHOUT_BROKER === "1"
  ? "no broker for this user: tests/stall/beside_full_run.sh runs beside a full run"
  : false;

/** Absolute path of the repository root. */
export const REPO_ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/**
 * A Node binary for child processes that need Node itself (`--require`,
 * `--input-type`, running a `.ts` CLI). Under `deno test`, `process.execPath`
 * is Deno, which would drop those flags; the checkout's Node 22 is used then.
 */
export const NODE_BINARY: string = "Deno" in globalThis
  ? `${REPO_ROOT}/node_modules/.bin/node`
  : process.execPath;
