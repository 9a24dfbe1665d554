/**
 * Runs a shell command the way pi's bash tool does (`bash -c`, detached into
 * its own session, stdin `/dev/null`), with a session's environment and
 * prelude, and a hard deadline that kills the whole process group.
 *
 * @module
 */
import { spawn } from "node:child_process";
import process from "node:process";
import type { AskpassSession } from "../../extension/channel/session_server.ts";

/** Output of one command. */
export interface CommandResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly pid: number;
}

/** Runs `command` under `session` like a tool call; kills it after `deadlineMs`. */
export function runToolCommand(
  session: AskpassSession,
  command: string,
  deadlineMs = 30_000,
  extraEnv: Record<string, string> = {},
): Promise<CommandResult> {
  const env = { ...session.toolEnvironment(process.env), ...extraEnv };
  return runShell(`${session.shellPrelude()}\n${command}`, env, deadlineMs);
}

/** Runs `bash -c script` in a session of its own with `env`; kills the group after `deadlineMs`. */
export function runShell(
  script: string,
  env: Record<string, string | undefined>,
  deadlineMs = 30_000,
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    // setsid(1), not `detached`: for `detached` Deno forks its whole process
    // on the event loop (the heartbeat saw 100 ms stalls under load); setsid
    // is started by vfork and execs bash in a session of its own, same pid.
    const child = spawn("/usr/bin/setsid", ["/bin/bash", "-c", script], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => stdout += d);
    child.stderr.on("data", (d) => stderr += d);
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch { /* already gone */ }
      reject(new Error(`command did not finish within ${deadlineMs} ms: ${stderr}`));
    }, deadlineMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, pid: child.pid! });
    });
  });
}
