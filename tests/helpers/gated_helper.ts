/**
 * A check-free stand-in for the askpass helper, like `rogue_helper.ts`, that
 * waits for a line on its stdin (which sudo passes through from the test)
 * before it connects. The test uses the pause to change a kernel fact the
 * server's last re-check reads (sudo stopped with SIGSTOP) while everything
 * else about the helper is genuine: sudo's pipe on stdout, a setuid sudo as
 * its parent, the launcher's argv and environment, its own connection.
 * A first line `connect` makes it connect, say `gated: connected`, and wait
 * for a second line before it sends its request (a pause between the reads
 * the server makes at accept and its judgement of them).
 * Prints `gated: DENIED <reason>` (or GOT_PASSWORD, never the password) on
 * stderr, and always exits 1.
 */
import { decodeReply, encodeRequest, FrameReader, newRequestId } from "../../askpass/protocol.ts";

const say = (s: string) => Deno.stderr.writeSync(new TextEncoder().encode(`gated: ${s}\n`));
const socketPath = Deno.env.get("PI_ASKPASS_SOCKET");
if (!socketPath) {
  // The session's cache warm-up runs this without a session: nothing to wait for.
  say("no session");
  Deno.exit(1);
}
const gate = new Uint8Array(64);
if (await Deno.stdin.read(gate) === null) {
  say("stdin closed before the gate opened");
  Deno.exit(1);
}
const id = newRequestId();
const conn = await Deno.connect({ transport: "unix", path: socketPath });
if (new TextDecoder().decode(gate).startsWith("connect")) {
  say("connected");
  if (await Deno.stdin.read(gate) === null) {
    say("stdin closed before the second gate opened");
    Deno.exit(1);
  }
}
await conn.write(encodeRequest({ id, prompt: Deno.args[0] ?? "", pid: Deno.pid }));
const reader = new FrameReader({ keepalives: true });
const buf = new Uint8Array(4096);
let body: Uint8Array | undefined;
while (body === undefined) {
  const n = await conn.read(buf).catch(() => null);
  if (n === null) {
    say("CLOSED");
    Deno.exit(1);
  }
  const step = reader.push(buf.slice(0, n));
  if (!step.ok) {
    say(`BAD_FRAME ${step.reason}`);
    Deno.exit(1);
  }
  body = step.body;
}
const reply = decodeReply(body, id);
if (!reply.ok) say(`BAD_REPLY ${reply.reason}`);
else if (reply.message.type === "password_denied") say(`DENIED ${reply.message.reason}`);
else if (reply.message.type === "password_delivered") say("DELIVERED");
else say("GOT_PASSWORD");
Deno.exit(1);
