/**
 * Runs one command as root for a `/sudo-prompt` subcommand through the session's own askpass
 * channel, so the password is typed into the sudo modal like any other.
 * @module
 */
import process from "node:process";
import { spawnWithDeadline } from "../../shared/spawn_deadline.ts";
import type { AskpassSession } from "../channel/session_server.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** Most output kept from the command (the rest is dropped, not buffered). */
const OUTPUT_CAP = 64 * 1024;
/** The modal's 120 s plus the command's own time. */
const DEADLINE_MS = 300_000;

/** The outcome of {@link runAsRoot}. */
export interface RootCommandResult {
  readonly code: number | null;
  readonly output: string;
  readonly timedOut: boolean;
}

/** `sudo -A -k argv…` with the session's askpass environment; kills the group at the deadline. */
export async function runAsRoot(
  session: AskpassSession,
  argv: readonly string[],
): Promise<RootCommandResult> {
  if (!session.realSudo) return { code: null, output: msg.sudoNotInstalled, timedOut: false };
  // -k: no cached credential outlives the command (ADR 0006; the server refuses a sudo without it).
  const r = await spawnWithDeadline(session.realSudo, ["-A", "-k", ...argv], {
    env: session.toolEnvironment(process.env),
    // Its own session: no controlling terminal, so sudo asks the askpass.
    detached: true,
    mergeStderr: true,
    outputCap: OUTPUT_CAP,
    deadlineMs: DEADLINE_MS,
  });
  const output = r.spawnError ? msg.cannotRunSudo(r.spawnError) : r.stdout.trimEnd();
  return { code: r.code, output, timedOut: r.timedOut };
}
