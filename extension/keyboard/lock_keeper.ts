/**
 * The lock keeper: tmux runs it as a client's `lock-command` while pi asks for
 * a password on that client's terminal (ADR 0009 §1, step 2; checked by
 * `keeper_check.ts`). It holds the terminal on stdin, never reads it, holds no
 * secret, and waits for pi to close its connection. While pi is stopped it
 * erases the modal and drops typed keys until none came for {@link DROP_IDLE_MS}
 * (a password typed blindly is read by nobody), then ends the lock. When the
 * lock ends it drops typed keys and clears exclusive mode before tmux reads the
 * terminal again.
 *
 * @module
 */
import { openDenoLibc } from "../../kernel/deno_libc.ts";
import { parseStat } from "../../kernel/proc.ts";
import { TTY_IOCTL } from "../../kernel/tty_ioctls.ts";

/** Longer than any request (120 s) with its queue: the lock ends by itself after this. */
const DEADLINE_MS = 150_000;
const POLL_MS = 50;
/** While pi is stopped, keys are dropped until none came for this long. */
const DROP_IDLE_MS = 1500;
const O_RDONLY = 0;
const O_CLOEXEC = 0o2000000;
// `piStopped`: pi's line for where the modal was, in the user's language (no table here).
const [socketPath, libcPath, piArg, piStopped] = Deno.args;
if (
  Deno.args.length !== 4 || !socketPath.startsWith("/") || !libcPath.startsWith("/") ||
  !/^[1-9][0-9]{0,9}$/.test(piArg) ||
  // One line, nothing a terminal obeys.
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  !/^[^\x00-\x1f\x7f-\x9f]{1,400}$/u.test(piStopped)
) {
  Deno.exit(2);
}
const c = openDenoLibc(libcPath);
const encoder = new TextEncoder();

/** pi's state letter (`R`, `S`, `T`…), or `undefined` once it is gone. */
function piState(): string | undefined {
  const fd = c.open(encoder.encode(`/proc/${piArg}/stat\0`), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return undefined;
  const buf = new Uint8Array(1024);
  const n = Number(c.read(fd, buf, BigInt(buf.length)));
  c.close(fd);
  const stat = n > 0 ? parseStat(new TextDecoder().decode(buf.subarray(0, n))) : undefined;
  return stat?.state;
}

function dropInput(): void {
  c.ioctl(0, BigInt(TTY_IOCTL.TCFLSH), BigInt(TTY_IOCTL.TCIFLUSH));
}

function letGo(): never {
  dropInput();
  c.ioctl(0, BigInt(TTY_IOCTL.TIOCNXCL), 0n);
  Deno.exit(0);
}

/** Bytes typed and not yet read (`FIONREAD`). */
function pending(): number {
  const count = new Uint8Array(4);
  return c.ioctlPtr(0, BigInt(TTY_IOCTL.FIONREAD), count) === 0
    ? new DataView(count.buffer).getInt32(0, true)
    : 0;
}

let stoppedAt: number | undefined;
let lastKey = 0;
setInterval(() => {
  const state = piState();
  if (state !== "T" && state !== "t") return;
  const now = Date.now();
  if (stoppedAt === undefined) {
    stoppedAt = lastKey = now;
    const text = encoder.encode(`\x1b[0m\x1b[2J\x1b[H${piStopped}\r\n`);
    c.write(0, text, BigInt(text.length));
  }
  if (pending() > 0) lastKey = now;
  dropInput();
  // Back to tmux, so that the human can resume pi from its pane; pi then denies the request.
  if (now - lastKey >= DROP_IDLE_MS) letGo();
}, POLL_MS);

const deadline = AbortSignal.timeout(DEADLINE_MS);
deadline.addEventListener("abort", letGo);
const conn = await Deno.connect({ transport: "unix", path: socketPath }).catch(() => undefined);
if (!conn) letGo();
// pi sends nothing: any byte, the end of file or an error all end the lock.
await conn.read(new Uint8Array(16)).catch(() => null);
letGo();
