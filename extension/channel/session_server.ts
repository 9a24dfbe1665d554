/**
 * The askpass session server, one per interactive pi session: it owns the private
 * directory, the socket, the launcher and `sudo` wrapper, and answers helpers one at a
 * time through a `Prompter`. Rules (docs/design.md §4, §7): the kernel identifies every
 * connection before anything shows; every wait has a deadline; queues and buffers are
 * bounded; nothing blocks the event loop; teardown denies what is pending, removes every file.
 *
 * @module
 */
import { chmod, mkdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { DENY_REASONS, PROTOCOL_VERSION } from "../../askpass/protocol.ts";
import { isProtectedPath } from "../../broker/protected_path.ts";
import { BROKER_ROOT, BROKER_VERSION_FILE, ROOT_DENO, ROOT_SOURCES } from "../../broker/paths.ts";
import { HARDENED_HELPER_FILES } from "../../broker/root_files.ts";
import { parseBrokerVersion } from "../../broker/broker_version.ts";
import {
  helperArgvPrefix,
  helperEnvironment,
  isSafeFlagPath,
} from "../../askpass/helper_permissions.ts";
import { firstExecutable, resolveDenoBinary } from "../../shared/executables.ts";
import type { ExpectedHelper } from "../../kernel/peer_verification.ts";
import { ownUid } from "../../shared/own_uid.ts";
import { chooseRuntimeBase, createSessionDir, removeStaleSessionDirs } from "./session_dir.ts";
import {
  launcherScript,
  piSecretRunScript,
  sudoShellPrelude,
  sudoWrapperScript,
} from "./shell_injection.ts";
import { BROKER_REFUSAL_EXIT, piSecretRunArgv } from "../../broker/broker_permissions.ts";
import { PairingGuard } from "../pairing/pairing_guard.ts";
import { holdProcessWalker, releaseProcessWalker } from "../../kernel/proc_walk.ts";
import { libc } from "../../kernel/libc.ts";
import { PAIRING_CHECK } from "../pairing/root_check.ts";
import { warmDenoCache, type WarmupRun } from "./deno_warmup.ts";
import { compiledPiSecretRun } from "./pi_secret_run_binary.ts";
import { ConnectionIntake } from "./connection_intake.ts";
import { ModalQueue } from "./modal_queue.ts";
import { PACKAGE_ROOT } from "./start_notice.ts";
import {
  type AskpassSession,
  CONNECTION_ERRORS,
  DEFAULT_TIMEOUT_MS,
  HELPER_DEADLINE_MARGIN_MS,
  SESSION_START_ERRORS,
  type SessionOptions,
  sessionSettings,
  type SessionStartError,
  type SessionTuning,
} from "./session_types.ts";
import type { Result } from "../../shared/result.ts";

export {
  type AskpassSession,
  DEFAULT_TIMEOUT_MS,
  HELPER_DEADLINE_MARGIN_MS,
  SESSION_START_ERRORS,
  type SessionEvent,
} from "./session_types.ts";

/** Starts a session: directory, launcher, wrapper and listening socket. */
export async function startSession(
  given: SessionOptions,
  tuning: SessionTuning = {},
): Promise<Result<{ session: AskpassSession }, SessionStartError>> {
  const options = sessionSettings(given, tuning);
  // Hardened mode: a root-owned helper, deno and cache installed by the
  // broker installer, which the agent cannot rewrite (docs/design.md §8.2).
  const root = options.denoPath || options.helperPath || options.hardened === false
    ? undefined
    : await rootOwnedHelper();
  const denoPath = root?.denoPath ?? options.denoPath ?? await resolveDenoBinary();
  if (!denoPath) return { ok: false, reason: SESSION_START_ERRORS.DENO_NOT_FOUND };
  const helperPath = root?.helperPath ?? options.helperPath ??
    await realpath(fileURLToPath(new URL("../../askpass/helper.ts", import.meta.url)))
      .catch(() => undefined);
  if (helperPath === undefined) return { ok: false, reason: SESSION_START_ERRORS.HELPER_NOT_FOUND };
  const envPath = await firstExecutable(["/usr/bin/env", "/bin/env"]);
  const realSudo = options.realSudo ?? await firstExecutable(["/usr/bin/sudo", "/bin/sudo"]);
  const base = options.runtimeBase ?? await chooseRuntimeBase();
  await removeStaleSessionDirs(base);
  const made = await createSessionDir(base);
  if (!made.ok) return { ok: false, reason: SESSION_START_ERRORS.SESSION_DIR };
  const dir = made.dir;
  // From here on, a start that fails removes the directory.
  const fail = async (reason: SessionStartError) => {
    await rm(dir, { recursive: true, force: true });
    return { ok: false, reason } as const;
  };
  const socketPath = join(dir, "askpass.sock");
  if (
    !envPath || ![denoPath, helperPath, socketPath, dir].every(isSafeFlagPath) ||
    (realSudo !== undefined && !isSafeFlagPath(realSudo))
  ) {
    return await fail(SESSION_START_ERRORS.UNSAFE_PATH);
  }

  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const userDenoDir = join(dir, "deno-cache");
  const denoDir = root?.denoDir ?? userDenoDir;
  const binDir = join(dir, "bin");
  const launcherPath = join(dir, "pi-askpass");
  const environment = helperEnvironment({
    denoDir,
    socketPath,
    deadlineMs: timeoutMs + HELPER_DEADLINE_MARGIN_MS,
  });
  const argvPrefix = helperArgvPrefix(denoPath, helperPath, socketPath);
  const clientEntry = fileURLToPath(new URL("../../broker/pi_secret_run.ts", import.meta.url));
  // `deno task compile`'s binary when it is there and current (docs/compile.md).
  const compiled = await compiledPiSecretRun(PACKAGE_ROOT);
  const written = await writeSessionFiles([
    { path: userDenoDir },
    { path: binDir },
    { path: launcherPath, text: launcherScript({ envPath, environment, argvPrefix }) },
    {
      path: join(binDir, "pi-secret-run"),
      text: piSecretRunScript(
        userDenoDir,
        compiled.ok ? [compiled.path] : piSecretRunArgv(denoPath, clientEntry),
      ),
    },
    ...(realSudo
      ? [{
        path: join(binDir, "sudo"),
        text: sudoWrapperScript(realSudo, options.credentialCache ?? "none"),
      }]
      : []),
  ]);
  if (!written) return await fail(SESSION_START_ERRORS.SESSION_FILES);
  const expected: ExpectedHelper = {
    uid: ownUid(),
    exePath: denoPath,
    argvPrefix,
    environment,
    ownerPid: options.ownerPid ?? process.pid,
  };

  const server = createServer({ allowHalfOpen: false });
  server.maxConnections = options.maxConnections ?? 64;
  const gid = process.getgid?.() ?? -1;
  const pairing = new PairingGuard({
    uid: expected.uid,
    gid,
    exePath: expected.exePath,
    argvPrefix: expected.argvPrefix,
    sudoPath: options.realSudo,
  });
  const queue = new ModalQueue(options);
  const prelude = realSudo ? sudoShellPrelude(join(binDir, "sudo")) : "";
  const intake = new ConnectionIntake({
    settings: options,
    expected,
    expectedBroker: { socketPath, uid: expected.uid, ownerPid: expected.ownerPid },
    timeoutMs,
    queue,
    pairing,
    prelude,
  });
  server.on("connection", (socket) => intake.accept(socket));
  server.on(
    "drop",
    () => options.onEvent?.({ kind: "refused", reason: CONNECTION_ERRORS.TOO_MANY_CONNECTIONS }),
  );
  const listening = await listen(server, socketPath) &&
    await chmod(socketPath, 0o600).then(() => true, () => false);
  if (!listening) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return await fail(SESSION_START_ERRORS.LISTEN_FAILED);
  }
  // Off the event loop: child processes fill the cache while pi starts up.
  const warmRuns: WarmupRun[] = [
    ...(root ? [] : [{ argv: argvPrefix, expectedCode: 1 }]),
    ...(compiled.ok
      ? []
      : [{ argv: piSecretRunArgv(denoPath, clientEntry), expectedCode: BROKER_REFUSAL_EXIT }]),
  ];
  const warming = warmDenoCache(warmRuns, userDenoDir);
  // The /proc walker and the FFI library start now, so the first sudo pays neither
  // (docs/design.md §4.1); a null library: every request is refused later.
  holdProcessWalker({ uid: expected.uid, gid });
  libc();

  let closed = false;
  const session: AskpassSession = {
    dir,
    socketPath,
    launcherPath,
    binDir,
    realSudo,
    denoPath,
    helperPath,
    denoDir,
    hardened: root !== undefined,
    warmup: warming.done,
    toolEnvironment(baseEnv) {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined) env[k] = v;
      env.SUDO_ASKPASS = launcherPath;
      env.PI_ASKPASS_SOCKET = socketPath;
      env.PATH = `${binDir}:${baseEnv.PATH ?? "/usr/local/bin:/usr/bin:/bin"}`;
      return env;
    },
    shellPrelude: () => prelude,
    pendingCount: () => queue.pendingCount(),
    denyAllNow: () => queue.denyAllNow(DENY_REASONS.PI_STOPPED),
    lastUnverifiedArgv: () => intake.lastUnverifiedArgv(),
    async close() {
      if (closed) return;
      closed = true;
      // Killed and reaped before the directory (and its deno-cache) is removed.
      warming.cancel();
      await warming.done;
      await queue.shutdown();
      intake.destroyAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
      releaseProcessWalker();
    },
  };
  return { ok: true, session };
}

/**
 * The root-owned helper, deno and cache of hardened mode, when every file
 * the helper runs is root-protected and the installed protocol matches.
 */
async function rootOwnedHelper(): Promise<
  { denoPath: string; helperPath: string; denoDir: string } | undefined
> {
  const helperPath = `${ROOT_SOURCES}/askpass/helper.ts`;
  const files = [
    ROOT_DENO,
    ...HARDENED_HELPER_FILES.map((f) => `${ROOT_SOURCES}/${f}`),
    PAIRING_CHECK, // root confirms the helper's pipe is its sudo's (ADR 0005)
  ];
  for (const f of files) if (!await isProtectedPath(f)) return undefined;
  const version = parseBrokerVersion(await readFile(BROKER_VERSION_FILE, "utf8").catch(() => ""));
  if (version.protocol !== PROTOCOL_VERSION) return undefined;
  return { denoPath: ROOT_DENO, helperPath, denoDir: `${BROKER_ROOT}/deno-cache` };
}

function listen(server: Server, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(path, () => resolve(true));
  });
}

/**
 * Creates the session's directories (no `text`) and scripts (0700, never overwritten);
 * false when any cannot be written, and the caller removes the session directory.
 */
async function writeSessionFiles(
  files: readonly { readonly path: string; readonly text?: string }[],
): Promise<boolean> {
  try {
    for (const f of files) {
      if (f.text === undefined) await mkdir(f.path, { mode: 0o700 });
      else await writeFile(f.path, f.text, { mode: 0o700, flag: "wx" });
    }
    return true;
  } catch {
    return false;
  }
}
