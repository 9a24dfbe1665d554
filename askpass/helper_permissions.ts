/**
 * The askpass helper's Deno flags and environment, written once: the launcher is generated from
 * them and the peer verification compares `/proc/<pid>/cmdline` and `environ` with them, so the
 * two never drift apart. Each flag: `docs/permissions.md`.
 *
 * @module
 */

/** Environment variables the launcher sets for the helper, in launcher order. */
export const HELPER_ENV = {
  /** Deno's cache for the helper's transpiled modules (startup 30 ms instead of 200 ms). */
  DENO_DIR: "DENO_DIR",
  /** Keeps Deno's own diagnostics free of colour escapes. */
  NO_COLOR: "NO_COLOR",
  /** Absolute path of the session socket. */
  SOCKET: "PI_ASKPASS_SOCKET",
  /** The helper's own hard deadline in milliseconds. */
  DEADLINE_MS: "PI_ASKPASS_DEADLINE_MS",
} as const;

/**
 * Variables that change how a runtime loads code: the helper refuses to run when one is set, and
 * may read them for that check only.
 */
export const HELPER_FORBIDDEN_ENV: readonly string[] = [
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "LD_AUDIT",
  "NODE_OPTIONS",
  "DENO_V8_FLAGS",
];

/**
 * `run` and the flags every entry point pins: never prompt, nothing from the network or npm, no
 * config or lock file from a parent directory. Permission flags follow per entry point.
 */
export const DENO_RUN_PINNED: readonly string[] = [
  "run",
  "--no-prompt",
  "--no-remote",
  "--no-npm",
  "--no-config",
  "--no-lock",
];

/** Values the launcher bakes into the helper's environment. */
export interface HelperEnvValues {
  readonly denoDir: string;
  readonly socketPath: string;
  readonly deadlineMs: number;
}

/** The helper's complete environment, `NAME=value`, in launcher order. */
export function helperEnvironment(v: HelperEnvValues): string[] {
  return [
    `${HELPER_ENV.DENO_DIR}=${v.denoDir}`,
    `${HELPER_ENV.NO_COLOR}=1`,
    `${HELPER_ENV.SOCKET}=${v.socketPath}`,
    `${HELPER_ENV.DEADLINE_MS}=${v.deadlineMs}`,
  ];
}

/** The helper's argv, `[deno, "run", ...pinned flags, helperPath]`; sudo appends the prompt. */
export function helperArgvPrefix(
  denoPath: string,
  helperPath: string,
  socketPath: string,
): string[] {
  const readEnv = [...Object.values(HELPER_ENV), ...HELPER_FORBIDDEN_ENV].join(",");
  return [
    denoPath,
    ...DENO_RUN_PINNED,
    `--allow-read=${socketPath}`,
    `--allow-write=${socketPath}`,
    `--allow-net=unix:${socketPath}`,
    `--allow-env=${readEnv}`,
    helperPath,
  ];
}

/**
 * True when `path` can go into a Deno permission flag and a shell script without escaping
 * surprises: absolute, printable ASCII, free of the list separator `,` and of quotes.
 */
export function isSafeFlagPath(path: string): boolean {
  return /^\/[A-Za-z0-9._\/@+-]*$/.test(path) && !path.includes("//") && path.length < 4096;
}
