/**
 * The root broker behind `pi-secret-run` (SPEC §5). Run by `sudo -n` through
 * the root-owned launcher, from root-owned files only. It:
 *
 * 1. checks its caller (`SUDO_UID`/`SUDO_GID`, never root) and the session
 *    socket (owned by the caller, in the caller's private 0700 directory);
 * 2. resolves the program to its real path and matches the real argv
 *    against the allowlist;
 * 3. writes a proof file into `/run/pi-sudo-prompt` (only root can), asks
 *    the pi session for the secret, and waits with its own deadline;
 * 4. creates a root-owned pipe, starts the program as the caller (uid, gid,
 *    groups, clean environment, the caller's cwd) through `setpriv`, writes
 *    the secret to its stdin in one go, closes it, and relays the exit status.
 *
 * The secret is never in argv, the environment or a file. Every refusal is
 * one line on stderr and exit status 125.
 *
 * @module
 */
import {
  decodeReply,
  encodeSecretRequest,
  FrameReader,
  importSessionKey,
  MAX_LABEL_BYTES,
  MAX_SECRET_ARGS,
  newRequestId,
} from "../askpass/protocol.ts";
import { BROKER_REFUSAL_EXIT, parseBrokerArgs, SETPRIV } from "./broker_permissions.ts";
import { PROOF_DIR } from "./paths.ts";
import { argvIsAllowlisted } from "./allowlist_policy.ts";

/** How long the broker waits for the human, at most (the modal's own limit is shorter). */
const ANSWER_DEADLINE_MS = 150_000;
/** How long the consumer gets to take the secret from its stdin. */
const STDIN_DEADLINE_MS = 10_000;
const encoder = new TextEncoder();

function refuse(reason: string): never {
  Deno.stderr.writeSync(encoder.encode(`pi-secret-broker: ${reason}\n`));
  Deno.exit(BROKER_REFUSAL_EXIT);
}

/** The calling user, from sudo's variables; root callers are refused. */
function caller(): { uid: number; gid: number; user: string } {
  const uid = Number(Deno.env.get("SUDO_UID"));
  const gid = Number(Deno.env.get("SUDO_GID"));
  const user = Deno.env.get("SUDO_USER") ?? "";
  if (Deno.uid() !== 0) refuse("must run as root through sudo (use pi-secret-run)");
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid < 0 || gid < 0) {
    refuse("no SUDO_UID/SUDO_GID: run through sudo (use pi-secret-run)");
  }
  if (uid === 0) refuse("refusing a root caller: run pi-secret-run as your own user");
  if (!/^[a-z_][a-z0-9_.-]*[$]?$/i.test(user)) refuse("bad SUDO_USER");
  return { uid, gid, user };
}

/**
 * The socket must be the caller's own: a socket file owned by the caller in
 * a directory owned by the caller with mode 0700. Otherwise one user could
 * point the broker at another user's pi session.
 */
async function checkSocket(path: string, uid: number): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf("/"));
  try {
    const d = await Deno.lstat(dir);
    const s = await Deno.lstat(path);
    if (!d.isDirectory || d.uid !== uid || ((d.mode ?? 0) & 0o077) !== 0) {
      refuse("the session directory is not the caller's private directory");
    }
    if (!s.isSocket || s.uid !== uid) refuse("the session socket is not the caller's");
  } catch {
    refuse("no pi session socket at that path (is pi still running?)");
  }
}

/** Resolves symlinks; the program must be an executable regular file. */
async function resolveProgram(program: string): Promise<string> {
  if (!program.startsWith("/")) refuse("the program path must be absolute");
  try {
    const real = await Deno.realPath(program);
    const st = await Deno.stat(real);
    if (!st.isFile || ((st.mode ?? 0) & 0o111) === 0) refuse(`not an executable file: ${real}`);
    return real;
  } catch {
    refuse(`program not found: ${program}`);
  }
}

/** Creates `/run/pi-sudo-prompt` (root, 0711) and an unguessable proof file in it. */
async function writeProof(id: string): Promise<{ name: string; path: string }> {
  try {
    await Deno.mkdir(PROOF_DIR, { mode: 0o711 });
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) refuse("cannot create the proof directory");
  }
  const dir = await Deno.lstat(PROOF_DIR);
  if (!dir.isDirectory || dir.uid !== 0 || ((dir.mode ?? 0) & 0o022) !== 0) {
    refuse("the proof directory is not root's");
  }
  await Deno.chmod(PROOF_DIR, 0o711); // users may look up a name, not list them
  const name = Array.from(crypto.getRandomValues(new Uint8Array(16)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  const path = `${PROOF_DIR}/${name}`;
  await Deno.writeTextFile(path, `id=${id}\npid=${Deno.pid}\n`, { createNew: true, mode: 0o644 });
  return { name, path };
}

/** Asks the pi session for the secret; returns it as bytes (caller zeroes). */
/** The session key, one hex line on stdin from pi-secret-run (kept out of argv and sudo's log). */
async function readSessionKey(): Promise<string> {
  const buf = new Uint8Array(80);
  let got = 0;
  const timer = setTimeout(() => refuse("no session key on stdin"), 2000);
  while (got < buf.length) {
    const n = await Deno.stdin.read(buf.subarray(got));
    if (n === null) break;
    got += n;
    if (buf.subarray(0, got).includes(0x0a)) break;
  }
  clearTimeout(timer);
  return new TextDecoder().decode(buf.subarray(0, got)).split("\n")[0];
}

async function askSession(
  socketPath: string,
  keyHex: string,
  request: { argv: string[]; label: string; allowlisted: boolean },
): Promise<Uint8Array> {
  const imported = await importSessionKey(keyHex);
  if (!imported.ok) refuse("bad session key");
  const key = imported.key;
  const id = newRequestId();
  const proof = await writeProof(id);
  const timer = setTimeout(() => refuse("timed out waiting for an answer"), ANSWER_DEADLINE_MS);
  try {
    let conn: Deno.UnixConn;
    try {
      conn = await Deno.connect({ transport: "unix", path: socketPath });
    } catch {
      refuse("cannot reach the pi session (is pi still running?)");
    }
    await conn.write(
      await encodeSecretRequest(key, { id, ...request, proof: proof.name, pid: Deno.pid }),
    );
    const reader = new FrameReader();
    const buf = new Uint8Array(1024);
    let body: Uint8Array | undefined;
    while (body === undefined) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) {
        refuse("the pi session closed the connection (refused: see pi's notice)");
      }
      const step = reader.push(buf.slice(0, n));
      buf.fill(0);
      if (!step.ok) refuse(`bad reply (${step.reason})`);
      body = step.body;
    }
    conn.close();
    const reply = await decodeReply(key, body, id);
    body.fill(0);
    if (!reply.ok) refuse(`bad reply (${reply.reason})`);
    if (reply.message.type === "password_denied") {
      const reason = reply.message.reason;
      refuse(reason === "timeout" ? "timed out: nobody answered in pi" : reason);
    }
    return reply.message.password;
  } finally {
    clearTimeout(timer);
    await Deno.remove(proof.path).catch(() => {});
  }
}

/** Runs the consumer as the caller with the secret on a root-made stdin pipe. */
async function runConsumer(
  who: { uid: number; gid: number },
  cwd: string,
  argv: string[],
  secret: Uint8Array,
): Promise<number> {
  // setpriv drops to the caller (uid, gid and the caller's groups) and execs
  // the program; Deno creates the stdin pipe while still root, so the
  // consumer's fd 0 is a root-owned 0600 pipe other processes cannot open.
  const command = new Deno.Command(SETPRIV, {
    args: [
      `--reuid=${who.uid}`,
      `--regid=${who.gid}`,
      "--init-groups",
      "--reset-env",
      "--",
      ...argv,
    ],
    cwd,
    clearEnv: true,
    env: {},
    stdin: "piped",
    stdout: "inherit",
    stderr: "inherit",
  });
  let child: Deno.ChildProcess;
  try {
    child = command.spawn();
  } catch {
    secret.fill(0);
    refuse("cannot start the program");
  }
  const line = new Uint8Array(secret.length + 1);
  line.set(secret);
  line[secret.length] = 0x0a;
  secret.fill(0);
  const writer = child.stdin.getWriter();
  const deadline = new Promise<"late">((r) => setTimeout(() => r("late"), STDIN_DEADLINE_MS));
  const wrote = await Promise.race([writer.write(line).then(() => "ok" as const), deadline])
    .catch(() => "closed" as const);
  line.fill(0);
  if (wrote === "late") {
    // kill first, then close
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await writer.abort().catch(() => {});
    await child.status;
    refuse("the program did not read the secret from its stdin within 10 s; killed it");
  }
  await writer.close().catch(() => {});
  const status = await child.status;
  return status.signal ? 128 + signalNumber(status.signal) : status.code;
}

function signalNumber(name: Deno.Signal): number {
  const numbers: Record<string, number> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGQUIT: 3,
    SIGKILL: 9,
    SIGTERM: 15,
    SIGPIPE: 13,
  };
  return numbers[name] ?? 1;
}

async function main(): Promise<void> {
  const who = caller();
  const args = parseBrokerArgs(Deno.args);
  if (!args) refuse("bad arguments (run pi-secret-run instead)");
  if (args.argv.length === 0 || args.argv.length > MAX_SECRET_ARGS) refuse("bad program arguments");
  if (
    args.argv.some((a) => a.includes("\0")) || encoder.encode(args.label).length > MAX_LABEL_BYTES
  ) {
    refuse("bad label or arguments");
  }
  if (!args.cwd.startsWith("/")) refuse("bad working directory");
  // The request must fit one frame (MAX_FRAME_BYTES) with room for the header.
  if (encoder.encode(JSON.stringify(args.argv)).length > 6000) refuse("arguments too long");
  await checkSocket(args.socketPath, who.uid);
  const program = await resolveProgram(args.argv[0]);
  const argv = [program, ...args.argv.slice(1)];

  const allowlisted = await argvIsAllowlisted(argv);

  const secret = await askSession(args.socketPath, await readSessionKey(), {
    argv,
    label: args.label,
    allowlisted,
  });
  Deno.exit(await runConsumer(who, args.cwd, argv, secret));
}

main().catch(() => refuse("internal error"));
