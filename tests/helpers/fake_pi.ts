/**
 * A fake "pi" for attacks on the installed root broker called directly
 * (`sudo -n <launcher> …`, as the agent can): a socket server in a private
 * 0700 directory, records what
 * arrives, and answers as told. The process that runs {@link runBroker} is
 * sudo's parent, so the broker sees it as the pi that called it.
 *
 * Also a CLI, for the root phase to run it as the throwaway user:
 * `node fake_pi.ts secret|deny|close|hold -- PROGRAM ARGS…` prints the
 * broker's output, then one line `FAKE_PI {json}`.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  decodeIncoming,
  DENY_REASONS,
  encodeDenied,
  encodeResponse,
  FrameReader,
  type SecretRequest,
} from "../../askpass/protocol.ts";
import { BROKER_LAUNCHER } from "../../broker/paths.ts";

/** How the fake pi answers a request. */
export type FakeAnswer = "secret" | "deny" | "close" | "hold";

/** A running fake pi. */
export interface FakePi {
  readonly dir: string;
  readonly socketPath: string;
  /** Connections accepted, and bytes received on them. */
  readonly stats: { connections: number; bytes: number };
  /** Decoded requests, in order. */
  readonly requests: SecretRequest[];
  /** Open connections (for `hold`), to close on demand. */
  readonly open: Set<Socket>;
  close(): Promise<void>;
}

/** The secret the fake pi hands out for `secret`. */
export const FAKE_SECRET = "fake-pi-secret";

/** Starts a fake pi; `server` may replace the listener (e.g. to listen elsewhere). */
export async function startFakePi(answer: FakeAnswer): Promise<FakePi> {
  const dir = await mkdtemp(join(tmpdir(), "fake-pi-"));
  const socketPath = join(dir, "askpass.sock");
  const stats = { connections: 0, bytes: 0 };
  const requests: SecretRequest[] = [];
  const open = new Set<Socket>();
  const server: Server = createServer((socket) => {
    stats.connections++;
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => {});
    const reader = new FrameReader();
    socket.on("data", (chunk: Buffer) => {
      stats.bytes += chunk.length;
      const step = reader.push(new Uint8Array(chunk));
      if (!step.ok || !step.body) return;
      const decoded = decodeIncoming(step.body);
      if (!decoded.ok || decoded.message.type !== "secret_request") return void socket.destroy();
      const request = decoded.message;
      requests.push(request);
      if (answer === "close") return void socket.destroy();
      if (answer === "deny") {
        return void socket.end(encodeDenied(request.id, DENY_REASONS.CANCELLED));
      }
      if (answer === "secret") {
        socket.end(encodeResponse(request.id, new TextEncoder().encode(FAKE_SECRET)));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    dir,
    socketPath,
    stats,
    requests,
    open,
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** What one broker run produced. */
export interface BrokerRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `sudo -n <launcher> args…` from this process (so this process is
 * sudo's parent), its stdin closed. Killed after `deadlineMs`.
 */
export function runBroker(
  args: readonly string[],
  deadlineMs = 30_000,
): { sudoPid: number; done: Promise<BrokerRun> } {
  const child = spawn("/usr/bin/sudo", ["-n", BROKER_LAUNCHER, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
    cwd: "/",
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => stdout += d);
  child.stderr.on("data", (d) => stderr += d);
  child.stdin.on("error", () => {});
  child.stdin.end();
  const done = new Promise<BrokerRun>((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), deadlineMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, stdout, stderr });
    });
  });
  return { sudoPid: child.pid!, done };
}

/** The broker's arguments for `fake` (label `x`, cwd `/`), then `--` and `argv`. */
export function brokerArgsFor(
  socketPath: string,
  argv: readonly string[],
  cwd = "/",
): string[] {
  return ["--socket", socketPath, "--label", "x", "--cwd", cwd, "--", ...argv];
}

if (import.meta.main || process.argv[1]?.endsWith("fake_pi.ts")) {
  const [answer, sep, ...argv] = process.argv.slice(2);
  if (sep !== "--" || !["secret", "deny", "close", "hold"].includes(answer)) {
    console.error("usage: fake_pi.ts secret|deny|close|hold -- PROGRAM ARGS...");
    process.exit(2);
  }
  const fake = await startFakePi(answer as FakeAnswer);
  const r = await runBroker(brokerArgsFor(fake.socketPath, argv)).done;
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  console.log(`FAKE_PI ${JSON.stringify({ code: r.code, requests: fake.requests.length })}`);
  await fake.close();
}
