/**
 * The terminal guardian: a Deno entry point that the extension starts once
 * per pi process (see `terminal_guard.ts`). It exists for one job: when pi
 * dies, even by SIGKILL, take pi's terminal out of exclusive mode so that the
 * user's shell, `sudo` and `ssh` can open it again. It holds no secret and
 * never reads from the terminal.
 *
 * Protocol on its pipes (one word a line): it makes itself non-dumpable and
 * writes `ready`; on `open` it opens the terminal (`O_NOCTTY`), sets
 * exclusive mode and writes `held`. Then it waits for end of file on stdin,
 * which happens only when pi (the one holder of the other end) is gone, and
 * clears exclusive mode. Non-dumpable before it opens the terminal, so no
 * process of the user can copy the descriptor out of it (`pidfd_getfd`,
 * `ptrace`).
 *
 * argv: `<absolute libc path> <terminal path>`. Permissions: `--allow-ffi`
 * for that libc only (`guardian_permissions.ts`).
 *
 * @module
 */

const [libcPath, ttyPath] = Deno.args;
const encoder = new TextEncoder();
const PR_GET_DUMPABLE = 3;
const PR_SET_DUMPABLE = 4;
const O_RDWR = 0o2;
const O_NOCTTY = 0o400;
const O_CLOEXEC = 0o2000000;
const TIOCEXCL = 0x540c;
const TIOCNXCL = 0x540d;

function say(word: string): void {
  Deno.stdout.writeSync(encoder.encode(word + "\n"));
}

function fail(reason: string): never {
  try {
    say(`error ${reason}`);
  } catch {
    // pi is gone: nothing to tell
  }
  Deno.exit(1);
}

if (Deno.args.length !== 2 || !libcPath.startsWith("/") || !/^\/dev\/[a-z0-9/]+$/.test(ttyPath)) {
  fail("usage");
}

const libc = Deno.dlopen(libcPath, {
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  open: { parameters: ["buffer", "i32"], result: "i32" },
  ioctl: { parameters: ["i32", "u64", "u64"], result: "i32" },
});
const c = libc.symbols;

if (c.prctl(PR_SET_DUMPABLE, 0n, 0n, 0n, 0n) !== 0 || c.prctl(PR_GET_DUMPABLE, 0n, 0n, 0n, 0n)) {
  fail("dumpable");
}
say("ready");

/** Reads stdin up to the next newline; `undefined` at end of file. */
const reader = Deno.stdin.readable.getReader();
let pending = "";
async function nextLine(): Promise<string | undefined> {
  const decoder = new TextDecoder();
  while (!pending.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) return undefined;
    pending += decoder.decode(value);
    if (pending.length > 64) fail("input");
  }
  const line = pending.slice(0, pending.indexOf("\n"));
  pending = pending.slice(line.length + 1);
  return line;
}

if (await nextLine() !== "open") Deno.exit(0);
const fd = c.open(encoder.encode(ttyPath + "\0"), O_RDWR | O_NOCTTY | O_CLOEXEC);
if (fd < 0) fail("open");
if (c.ioctl(fd, BigInt(TIOCEXCL), 0n) !== 0) fail("ioctl");
say("held");

// Anything else pi writes is ignored; only the end of file matters.
while (await nextLine() !== undefined) { /* wait */ }
c.ioctl(fd, BigInt(TIOCNXCL), 0n);
Deno.exit(0);
