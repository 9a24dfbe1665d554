/**
 * The lock keeper: the Deno entry point that tmux runs as the `lock-command`
 * of a client while pi asks for a password on that client's terminal (ADR
 * 0009). While it runs, the client waits in `system(3)` and the tmux server
 * reads nothing from the client's terminal; pi reads it instead.
 *
 * It holds the client's terminal on stdin (tmux's doing) and a connection to
 * pi, and waits for pi to close the connection. It never reads the terminal
 * and holds no secret. What it does is for the moments pi cannot act:
 *
 * - **pi stopped** (SIGSTOP, which pi cannot catch): every {@link POLL_MS}
 *   it looks at pi's `stat`; when pi is stopped it erases the modal,
 *   writes a warning, and drops whatever is typed until nothing comes for
 *   {@link DROP_IDLE_MS}, so a password typed blindly is read by nobody;
 *   then it ends the lock, so that the human can resume pi from pi's pane
 *   (pi denies the request when it runs again);
 * - **the lock ends** (pi closed the connection: the modal ended, or pi
 *   died; or its own {@link DEADLINE_MS} passed): the keys typed and not
 *   yet read are dropped before tmux reads the terminal again, and
 *   exclusive mode (which pi set) is cleared.
 *
 * pi verifies it through the kernel (its pid from `SO_PEERCRED`, its exact
 * argv and environment, its parent the tmux client): `keeper_check.ts`.
 *
 * argv: `<socket path> <absolute libc path> <pi's pid>`.
 *
 * @module
 */
import { openDenoLibc } from "../../kernel/deno_libc.ts";
import { parseStat } from "../../kernel/proc.ts";
import { TTY_IOCTL } from "../../kernel/tty_ioctls.ts";

/** Longer than any request (120 s) with its queue: the lock ends by itself after this. */
const DEADLINE_MS = 150_000;
/** How often pi is looked at. */
const POLL_MS = 50;
/** While pi is stopped, keys are dropped until none came for this long. */
const DROP_IDLE_MS = 1500;
const O_RDONLY = 0;
const O_CLOEXEC = 0o2000000;
// `piStopped`: written where the modal was when pi stops while it shows (pi's
// text, in the user's language: the keeper loads no language table).
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

/** The keys typed at the client and not read are dropped; the terminal opens to others again. */
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

/** When pi was first seen stopped, and when a key was last dropped since. */
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
  // Once nothing is typed for a while, the terminal goes back to tmux, so that
  // the human can resume pi (`fg` in pi's pane); pi denies the request then.
  if (now - lastKey >= DROP_IDLE_MS) letGo();
}, POLL_MS);

const deadline = AbortSignal.timeout(DEADLINE_MS);
deadline.addEventListener("abort", letGo);
const conn = await Deno.connect({ transport: "unix", path: socketPath }).catch(() => undefined);
if (!conn) letGo();
// pi sends nothing: any byte, the end of file or an error all end the lock.
await conn.read(new Uint8Array(16)).catch(() => null);
letGo();
