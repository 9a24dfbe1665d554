/**
 * Connection flood for tests/bench/bench.ts, run in its own process so the
 * bench's event loop measures only the server: opens `count` connections to
 * the socket at once, each sends one byte and waits for the server to close
 * it (or gives up at `waitMs`). Prints one JSON line with how each ended.
 *
 * Usage: node flood_client.ts SOCKET COUNT WAIT_MS
 *
 * @module
 */
import { createConnection } from "node:net";
import { performance } from "node:perf_hooks";
import process from "node:process";

/** How the flood's connections ended, as printed on stdout. */
export interface FloodSummary {
  /** Closed by the server within 1 s (dropped over the connection limit). */
  readonly closedFast: number;
  /** Closed by the server later (its request deadline). */
  readonly closedSlow: number;
  /** connect() itself failed (e.g. EAGAIN: the listen backlog was full). */
  readonly connectErrors: number;
  /** Still open when we gave up. */
  readonly stillOpen: number;
  /** Wall time from the first connect to the last end, ms. */
  readonly wallMs: number;
  /** Error codes seen, with counts. */
  readonly errorCodes: Record<string, number>;
}

const [socketPath, countText, waitText] = process.argv.slice(2);
const count = Number(countText);
const waitMs = Number(waitText);
if (!socketPath || !Number.isInteger(count) || !Number.isInteger(waitMs)) {
  process.stderr.write("usage: flood_client.ts SOCKET COUNT WAIT_MS\n");
  process.exit(2);
}

const started = performance.now();
let closedFast = 0;
let closedSlow = 0;
let connectErrors = 0;
let stillOpen = 0;
const errorCodes: Record<string, number> = {};

const ends = Array.from({ length: count }, () =>
  new Promise<void>((resolve) => {
    const t0 = performance.now();
    const socket = createConnection(socketPath);
    let connected = false;
    let done = false;
    const finish = (how: "closed" | "error" | "open") => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (how === "error" && !connected) connectErrors++;
      else if (how === "open") stillOpen++;
      else if (performance.now() - t0 < 1000) closedFast++;
      else closedSlow++;
      resolve();
    };
    const timer = setTimeout(() => finish("open"), waitMs);
    socket.on("connect", () => {
      connected = true;
      socket.write(new Uint8Array([0]));
    });
    socket.on("data", () => {});
    socket.on("error", (e: NodeJS.ErrnoException) => {
      errorCodes[e.code ?? "unknown"] = (errorCodes[e.code ?? "unknown"] ?? 0) + 1;
      finish("error");
    });
    socket.on("close", () => finish("closed"));
  }));
await Promise.all(ends);
const summary: FloodSummary = {
  closedFast,
  closedSlow,
  connectErrors,
  stillOpen,
  wallMs: performance.now() - started,
  errorCodes,
};
process.stdout.write(JSON.stringify(summary) + "\n");
