/**
 * The root broker's Deno flags, written once. The root-owned launcher
 * (`broker/pi-secret-broker.sh`, installed as `BROKER_LAUNCHER`) builds the
 * same list in sh, and a test keeps the two in step; the extension compares
 * the broker's `/proc/<pid>/cmdline` against {@link brokerArgvPrefix}.
 * Each flag is explained in `docs/permissions.md`.
 *
 * @module
 */
import { PROOF_DIR, ROOT_DENO, ROOT_SOURCES } from "./paths.ts";
import { DENO_RUN_PINNED } from "../askpass/helper_permissions.ts";

/** Where the broker's entry point is installed. */
export const BROKER_ENTRY = `${ROOT_SOURCES}/broker/broker.ts`;
/** The one program the broker may start: it drops to the caller and execs the consumer. */
export const SETPRIV = "/usr/bin/setpriv";
/** Environment variables the broker reads (set by sudo). */
export const BROKER_ENV_NAMES: readonly string[] = ["SUDO_UID", "SUDO_GID", "SUDO_USER"];
/** Exit status of every refusal by the broker or `pi-secret-run` (like env(1)'s 125). */
export const BROKER_REFUSAL_EXIT = 125;

/** `[deno, "run", ...flags, entry]` for a broker talking to `socketPath`. */
export function brokerArgvPrefix(socketPath: string): string[] {
  return [
    ROOT_DENO,
    ...DENO_RUN_PINNED,
    "--allow-read",
    `--allow-write=${PROOF_DIR},${socketPath}`,
    `--allow-net=unix:${socketPath}`,
    `--allow-run=${SETPRIV}`,
    `--allow-env=${BROKER_ENV_NAMES.join(",")}`,
    "--allow-sys=uid",
    BROKER_ENTRY,
  ];
}

/** The broker's own arguments (after the entry point), as `pi-secret-run` passes them. */
export interface BrokerArgs {
  readonly socketPath: string;
  readonly label: string;
  readonly cwd: string;
  /** The program (absolute, as the caller resolved it on its PATH) and its arguments. */
  readonly argv: readonly string[];
}

/**
 * Serialises {@link BrokerArgs}; the socket must come first (the launcher
 * reads it). The session key is not an argument (sudo logs argv): the
 * client writes it on the broker's stdin.
 */
export function brokerArgs(a: BrokerArgs): string[] {
  return [
    "--socket",
    a.socketPath,
    "--label",
    a.label,
    "--cwd",
    a.cwd,
    "--",
    ...a.argv,
  ];
}

/** Parses {@link brokerArgs}; `undefined` for anything else. */
export function parseBrokerArgs(args: readonly string[]): BrokerArgs | undefined {
  if (args.length < 8) return undefined;
  const names = ["--socket", "--label", "--cwd"];
  for (let i = 0; i < names.length; i++) if (args[i * 2] !== names[i]) return undefined;
  if (args[6] !== "--") return undefined;
  return { socketPath: args[1], label: args[3], cwd: args[5], argv: args.slice(7) };
}

/** The sudo binary `pi-secret-run` calls (`sudo -n <broker launcher> …`). */
export const PI_SECRET_RUN_SUDO = "/usr/bin/sudo";

/**
 * argv of the `pi-secret-run` client (runs as the user):
 * `[deno, "run", ...flags, entry]`. It reads the broker's VERSION file and
 * looks PROGRAM up on PATH (unscoped read: the directories are the user's
 * choice), reads its three variables, and runs only sudo.
 */
export function piSecretRunArgv(denoPath: string, entry: string): string[] {
  return [
    denoPath,
    ...DENO_RUN_PINNED,
    "--allow-read",
    "--allow-env=PATH,PI_ASKPASS_SOCKET,PI_ASKPASS_SECRET",
    `--allow-run=${PI_SECRET_RUN_SUDO}`,
    entry,
  ];
}
