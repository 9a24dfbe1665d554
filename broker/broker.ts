/**
 * The root broker behind `pi-secret-run` (docs/design.md §5, ADR 0002), run by `sudo -n` through
 * the root-owned launcher, from root-owned files only. It trusts nothing from its caller but
 * `SUDO_UID`/`SUDO_GID` and the kernel (`/proc`, `SO_PEERCRED`). Its steps, and the check of each
 * input: ADR 0002, point 2. The secret is never in argv, the environment or a file. Every refusal
 * is one line on stderr ({@link BROKER_REFUSALS}) and exit status 125.
 *
 * @module
 */
import { createConnection, type Socket } from "node:net";
import {
  decodeReply,
  encodeSecretRequest,
  MAX_FRAME_BYTES,
  MAX_LABEL_BYTES,
  MAX_SECRET_ARGS,
  newRequestId,
  readFrame,
  type SecretRequest,
} from "../askpass/protocol.ts";
import {
  BROKER_LIBC,
  BROKER_REFUSAL_EXIT,
  BROKER_REFUSALS as R,
  MAX_BROKERS_PER_UID,
  parseBrokerArgs,
  SETPRIV,
} from "./broker_permissions.ts";
import { PROOF_DIR } from "./paths.ts";
import { argvIsAllowlisted } from "./allowlist_policy.ts";
import {
  ancestors,
  parseStat,
  parseStatusGroups,
  parseStatusIds,
  type ProcStat,
} from "../kernel/proc.ts";
import { openDenoLibc } from "../kernel/deno_libc.ts";

/** Everything before the request reaches pi (start, slot, checks, connect). */
const PRECONSENT_DEADLINE_MS = 10_000;
/** The human's answer: the modal's 120 s plus slack; queued requests get their own 120 s. */
const ANSWER_DEADLINE_MS = 125_000;
const STDIN_DEADLINE_MS = 10_000;
const PARENT_POLL_MS = 200;
const encoder = new TextEncoder();

const libc = openDenoLibc(BROKER_LIBC);
/** Most of one `/proc` file read; a longer one is refused, never read in part. */
const PROC_READ_CAP = 64 * 1024;
const F_GETFL = 3;
const F_SETFL = 4;
const O_NONBLOCK = 0o4000;

/** The proof file this broker holds; removed by {@link exit} whatever the path out. */
let proofPath: string | undefined;
/** Set once the consumer runs: from then on the broker lives exactly as long as it. */
let consumer: { pid: number; keeper: number } | undefined;
/** The keeper's status FIFO, removed by {@link exit}. */
let statusPath: string | undefined;

function exit(code: number): never {
  for (const path of [proofPath, statusPath]) {
    if (!path) continue;
    try {
      Deno.removeSync(path);
    } catch { /* already gone */ }
  }
  Deno.exit(code);
}

/**
 * One line on stderr, then exit. The write never waits: a full stderr pipe nobody reads loses the
 * line rather than keep a root broker stuck past its sudo. The descriptor's flags are put back for
 * the caller's other users of it.
 */
function refuse(reason: string): never {
  const line = encoder.encode(`pi-secret-broker: ${reason}\n`);
  const flags = libc.fcntl(2, F_GETFL, 0);
  if (flags >= 0) libc.fcntl(2, F_SETFL, flags | O_NONBLOCK);
  libc.write(2, line, BigInt(line.length));
  if (flags >= 0) libc.fcntl(2, F_SETFL, flags);
  exit(BROKER_REFUSAL_EXIT);
}

/**
 * A `/proc` file through libc (Deno allows `/proc` only to `-A`), whole: `""` when unreadable;
 * over the cap, a refusal, so nothing is decided on a prefix (a `Groups:` line cut mid-number).
 */
function readProc(path: string): string {
  const fd = libc.open(encoder.encode(`${path}\0`), 0o2000000 /* O_RDONLY|O_CLOEXEC */);
  if (fd < 0) return "";
  const buf = new Uint8Array(PROC_READ_CAP + 1);
  let total = 0;
  try {
    while (total < buf.length) {
      const n = Number(libc.read(fd, buf.subarray(total), BigInt(buf.length - total)));
      if (n < 0) return "";
      if (n === 0) break;
      total += n;
    }
  } finally {
    libc.close(fd);
  }
  if (total > PROC_READ_CAP) refuse(R.PROC_TOO_LARGE);
  return new TextDecoder().decode(buf.subarray(0, total));
}

/** `/proc/<pid>/stat`, parsed by the one `/proc` parser (kernel/proc.ts). */
function procStat(pid: number): ProcStat | undefined {
  const stat = parseStat(readProc(`/proc/${pid}/stat`));
  return stat?.pid === pid ? stat : undefined;
}

/** The calling user, from sudo's variables; root callers are refused. */
function caller(): { uid: number; gid: number } {
  const [uid, gid] = [Number(Deno.env.get("SUDO_UID")), Number(Deno.env.get("SUDO_GID"))];
  if (Deno.uid() !== 0) refuse(R.NOT_ROOT);
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid < 0 || gid < 0) refuse(R.NO_SUDO_IDS);
  if (uid === 0) refuse(R.ROOT_CALLER);
  return { uid, gid };
}

/**
 * The parent must be sudo with the caller as real uid. The caller's groups come from the process
 * that ran sudo (sudo already holds root's), while it is still sudo's parent: never from
 * `/etc/group`, which would restore groups a sandbox dropped.
 */
function sudoParent(uid: number): { sudo: number; invoker: number; groups: number[] } {
  const sudo = libc.getppid();
  const stat = procStat(sudo);
  const ids = parseStatusIds(readProc(`/proc/${sudo}/status`));
  if (stat?.comm !== "sudo" || ids?.uid[0] !== uid || ids.uid[1] !== 0) refuse(R.NOT_FROM_SUDO);
  const invoker = readProc(`/proc/${stat.ppid}/status`);
  const groups = parseStatusGroups(invoker);
  if (
    groups === undefined || parseStatusIds(invoker)?.uid[0] !== uid ||
    procStat(sudo)?.ppid !== stat.ppid
  ) {
    refuse(R.NOT_FROM_SUDO);
  }
  return { sudo, invoker: stat.ppid, groups: [...groups] };
}

/** Stops the broker when sudo dies, unless the consumer already runs (then it waits for it). */
function watchParent(sudo: number): void {
  const timer = setInterval(() => {
    if (consumer) clearInterval(timer);
    else if (libc.getppid() !== sudo) refuse(R.PARENT_GONE);
  }, PARENT_POLL_MS);
  for (const [signal, number] of [["SIGTERM", 15], ["SIGINT", 2], ["SIGHUP", 1]] as const) {
    Deno.addSignalListener(signal, () => {
      if (!consumer) refuse(R.INTERRUPTED);
      // sudo relays signals to us: pass them on, like sudo does (the keeper forwards them).
      libc.kill(consumer.keeper, number);
    });
  }
}

/**
 * Claims a slot under the caller's lock: sweeps proof files no live broker holds locked, counts
 * the caller's, and creates ours (`id=`, `pid=`, `uid=`). Only root can write here, so the proof
 * also shows pi that root made the request.
 */
async function claimSlot(uid: number, id: string): Promise<void> {
  await Deno.mkdir(PROOF_DIR, { mode: 0o711 }).catch((e) => {
    if (!(e instanceof Deno.errors.AlreadyExists)) refuse(R.PROOF_DIR);
  });
  const dir = await Deno.lstat(PROOF_DIR);
  if (!dir.isDirectory || dir.uid !== 0 || ((dir.mode ?? 0) & 0o022) !== 0) refuse(R.PROOF_DIR);
  await Deno.chmod(PROOF_DIR, 0o711); // users may look up a name, not list them
  // One lock per caller: no user's brokers wait on another's.
  const lock = await Deno.open(`${PROOF_DIR}/.lock-${uid}`, {
    create: true,
    write: true,
    mode: 0o600,
  });
  await lock.lock(true);
  let full = false;
  try {
    let mine = 0;
    for await (const entry of Deno.readDir(PROOF_DIR)) {
      if (!/^[0-9a-f]{32}$/.test(entry.name)) continue;
      const path = `${PROOF_DIR}/${entry.name}`;
      const file = await Deno.open(path).catch(() => undefined);
      if (!file) continue;
      if (await file.tryLock(true)) await Deno.remove(path).catch(() => {});
      else if ((await Deno.readTextFile(path).catch(() => "")).includes(`\nuid=${uid}\n`)) mine++;
      file.close();
    }
    full = mine >= MAX_BROKERS_PER_UID;
    if (!full) {
      // A fresh random 128-bit name, the same shape as a request id.
      proofPath = `${PROOF_DIR}/${newRequestId()}`;
      const text = `id=${id}\npid=${Deno.pid}\nuid=${uid}\n`;
      await Deno.writeTextFile(proofPath, text, { createNew: true, mode: 0o644 });
      // Held until exit (the fd is O_CLOEXEC, so the consumer does not inherit it).
      await (await Deno.open(proofPath)).lock(true);
    }
  } finally {
    await lock.unlock();
    lock.close();
  }
  // Refused only once the lock is released: nothing is written under it.
  if (full) refuse(R.TOO_MANY);
}

/** `setpriv` args that drop to the caller: uid, gid, the groups held now, clean environment. */
function dropTo(who: { uid: number; gid: number }, groups: number[]): string[] {
  const g = groups.length ? `--groups=${groups.join(",")}` : "--clear-groups";
  return [`--reuid=${who.uid}`, `--regid=${who.gid}`, g, "--reset-env", "--"];
}

/**
 * As the caller, so root's answers never reveal whether a root-only path exists: enters `cwd`
 * (which must be its real path), resolves the program to an executable regular file, and checks
 * the socket: the caller's, in a caller-owned directory closed to others, neither a symlink.
 */
async function resolveAsCaller(
  drop: string[],
  cwd: string,
  program: string,
  socketPath: string,
): Promise<string> {
  const script = 'cd -- "$1" 2>/dev/null || exit 3; [ "$(pwd -P)" = "$1" ] || exit 4; ' +
    'p=$(/usr/bin/realpath -e -- "$2" 2>/dev/null) || exit 5; ' +
    '[ -f "$p" ] && [ -x "$p" ] || exit 6; ' +
    's=$3; d=${s%/*}; [ -S "$s" ] && [ ! -L "$s" ] && [ -O "$s" ] && [ -d "$d" ] && ' +
    '[ ! -L "$d" ] && [ -O "$d" ] || exit 7; ' +
    'case $(/usr/bin/stat -c %a -- "$d" 2>/dev/null) in [1-7]00) ;; *) exit 7 ;; esac; ' +
    'printf "%s" "$p"';
  const out = await new Deno.Command(SETPRIV, {
    args: [...drop, "/bin/sh", "-c", script, "sh", cwd, program, socketPath],
    cwd: "/",
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output().catch(() => refuse(R.START_FAILED));
  const real = new TextDecoder().decode(out.stdout);
  if (out.code === 3) refuse(R.CWD_UNREACHABLE);
  if (out.code === 4) refuse(R.CWD_NOT_REAL);
  if (out.code === 5) refuse(`program not found: ${program}`);
  if (out.code === 6) refuse(`not an executable file: ${real || program}`);
  if (out.code === 7) refuse(R.NO_SOCKET);
  if (out.code !== 0 || !real.startsWith("/")) refuse(R.INTERNAL);
  return real;
}

/**
 * The socket path may have been swapped since {@link resolveAsCaller}: its server must have the
 * caller's uid (`SO_PEERCRED`) and be an ancestor of this broker (the pi that ran `pi-secret-run`).
 */
async function checkPeer(socket: Socket, uid: number, invoker: number): Promise<number> {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd ?? -1;
  const cred = new Uint8Array(12);
  const len = new Uint8Array([12, 0, 0, 0]);
  if (libc.getsockopt(fd, 1, /* SOL_SOCKET */ 17, /* SO_PEERCRED */ cred, len) !== 0) {
    refuse(R.SOCKET_PEER);
  }
  const view = new DataView(cred.buffer);
  const [pid, peerUid] = [view.getInt32(0, true), view.getUint32(4, true)];
  if (peerUid !== uid) refuse(R.SOCKET_PEER);
  for await (const p of ancestors(invoker, procStat)) if (p === pid) return pid;
  refuse(R.SOCKET_PEER);
}

/** Asks the pi session for the secret; returns it as bytes (caller zeroes), and pi's pid. */
async function askSession(
  socketPath: string,
  who: { uid: number; invoker: number },
  request: Omit<SecretRequest, "type" | "pid">,
  preconsent: ReturnType<typeof setTimeout>,
): Promise<{ secret: Uint8Array; piPid: number }> {
  const socket = createConnection({ path: socketPath });
  await new Promise<void>((resolve) => {
    socket.once("connect", resolve);
    socket.on("error", () => refuse(socket.readyState === "opening" ? R.UNREACHABLE : R.CLOSED));
  });
  const piPid = await checkPeer(socket, who.uid, who.invoker);
  const body = readFrame(chunksOf(socket)).then((read) => {
    if (read.ok) return read.body;
    return refuse(read.reason === "closed" ? R.CLOSED : `bad reply (${read.reason})`);
  });
  const { proof, ...rest } = request;
  socket.write(encodeSecretRequest({ ...rest, proof: proof.slice(-32), pid: Deno.pid }));
  clearTimeout(preconsent);
  const timer = setTimeout(() => refuse(R.ANSWER_TIMEOUT), ANSWER_DEADLINE_MS);
  const frame = await body;
  clearTimeout(timer);
  socket.destroy();
  const reply = decodeReply(frame, request.id);
  frame.fill(0);
  if (!reply.ok) refuse(`bad reply (${reply.reason})`);
  if (reply.message.type === "password_denied") {
    const reason = reply.message.reason;
    refuse(reason === "timeout" ? R.NOBODY_ANSWERED : reason);
  }
  // A secret always comes in the reply: nobody else may write the consumer's stdin.
  if (reply.message.type !== "password_response") refuse("bad reply (unexpected_type)");
  return { secret: reply.message.password, piPid };
}

/**
 * The socket's chunks for {@link readFrame}, ending at close. Not the stream's own iterator:
 * stopping it early destroys the socket and can emit an error, which here means "closed". Ends
 * once two frames' worth wait unread (the reader has refused the frame by then).
 */
function chunksOf(socket: Socket): AsyncIterable<Uint8Array> {
  const queue: Uint8Array[] = [];
  let queued = 0;
  let ended = false;
  let wake: (() => void) | undefined;
  const onData = (chunk: Uint8Array) => {
    if (ended) return void chunk.fill(0); // past the bound: dropped, the reader has refused
    queue.push(chunk);
    queued += chunk.length;
    if (queued > 2 * MAX_FRAME_BYTES) ended = true;
    wake?.();
  };
  const onClose = () => {
    ended = true;
    wake?.();
  };
  socket.on("data", onData);
  socket.once("close", onClose);
  const stop = () => {
    socket.off("data", onData);
    socket.off("close", onClose);
  };
  return {
    [Symbol.asyncIterator]: () => ({
      async next(): Promise<IteratorResult<Uint8Array>> {
        while (queue.length === 0 && !ended) await new Promise<void>((r) => wake = r);
        wake = undefined;
        const value = queue.shift();
        if (value) {
          queued -= value.length;
          return { value, done: false };
        }
        stop();
        return { value: undefined, done: true };
      },
      return(): Promise<IteratorResult<Uint8Array>> {
        stop();
        return Promise.resolve({ value: undefined, done: true });
      },
    }),
  };
}

/**
 * The keeper, a root `sh` started by {@link runConsumer}: orphaned out of the caller's process
 * tree, it runs the consumer as its child, so with Yama `ptrace_scope` 1 the agent cannot trace it
 * (ADR 0008). It refuses under a subreaper that is not pi or above it. On fd 4 (the status FIFO):
 * `started CHILD KEEPER`, then `exit N`; or `unsafe PARENT`. It passes TERM, INT and HUP on.
 */
const KEEPER = `
PATH=/usr/sbin:/usr/bin:/sbin:/bin
outer=$1; fifo=$2; pi=$3; shift 3
exec 4>"$fifo" || exit 1
ppid_of() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f2; }
i=0
while [ "$(ppid_of $$)" = "$outer" ] && [ $i -lt 300 ]; do sleep 0.01; i=$((i + 1)); done
p=$(ppid_of $$); ok=no; q=$pi; n=0
[ "$p" = 1 ] && ok=yes
while [ "$ok" = no ] && [ -n "$q" ] && [ "$q" -gt 1 ] && [ $n -lt 64 ]; do
  [ "$q" = "$p" ] && ok=yes
  q=$(ppid_of "$q"); n=$((n + 1))
done
[ "$ok" = yes ] || { echo "unsafe $p" >&4; exit 0; }
"$@" <&5 5<&- 4>&- &
child=$!
exec 5<&-
echo "started $child $$" >&4
for s in TERM INT HUP; do trap "kill -$s $child 2>/dev/null" "$s"; done
while :; do wait "$child"; rc=$?; kill -0 "$child" 2>/dev/null || break; done
echo "exit $rc" >&4
`;
/** The shell that starts the keeper in its background and exits: stdin goes along as fd 5. */
const ORPHAN = 'body=$1; shift; exec 5<&0 </dev/null; /bin/sh -c "$body" keeper "$$" "$@" & exit 0';
/** How long the keeper may take to report that the consumer started. */
const KEEPER_START_MS = 10_000;
/** How often the keeper's liveness is looked at while the consumer runs. */
const KEEPER_POLL_MS = 500;

/** Lines from the keeper's status FIFO, as they come (bounded). */
async function* statusLines(file: Deno.FsFile): AsyncGenerator<string> {
  const buf = new Uint8Array(256);
  let pending = "";
  try {
    for (;;) {
      const n = await file.read(buf);
      if (n === null) return;
      pending += new TextDecoder().decode(buf.subarray(0, n));
      if (pending.length > 1024) return;
      let nl;
      while ((nl = pending.indexOf("\n")) >= 0) {
        yield pending.slice(0, nl);
        pending = pending.slice(nl + 1);
      }
    }
  } finally {
    file.close();
  }
}

/**
 * Runs the consumer under the {@link KEEPER}, through `setpriv` as the caller, entering `cwd` only
 * after the drop. Deno makes the stdin pipe while still root: a root-owned 0600 pipe the caller's
 * other processes cannot open.
 */
async function runConsumer(
  drop: string[],
  cwd: string,
  argv: string[],
  secret: Uint8Array,
  piPid: number,
): Promise<number> {
  const enter = 'cd -- "$1" 2>/dev/null || { echo "pi-secret-broker: $2" >&2; exit 125; }; ' +
    'shift 2; exec "$@"';
  /** Every refusal before the secret is handed over zeroes it first. */
  function abandon(reason: string): never {
    secret.fill(0);
    return refuse(reason);
  }
  statusPath = `${PROOF_DIR}/${newRequestId()}.status`;
  if (libc.mkfifo(encoder.encode(`${statusPath}\0`), 0o600) !== 0) abandon(R.START_FAILED);
  // Opened read-write first, so the keeper's own open never waits: a broker that stops early
  // cannot leave a root keeper blocked in open(2).
  const statusFile = await Deno.open(statusPath, { read: true, write: true });
  const asCaller = [SETPRIV, ...drop, "/bin/sh", "-c", enter, "sh", cwd, R.CWD_UNREACHABLE];
  let keeper: Deno.ChildProcess;
  try {
    keeper = new Deno.Command("/bin/sh", {
      args: ["-c", ORPHAN, "orphan", KEEPER, statusPath, String(piPid), ...asCaller, ...argv],
      cwd: "/",
      clearEnv: true,
      env: {},
      stdin: "piped",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
  } catch {
    abandon(R.START_FAILED);
  }
  const late = setTimeout(() => refuse(R.START_FAILED), KEEPER_START_MS);
  const lines = statusLines(statusFile);
  const first = (await lines.next()).value ?? "";
  clearTimeout(late);
  if (/^unsafe (\d+)$/.test(first)) abandon(R.SUBREAPER);
  const started = /^started (\d+) (\d+)$/.exec(first);
  if (!started) abandon(R.START_FAILED);
  consumer = { pid: Number(started[1]), keeper: Number(started[2]) };
  const line = new Uint8Array(secret.length + 1);
  line.set(secret);
  line[secret.length] = 0x0a;
  secret.fill(0);
  const writer = keeper.stdin.getWriter();
  const deadline = new Promise<"late">((r) => setTimeout(() => r("late"), STDIN_DEADLINE_MS));
  const wrote = await Promise.race([writer.write(line).then(() => "ok" as const), deadline])
    .catch(() => "closed" as const);
  line.fill(0);
  if (wrote === "late") {
    libc.kill(consumer.pid, 9); // kill first, then close
    await writer.abort().catch(() => {});
    refuse(R.STDIN_LATE);
  }
  await writer.close().catch(() => {});
  await keeper.status; // the orphaning shell, gone at once
  // The FIFO never ends (we hold a writer): a keeper dead without an exit line is seen by its pid.
  let poll: ReturnType<typeof setInterval> | undefined;
  const gone = new Promise<"gone">((resolve) => {
    poll = setInterval(() => {
      if (libc.kill(consumer!.keeper, 0) !== 0) resolve("gone");
    }, KEEPER_POLL_MS);
  });
  try {
    for (;;) {
      const pending = lines.next();
      let next = await Promise.race([pending, gone]);
      // Gone: its last line may still wait in the FIFO, a moment to read it.
      if (next === "gone") {
        next = await Promise.race([
          pending,
          new Promise<"gone">((r) => setTimeout(r, 300, "gone")),
        ]);
      }
      if (next === "gone" || next.done) return BROKER_REFUSAL_EXIT; // died without a word
      const m = /^exit (\d+)$/.exec(next.value);
      if (m) return Number(m[1]);
    }
  } finally {
    clearInterval(poll);
  }
}

async function main(): Promise<void> {
  const preconsent = setTimeout(() => refuse(R.PRECONSENT_TIMEOUT), PRECONSENT_DEADLINE_MS);
  const who = caller();
  const args = parseBrokerArgs(Deno.args);
  if (!args) refuse(R.BAD_ARGUMENTS);
  if (args.argv.length === 0 || args.argv.length > MAX_SECRET_ARGS) refuse(R.BAD_PROGRAM_ARGUMENTS);
  if (
    args.argv.some((a) => a.includes("\0")) || encoder.encode(args.label).length > MAX_LABEL_BYTES
  ) {
    refuse(R.BAD_LABEL);
  }
  // deno-lint-ignore no-control-regex
  if (!args.cwd.startsWith("/") || /[\x00-\x1f\x7f]/.test(args.cwd)) refuse(R.BAD_CWD);
  if (!args.argv[0].startsWith("/")) refuse(R.PROGRAM_PATH);
  // The request must fit one frame (MAX_FRAME_BYTES) with room for the header.
  if (encoder.encode(JSON.stringify([args.argv, args.cwd])).length > 6000) {
    refuse(R.ARGUMENTS_TOO_LONG);
  }
  const parent = sudoParent(who.uid);
  watchParent(parent.sudo);
  const id = newRequestId();
  await claimSlot(who.uid, id);
  const drop = dropTo(who, parent.groups);
  const program = await resolveAsCaller(drop, args.cwd, args.argv[0], args.socketPath);
  const argv = [program, ...args.argv.slice(1)];
  const allowlisted = await argvIsAllowlisted(argv);
  const { secret, piPid } = await askSession(
    args.socketPath,
    { uid: who.uid, invoker: parent.invoker },
    { id, proof: proofPath!, argv, cwd: args.cwd, label: args.label, allowlisted },
    preconsent,
  );
  exit(await runConsumer(drop, args.cwd, argv, secret, piPid));
}

main().catch(() => refuse(R.INTERNAL));
