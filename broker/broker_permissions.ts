/**
 * The root broker's Deno flags, written once (each explained in docs/permissions.md). The
 * root-owned launcher (`broker/pi-secret-broker.sh`) builds the same list in sh, a test keeps the
 * two in step, and the extension compares the broker's cmdline with {@link brokerArgvPrefix}.
 *
 * @module
 */
import { PROOF_DIR, ROOT_DENO, ROOT_SOURCES } from "./paths.ts";
import { DENO_RUN_PINNED } from "../askpass/helper_permissions.ts";

/** The one program the broker may start: it drops to the caller and execs the consumer. */
export const SETPRIV = "/usr/bin/setpriv";
/**
 * The only library the broker may load (`--allow-ffi`): libc, for `getsockopt(SO_PEERCRED)`,
 * `getppid()` and `/proc` reads (Deno allows `/proc` only to `-A`). The launcher picks the same
 * path with `uname -m`.
 */
export const BROKER_LIBC = isArm64()
  ? "/lib/aarch64-linux-gnu/libc.so.6"
  : "/lib/x86_64-linux-gnu/libc.so.6";
/**
 * True on 64-bit ARM, asked without `node:process`: in Deno, loading the Node layer (even reading
 * `globalThis.process` does) costs about 20 ms of start-up, and `pi-secret-run` imports this.
 */
function isArm64(): boolean {
  const deno = (globalThis as { Deno?: { build: { arch: string } } }).Deno;
  if (deno) return deno.build.arch === "aarch64";
  return (globalThis as unknown as { process: { arch: string } }).process.arch === "arm64";
}

/** Exit status of every refusal by the broker or `pi-secret-run` (like env(1)'s 125). */
export const BROKER_REFUSAL_EXIT = 125;
/** Brokers one caller (uid) may have running at once; more are refused at once. */
export const MAX_BROKERS_PER_UID = 4;

/**
 * Every refusal line of the broker (after `pi-secret-broker: `), for tests. None names what only
 * root could see: the program and the working directory are resolved as the caller.
 */
export const BROKER_REFUSALS = {
  NOT_ROOT: "must run as root through sudo (use pi-secret-run)",
  NO_SUDO_IDS: "no SUDO_UID/SUDO_GID: run through sudo (use pi-secret-run)",
  ROOT_CALLER: "refusing a root caller: run pi-secret-run as your own user",
  BAD_ARGUMENTS: "bad arguments (run pi-secret-run instead)",
  BAD_PROGRAM_ARGUMENTS: "bad program arguments",
  BAD_LABEL: "bad label or arguments",
  BAD_CWD: "bad working directory",
  ARGUMENTS_TOO_LONG: "arguments too long",
  NOT_FROM_SUDO: "not started by sudo for this caller",
  PARENT_GONE: "sudo (the broker's parent) is gone: stopping",
  INTERRUPTED: "interrupted",
  TOO_MANY: `too many brokers of this user are running (at most ${MAX_BROKERS_PER_UID})`,
  PROOF_DIR: "the proof directory is not root's",
  CWD_UNREACHABLE: "the working directory is not one the caller can enter",
  CWD_NOT_REAL: "the working directory must be a real path (no symlinks)",
  PROGRAM_PATH: "the program path must be absolute",
  /** One text for every socket-path problem: checked as the caller, it reveals nothing of root's. */
  NO_SOCKET: "no pi session socket of the caller at that path (is pi still running?)",
  /** A `/proc` file too long to read whole (a status with ~1000 groups): never a truncated read. */
  PROC_TOO_LARGE: "a /proc file of the caller is too large to read whole",
  SOCKET_PEER: "the session socket is not served by a pi of the caller; sent nothing",
  UNREACHABLE: "cannot reach the pi session (is pi still running?)",
  CLOSED: "the pi session closed the connection (refused: see pi's notice)",
  PRECONSENT_TIMEOUT: "timed out before the request reached pi",
  ANSWER_TIMEOUT: "timed out waiting for an answer",
  NOBODY_ANSWERED: "timed out: nobody answered in pi",
  START_FAILED: "cannot start the program",
  STDIN_LATE: "the program did not read the secret from its stdin within 10 s; killed it",
  INTERNAL: "internal error",
  /** The keeper landed under a subreaper below pi: the agent could trace the command. */
  SUBREAPER: "a process of the caller made itself a subreaper: refusing to run the command " +
    "where it could be traced",
} as const;

/** `[deno, "run", ...flags, entry]` for a broker talking to `socketPath`. */
export function brokerArgvPrefix(socketPath: string): string[] {
  return [
    ROOT_DENO,
    ...DENO_RUN_PINNED,
    "--allow-read",
    `--allow-write=${PROOF_DIR},${socketPath}`,
    `--allow-net=unix:${socketPath}`,
    `--allow-run=/bin/sh,${SETPRIV}`,
    "--allow-env=SUDO_UID,SUDO_GID",
    "--allow-sys=uid",
    `--allow-ffi=${BROKER_LIBC}`,
    `${ROOT_SOURCES}/broker/broker.ts`,
  ];
}

/** The broker's own arguments (after the entry point), as `pi-secret-run` passes them. */
export interface BrokerArgs {
  readonly socketPath: string;
  readonly label: string;
  /** The caller's working directory (`getcwd`: a real path); entered as the caller only. */
  readonly cwd: string;
  /** The program (absolute, as the caller resolved it on its PATH) and its arguments. */
  readonly argv: readonly string[];
}

/** Serialises {@link BrokerArgs}; the socket must come first (the launcher reads it). */
export function brokerArgs(a: BrokerArgs): string[] {
  return ["--socket", a.socketPath, "--label", a.label, "--cwd", a.cwd, "--", ...a.argv];
}

/** Parses {@link brokerArgs}; `undefined` for anything else. */
export function parseBrokerArgs(args: readonly string[]): BrokerArgs | undefined {
  const names = ["--socket", "--label", "--cwd", "--"];
  if (args.length < 8 || names.some((n, i) => args[i * 2] !== n)) return undefined;
  return { socketPath: args[1], label: args[3], cwd: args[5], argv: args.slice(7) };
}

/** The sudo binary `pi-secret-run` calls (`sudo -n <broker launcher> …`). */
export const PI_SECRET_RUN_SUDO = "/usr/bin/sudo";

/**
 * argv of the `pi-secret-run` client (runs as the user). Its read is unscoped: it reads the
 * broker's VERSION file and looks PROGRAM up on PATH, whose directories are the user's choice.
 */
export function piSecretRunArgv(denoPath: string, entry: string): string[] {
  return [
    denoPath,
    ...DENO_RUN_PINNED,
    "--allow-read",
    "--allow-env=PATH,PI_ASKPASS_SOCKET",
    `--allow-run=${PI_SECRET_RUN_SUDO}`,
    entry,
  ];
}
