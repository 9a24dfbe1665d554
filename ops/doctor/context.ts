/**
 * What the doctor's checks share: a verdict's shape, the inputs ({@link DoctorOptions}) and the
 * {@link Context} they resolve to. Every input can be injected, so tests can make each check fail
 * on purpose with real files and fake binaries; everything defaults to the real machine.
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
  readonly title: string;
  readonly status: CheckStatus;
  /** What was found, one sentence or a few clauses; never contains control characters. */
  readonly detail: string;
  /** What to do about it; absent when nothing needs doing. */
  readonly fix?: string;
}

/** What a check function returns; the runner adds the id and title and cleans the text. */
export type Finding = Omit<DoctorCheck, "id" | "title">;

/** One check: a literal id (for `DoctorCheckId`), a title, and `run`, whose throw or hang fails. */
export function defineCheck<Id extends string>(
  id: Id,
  title: string,
  run: (ctx: Context) => Finding | Promise<Finding>,
): { readonly id: Id; readonly title: string; readonly run: typeof run } {
  return { id, title, run };
}

/** What a command run by a check produced. */
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

/** Inputs of the checks; {@link resolveContext} defaults each to the real machine. */
export interface DoctorOptions {
  /** Environment to judge (`XDG_RUNTIME_DIR`, `TMUX`, `DISPLAY`). */
  readonly env?: Record<string, string | undefined>;
  readonly platform?: string;
  readonly arch?: string;
  /** The uid the agent runs as. */
  readonly uid?: number;
  /** Where `/proc` is mounted; tests point it at a fake tree. */
  readonly procRoot?: string;
  /** Where the session server looks for sudo. */
  readonly sudoCandidates?: readonly string[];
  readonly doasCandidates?: readonly string[];
  /** The deno binary the launcher pins. */
  readonly denoPath?: string;
  /** The helper the launcher runs. */
  readonly helperPath?: string;
  /** The helper's `DENO_DIR`, if it is a fixed directory; default a per-session cache. */
  readonly denoCacheDir?: string;
  /** The root-owned helper copy the broker installer makes. */
  readonly rootHelperPath?: string;
  readonly rootDenoPath?: string;
  /** The koffi package directory (native code loaded into pi). */
  readonly koffiDir?: string;
  /** The installed package (extension sources, `package.json`). */
  readonly packageRoot?: string;
  readonly brokerVersionFile?: string;
  /** The syslog socket the audit log copies to. */
  readonly syslogPath?: string;
  readonly brokerLauncher?: string;
  readonly allowlistPath?: string;
  /** Where probes create temporary sockets. */
  readonly tmpBase?: string;
  /** Deadline of each child process; default 5 s. */
  readonly commandTimeoutMs?: number;
  /** Deadline of each whole check; default 15 s. */
  readonly checkTimeoutMs?: number;
  readonly runCommand?: RunCommand;
  /** pi's terminal guard status as pi reported it; default this process's (nothing outside pi). */
  readonly piState?: TerminalGuardStatus;
}

/** Inputs that may stay absent once resolved (not on this machine, or not a fixed directory). */
type MaybeAbsent = "denoPath" | "denoCacheDir" | "koffiDir" | "piState";

/** Everything a check needs: {@link DoctorOptions} resolved, the command runner as `run`. */
export type Context =
  & Readonly<Required<Omit<DoctorOptions, MaybeAbsent | "checkTimeoutMs" | "runCommand">>>
  & Pick<DoctorOptions, MaybeAbsent>
  & { readonly run: RunCommand };

const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;
/** Longest temporary directory base the probes use; a longer one falls back to `/tmp`. */
const TMP_BASE_MAX = 60;

/** Resolves every input the caller did not inject to the real machine's. */
export async function resolveContext(o: DoctorOptions): Promise<Context> {
  // A path relative to `ops/doctor/`, resolved when it can be.
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
