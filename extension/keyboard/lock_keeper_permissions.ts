/**
 * The lock keeper's Deno flags and environment, in one place (explained in
 * `docs/permissions.md`): pi builds tmux's `lock-command` from these lists and
 * checks the keeper's `cmdline` and `environ` against the very same lists.
 *
 * @module
 */
import { DENO_RUN_PINNED, isSafeFlagPath } from "../../askpass/helper_permissions.ts";

/** Where the keeper runs from, and what it connects to. */
export interface KeeperPlace {
  readonly deno: string;
  readonly keeper: string;
  readonly denoDir: string;
  readonly libc: string;
  readonly socket: string;
  /** pi's pid: the keeper drops typed keys while pi is stopped. */
  readonly pi: number;
  /** The line it shows where the modal was when pi stops, in the user's language. */
  readonly piStopped: string;
}

/** argv of the keeper: pinned flags, read/write/net for this lock's socket, FFI for pi's libc. */
export function keeperArgv(p: KeeperPlace): string[] {
  return [
    p.deno,
    ...DENO_RUN_PINNED,
    `--allow-read=${p.socket}`,
    `--allow-write=${p.socket}`,
    `--allow-net=unix:${p.socket}`,
    `--allow-ffi=${p.libc}`,
    p.keeper,
    p.socket,
    p.libc,
    String(p.pi),
    p.piStopped,
  ];
}

/** The keeper's whole environment, `NAME=value`: its Deno cache, and no colours. */
export function keeperEnvironment(p: KeeperPlace): string[] {
  return [`DENO_DIR=${p.denoDir}`, "NO_COLOR=1"];
}

/**
 * tmux's `lock-command`: `exec` (the keeper is the client's own child), `env -i`
 * (none of the client's environment reaches Deno), output to `/dev/null` (it
 * holds the terminal on stdin only). `undefined` when a path or the text cannot
 * be written into it safely.
 */
export function keeperLockCommand(p: KeeperPlace, envPath: string): string | undefined {
  const parts = [envPath, "-i", ...keeperEnvironment(p), ...keeperArgv(p)];
  if (![envPath, p.deno, p.keeper, p.denoDir, p.libc, p.socket].every(isSafeFlagPath)) {
    return undefined;
  }
  // Single quotes around every part: none may hold one (tmux and sh read the command).
  if (parts.some((a) => a.includes("'"))) return undefined;
  return `exec ${parts.map((a) => `'${a}'`).join(" ")} >/dev/null 2>&1`;
}
