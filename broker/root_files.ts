/**
 * The sources the broker installer copies, root-owned, to `/usr/local/libexec/pi-sudo-prompt/src/`
 * (same relative paths). `broker/install.sh` reads the list with `sed` (keep one quoted path a
 * line); the session server pins the helper's part of it in hardened mode (ADR 0003).
 *
 * @module
 */

/** Every source file the installer copies. */
export const ROOT_SOURCE_FILES = [
  "askpass/protocol.ts",
  "askpass/version.ts",
  "askpass/helper.ts",
  "askpass/helper_permissions.ts",
  "broker/broker.ts",
  "broker/broker_permissions.ts",
  "broker/paths.ts",
  "broker/allowlist.ts",
  "broker/allowlist_policy.ts",
  "broker/protected_path.ts",
  "broker/allowlist_append.ts",
  "shared/errno.ts",
  "shared/result.ts",
  "kernel/proc.ts",
  "kernel/deno_libc.ts",
  "kernel/tty_ioctls.ts",
  "extension/keyboard/terminal_guardian.ts",
  "extension/keyboard/lock_keeper.ts",
] as const;

/**
 * The terminal guardian and its imports, run from these root-owned copies in hardened mode: it is
 * exempt from the holder scans, so it must not run code the user's files could change (ADR 0008).
 */
export const HARDENED_GUARDIAN_FILES: readonly (typeof ROOT_SOURCE_FILES[number])[] = [
  "extension/keyboard/terminal_guardian.ts",
  "kernel/proc.ts",
  "kernel/deno_libc.ts",
  "kernel/tty_ioctls.ts",
];

/**
 * The lock keeper and its imports: it holds a tmux client's terminal while pi reads it, exempt
 * from the holder scans (ADR 0009).
 */
export const HARDENED_KEEPER_FILES: readonly (typeof ROOT_SOURCE_FILES[number])[] = [
  "extension/keyboard/lock_keeper.ts",
  "kernel/proc.ts",
  "kernel/deno_libc.ts",
  "kernel/tty_ioctls.ts",
];

/** The askpass helper and every module it imports: hardened mode runs these root-owned copies. */
export const HARDENED_HELPER_FILES: readonly (typeof ROOT_SOURCE_FILES[number])[] = [
  "askpass/helper.ts",
  "askpass/protocol.ts",
  "askpass/helper_permissions.ts",
];
