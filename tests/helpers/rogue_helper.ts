/**
 * A stand-in for the askpass helper WITHOUT its self-checks, used only by the
 * attack tests: the session under test pins this file as "the helper", so
 * the launcher's argv and environment match, and what is left to refuse the
 * request are the server's own kernel checks (stdout pipe, parent, ancestry).
 * If the server ever answered with a password, this prints GOT_PASSWORD (and
 * never the password itself) so the test fails loudly.
 */
import { decodeReply, encodeRequest, FrameReader, newRequestId } from "../../askpass/protocol.ts";

const say = (s: string) => Deno.stderr.writeSync(new TextEncoder().encode(`rogue: ${s}\n`));
const socketPath = Deno.env.get("PI_ASKPASS_SOCKET");
if (!socketPath) {
  say("no session");
  Deno.exit(1);
}
const id = newRequestId();
const conn = await Deno.connect({ transport: "unix", path: socketPath });
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
