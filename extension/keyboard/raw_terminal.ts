/**
 * A terminal pi opened itself (a locked tmux client's, ADR 0009): exclusive
 * while pi holds it, raw, and non-blocking, one libc call per read or write: a
 * terminal that stops reading (a stalled ssh, Ctrl+S) costs a dropped frame,
 * never a stalled event loop.
 *
 * @module
 */
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { libc } from "../../kernel/libc.ts";
import { TTY_IOCTL } from "../../kernel/tty_ioctls.ts";
import { flushTerminalInput, setTerminalExclusive } from "./terminal_control.ts";

/** Offsets in the kernel's `struct termios` (asm-generic): four `u32` flags, then `c_cc`. */
const IFLAG = 0;
const OFLAG = 4;
const CFLAG = 8;
const LFLAG = 12;
const CC = 17;
const VTIME = 5;
const VMIN = 6;
/** `cfmakeraw`'s bits (Linux generic values). */
const RAW_OFF_I = 0o1 | 0o2 | 0o10 | 0o40 | 0o100 | 0o200 | 0o400 | 0o2000;
const RAW_OFF_O = 0o1;
const RAW_OFF_L = 0o10 | 0o100 | 0o2 | 0o1 | 0o100000;
const CSIZE_PARENB = 0o60 | 0o400;
const CS8 = 0o60;
/** Bytes read at most per read: a paste arrives in several. */
const READ_CHUNK = 4096;

/** Why a terminal could not be taken. */
export type TakeFailure = "open_failed" | "not_the_terminal" | "not_exclusive" | "no_ffi";

/** An open terminal of pi's, exclusive and raw. */
export class RawTerminal {
  readonly #fd: number;
  readonly #saved: Uint8Array;
  /** One decoder for the terminal's life: a character may be split across two reads. */
  readonly #decoder = new TextDecoder();
  #closed = false;

  private constructor(fd: number, saved: Uint8Array) {
    [this.#fd, this.#saved] = [fd, saved];
  }

  /** Opens `path` (device `rdev`), makes it exclusive, drops earlier input, puts it in raw mode. */
  static take(path: string, rdev: number): { ok: true; terminal: RawTerminal } | {
    ok: false;
    reason: TakeFailure;
  } {
    const c = libc();
    if (!c) return { ok: false, reason: "no_ffi" };
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDWR | constants.O_NOCTTY | constants.O_NONBLOCK);
    } catch {
      return { ok: false, reason: "open_failed" };
    }
    const fail = (reason: TakeFailure) => {
      closeSync(fd);
      return { ok: false, reason } as const;
    };
    const st = fstatSync(fd);
    if (!st.isCharacterDevice() || st.rdev !== rdev) return fail("not_the_terminal");
    if (!setTerminalExclusive(fd, true).ok) return fail("not_exclusive");
    flushTerminalInput(fd);
    const saved = new Uint8Array(64);
    if (c.ioctlStruct(fd, TTY_IOCTL.TCGETS, saved) !== 0) return fail("not_the_terminal");
    const raw = saved.slice();
    const view = new DataView(raw.buffer);
    const and = (off: number, mask: number) =>
      view.setUint32(off, view.getUint32(off, true) & ~mask, true);
    and(IFLAG, RAW_OFF_I);
    and(OFLAG, RAW_OFF_O);
    and(LFLAG, RAW_OFF_L);
    and(CFLAG, CSIZE_PARENB);
    view.setUint32(CFLAG, view.getUint32(CFLAG, true) | CS8, true);
    raw[CC + VMIN] = 1;
    raw[CC + VTIME] = 0;
    c.ioctlStruct(fd, TTY_IOCTL.TCSETS, raw);
    return { ok: true, terminal: new RawTerminal(fd, saved) };
  }

  /** What was typed since the last read, or `""` (never waits). */
  read(): string {
    const c = libc();
    if (this.#closed || !c) return "";
    const buf = new Uint8Array(READ_CHUNK);
    let out = "";
    for (let i = 0; i < 16; i++) {
      const n = c.read(this.#fd, buf, buf.length);
      if (n <= 0) break;
      out += this.#decoder.decode(buf.subarray(0, n), { stream: true });
      if (n < buf.length) break;
    }
    buf.fill(0);
    return out;
  }

  /** Writes `text` if the terminal takes it now; a frame it cannot take is dropped. */
  write(text: string): void {
    const c = libc();
    if (this.#closed || !c) return;
    const bytes = new TextEncoder().encode(text);
    let off = 0;
    for (let i = 0; i < 64 && off < bytes.length; i++) {
      const n = c.write(this.#fd, bytes.subarray(off), bytes.length - off);
      if (n <= 0) break;
      off += n;
    }
  }

  /** Columns and rows, or 80×24 when the terminal does not say. */
  size(): { cols: number; rows: number } {
    const c = libc();
    const ws = new Uint8Array(8);
    if (this.#closed || !c || c.ioctlStruct(this.#fd, TTY_IOCTL.TIOCGWINSZ, ws) !== 0) {
      return { cols: 80, rows: 24 };
    }
    const v = new DataView(ws.buffer);
    const rows = v.getUint16(0, true);
    const cols = v.getUint16(2, true);
    return { cols: cols || 80, rows: rows || 24 };
  }

  /** Drops what was typed and not read. */
  dropInput(): void {
    if (!this.#closed) flushTerminalInput(this.#fd);
  }

  /**
   * Closes it untouched: the lock ended, so tmux owns the terminal again, and
   * the keeper has dropped typed input and cleared exclusive mode.
   */
  abandon(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.#fd);
  }

  /** Drops typed input, restores the modes pi found, clears exclusive mode, closes. */
  restore(): void {
    if (this.#closed) return;
    this.#closed = true;
    flushTerminalInput(this.#fd);
    libc()?.ioctlStruct(this.#fd, TTY_IOCTL.TCSETS, this.#saved);
    setTerminalExclusive(this.#fd, false);
    closeSync(this.#fd);
  }
}
