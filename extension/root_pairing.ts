/**
 * The root-confirmed pairing of hardened mode (ADR 0005): asks root, through
 * the broker's NOPASSWD sudoers rule, whether the helper's stdout pipe is
 * open for reading in the helper's parent sudo and in no other process.
 * Root can read every `/proc/<pid>/fd`; the user cannot read sudo's.
 *
 * `sudo -n /usr/local/libexec/pi-sudo-prompt/pi-secret-broker
 * --verify-pairing HELPER SUDO INODE` runs `broker/pairing_check.sh` as
 * root, which prints one verdict line. The call is asynchronous with a
 * deadline (the event loop never waits on it) and costs about one `sudo -n`.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { BROKER_LAUNCHER, BROKER_ROOT } from "../broker/paths.ts";
import { isProtectedPath } from "../broker/allowlist_policy.ts";
import { parseRootPairingVerdict, type RootPairingVerdict } from "./sudo_pairing.ts";

/** The installed root-owned pairing check (`broker/pairing_check.sh`). */
export const PAIRING_CHECK = `${BROKER_ROOT}/pairing-check`;
/** Default deadline for one root check. */
export const ROOT_PAIRING_TIMEOUT_MS = 5000;
const MAX_OUTPUT_BYTES = 4096;

/**
 * True when the broker is installed with the pairing check: both the
 * launcher and the check are root-protected files. Then the root check is
 * required for every sudo request (a failure to run it refuses).
 */
export async function rootPairingInstalled(): Promise<boolean> {
  return await isProtectedPath(BROKER_LAUNCHER) && await isProtectedPath(PAIRING_CHECK);
}

/**
 * Runs the root check for one helper. `onSpawn` receives the pid of our own
 * `sudo -n` front end (the user-level check must not count it as a stranger)
 * and `onExit` is called once it is gone.
 */
export function runRootPairing(
  sudoPath: string,
  args: { helperPid: number; sudoPid: number; pipeInode: number },
  hooks: { onSpawn(pid: number): void; onExit(pid: number): void },
  timeoutMs = ROOT_PAIRING_TIMEOUT_MS,
): Promise<RootPairingVerdict> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let done = false;
    const child = spawn(sudoPath, [
      "-n",
      BROKER_LAUNCHER,
      "--verify-pairing",
      String(args.helperPid),
      String(args.sudoPid),
      String(args.pipeInode),
    ], {
      // Nothing of pi's environment: sudo resets it anyway, and no
      // SUDO_ASKPASS or session variable has any business here.
      env: { PATH: "/usr/bin:/bin", LANG: "C" },
      stdio: ["ignore", "pipe", "pipe"],
      // A session of its own: with pi's terminal as its controlling
      // terminal, sudo would open it (and count as a holder of it).
      detached: true,
    });
    const pid = child.pid;
    if (pid !== undefined) hooks.onSpawn(pid);
    const finish = (verdict: RootPairingVerdict) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(verdict);
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish(parseRootPairingVerdict(null, "pi-pairing: timeout"));
    }, timeoutMs);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < MAX_OUTPUT_BYTES) stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < MAX_OUTPUT_BYTES) stderr += d;
    });
    child.on("error", () => {
      if (pid !== undefined) hooks.onExit(pid);
      finish(parseRootPairingVerdict(null, "pi-pairing: cannot run sudo"));
    });
    child.on("close", (code) => {
      if (pid !== undefined) hooks.onExit(pid);
      finish(parseRootPairingVerdict(code, stdout, stderr));
    });
  });
}
