/**
 * What the doctor's checks share: the shape of a verdict, the injectable
 * inputs ({@link DoctorOptions}) and the {@link Context} they resolve to.
 *
 * Every input can be injected (environment, `/proc` root, candidate paths,
 * the command runner), so tests can make each check fail on purpose with
 * real files and fake binaries; everything defaults to the real machine.
 *
 * @module
 */
import { realpath } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { isSafeFlagPath } from "../../askpass/helper_permissions.ts";
import type { TerminalGuardStatus } from "../../extension/keyboard/terminal_guard.ts";
import {
  ALLOWLIST_PATH,
  BROKER_LAUNCHER,
  BROKER_VERSION_FILE,
  ROOT_DENO,
  ROOT_SOURCES,
} from "../../broker/paths.ts";
import { resolveDenoBinary } from "../../shared/executables.ts";
import { ownUid } from "../../shared/own_uid.ts";
import { type SpawnDeadlineResult, spawnWithDeadline } from "../../shared/spawn_deadline.ts";
import { SYSLOG_PATH } from "../../extension/audit/syslog.ts";

/** Verdict of one check. `info` is neither good nor bad (e.g. an optional part is absent). */
export type CheckStatus = "ok" | "warn" | "fail" | "info";

/** The result of one check, as `runDoctor` returns it and `--json` prints it. */
export interface DoctorCheck {
  /** Stable identifier, one of `DOCTOR_CHECK_IDS`. */
  readonly id: string;
  /** Short title shown in the first column. */
  readonly title: string;
  readonly status: CheckStatus;
  /** What was found, one sentence or a few clauses; never contains control characters. */
  readonly detail: string;
  /** What to do about it; absent when nothing needs doing. */
  readonly fix?: string;
}

/** What a check function returns; the runner adds the id and title and cleans the text. */
export type Finding = Omit<DoctorCheck, "id" | "title">;

/**
 * One check: its id, kept as a literal type (the runner derives `DoctorCheckId` from the list),
 * its title, and `run`, which may throw or hang (the runner turns both into a `fail`).
 */
export function defineCheck<Id extends string>(
  id: Id,
  title: string,
  run: (ctx: Context) => Finding | Promise<Finding>,
): { readonly id: Id; readonly title: string; readonly run: typeof run } {
  return { id, title, run };
}

/** What a command run by a check produced (the shared spawn's result). */
export type CommandResult = SpawnDeadlineResult;

/** Options of a {@link RunCommand}. */
export interface RunOptions {
  /** The child's complete environment. */
  readonly env: Record<string, string>;
  /** SIGKILL after this many milliseconds. */
  readonly timeoutMs: number;
  /** An open descriptor for the child's stdout instead of a pipe (its output is then ""). */
  readonly stdoutFd?: number;
}

/** Runs `file` with `args` and exactly `env`; stdin `/dev/null`, stdout and stderr captured. */
export type RunCommand = (
  file: string,
  args: readonly string[],
  options: RunOptions,
) => Promise<CommandResult>;

/** Inputs of the checks. Everything defaults to the real machine. */
export interface DoctorOptions {
  /** Environment to judge (`XDG_RUNTIME_DIR`, `TMUX`, `DISPLAY`); default `process.env`. */
  readonly env?: Record<string, string | undefined>;
  /** Default `process.platform`. */
  readonly platform?: string;
  /** Default `process.arch`. */
  readonly arch?: string;
  /** The uid the agent runs as; default `process.getuid()`. */
  readonly uid?: number;
  /** Where `/proc` is mounted; default `/proc`. Tests point it at a fake tree. */
  readonly procRoot?: string;
  /** Where the session server looks for sudo; default `/usr/bin/sudo`, `/bin/sudo`. */
  readonly sudoCandidates?: readonly string[];
  /** Where doas might be; default `/usr/bin/doas`, `/bin/doas`, `/usr/local/bin/doas`. */
  readonly doasCandidates?: readonly string[];
  /** The deno binary the launcher pins; default {@link resolveDenoBinary}. */
  readonly denoPath?: string;
  /** The helper the launcher runs; default this package's `askpass/helper.ts`. */
  readonly helperPath?: string;
  /** The helper's `DENO_DIR`, if it is a fixed directory; default a per-session cache. */
  readonly denoCacheDir?: string;
  /** The root-owned helper copy the broker installer makes; default under {@link ROOT_SOURCES}. */
  readonly rootHelperPath?: string;
  /** The root-owned deno copy; default {@link ROOT_DENO}. */
  readonly rootDenoPath?: string;
  /** The koffi package directory (native code loaded into pi); default the resolved one. */
  readonly koffiDir?: string;
  /** The installed package (extension sources, `package.json`); default this package. */
  readonly packageRoot?: string;
  /** Default {@link BROKER_VERSION_FILE}. */
  readonly brokerVersionFile?: string;
  /** The syslog socket the audit log copies to; default `/dev/log`. */
  readonly syslogPath?: string;
  /** Default {@link BROKER_LAUNCHER}. */
  readonly brokerLauncher?: string;
  /** Default {@link ALLOWLIST_PATH}. */
  readonly allowlistPath?: string;
  /** Where probes create temporary sockets; default `os.tmpdir()` (else `/tmp`). */
  readonly tmpBase?: string;
  /** Deadline of each child process; default 5 s. */
  readonly commandTimeoutMs?: number;
  /** Deadline of each whole check; default 15 s. */
  readonly checkTimeoutMs?: number;
  /** Runs the child processes; default {@link runCommand}. */
  readonly runCommand?: RunCommand;
  /**
   * pi's own process as pi reported it (`/sudo-prompt doctor` runs this
   * doctor in a process of its own and hands it pi's terminal guard status);
   * default: this process's, which outside pi has nothing to judge.
   */
  readonly piState?: TerminalGuardStatus;
}

/** Inputs that may stay absent once resolved (not on this machine, or not a fixed directory). */
type MaybeAbsent = "denoPath" | "denoCacheDir" | "koffiDir" | "piState";

/** Everything a check needs: {@link DoctorOptions} resolved, the command runner as `run`. */
export type Context =
  & Readonly<Required<Omit<DoctorOptions, MaybeAbsent | "checkTimeoutMs" | "runCommand">>>
  & Pick<DoctorOptions, MaybeAbsent>
  & { readonly run: RunCommand };

/** Deadline of each child process unless {@link DoctorOptions.commandTimeoutMs} says otherwise. */
const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;
/** Longest temporary directory base the probes use; a longer one falls back to `/tmp`. */
const TMP_BASE_MAX = 60;

/** Resolves every input the caller did not inject to the real machine's. */
export async function resolveContext(o: DoctorOptions): Promise<Context> {
  // A path relative to this file (`ops/doctor/`), resolved when it can be.
  const here = async (rel: string) => {
    const path = fileURLToPath(new URL(rel, import.meta.url));
    return await realpath(path).catch(() => path);
  };
  const tmp = o.tmpBase ?? tmpdir();
  return {
    env: o.env ?? process.env,
    platform: o.platform ?? process.platform,
    arch: o.arch ?? process.arch,
    uid: o.uid ?? ownUid(),
    procRoot: o.procRoot ?? "/proc",
    sudoCandidates: o.sudoCandidates ?? ["/usr/bin/sudo", "/bin/sudo"],
    doasCandidates: o.doasCandidates ?? ["/usr/bin/doas", "/bin/doas", "/usr/local/bin/doas"],
    denoPath: o.denoPath ?? await resolveDenoBinary(),
    helperPath: o.helperPath ?? await here("../../askpass/helper.ts"),
    denoCacheDir: o.denoCacheDir,
    koffiDir: o.koffiDir ?? koffiDir(),
    rootHelperPath: o.rootHelperPath ?? `${ROOT_SOURCES}/askpass/helper.ts`,
    rootDenoPath: o.rootDenoPath ?? ROOT_DENO,
    packageRoot: o.packageRoot ?? await here("../.."),
    brokerVersionFile: o.brokerVersionFile ?? BROKER_VERSION_FILE,
    syslogPath: o.syslogPath ?? SYSLOG_PATH,
    brokerLauncher: o.brokerLauncher ?? BROKER_LAUNCHER,
    allowlistPath: o.allowlistPath ?? ALLOWLIST_PATH,
    tmpBase: isSafeFlagPath(tmp) && tmp.length < TMP_BASE_MAX ? tmp : "/tmp",
    commandTimeoutMs: o.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    piState: o.piState,
    run: o.runCommand ?? runCommand,
  };
}

/** The default {@link RunCommand}: the shared spawn-with-deadline, from `/`; never rejects. */
export const runCommand: RunCommand = (file, args, { env, timeoutMs, stdoutFd }) =>
  spawnWithDeadline(file, args, { env, cwd: "/", deadlineMs: timeoutMs, stdoutFd });

function koffiDir(): string | undefined {
  try {
    return dirname(createRequire(import.meta.url).resolve("koffi/package.json"));
  } catch {
    return undefined;
  }
}
