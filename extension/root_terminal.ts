/**
 * The root half of the holder scan (ADR 0007), in hardened mode: root,
 * through the broker's NOPASSWD sudoers rule, lists the user's processes
 * that have pi's terminal open, non-dumpable ones included, whose
 * descriptors the user's own scan cannot read.
 *
 * `sudo -n /usr/local/libexec/pi-sudo-prompt/pi-secret-broker
 * --terminal-holders N` runs `broker/terminal_check.sh` as root, which prints
 * `pi-terminal: holders PID…`. Asynchronous with a deadline; about one
 * `sudo -n` per modal.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { BROKER_LAUNCHER, BROKER_ROOT } from "../broker/paths.ts";
import { isProtectedPath } from "../broker/allowlist_policy.ts";
import { ownFrontEnds } from "./own_front_ends.ts";

/** The installed root-owned terminal check (`broker/terminal_check.sh`). */
export const TERMINAL_CHECK = `${BROKER_ROOT}/terminal-check`;
/** Default deadline of one root check. */
export const ROOT_TERMINAL_TIMEOUT_MS = 5000;
const MAX_OUTPUT_BYTES = 4096;

/**
 * Result of {@link runRootTerminalCheck}. `notPermitted`: sudo answered "a
 * password is required", so the broker's rule is not this user's (installed
 * for another user, or overridden: `doctor` says which); root cannot be asked,
 * and the user-level scan stands alone, as for the pairing check (ADR 0005).
 */
export type RootTerminalResult =
  | { readonly ok: true; readonly holders: readonly number[] }
  | { readonly ok: false; readonly why: string; readonly notPermitted?: true };

/** True when the broker's launcher and the terminal check are root-protected files. */
export async function rootTerminalCheckInstalled(): Promise<boolean> {
  return await isProtectedPath(BROKER_LAUNCHER) && await isProtectedPath(TERMINAL_CHECK);
}

/** The pts number of `/dev/pts/N`, or `undefined` for any other terminal. */
export function ptsNumber(ttyPath: string): number | undefined {
  const m = /^\/dev\/pts\/([0-9]{1,7})$/.exec(ttyPath);
  return m ? Number(m[1]) : undefined;
}

/** Parses the check's one line (pure, for tests). */
export function parseRootTerminalOutput(
  code: number | null,
  stdout: string,
  stderr = "",
): RootTerminalResult {
  if (code === 1 && stdout === "" && /^sudo: a password is required$/m.test(stderr)) {
    return { ok: false, why: "a password is required", notPermitted: true };
  }
  const line = stdout.split("\n")[0] ?? "";
  const m = /^pi-terminal: holders((?: [1-9][0-9]{0,9})*)$/.exec(line);
  if (code !== 0 || !m) return { ok: false, why: line.slice(0, 200) || `exit ${code}` };
  return { ok: true, holders: m[1].trim() === "" ? [] : m[1].trim().split(" ").map(Number) };
}

/** Runs the root check for `/dev/pts/<n>`; never throws. */
export function runRootTerminalCheck(
  sudoPath: string,
  n: number,
  timeoutMs = ROOT_TERMINAL_TIMEOUT_MS,
): Promise<RootTerminalResult> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let done = false;
    const child = spawn(sudoPath, ["-n", BROKER_LAUNCHER, "--terminal-holders", String(n)], {
      // Nothing of pi's environment: no askpass, no session variable.
      env: { PATH: "/usr/bin:/bin", LANG: "C" },
      stdio: ["ignore", "pipe", "pipe"],
      // A session of its own: with pi's terminal as its controlling
      // terminal, sudo would open it and hold it itself.
      detached: true,
    });
    // The pairing checks must not count our own front end as a stranger.
    const own = ownFrontEnds();
    if (child.pid !== undefined) own.add(child.pid);
    const finish = (r: RootTerminalResult) => {
      if (child.pid !== undefined) own.delete(child.pid);
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(r);
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish({ ok: false, why: "timeout" });
    }, timeoutMs);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < MAX_OUTPUT_BYTES) stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < MAX_OUTPUT_BYTES) stderr += d;
    });
    child.on("error", () => finish({ ok: false, why: "cannot run sudo" }));
    child.on("close", (code) => {
      const r = parseRootTerminalOutput(code, stdout, stderr);
      // Our own sudo is never a stranger (it should not hold the terminal anyway).
      finish(r.ok ? { ok: true, holders: r.holders.filter((p) => p !== child.pid) } : r);
    });
  });
}
