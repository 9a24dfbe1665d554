/**
 * The Linux request numbers that keep pi's keyboard to pi, for pi's Node
 * (`libc.ts`) and the guardian's Deno (`deno_libc.ts`). Plain numbers, no
 * I/O: the guardian runs a root-owned copy.
 *
 * @module
 */

/** Terminal `ioctl` requests: asm-generic values, the same on x86_64, arm64 and riscv64. */
export const TTY_IOCTL = {
  TCGETS: 0x5401,
  TCSETS: 0x5402,
  TCFLSH: 0x540b,
  TIOCEXCL: 0x540c,
  TIOCNXCL: 0x540d,
  TIOCGWINSZ: 0x5413,
  /** Bytes waiting to be read. */
  FIONREAD: 0x541b,
  /** `_IOR('T', 0x40, int)`. */
  TIOCGEXCL: 0x80045440,
  /** `TCFLSH`'s argument: drop what was received and not read. */
  TCIFLUSH: 0,
} as const;

/** `prctl` options that read and set whether a process is dumpable. */
export const DUMPABLE_PRCTL = { GET: 3, SET: 4 } as const;
