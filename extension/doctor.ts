/**
 * `/sudo-prompt doctor` and `deno task doctor`: one screen of checks, each
 * with a verdict and, when something is wrong, a fix.
 *
 * Every check is a small async function whose inputs can be injected
 * ({@link DoctorOptions}: environment, `/proc` root, candidate paths, the
 * command runner), so tests can make each check fail on purpose with real
 * files and fake binaries. Checks never throw: an unexpected error becomes a
 * `"fail"` with a one-line detail, and every check has a deadline (child
 * processes are killed when theirs expires).
 *
 * Runtime-neutral: `node:` built-ins only. It runs in pi's Node (the TUI
 * command) and under `node_modules/.bin/node` (`deno task doctor`).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { type ChildProcess, spawn } from "node:child_process";
import { constants, type Stats } from "node:fs";
import {
  access,
  lstat,
  mkdtemp,
  open,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
} from "node:fs/promises";
import { createRequire } from "node:module";
import { connect, createServer, type Socket } from "node:net";
import { release, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import {
  helperArgvPrefix,
  helperEnvironment,
  isSafeFlagPath,
} from "../askpass/helper_permissions.ts";
import { PROTOCOL_VERSION } from "../askpass/protocol.ts";
import { PACKAGE_VERSION } from "../askpass/version.ts";
import { ALLOWLIST_FILE_REFUSALS, checkAllowlistFile } from "../broker/allowlist.ts";
import {
  ALLOWLIST_PATH,
  BROKER_LAUNCHER,
  BROKER_VERSION_FILE,
  ROOT_DENO,
  ROOT_SOURCES,
  SUDOERS_FILE,
} from "../broker/paths.ts";
import { resolveDenoBinary } from "./deno_binary.ts";
import {
  closeFd,
  getPeerCredentials,
  getPeerPidfd,
  peerCredentialsAvailable,
} from "./peer_credentials.ts";
import { readProcText } from "./proc_reader.ts";
import { fdStatSync, socketFd } from "./socket_fd.ts";
import { registeredSources, rootOwnedInstallFix } from "./pi_sources.ts";
import { displayCheck, dumpableCheck, multiplexerCheck, terminalCheck } from "./doctor_keyboard.ts";
import { socketDiagAvailable, unixPeerInode } from "./socket_peer.ts";

/** Verdict of one check. `info` is neither good nor bad (e.g. an optional part is absent). */
export type CheckStatus = "ok" | "warn" | "fail" | "info";

/** The result of one check. */
export interface DoctorCheck {
  /** Stable identifier, one of {@link DOCTOR_CHECK_IDS}. */
  readonly id: string;
  /** Short title shown in the first column. */
  readonly title: string;
  readonly status: CheckStatus;
  /** What was found, one sentence or a few clauses; never contains control characters. */
  readonly detail: string;
  /** What to do about it; absent when nothing needs doing. */
  readonly fix?: string;
}

/** What a command run by a check produced. */
export interface CommandResult {
  /** Exit code, or `null` when the process was killed by a signal or never started. */
  readonly code: number | null;
  readonly signal: string | null;
  /** At most {@link COMMAND_OUTPUT_CAP} bytes of each stream, decoded as UTF-8. */
  readonly stdout: string;
  readonly stderr: string;
  /** True when the deadline expired and the process was killed. */
  readonly timedOut: boolean;
  /** Set when the process could not be started (e.g. `ENOENT`, `EACCES`). */
  readonly spawnError?: string;
}

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
  /** Environment to judge (`XDG_RUNTIME_DIR`); default `process.env`. */
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
}

/** The checks, in the order {@link runDoctor} returns them. */
export const DOCTOR_CHECK_IDS = [
  "platform",
  "sudo",
  "runtime_dir",
  "ffi",
  "ptrace_scope",
  "legacy_tiocsti",
  "deno",
  "broker",
  "allowlist",
  "hardened",
  "terminal",
  "dumpable",
  "multiplexer",
  "display",
] as const;

/** One of {@link DOCTOR_CHECK_IDS}. */
export type DoctorCheckId = typeof DOCTOR_CHECK_IDS[number];

/** Bytes kept of each output stream of a child process. */
export const COMMAND_OUTPUT_CAP = 64 * 1024;
/** First sudo-rs release with `-A`/`--askpass` (sudo-rs CHANGELOG, after issue #1249). */
export const SUDO_RS_ASKPASS_SINCE = "0.2.11";

const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;
const DEFAULT_CHECK_TIMEOUT_MS = 15_000;
const KILL_GRACE_MS = 1_000;
const SUPPORTED_ARCHES: ReadonlySet<string> = new Set(["x64", "arm64", "riscv64"]);
const SUN_PATH_MAX = 107; // sizeof(sun_path) - 1 on Linux
const TREE_ENTRY_LIMIT = 2_000;
const DETAIL_MAX = 1000;

const TITLES: Record<DoctorCheckId, string> = {
  platform: "Linux and /proc",
  sudo: "sudo",
  runtime_dir: "XDG_RUNTIME_DIR",
  ffi: "FFI peer creds",
  ptrace_scope: "ptrace_scope",
  legacy_tiocsti: "legacy_tiocsti",
  deno: "deno helper",
  broker: "broker",
  allowlist: "allowlist",
  hardened: "hardened mode",
  terminal: "exclusive terminal",
  dumpable: "pi non-dumpable",
  multiplexer: "tmux key tables",
  display: "X11 keyboard",
};

/** Everything a check needs, resolved from {@link DoctorOptions}. */
interface Context {
  readonly env: Record<string, string | undefined>;
  readonly platform: string;
  readonly arch: string;
  readonly uid: number;
  readonly procRoot: string;
  readonly sudoCandidates: readonly string[];
  readonly doasCandidates: readonly string[];
  readonly denoPath: string | undefined;
  readonly helperPath: string;
  readonly denoCacheDir: string | undefined;
  readonly koffiDir: string | undefined;
  readonly rootHelperPath: string;
  readonly rootDenoPath: string;
  readonly packageRoot: string;
  readonly brokerVersionFile: string;
  readonly brokerLauncher: string;
  readonly allowlistPath: string;
  readonly tmpBase: string;
  readonly commandTimeoutMs: number;
  readonly run: RunCommand;
}

type Finding = Omit<DoctorCheck, "id" | "title">;

// ---------------------------------------------------------------------------
// Running and rendering

/** Runs every check (concurrently) and returns them in {@link DOCTOR_CHECK_IDS} order. */
export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const ctx = resolveContext(options);
  return await Promise.all(DOCTOR_CHECK_IDS.map((id) => guarded(id, ctx, options)));
}

/** Runs one check by id; never throws. */
export async function runCheck(
  id: DoctorCheckId,
  options: DoctorOptions = {},
): Promise<DoctorCheck> {
  return await guarded(id, resolveContext(options), options);
}

async function guarded(
  id: DoctorCheckId,
  context: Promise<Context>,
  options: DoctorOptions,
): Promise<DoctorCheck> {
  const title = TITLES[id];
  const limit = options.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const ctx = await context;
    const expired = new Promise<Finding>((resolve) => {
      timer = setTimeout(
        () =>
          resolve({
            status: "fail",
            detail: `did not finish within ${limit} ms`,
            fix: "run the doctor again; if it persists, the step named above hangs on this machine",
          }),
        limit,
      );
    });
    const finding = await Promise.race([CHECKS[id](ctx), expired]);
    return { id, title, ...clean(finding) };
  } catch (e) {
    return {
      id,
      title,
      status: "fail",
      detail: `unexpected error: ${oneLine(errorText(e))}`,
      fix: "run the doctor again; report the error if it persists",
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Platform: Linux, a supported architecture, and `/proc` mounted. */
export const checkPlatform = (o?: DoctorOptions): Promise<DoctorCheck> => runCheck("platform", o);
/** sudo flavour and version; doas only: unsupported. */
export const checkSudo = (o?: DoctorOptions): Promise<DoctorCheck> => runCheck("sudo", o);
/** `XDG_RUNTIME_DIR` usable for the session directory. */
export const checkRuntimeDir = (o?: DoctorOptions): Promise<DoctorCheck> =>
  runCheck("runtime_dir", o);
/** koffi loads; a real `SO_PEERCRED` and `SOCK_DIAG` round trip works. */
export const checkFfi = (o?: DoctorOptions): Promise<DoctorCheck> => runCheck("ffi", o);
/** `kernel.yama.ptrace_scope`. */
export const checkPtraceScope = (o?: DoctorOptions): Promise<DoctorCheck> =>
  runCheck("ptrace_scope", o);
/** `dev.tty.legacy_tiocsti`. */
export const checkLegacyTiocsti = (o?: DoctorOptions): Promise<DoctorCheck> =>
  runCheck("legacy_tiocsti", o);
/** The deno binary runs the helper with the pinned flags. */
export const checkDeno = (o?: DoctorOptions): Promise<DoctorCheck> => runCheck("deno", o);
/** Root broker installed with the same protocol version. */
export const checkBroker = (o?: DoctorOptions): Promise<DoctorCheck> => runCheck("broker", o);
/** The allowlist is safe (or absent). */
export const checkAllowlist = (o?: DoctorOptions): Promise<DoctorCheck> => runCheck("allowlist", o);
/** Which files the agent could modify; hardened mode active or not. */
export const checkHardened = (o?: DoctorOptions): Promise<DoctorCheck> => runCheck("hardened", o);

/** 1 when any check failed, else 0: the exit code of `deno task doctor`. */
export function doctorExitCode(checks: readonly DoctorCheck[]): number {
  return checks.some((c) => c.status === "fail") ? 1 : 0;
}

/** One line: how many checks had each verdict. */
export function summarizeDoctor(checks: readonly DoctorCheck[]): string {
  const n = (s: CheckStatus) => checks.filter((c) => c.status === s).length;
  return `${checks.length} checks: ${n("ok")} ok, ${n("warn")} warnings, ${n("fail")} failed, ` +
    `${n("info")} info`;
}

/** The marker in front of each verdict. */
export const STATUS_MARKERS: Readonly<Record<CheckStatus, string>> = {
  ok: "✓",
  warn: "!",
  fail: "✗",
  info: "i",
};

const TITLE_WIDTH = 16;

/**
 * Plain-text lines (no ANSI; the TUI colours them by the leading marker):
 * per check `<marker> <title> <detail>`, wrapped at `width`, then
 * `fix: …` indented under the detail; last, {@link summarizeDoctor}. Only a
 * single word longer than a line (a long path) exceeds `width`.
 */
export function renderDoctor(checks: readonly DoctorCheck[], width = 100): string[] {
  const indent = " ".repeat(2 + TITLE_WIDTH + 1);
  const lines: string[] = [];
  for (const c of checks) {
    const head = `${STATUS_MARKERS[c.status]} ${oneLine(c.title).padEnd(TITLE_WIDTH)} `;
    lines.push(...wrap(oneLine(c.detail), head, indent, width));
    if (c.fix) lines.push(...wrap(oneLine(c.fix), `${indent}fix: `, `${indent}     `, width));
  }
  lines.push(summarizeDoctor(checks));
  return lines;
}

function wrap(text: string, first: string, rest: string, width: number): string[] {
  const out: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(" ").filter((w) => w.length > 0)) {
    if (!empty && line.length + 1 + word.length > width) {
      out.push(line);
      line = rest + word;
    } else {
      line += (empty ? "" : " ") + word;
    }
    empty = false;
  }
  out.push(line.trimEnd());
  return out;
}

// ---------------------------------------------------------------------------
// The checks

const CHECKS: Record<DoctorCheckId, (ctx: Context) => Promise<Finding>> = {
  platform: platformCheck,
  sudo: sudoCheck,
  runtime_dir: runtimeDirCheck,
  ffi: ffiCheck,
  ptrace_scope: ptraceScopeCheck,
  legacy_tiocsti: tiocstiCheck,
  deno: denoCheck,
  broker: brokerCheck,
  allowlist: allowlistCheck,
  hardened: hardenedCheck,
  terminal: () => terminalCheck(),
  dumpable: () => dumpableCheck(),
  multiplexer: (ctx) => multiplexerCheck(ctx.env),
  display: (ctx) => displayCheck(ctx.env),
};

async function platformCheck(ctx: Context): Promise<Finding> {
  if (ctx.platform !== "linux") {
    return {
      status: "fail",
      detail: `platform is ${ctx.platform}: pi-sudo-prompt needs Linux (/proc, SO_PEERCRED)`,
      fix: "use pi on Linux; on other systems sudo keeps failing without a terminal",
    };
  }
  if (!SUPPORTED_ARCHES.has(ctx.arch)) {
    return {
      status: "fail",
      detail:
        `architecture ${ctx.arch} is not supported (SO_PEERCRED differs): requests are refused`,
      fix: "use x86_64, arm64 or riscv64",
    };
  }
  const statPath = join(ctx.procRoot, "self", "stat");
  const text = await readSmall(statPath);
  if (text === undefined || !/^\d+ \(/.test(text)) {
    return {
      status: "fail",
      detail: `${statPath} is not readable: /proc is not mounted here`,
      fix: "mount procfs (mount -t proc proc /proc); every request is refused without it",
    };
  }
  return {
    status: "ok",
    detail: `Linux ${oneLine(release())} ${ctx.arch}, ${ctx.procRoot} mounted`,
  };
}

/** What `sudo -V` printed, classified. */
export interface SudoVersion {
  readonly flavour: "sudo" | "sudo-rs" | "unknown";
  /** `1.9.13p3`, `0.2.11`; absent when unrecognised. */
  readonly version?: string;
  /** The first non-empty line, without control characters. */
  readonly line: string;
}

/** Classifies the output of `sudo -V` (run with `LC_ALL=C`). */
export function parseSudoVersion(output: string): SudoVersion {
  const line = oneLine(output.split("\n").find((l) => l.trim() !== "") ?? "").slice(0, 120);
  const classic = /^Sudo version (\d+\.\d+(?:\.\d+)?(?:[a-z]\d+)?)\b/.exec(line);
  if (classic) return { flavour: "sudo", version: classic[1], line };
  const rs = /^sudo-rs (\d+\.\d+\.\d+)\b/.exec(line);
  if (rs) return { flavour: "sudo-rs", version: rs[1], line };
  return { flavour: "unknown", line };
}

/** Numeric comparison of dotted versions (`1.9.13p3` compares as 1.9.13). */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.split(".").map((p) => parseInt(p, 10) || 0);
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

async function sudoCheck(ctx: Context): Promise<Finding> {
  const sudo = await firstExisting(ctx.sudoCandidates);
  const doas = await firstExisting(ctx.doasCandidates);
  if (!sudo) {
    if (doas) {
      return {
        status: "fail",
        detail:
          `only doas found (${doas}): unsupported, OpenDoas has no askpass and reads from a ` +
          "terminal only, so the agent's commands cannot reach the modal",
        fix: "install sudo (apt-get install sudo) or sudo-rs ≥ " + SUDO_RS_ASKPASS_SINCE,
      };
    }
    return {
      status: "fail",
      detail: `sudo not found (looked at ${ctx.sudoCandidates.join(", ")})`,
      fix: "install sudo (apt-get install sudo)",
    };
  }
  const r = await ctx.run(sudo, ["-V"], {
    env: { PATH: "/usr/bin:/bin", LC_ALL: "C", LANG: "C" },
    timeoutMs: ctx.commandTimeoutMs,
  });
  const findings: Finding[] = [];
  let what: string;
  if (r.spawnError || r.timedOut) {
    what = r.timedOut ? "`sudo -V` did not answer in time" : `cannot run: ${r.spawnError}`;
    findings.push({ status: "fail", detail: what, fix: "reinstall sudo" });
  } else {
    const v = parseSudoVersion(r.stdout || r.stderr);
    what = v.line || "no output from `sudo -V`";
    if (v.flavour === "sudo" && v.version) {
      const old = compareVersions(v.version, "1.9") < 0;
      findings.push(
        old
          ? {
            status: "warn",
            detail: `${v.line}: older than 1.9, untested (askpass works, messages may differ)`,
            fix: "upgrade sudo to 1.9 or later",
          }
          : { status: "ok", detail: v.line },
      );
    } else if (v.flavour === "sudo-rs" && v.version) {
      findings.push(
        compareVersions(v.version, SUDO_RS_ASKPASS_SINCE) < 0
          ? {
            status: "fail",
            detail: `${v.line}: no -A/askpass before sudo-rs ${SUDO_RS_ASKPASS_SINCE} ` +
              "(sudo-rs #1249), so sudo cannot ask through the modal",
            fix: `upgrade sudo-rs to ${SUDO_RS_ASKPASS_SINCE} or later, or install the original ` +
              "sudo (e.g. apt-get install sudo-ws on Ubuntu)",
          }
          : {
            status: "ok",
            detail: `${v.line} (askpass since ${SUDO_RS_ASKPASS_SINCE}; its prompt reads ` +
              "[sudo: authenticate] Password:)",
          },
      );
    } else {
      findings.push({
        status: "warn",
        detail: `unrecognised \`sudo -V\` output: ${what || "(empty)"}`,
        fix: "use sudo 1.9+ or sudo-rs ≥ " + SUDO_RS_ASKPASS_SINCE,
      });
    }
  }
  const st = await stat(sudo).catch(() => undefined);
  if (!st || st.uid !== 0 || (st.mode & 0o4000) === 0) {
    findings.push({
      status: "fail",
      detail: `${sudo} is not setuid root`,
      fix: `reinstall sudo, or: chown root:root ${sudo} && chmod 4755 ${sudo}`,
    });
  }
  const merged = mergeFindings(findings);
  const where = ` (${sudo})`;
  const doasNote = doas ? `; doas at ${doas} is not used (OpenDoas has no askpass)` : "";
  return { ...merged, detail: merged.detail + where + doasNote };
}

async function runtimeDirCheck(ctx: Context): Promise<Finding> {
  const xdg = ctx.env.XDG_RUNTIME_DIR;
  let problem: string | undefined;
  let mode = "";
  if (xdg === undefined || xdg === "") problem = "not set";
  else if (!xdg.startsWith("/")) problem = `${xdg} is not an absolute path`;
  else {
    const st = await lstat(xdg).catch(() => undefined);
    if (!st) problem = `${xdg} does not exist`;
    else if (st.isSymbolicLink()) problem = `${xdg} is a symlink`;
    else if (!st.isDirectory()) problem = `${xdg} is not a directory`;
    else if (st.uid !== ctx.uid) problem = `${xdg} is owned by uid ${st.uid}, not by you`;
    else if ((st.mode & 0o077) !== 0) {
      problem = `${xdg} has mode ${octal(st.mode)}: group or others have access`;
    } else mode = `mode ${octal(st.mode)}`;
  }
  const base = problem || !xdg ? "/tmp" : xdg;
  // What startSession will build: <base>/pi-sudo-prompt-XXXXXX/askpass.sock
  const socketPath = join(base, "pi-sudo-prompt-XXXXXX", "askpass.sock");
  if (!isSafeFlagPath(socketPath)) {
    return {
      status: "fail",
      detail: `session directory base ${base} has characters the launcher refuses ` +
        "(space, comma, quotes): the extension will not start",
      fix: "set XDG_RUNTIME_DIR to a plain path such as /run/user/$(id -u)",
    };
  }
  if (new TextEncoder().encode(socketPath).length > SUN_PATH_MAX) {
    return {
      status: "fail",
      detail: `${socketPath} is longer than a Unix socket path may be (${SUN_PATH_MAX} bytes)`,
      fix: "set XDG_RUNTIME_DIR to a shorter path such as /run/user/$(id -u)",
    };
  }
  if (problem) {
    return {
      status: "warn",
      detail: `XDG_RUNTIME_DIR ${problem}: falling back to a private mkdtemp directory under /tmp`,
      fix: "log in through systemd-logind (pam_systemd) so /run/user/$(id -u) exists, or export " +
        "XDG_RUNTIME_DIR to a directory of yours with mode 0700",
    };
  }
  return { status: "ok", detail: `${xdg}: a private directory of yours (${mode})` };
}

async function ffiCheck(ctx: Context): Promise<Finding> {
  if (!peerCredentialsAvailable()) {
    return {
      status: "fail",
      detail: "koffi FFI does not load here: every password request is refused (fail closed)",
      fix: "run npm ci in the package (koffi ships prebuilt binaries for x64, arm64, riscv64)",
    };
  }
  const dir = await mkdtemp(join(ctx.tmpBase, "pi-sudo-doctor-"));
  const socketPath = join(dir, "s");
  const server = createServer();
  const sockets: Socket[] = [];
  try {
    await withDeadline(
      new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(socketPath, () => resolve());
      }),
      ctx.commandTimeoutMs,
      "listen",
    );
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    const client = connect(socketPath);
    sockets.push(client);
    await withDeadline(
      new Promise<void>((resolve, reject) => {
        client.once("connect", () => resolve());
        client.once("error", reject);
      }),
      ctx.commandTimeoutMs,
      "connect",
    );
    const serverSide = await withDeadline(accepted, ctx.commandTimeoutMs, "accept");
    sockets.push(serverSide);
    const fd = socketFd(serverSide);
    if (fd === undefined) {
      return {
        status: "fail",
        detail: "no file descriptor behind a Node socket: requests refused",
        fix: "use the Node that pi ships with (≥ 22); requests fail closed",
      };
    }
    const creds = getPeerCredentials(fd);
    const me = process.getuid?.() ?? -1;
    if (!creds.ok) {
      return {
        status: "fail",
        detail: `SO_PEERCRED failed (${creds.reason}): every request is refused`,
        fix: "report this kernel/architecture; requests fail closed",
      };
    }
    if (creds.creds.pid !== process.pid || creds.creds.uid !== me) {
      return {
        status: "fail",
        detail: `SO_PEERCRED returned pid ${creds.creds.pid} uid ${creds.creds.uid}, expected ` +
          `pid ${process.pid} uid ${me}`,
        fix: "report this kernel/architecture; requests fail closed",
      };
    }
    const pidfd = getPeerPidfd(fd);
    if (pidfd !== undefined) closeFd(pidfd);
    const pidfdNote = pidfd !== undefined ? "SO_PEERPIDFD yes" : "SO_PEERPIDFD no (kernel < 6.5)";
    if (!socketDiagAvailable()) {
      return {
        status: "fail",
        detail: "SO_PEERCRED works but the SOCK_DIAG query cannot load: every request is refused",
        fix: "run npm ci in the package (koffi)",
      };
    }
    const peer = await unixPeerInode(fd);
    const clientFd = socketFd(client);
    const clientIno = clientFd === undefined ? undefined : inodeOf(clientFd);
    if (!peer.ok || peer.peerInode !== clientIno) {
      return {
        status: "fail",
        detail: "NETLINK_SOCK_DIAG did not name the peer socket" +
          (peer.ok ? "" : ` (${peer.reason})`) + ": every request is refused (fail closed)",
        fix: "use a kernel with CONFIG_UNIX_DIAG (the feature behind ss -x)",
      };
    }
    return {
      status: "ok",
      detail: `koffi loads; SO_PEERCRED round trip gave our pid and uid; SOCK_DIAG named the ` +
        `peer socket; ${pidfdNote}`,
    };
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  }
}

async function ptraceScopeCheck(ctx: Context): Promise<Finding> {
  const path = join(ctx.procRoot, "sys", "kernel", "yama", "ptrace_scope");
  const value = (await readSmall(path))?.trim();
  const risk = "any process of yours (the agent's included) can read the helper's memory while " +
    "a password passes through, and trace your terminal emulator or tmux server to read keys " +
    "(pi itself is non-dumpable)";
  if (value === undefined) {
    return {
      status: "warn",
      detail: `kernel.yama.ptrace_scope missing (no Yama LSM): ${risk}`,
      fix: "boot a kernel with Yama (CONFIG_SECURITY_YAMA; lsm=…,yama) and set " +
        "sysctl kernel.yama.ptrace_scope=1 (persist it in /etc/sysctl.d/)",
    };
  }
  if (value === "0") {
    return {
      status: "warn",
      detail: `kernel.yama.ptrace_scope=0: ${risk}`,
      fix: "sudo sysctl kernel.yama.ptrace_scope=1 (persist it in /etc/sysctl.d/)",
    };
  }
  if (value === "1") {
    return {
      status: "ok",
      detail: "kernel.yama.ptrace_scope=1: other processes cannot read pi; the agent's shell is " +
        "still an ancestor of the helper (2 closes that too, but disables debuggers)",
    };
  }
  if (value === "2" || value === "3") {
    return { status: "ok", detail: `kernel.yama.ptrace_scope=${value}: only root can attach` };
  }
  return {
    status: "warn",
    detail: `kernel.yama.ptrace_scope has an unknown value: ${oneLine(value)}`,
    fix: "sudo sysctl kernel.yama.ptrace_scope=1",
  };
}

async function tiocstiCheck(ctx: Context): Promise<Finding> {
  const path = join(ctx.procRoot, "sys", "dev", "tty", "legacy_tiocsti");
  const value = (await readSmall(path))?.trim();
  if (value === undefined) {
    return {
      status: "info",
      detail: "dev.tty.legacy_tiocsti missing (kernel < 6.2): TIOCSTI is always allowed; pi's " +
        "bash tool runs commands in a new session without pi's terminal",
    };
  }
  if (value === "1") {
    return {
      status: "warn",
      detail: "dev.tty.legacy_tiocsti=1: a process that shares pi's terminal can type into the " +
        "modal (pi's bash tool detaches, but other programs you start may not)",
      fix: "sudo sysctl dev.tty.legacy_tiocsti=0 (persist it in /etc/sysctl.d/)",
    };
  }
  if (value === "0") {
    return { status: "ok", detail: "dev.tty.legacy_tiocsti=0: no typing into ttys" };
  }
  return {
    status: "warn",
    detail: `dev.tty.legacy_tiocsti has an unknown value: ${oneLine(value)}`,
    fix: "sudo sysctl dev.tty.legacy_tiocsti=0",
  };
}

async function denoCheck(ctx: Context): Promise<Finding> {
  const deno = ctx.denoPath;
  if (!deno) {
    return {
      status: "fail",
      detail: "deno binary not found (the npm dependency `deno`): the extension cannot start",
      fix: "npm ci in the package, with allow-scripts=deno in .npmrc",
    };
  }
  if (!await canExecute(deno)) {
    return { status: "fail", detail: `${deno} is not executable`, fix: "npm ci in the package" };
  }
  const version = await ctx.run(deno, ["--version"], {
    env: { NO_COLOR: "1" },
    timeoutMs: ctx.commandTimeoutMs,
  });
  if (version.code !== 0) {
    return {
      status: "fail",
      detail: `\`${deno} --version\` ${describeFailure(version)}`,
      fix: "npm ci in the package (the binary may be damaged or for another platform)",
    };
  }
  const denoVersion = /^deno (\S+)/.exec(version.stdout)?.[1] ?? "unknown version";
  if (!await canRead(ctx.helperPath)) {
    return {
      status: "fail",
      detail: `helper ${ctx.helperPath} is missing`,
      fix: "reinstall the package",
    };
  }
  for (const p of [deno, ctx.helperPath]) {
    if (!isSafeFlagPath(p)) {
      return {
        status: "fail",
        detail: `${p} has characters the launcher refuses (space, comma, quotes, …): the ` +
          "extension will not start",
        fix: "install the package (and node_modules) under a plain path",
      };
    }
  }
  const dir = await mkdtemp(join(ctx.tmpBase, "pi-sudo-doctor-"));
  try {
    const socketPath = join(dir, "askpass.sock");
    const argv = [...helperArgvPrefix(deno, ctx.helperPath, socketPath), "doctor probe"];
    const env = {
      ...envObject(helperEnvironment({
        denoDir: join(dir, "deno-cache"),
        socketPath,
        sessionKeyHex: "0".repeat(64),
        deadlineMs: ctx.commandTimeoutMs,
      })),
      // Harmless to deno itself, but one of the code-loading variables the helper must refuse:
      // the refusal proves the helper's code ran under the pinned flags and enforces its checks.
      NODE_OPTIONS: "--no-warnings",
    };
    // stdout: a regular file, so that a helper that did not refuse would be seen writing.
    const outPath = join(dir, "stdout");
    const out = await open(outPath, "wx", 0o600);
    let probe: CommandResult;
    try {
      probe = await ctx.run(argv[0], argv.slice(1), {
        env,
        timeoutMs: ctx.commandTimeoutMs,
        stdoutFd: out.fd,
      });
    } finally {
      await out.close();
    }
    const written = await readFile(outPath, "utf8").catch(() => "?");
    const refused = probe.code === 1 && probe.stdout === "" && written === "" &&
      probe.stderr.includes("refusing to run with NODE_OPTIONS set");
    if (!refused) {
      return {
        status: "fail",
        detail: "the helper under the pinned flags did not refuse a code-loading variable " +
          `(NODE_OPTIONS): it ${describeFailure(probe)}${written ? " and wrote to stdout" : ""}`,
        fix: "npm ci in the package; check docs/permissions.md against this deno version",
      };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const pinned = await packageDenoVersion(ctx.packageRoot);
  const note = pinned && pinned !== denoVersion ? ` (package.json pins ${pinned})` : "";
  return {
    status: pinned && pinned !== denoVersion ? "warn" : "ok",
    detail: `deno ${denoVersion}${note} at ${deno}; the helper runs with the pinned flags and ` +
      "refuses a code-loading variable",
    ...(note ? { fix: "npm ci in the package to get the pinned deno" } : {}),
  };
}

async function brokerCheck(ctx: Context): Promise<Finding> {
  const installHint = `/sudo-prompt install-broker in pi, or: sudo sh ` +
    join(ctx.packageRoot, "broker", "install.sh");
  let text: string;
  try {
    text = await readFile(ctx.brokerVersionFile, "utf8");
  } catch (e) {
    if (errnoOf(e) === "ENOENT" || errnoOf(e) === "ENOTDIR") {
      return {
        status: "info",
        detail: "root broker not installed (only needed for pi-secret-run)",
        fix: installHint,
      };
    }
    return {
      status: "warn",
      detail: `${ctx.brokerVersionFile} unreadable (${errnoOf(e) ?? "error"})`,
      fix: `reinstall: ${installHint}`,
    };
  }
  const field = (name: string) =>
    new RegExp(`^${name}=(.*)$`, "m").exec(text.slice(0, 4096))?.[1]?.trim();
  const version = field("version");
  const protocolText = field("protocol");
  const protocol = protocolText !== undefined && /^\d+$/.test(protocolText)
    ? Number(protocolText)
    : undefined;
  if (protocol === undefined) {
    return {
      status: "fail",
      detail: `${ctx.brokerVersionFile} has no protocol= line: broken install`,
      fix: `reinstall the broker: ${installHint}`,
    };
  }
  const shown = `broker ${oneLine(version ?? "?")}, protocol ${protocol}`;
  if (protocol !== PROTOCOL_VERSION) {
    return {
      status: "fail",
      detail: `${shown}; this extension speaks protocol ${PROTOCOL_VERSION}: pi-secret-run is ` +
        "refused until the broker is reinstalled",
      fix: `reinstall the broker: ${installHint}`,
    };
  }
  if (!await exists(ctx.brokerLauncher)) {
    return {
      status: "fail",
      detail: `${shown} but ${ctx.brokerLauncher} is missing: incomplete install`,
      fix: `reinstall the broker: ${installHint}`,
    };
  }
  for (const p of [ctx.brokerVersionFile, ctx.brokerLauncher]) {
    const problem = await rootOwnedProblem(p, "file", true, ctx.uid);
    if (problem) {
      return {
        status: "warn",
        detail: `${shown}, but ${problem}: not a root-owned install`,
        fix: `reinstall the broker: ${installHint}`,
      };
    }
  }
  const extensionVersion = version === PACKAGE_VERSION ? "" : ` (extension ${PACKAGE_VERSION})`;
  return await brokerSudoRuleFinding(ctx, shown) ??
    { status: "ok", detail: `${shown}${extensionVersion}: installed, protocol matches` };
}

/**
 * sudo applies the LAST matching rule: a later sudoers file granting this
 * user `ALL` with a password silently overrides the broker's NOPASSWD rule.
 * Checked the way `pi-secret-run` meets it: `sudo -n <launcher>` with no
 * arguments, which (when the rule applies) only prints the launcher's usage
 * line and exits 125 before any broker starts. `undefined` when fine or not
 * checkable (root, no sudo).
 */
async function brokerSudoRuleFinding(ctx: Context, shown: string): Promise<Finding | undefined> {
  const sudo = await firstExisting(ctx.sudoCandidates);
  if (ctx.uid === 0 || !sudo) return undefined;
  const r = await ctx.run(sudo, ["-n", ctx.brokerLauncher], {
    env: { PATH: "/usr/bin:/bin", LC_ALL: "C", LANG: "C" },
    timeoutMs: ctx.commandTimeoutMs,
  });
  if (r.code === 125 && r.stderr.includes("pi-secret-broker:")) return undefined;
  const fix = `a file in /etc/sudoers.d that sorts after ${SUDOERS_FILE} (or a rule in ` +
    `/etc/sudoers after its @includedir) grants you a rule with a password; \`sudo -l\` lists ` +
    "them in order (the last match wins): move that rule before the broker's, or re-run the " +
    "broker installer after renaming that file so it sorts first";
  if (/password is required/.test(r.stderr)) {
    return {
      status: "fail",
      detail: `${shown}, but sudo asks for a password for the broker: a later sudoers rule ` +
        "overrides its NOPASSWD rule (or the rule names another user), so pi-secret-run fails",
      fix: `${fix}; if the rule names another user, re-run the installer with --user you`,
    };
  }
  return {
    status: "warn",
    detail: `${shown}, but \`sudo -n ${ctx.brokerLauncher}\` did not reach the broker: ` +
      oneLine(r.stderr || r.spawnError || `exit ${r.code}`),
    fix: `re-run the broker installer for this user; ${fix}`,
  };
}

async function allowlistCheck(ctx: Context): Promise<Finding> {
  const path = ctx.allowlistPath;
  // The very function the broker and the extension apply: what it refuses counts as empty.
  const r = await checkAllowlistFile(path);
  if (r.ok) {
    const n = r.entries.length;
    return {
      status: "ok",
      detail: `${path}: root-owned, not writable by others, ${n} ${n === 1 ? "entry" : "entries"}`,
    };
  }
  const R = ALLOWLIST_FILE_REFUSALS;
  if (r.reason === R.MISSING) {
    return {
      status: "info",
      detail: `${path} absent: every pi-secret-run command shows the red warning`,
      fix: "the broker installer creates it (root-owned, commented examples)",
    };
  }
  const st = await lstat(path).catch(() => undefined);
  let why: string;
  let fix = `sudo chown root:root ${path} && sudo chmod 0644 ${path}`;
  switch (r.reason) {
    case R.SYMLINK:
      why = `${path} is a symlink (never followed)`;
      fix = `replace the symlink with a regular root-owned file: sudo cp --remove-destination ` +
        `"$(readlink -f ${path})" ${path}`;
      break;
    case R.NOT_REGULAR:
      why = `${path} is not a regular file`;
      fix = `make ${path} a regular root-owned file (rerun the broker installer)`;
      break;
    case R.NOT_ROOT_OWNED:
      why = st ? `${path} is owned by uid ${st.uid}${you(st.uid, ctx.uid)}, not root` : r.reason;
      break;
    case R.WRITABLE_BY_OTHERS:
      why = `${path} is writable by group or others` + (st ? ` (mode ${octal(st.mode)})` : "");
      break;
    case R.UNSAFE_PARENT: {
      const dir = r.path ?? dirname(path);
      why = `its directory ${dir} is not a root-owned real directory closed to group/other writes`;
      const d = await lstat(dir).catch(() => undefined);
      if (d) {
        why += ` (uid ${d.uid}, mode ${octal(d.mode)}${d.isSymbolicLink() ? ", symlink" : ""})`;
      }
      fix = `sudo chown root:root ${dir} && sudo chmod go-w ${dir} (every directory above ` +
        `${path} must be root-owned and not writable by group/other)`;
      break;
    }
    case R.MALFORMED:
      why = `line ${r.line ?? "?"} is malformed (${
        r.syntax ?? "syntax"
      }); one bad line voids the file`;
      fix = `fix line ${r.line ?? "?"} of ${path} (sudoedit ${path})`;
      break;
    default:
      why = `${path}: ${r.reason}`;
  }
  return { status: "warn", detail: `unsafe: ${why}; the allowlist counts as empty`, fix };
}

const CACHE_LABEL = "the helper's Deno cache";

async function hardenedCheck(ctx: Context): Promise<Finding> {
  if (ctx.uid === 0) {
    return {
      status: "info",
      detail: "running as root: sudo never asks for a password, hardened mode does not apply",
    };
  }
  const items: { label: string; problems: string[] }[] = [];
  const add = (label: string, problems: string[]) => {
    if (problems.length > 0) items.push({ label, problems: [...new Set(problems)] });
  };
  const pkg: string[] = [];
  const pkgDirProblem = await rootOwnedProblem(ctx.packageRoot, "dir", true, ctx.uid);
  if (pkgDirProblem) pkg.push(pkgDirProblem);
  for (
    const name of ["package.json", "index.ts", "mod.ts", "bin", "extension", "askpass", "broker"]
  ) {
    const p = join(ctx.packageRoot, name);
    if (await exists(p)) pkg.push(...await treeProblems(p, ctx.uid));
  }
  add("the extension", pkg);
  const helperProblem = await rootOwnedProblem(ctx.helperPath, "file", true, ctx.uid);
  add("the askpass helper", helperProblem ? [helperProblem] : []);
  if (ctx.denoPath) {
    const denoProblem = await rootOwnedProblem(ctx.denoPath, "file", true, ctx.uid);
    add("the deno binary", denoProblem ? [denoProblem] : []);
  }
  if (ctx.koffiDir) add("koffi (loaded into pi)", await treeProblems(ctx.koffiDir, ctx.uid));
  if (ctx.denoCacheDir) {
    const cacheProblem = await rootOwnedProblem(ctx.denoCacheDir, "dir", true, ctx.uid);
    add(CACHE_LABEL, cacheProblem ? [cacheProblem] : []);
  } else {
    add(CACHE_LABEL, ["a per-session deno-cache in your session directory"]);
  }
  if (items.length === 0) {
    return {
      status: "ok",
      detail: "hardened: the extension, helper, deno binary and Deno cache are root-owned; the " +
        "agent cannot rewrite them",
    };
  }
  const listed = items.map(({ label, problems }) =>
    `${label} (${problems[0]}${problems.length > 1 ? `, +${problems.length - 1} more` : ""})`
  );
  const usesRootCopy = ctx.helperPath === ctx.rootHelperPath;
  const rootCopy = !usesRootCopy &&
    !await rootOwnedProblem(ctx.rootHelperPath, "file", false, ctx.uid) &&
    !await rootOwnedProblem(ctx.rootDenoPath, "file", false, ctx.uid);
  const copyNote = rootCopy
    ? ` (a root-owned helper copy exists (${ctx.rootHelperPath}) but is not the one in use)`
    : "";
  const fixes: string[] = [];
  if (items.some((i) => i.label !== CACHE_LABEL)) {
    const sources = await registeredSources(ctx.packageRoot, process.cwd(), process.env);
    fixes.push(
      `install root-owned: ${rootOwnedInstallFix(ctx.packageRoot, PACKAGE_VERSION, sources)}`,
    );
  }
  if (items.some((i) => i.label === CACHE_LABEL)) {
    fixes.push(
      rootCopy
        ? "turn on hardened mode so the extension runs the root-owned helper, deno and cache"
        : "the root-owned helper and cache come with /sudo-prompt install-broker (hardened mode)",
    );
  }
  return {
    status: "warn",
    detail: `not hardened${copyNote}: the agent could modify ${listed.join("; ")}`,
    fix: fixes.join("; "),
  };
}

// ---------------------------------------------------------------------------
// Helpers

async function resolveContext(o: DoctorOptions): Promise<Context> {
  const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
  const packageRoot = o.packageRoot ?? await realpath(here("..")).catch(() => here(".."));
  const helperPath = o.helperPath ??
    await realpath(here("../askpass/helper.ts")).catch(() => here("../askpass/helper.ts"));
  const tmp = o.tmpBase ?? tmpdir();
  return {
    env: o.env ?? process.env,
    platform: o.platform ?? process.platform,
    arch: o.arch ?? process.arch,
    uid: o.uid ?? process.getuid?.() ?? -1,
    procRoot: o.procRoot ?? "/proc",
    sudoCandidates: o.sudoCandidates ?? ["/usr/bin/sudo", "/bin/sudo"],
    doasCandidates: o.doasCandidates ?? ["/usr/bin/doas", "/bin/doas", "/usr/local/bin/doas"],
    denoPath: o.denoPath ?? await resolveDenoBinary(),
    helperPath,
    denoCacheDir: o.denoCacheDir,
    koffiDir: o.koffiDir ?? koffiDir(),
    rootHelperPath: o.rootHelperPath ?? `${ROOT_SOURCES}/askpass/helper.ts`,
    rootDenoPath: o.rootDenoPath ?? ROOT_DENO,
    packageRoot,
    brokerVersionFile: o.brokerVersionFile ?? BROKER_VERSION_FILE,
    brokerLauncher: o.brokerLauncher ?? BROKER_LAUNCHER,
    allowlistPath: o.allowlistPath ?? ALLOWLIST_PATH,
    tmpBase: isSafeFlagPath(tmp) && tmp.length < 60 ? tmp : "/tmp",
    commandTimeoutMs: o.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    run: o.runCommand ?? runCommand,
  };
}

/**
 * The default {@link RunCommand}: `spawn` with stdin `/dev/null`, output
 * capped at {@link COMMAND_OUTPUT_CAP} per stream, SIGKILL at the deadline.
 * Never rejects.
 */
export function runCommand(
  file: string,
  args: readonly string[],
  options: RunOptions,
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let timedOut = false;
    let done = false;
    const timers: { kill?: ReturnType<typeof setTimeout>; grace?: ReturnType<typeof setTimeout> } =
      {};
    const finish = (code: number | null, signal: string | null, spawnError?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timers.kill);
      clearTimeout(timers.grace);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        timedOut,
        ...(spawnError ? { spawnError } : {}),
      });
    };
    let child: ChildProcess;
    try {
      child = spawn(file, [...args], {
        env: options.env,
        cwd: "/",
        stdio: ["ignore", options.stdoutFd ?? "pipe", "pipe"],
      });
    } catch (e) {
      finish(null, null, errnoOf(e) ?? oneLine(errorText(e)));
      return;
    }
    timers.kill = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
      // A grandchild holding the pipes open must not keep us waiting.
      timers.grace = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(null, "SIGKILL");
      }, KILL_GRACE_MS);
    }, options.timeoutMs);
    child.stdout?.on("data", (b: Buffer) => {
      if (outBytes < COMMAND_OUTPUT_CAP) out.push(b.subarray(0, COMMAND_OUTPUT_CAP - outBytes));
      outBytes += b.length;
    });
    child.stderr?.on("data", (b: Buffer) => {
      if (errBytes < COMMAND_OUTPUT_CAP) err.push(b.subarray(0, COMMAND_OUTPUT_CAP - errBytes));
      errBytes += b.length;
    });
    child.on("error", (e) => finish(null, null, errnoOf(e) ?? oneLine(errorText(e))));
    child.on("close", (code, signal) => finish(code, signal));
  });
}

/**
 * Why `path` is not a safe root-owned file or directory, or `undefined`:
 * not a symlink, the right type, owned by root, not writable by group or
 * others, and every directory above it (also after resolving symlinks)
 * root-owned and not writable by group or others. With `allowSticky`, a
 * root-owned sticky directory such as `/tmp` is accepted as an ancestor.
 */
export async function rootOwnedProblem(
  path: string,
  kind: "file" | "dir",
  allowSticky: boolean,
  uid: number = process.getuid?.() ?? -1,
): Promise<string | undefined> {
  const st = await lstat(path).catch((e) => errnoOf(e) ?? "error");
  if (typeof st === "string") return `${path}: ${st === "ENOENT" ? "missing" : st}`;
  if (st.isSymbolicLink()) return `${path} is a symlink`;
  if (kind === "file" && !st.isFile()) return `${path} is not a regular file`;
  if (kind === "dir" && !st.isDirectory()) return `${path} is not a directory`;
  const own = ownershipProblem(path, st, kind === "dir" && allowSticky, uid);
  if (own) return own;
  const parent = dirname(path);
  const chains = [parent];
  const real = await realpath(parent).catch(() => undefined);
  if (real === undefined) return `${parent} cannot be resolved`;
  if (real !== parent) chains.push(real);
  const seen = new Set<string>();
  for (const start of chains) {
    for (let dir = start;; dir = dirname(dir)) {
      if (!seen.has(dir)) {
        seen.add(dir);
        const d = await lstat(dir).catch(() => undefined);
        if (!d) return `${dir} cannot be examined`;
        if (d.isSymbolicLink()) {
          // Its target is on the resolved chain; the link itself must be root's.
          if (d.uid !== 0) return `${dir} is a symlink owned by uid ${d.uid}${you(d.uid, uid)}`;
        } else {
          const problem = ownershipProblem(dir, d, allowSticky, uid);
          if (problem) return problem;
        }
      }
      if (dir === "/" || dirname(dir) === dir) break;
    }
  }
  return undefined;
}

function ownershipProblem(
  path: string,
  st: Stats,
  allowSticky: boolean,
  uid: number,
): string | undefined {
  const sticky = st.isDirectory() && (st.mode & 0o1000) !== 0;
  if ((st.mode & 0o022) !== 0 && !(allowSticky && sticky && st.uid === 0)) {
    return `${path} is writable by ${(st.mode & 0o020) ? "group" : "others"} (mode ${
      octal(st.mode)
    })`;
  }
  if (st.uid !== 0) return `${path} is owned by uid ${st.uid}${you(st.uid, uid)}, not root`;
  return undefined;
}

const you = (owner: number, uid: number) => owner === uid ? " (you)" : "";

/** Problems of the entries of a tree (bounded), the root included but not its ancestors. */
async function treeProblems(root: string, uid: number): Promise<string[]> {
  const problems: string[] = [];
  const top = await lstat(root).catch(() => undefined);
  if (!top) return [`${root} cannot be examined`];
  const first = await rootOwnedProblem(root, top.isDirectory() ? "dir" : "file", true, uid);
  if (first) problems.push(first);
  const queue = [root];
  let seen = 0;
  while (queue.length > 0 && seen < TREE_ENTRY_LIMIT) {
    const dir = queue.shift()!;
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (++seen > TREE_ENTRY_LIMIT) break;
      const p = join(dir, name);
      const st = await lstat(p).catch(() => undefined);
      if (!st) continue;
      if (st.isSymbolicLink()) {
        const target = await stat(p).catch(() => undefined);
        if (st.uid !== 0) {
          problems.push(`${p} is a symlink owned by uid ${st.uid}${you(st.uid, uid)}`);
        } else if (target) {
          const problem = ownershipProblem(p, target, false, uid);
          if (problem) problems.push(problem);
        }
        continue;
      }
      const problem = ownershipProblem(p, st, false, uid);
      if (problem) problems.push(problem);
      if (st.isDirectory()) queue.push(p);
    }
  }
  return problems;
}

function koffiDir(): string | undefined {
  try {
    return dirname(createRequire(import.meta.url).resolve("koffi/package.json"));
  } catch {
    return undefined;
  }
}

async function packageDenoVersion(root: string): Promise<string | undefined> {
  try {
    const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
    const v = pkg?.dependencies?.deno;
    return typeof v === "string" && /^\d+\.\d+\.\d+$/.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function mergeFindings(findings: readonly Finding[]): Finding {
  const rank: Record<CheckStatus, number> = { ok: 0, info: 1, warn: 2, fail: 3 };
  const worst = findings.reduce((a, b) => rank[b.status] > rank[a.status] ? b : a);
  const fixes = findings.map((f) => f.fix).filter((f): f is string => f !== undefined);
  return {
    status: worst.status,
    detail: findings.map((f) => f.detail).join("; "),
    ...(fixes.length > 0 ? { fix: fixes.join("; ") } : {}),
  };
}

function describeFailure(r: CommandResult): string {
  if (r.spawnError) return `could not start (${r.spawnError})`;
  if (r.timedOut) return "did not finish before its deadline and was killed";
  const said = oneLine(r.stderr.trim().split("\n")[0] ?? "").slice(0, 160);
  const how = r.code !== null ? `exited ${r.code}` : `was killed by ${r.signal}`;
  return said ? `${how}: ${said}` : how;
}

function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<T>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}

function inodeOf(fd: number): number | undefined {
  return fdStatSync(fd)?.ino;
}

function envObject(entries: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of entries) {
    const i = e.indexOf("=");
    env[e.slice(0, i)] = e.slice(i + 1);
  }
  return env;
}

function readSmall(path: string): Promise<string | undefined> {
  return readProcText(path, 4096);
}

async function firstExisting(paths: readonly string[]): Promise<string | undefined> {
  for (const p of paths) if (await exists(p)) return p;
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  return await stat(path).then(() => true, () => false);
}

async function canExecute(path: string): Promise<boolean> {
  return await access(path, constants.X_OK).then(() => true, () => false);
}

async function canRead(path: string): Promise<boolean> {
  return await access(path, constants.R_OK).then(() => true, () => false);
}

const octal = (mode: number) => `0${(mode & 0o7777).toString(8).padStart(3, "0")}`;

function errnoOf(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e ? String(e.code) : undefined;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Control characters (C0, DEL, C1) become `?`, newlines become spaces. */
function oneLine(text: string): string {
  // deno-lint-ignore no-control-regex -- removing control characters is the point
  return text.replace(/[\r\n\t]+/g, " ").replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
}

function clean(f: Finding): Finding {
  const cap = (s: string) => s.length > DETAIL_MAX ? `${s.slice(0, DETAIL_MAX - 1)}…` : s;
  return {
    status: f.status,
    detail: cap(oneLine(f.detail)),
    ...(f.fix ? { fix: cap(oneLine(f.fix)) } : {}),
  };
}
