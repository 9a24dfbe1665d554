/**
 * Runs one command as root for a `/sudo-prompt` subcommand, through the
 * session's own askpass channel: `sudo -A …` started by pi itself, so the
 * password is typed into the sudo modal like any other. Asynchronous, with
 * a deadline (the modal's 120 s plus the command's own time), output capped.
 *
 * @module
 */
import { spawn } from "node:child_process";
import process from "node:process";
import type { AskpassSession } from "./session_server.ts";

/** Most output kept from the command (the rest is dropped, not buffered). */
const OUTPUT_CAP = 64 * 1024;

/** The outcome of {@link runAsRoot}. */
export interface RootCommandResult {
  readonly code: number | null;
  readonly output: string;
  readonly timedOut: boolean;
}

/** `sudo -A -k argv…` with the session's askpass environment; kills the group at the deadline. */
export function runAsRoot(
  session: AskpassSession,
  argv: readonly string[],
  deadlineMs = 300_000,
): Promise<RootCommandResult> {
  return new Promise((resolve) => {
    if (!session.realSudo) {
      resolve({ code: null, output: "sudo is not installed", timedOut: false });
      return;
    }
    // -k: the password answers this one command and leaves no cached
    // credential behind (ADR 0006; the server refuses a sudo without it).
    const child = spawn(session.realSudo, ["-A", "-k", ...argv], {
      env: session.toolEnvironment(process.env),
      // Its own session: no controlling terminal, so sudo asks the askpass.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const collect = (d: Buffer) => {
      if (output.length < OUTPUT_CAP) {
        output += d.toString("utf8").slice(0, OUTPUT_CAP - output.length);
      }
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch { /* already gone */ }
    }, deadlineMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: null, output: `cannot run sudo: ${e.message}`, timedOut });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output: output.trimEnd(), timedOut });
    });
  });
}
