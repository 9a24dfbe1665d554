/**
 * The kernel descriptor behind a `node:net` socket, and its `stat`: what the
 * peer checks need to ask the kernel about a connection (SO_PEERCRED, the
 * socket's inode for SOCK_DIAG). Runtime-neutral: pi runs this in Node, the
 * real-sudo test suites run it under `deno test`.
 *
 * @module
 */
import { fstatSync, type Stats, statSync } from "node:fs";
import type { Socket } from "node:net";

/**
 * Deno's `node:fs` stats only descriptors it opened itself (`EBADF` for a
 * socket accepted by `node:net`). There, `/proc/self/fd/<fd>` names the same
 * open file, and `stat` through it gives the same inode. Decided once, by
 * runtime, so Node never takes the path-based route.
 */
const VIA_PROC = "Deno" in globalThis;

/**
 * The file descriptor behind a Node socket. `_handle.fd` is internal to Node
 * (and mirrored by Deno) but stable for Unix-domain sockets; without it the
 * callers fail closed.
 */
export function socketFd(socket: Socket): number | undefined {
  // deno-lint-ignore no-explicit-any -- reaching into the internal handle on purpose
  const fd = (socket as any)._handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : undefined;
}

/**
 * `fstat(fd)` of a descriptor this process holds, or `undefined`. Never
 * throws, never waits: a held socket's or pipe's `fstat` reads kernel memory.
 */
export function fdStatSync(fd: number): Stats | undefined {
  try {
    return VIA_PROC ? statSync(`/proc/self/fd/${fd}`) : fstatSync(fd);
  } catch {
    return undefined;
  }
}
