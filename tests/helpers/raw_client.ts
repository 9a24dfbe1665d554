/**
 * A hand-made client for the session socket, for attack tests: it sends
 * arbitrary bytes and reports what came back and how the connection ended.
 *
 * @module
 */
import { createConnection } from "node:net";

/** What happened on one raw connection. */
export interface RawExchange {
  readonly reply: Uint8Array;
  /** "closed" when the server closed it, "timeout" when we gave up waiting. */
  readonly ended: "closed" | "timeout";
}

/** Connects, writes `bytes`, and collects the reply until close or `waitMs`. */
export function rawExchange(
  socketPath: string,
  bytes: Uint8Array,
  waitMs = 3000,
): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    const socket = createConnection(socketPath);
    let done = false;
    const finish = (ended: RawExchange["ended"]) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ reply: new Uint8Array(Buffer.concat(chunks)), ended });
    };
    const timer = setTimeout(() => finish("timeout"), waitMs);
    socket.on("connect", () => socket.write(bytes));
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("close", () => finish("closed"));
    socket.on("error", (e) => {
      if (!done && chunks.length === 0 && (e as NodeJS.ErrnoException).code === "ENOENT") {
        done = true;
        clearTimeout(timer);
        reject(e);
      }
    });
  });
}
