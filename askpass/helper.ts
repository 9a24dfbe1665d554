/**
 * The askpass helper sudo runs through the launcher: it checks argv and code-loading variables,
 * asks the pi session over its socket, and exits. pi writes the password into sudo's pipe itself
 * (`pidfd_getfd`, ADR 0008); only where pi cannot take the pipe (Yama 2 or 3, an old kernel)
 * does the reply carry it, and this helper writes `password\n` in one write.
 * It reads no `/proc` (Deno 2.9 grants it only with `--allow-all`): the server verifies this
 * process through the kernel, and the launcher (`launcherScript`) and the server check its stdout
 * (`docs/security-tests.md` A1–A9). No `node:` import, no `setTimeout`: start-up time
 * (`docs/benchmarks.md` row d). On failure: nothing on stdout (sudo reports "no password was
 * provided"), one line on stderr, exit 1.
 *
 * @module
 */
import {
  decodeReply,
  encodeRequest,
  KEEPALIVE_SILENCE_MS,
  MAX_PROMPT_BYTES,
  newRequestId,
  readFrame,
} from "./protocol.ts";
import { HELPER_ENV, HELPER_FORBIDDEN_ENV } from "./helper_permissions.ts";

const encoder = new TextEncoder();

function fail(reason: string): never {
  Deno.stderr.writeSync(encoder.encode(`pi-askpass: ${reason}\n`));
  Deno.exit(1);
}

async function main(): Promise<void> {
  if (Deno.args.length !== 1) fail("expected exactly one argument (sudo's prompt)");
  const prompt = Deno.args[0];
  if (encoder.encode(prompt).length > MAX_PROMPT_BYTES) fail("prompt longer than 1 KiB");
  for (const name of HELPER_FORBIDDEN_ENV) {
    if (Deno.env.get(name) !== undefined) fail(`refusing to run with ${name} set`);
  }
  const socketPath = Deno.env.get(HELPER_ENV.SOCKET) ?? fail("no session socket configured");
  const deadlineMs = Number(Deno.env.get(HELPER_ENV.DEADLINE_MS));
  if (!Number.isInteger(deadlineMs) || deadlineMs <= 0) fail("bad deadline");
  const connecting = Deno.connect({ transport: "unix", path: socketPath }).catch(() => undefined);
  // sudo has no askpass timeout: the helper must never outlive a dead or stuck extension.
  const deadline = after(deadlineMs, () => fail("no answer before the deadline"));
  const id = newRequestId();

  const conn = await connecting ?? fail("cannot reach the pi session (is pi still running?)");
  await conn.write(encodeRequest({ id, prompt, pid: Deno.pid }));

  // Keepalive silence means pi is stopped or frozen: nobody is asking the human any more.
  const silent = () => fail("pi stopped answering");
  let silence = after(KEEPALIVE_SILENCE_MS, silent);
  const heard = () => {
    silence.cancel();
    silence = after(KEEPALIVE_SILENCE_MS, silent);
  };
  const read = await readFrame(chunksOf(conn, heard), { keepalives: true });
  silence.cancel();
  if (!read.ok && read.reason === "closed") fail("the pi session closed the connection");
  if (!read.ok) fail(`bad reply (${read.reason})`);
  const body = read.body;
  conn.close();
  const reply = decodeReply(body, id);
  body.fill(0);
  if (!reply.ok) fail(`bad reply (${reply.reason})`);
  if (reply.message.type === "password_denied") fail(`denied: ${reply.message.reason}`);
  // Else `password_delivered`: pi wrote into sudo's pipe itself; this process never held it.
  if (reply.message.type === "password_response") {
    const password = reply.message.password;
    const line = new Uint8Array(password.length + 1);
    line.set(password);
    line[password.length] = 0x0a;
    password.fill(0);
    // At most 1024 bytes to a pipe: a single write(2) below PIPE_BUF is atomic.
    let written = 0;
    try {
      while (written < line.length) written += Deno.stdout.writeSync(line.subarray(written));
    } finally {
      line.fill(0);
    }
  }
  deadline.cancel();
  Deno.exit(0);
}

/**
 * Calls `onTimeout` after `ms` unless cancelled. Not `setTimeout`: in Deno its first call loads
 * Node's timers (7 ms before the connect, ADR 0001); `AbortSignal.timeout` uses Deno's own.
 */
function after(ms: number, onTimeout: () => void): { cancel(): void } {
  let live = true;
  AbortSignal.timeout(ms).addEventListener("abort", () => live && onTimeout(), { once: true });
  return { cancel: () => void (live = false) };
}

main().catch(() => fail("internal error"));

/** `conn`'s bytes as they arrive, in one reused buffer zeroed at the end; `heard` per chunk. */
async function* chunksOf(conn: Deno.Conn, heard: () => void): AsyncGenerator<Uint8Array> {
  const buf = new Uint8Array(1024);
  try {
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return;
      heard();
      yield buf.subarray(0, n);
    }
  } finally {
    buf.fill(0);
  }
}
