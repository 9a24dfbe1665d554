/**
 * Attack client for `tests/pi/agent_attacks_test.ts`, run by the agent from a
 * bash tool call of real pi with the absolute path of Node 22:
 *
 * ```sh
 * /abs/node_modules/.bin/node /abs/tests/pi/attack_scripts/forge_race.ts WORKDIR
 * ```
 *
 * It does what a hostile agent can do from its own shell: reads the session
 * socket from its environment (`PI_ASKPASS_SOCKET`), watches `/proc` for the
 * real askpass helper of this session, and the moment it appears races it
 * with well-formed `password_request`s that claim the helper's pid and
 * prompt (also sudo's pid, and its own). Then it waits for `WORKDIR/go`
 * (created by the test once the real modal is on screen) and sends the same
 * forgeries again while the real request is pending. It prints one line per
 * forgery, `ATTACK <label>: <outcome>`, where the outcome is `DENIED
 * <reason>`, `NO_REPLY`, `BAD_REPLY <reason>` or `GOT_PASSWORD (<n> bytes)`
 * (it never prints a password), and creates `WORKDIR/done` at the end.
 *
 * @module
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import process from "node:process";
import {
  decodeReply,
  encodeRequest,
  FrameReader,
  newRequestId,
} from "../../../askpass/protocol.ts";

const work = process.argv[2];
const socketPath = process.env.PI_ASKPASS_SOCKET ?? "";
const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => Promise<T | undefined>, ms: number) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) {
      say(`attacker: gave up waiting for ${what}`);
      process.exit(2);
    }
    await sleep(5);
  }
}

async function findHelper(): Promise<number | undefined> {
  const needle = `--allow-net=unix:${socketPath}`;
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(needle)) return Number(name);
  }
  return undefined;
}

/** One forged exchange: connect, send a request, report what came back. */
async function forge(label: string, pid: number, prompt: string) {
  const id = newRequestId();
  const frame = encodeRequest({ id, prompt, pid });
  const body = await new Promise<Uint8Array | undefined>((resolve) => {
    const reader = new FrameReader({ keepalives: true });
    const sock = connect(socketPath);
    const timer = setTimeout(() => sock.destroy(), 10_000);
    let result: Uint8Array | undefined;
    sock.on("connect", () => sock.write(frame));
    sock.on("data", (chunk: Uint8Array) => {
      const step = reader.push(chunk);
      if (step.ok && step.body) result = step.body;
    });
    sock.on("error", () => {});
    sock.on("close", () => {
      clearTimeout(timer);
      resolve(result);
    });
  });
  if (!body) return say(`ATTACK ${label}: NO_REPLY`);
  const reply = decodeReply(body, id);
  if (!reply.ok) say(`ATTACK ${label}: BAD_REPLY ${reply.reason}`);
  else if (reply.message.type === "password_denied") {
    say(`ATTACK ${label}: DENIED ${reply.message.reason}`);
  } else if (reply.message.type === "password_delivered") {
    say(`ATTACK ${label}: DELIVERED`);
  } else {
    say(`ATTACK ${label}: GOT_PASSWORD (${reply.message.password.length} bytes)`);
    reply.message.password.fill(0);
  }
}

async function main(): Promise<void> {
  if (!socketPath.startsWith("/")) {
    say("attacker: no PI_ASKPASS_SOCKET in the environment");
    process.exit(2);
  }
  say(`attacker: read PI_ASKPASS_SOCKET (${socketPath})`);
  const helper = await until("the real helper", findHelper, 30_000);
  const argv = (await readFile(`/proc/${helper}/cmdline`, "utf8")).split("\0");
  const prompt = argv.at(-2) ?? "";
  const stat = await readFile(`/proc/${helper}/stat`, "utf8");
  const sudo = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  say(`attacker: found helper pid ${helper} (sudo pid ${sudo}), prompt ${JSON.stringify(prompt)}`);

  // The race: straight away, while the real helper starts up and connects.
  await Promise.all([
    forge("race/claims-helper-pid", helper, prompt),
    forge("race/claims-sudo-pid", sudo, prompt),
    forge("race/claims-own-pid", process.pid, prompt),
  ]);
  // The real request is pending now (the test saw the modal).
  await until(
    "the go file",
    () => readFile(join(work, "go")).then(() => true, () => undefined),
    60_000,
  );
  for (let i = 1; i <= 3; i++) await forge(`pending/claims-helper-pid#${i}`, helper, prompt);
  await forge("pending/claims-own-pid", process.pid, prompt);
  await writeFile(join(work, "done"), "");
}

await main();
