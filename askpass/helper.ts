/**
 * The askpass helper: the program sudo runs (through the per-session
 * launcher) when it needs a password. It checks that it really is sudo's
 * askpass child, asks the pi session for the password over the session
 * socket, and then exits: pi writes the password into sudo's pipe itself
 * (it takes the pipe with `pidfd_getfd`, docs/adr/0008). Only where pi cannot
 * take the pipe (Yama 2 or 3, an old kernel) does the reply carry the
 * password, and this helper writes `password\n` to sudo's pipe in one write.
 *
 * It never reads `/proc` (Deno 2.9 grants `/proc` only with `--allow-all`);
 * the session server verifies this process through the kernel instead. The
 * checks here are the cheap ones that need no permission: argv and the
 * absence of code-loading variables. Its stdout is checked by the launcher
 * before it execs deno (`launcherScript` in `extension/channel/shell_injection.ts`),
 * and exactly again by the server from `/proc` (`docs/security-tests.md`,
 * rows A1–A9, say which layer checks what).
 *
 * It imports no `node:` module: Deno's Node compatibility layer costs more
 * start-up time than the rest of the helper (`docs/benchmarks.md`, row d).
 * For the same reason it calls no `setTimeout` (see {@link after}).
 *
 * Output contract with sudo: on success exactly one line on stdout and exit
 * 0; on anything else nothing on stdout (sudo then reports "no password was
 * provided" and stops), one line on stderr, exit 1.
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
  // The requester checks that need neither `/proc` nor a `node:` module.
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
  // sudo has no timeout for askpass; this one guarantees the helper never
  // outlives a dead or stuck extension.
  const deadline = after(deadlineMs, () => fail("no answer before the deadline"));
  const id = newRequestId();

  const conn = await connecting ?? fail("cannot reach the pi session (is pi still running?)");
  await conn.write(encodeRequest({ id, prompt, pid: Deno.pid }));

  // pi sends a keepalive while the request waits; silence means pi is
  // stopped or frozen, and then nobody is asking the human any more.
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
 * Calls `onTimeout` after `ms` unless cancelled. Not `setTimeout`, which in Deno
 * is Node's timer: its first call loads Node's timers (7 ms before the connect,
 * docs/adr/0001); `AbortSignal.timeout` uses Deno's own, already loaded.
 */
function after(ms: number, onTimeout: () => void): { cancel(): void } {
  let live = true;
  AbortSignal.timeout(ms).addEventListener("abort", () => live && onTimeout(), { once: true });
  return { cancel: () => void (live = false) };
}

main().catch(() => fail("internal error"));

/**
 * The bytes of `conn` as they arrive, in one reused buffer that is zeroed at
 * the end; `heard` is called for each chunk.
 */
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
