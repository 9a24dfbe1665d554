/**
 * The kernel descriptor behind a `node:net` socket, and its `stat`, for the peer
 * checks. Runtime-neutral: Node in pi, `deno test` in the real-sudo suites.
 *
 * @module
 */
import { type Stats, statSync } from "node:fs";
import type { Socket } from "node:net";

/**
 * The file descriptor behind a Node socket: `_handle.fd`, internal to Node
 * (Deno mirrors it) but stable for Unix sockets; without it callers fail closed.
 */
export function socketFd(socket: Socket): number | undefined {
  // deno-lint-ignore no-explicit-any -- reaching into the internal handle on purpose
  const fd = (socket as any)._handle?.fd;
  return Number.isInteger(fd) && fd >= 0 ? fd : undefined;
}

/**
 * `fstat(fd)` of a descriptor this process holds, or `undefined`. Never
 * throws, never waits: a held socket's or pipe's `fstat` reads kernel memory.
 * Through `/proc/self/fd/<fd>` (the same inode): Deno's `node:fs` stats only
 * descriptors it opened (`EBADF` for a socket `node:net` accepted).
 */
export function fdStatSync(fd: number): Stats | undefined {
  try {
    return statSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}
