/**
 * The root half of the holder scan in hardened mode (ADR 0007): root, through
 * the broker's NOPASSWD rule (`pi-secret-broker --terminal-holders N`, running
 * `broker/terminal_check.sh`), lists the user's processes that have pi's
 * terminal open, the non-dumpable ones the user's own scan cannot read included.
 *
 * @module
 */
import { BROKER_ROOT } from "../../broker/paths.ts";
import { sudoWantsPassword } from "../../shared/sudo_answer.ts";
import { runRootCheck } from "../pairing/root_check.ts";

/** The installed root-owned terminal check (`broker/terminal_check.sh`). */
export const TERMINAL_CHECK = `${BROKER_ROOT}/terminal-check`;

/**
 * Result of {@link runRootTerminalCheck}. `notPermitted`: sudo wants a password,
 * so the broker's rule is not this user's, and the user-level scan stands alone
 * (ADR 0007, "What remains").
 */
export type RootTerminalResult =
  | { readonly ok: true; readonly holders: readonly number[] }
  | { readonly ok: false; readonly reason: string; readonly notPermitted?: true };

/** The pts number of `/dev/pts/N`, or `undefined` for any other terminal. */
export function ptsNumber(ttyPath: string): number | undefined {
  const m = /^\/dev\/pts\/([0-9]{1,7})$/.exec(ttyPath);
  return m ? Number(m[1]) : undefined;
}

/** Parses the check's one line (pure, for tests); only exit 0 with the holders line lists any. */
export function parseRootTerminalOutput(
  code: number | null,
  stdout: string,
  stderr = "",
): RootTerminalResult {
  const line = stdout.split("\n")[0] ?? "";
  const m = /^pi-terminal: holders((?: [1-9][0-9]{0,9})*)$/.exec(line);
  if (code === 0 && m) {
    return { ok: true, holders: m[1].trim() === "" ? [] : m[1].trim().split(" ").map(Number) };
  }
  if (sudoWantsPassword(code, stdout, stderr)) {
    return { ok: false, reason: "a password is required", notPermitted: true };
  }
  return { ok: false, reason: line.slice(0, 200) || `exit ${code}` };
}

/** Runs the root check for `/dev/pts/<n>`; never throws. */
export async function runRootTerminalCheck(
  sudoPath: string,
  n: number,
): Promise<RootTerminalResult> {
  const run = await runRootCheck(sudoPath, ["--terminal-holders", String(n)]);
  if (run.failure) return { ok: false, reason: run.failure };
  // Every holder counts: our own sudo has no terminal (its own session, pipes
  // for stdio), and its pid may be another process's by the time root answers.
  return parseRootTerminalOutput(run.code, run.stdout, run.stderr);
}
