/**
 * The terminal guardian's life, seen from pi: where it runs from (the
 * root-owned copies in hardened mode), starting it, the handshake that hands
 * it the terminal, and a respawn when it dies (at most a few a minute).
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { guardianArgv } from "./guardian_permissions.ts";
import { parseStat } from "../../kernel/proc.ts";
import { resolveDenoBinary } from "../../shared/executables.ts";
import { isProtectedPath } from "../../broker/allowlist_policy.ts";
import { BROKER_ROOT, ROOT_DENO, ROOT_SOURCES } from "../../broker/paths.ts";
import { HARDENED_GUARDIAN_FILES } from "../../broker/root_files.ts";
import { setTerminalExclusive, terminalExclusive } from "./terminal_control.ts";
import { type GuardState, RELEASE_COMMAND, tellGuardian } from "./guard_state.ts";

/** How long the guardian may take to start and to take the terminal. */
const GUARDIAN_START_MS = 15_000;
/** Respawns of a guardian that died, at most this many per minute. */
const MAX_RESPAWNS_PER_MINUTE = 3;

/** A `/proc` file read once per guardian, or `undefined` when it cannot be read. */
function procFile(path: string, encoding: "latin1" | "utf8"): string | undefined {
  try {
    return readFileSync(path, encoding);
  } catch {
    return undefined;
  }
}

/** The libc pi has mapped: the guardian may load exactly that file. */
function libcPath(): string | undefined {
  return /\s(\/\S*\/libc\.so\.6)$/m.exec(procFile("/proc/self/maps", "utf8") ?? "")?.[1];
}

/**
 * Where the guardian runs from. In hardened mode (the broker installed) the
 * root-owned deno, sources and cache: the guardian is exempt from the holder
 * scans, so nothing it runs may come from files the user (and so the agent)
 * can change (docs/adr/0008). Otherwise the package's own, with a fresh cache.
 */
async function guardianSource(): Promise<
  { deno: string; path: string; denoDir: string; fresh: boolean } | undefined
> {
  const root = [ROOT_DENO, ...HARDENED_GUARDIAN_FILES.map((f) => `${ROOT_SOURCES}/${f}`)];
  if ((await Promise.all(root.map(isProtectedPath))).every(Boolean)) {
    return {
      deno: ROOT_DENO,
      path: `${ROOT_SOURCES}/extension/keyboard/terminal_guardian.ts`,
      denoDir: `${BROKER_ROOT}/deno-cache`,
      fresh: false,
    };
  }
  const deno = await resolveDenoBinary();
  if (!deno) return undefined;
  const path = await realpath(fileURLToPath(new URL("./terminal_guardian.ts", import.meta.url)));
  const denoDir = await mkdtemp(join(tmpdir(), "pi-sudo-prompt-guardian-"));
  return { deno, path, denoDir, fresh: true };
}

/** Starts the guardian for `s`'s terminal and records it; a problem is noted, never thrown. */
export async function spawnGuardian(s: GuardState): Promise<void> {
  const libc = libcPath();
  const source = libc && s.ttyPath ? await guardianSource() : undefined;
  if (!libc || !s.ttyPath || !source) {
    s.problems.push("terminal guardian unavailable (no deno binary or libc path)");
    return;
  }
  const dropCache = () =>
    source.fresh ? rm(source.denoDir, { recursive: true, force: true }) : Promise.resolve();
  let child: ChildProcess;
  try {
    const [cmd, ...args] = guardianArgv(source.deno, source.path, libc, s.ttyPath);
    child = spawn(cmd, args, {
      stdio: ["pipe", "pipe", "ignore"],
      detached: true, // its own session: no job-control signals from pi's terminal
      env: { DENO_DIR: source.denoDir, NO_COLOR: "1" },
    });
  } catch (e) {
    await dropCache();
    s.problems.push(`terminal guardian did not start (${(e as Error).message})`);
    return;
  }
  s.guardianRootOwned = !source.fresh;
  const ok = await handshake(child).finally(dropCache);
  if (!ok) {
    child.kill("SIGKILL");
    s.problems.push(
      "terminal guardian did not take the terminal; if pi is killed, run " + RELEASE_COMMAND,
    );
    return;
  }
  s.guardian = child;
  s.guardianStart = child.pid === undefined
    ? undefined
    : parseStat(procFile(`/proc/${child.pid}/stat`, "latin1") ?? "")?.startTime;
  if (s.modals > 0) tellGuardian(s, "modal on"); // a respawned guardian learns what shows
  // Neither the child nor its pipes may keep pi's event loop alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void })?.unref?.();
  (child.stdout as unknown as { unref?: () => void })?.unref?.();
  child.once("exit", () => {
    if (s.exiting || s.guardian !== child) return;
    s.guardian = undefined;
    s.guardianStart = undefined;
    const now = Date.now();
    s.respawns = s.respawns.filter((t) => now - t < 60_000);
    if (s.respawns.length >= MAX_RESPAWNS_PER_MINUTE) {
      s.problems.push("terminal guardian keeps dying; if pi is killed, run " + RELEASE_COMMAND);
      return;
    }
    s.respawns.push(now);
    void spawnGuardian(s);
  });
}

/**
 * `ready` → (clear exclusive mode if set, so it can open) `open` → `held`.
 * The terminal is non-exclusive only between our clear and its open, a
 * pipe round trip; the holder scan before every modal covers that moment.
 */
function handshake(child: ChildProcess): Promise<boolean> {
  return new Promise((resolve) => {
    let buffer = "";
    let stage: "ready" | "held" = "ready";
    const done = (ok: boolean) => {
      clearTimeout(timer);
      child.stdout?.removeAllListeners("data");
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), GUARDIAN_START_MS);
    child.once("error", () => done(false));
    child.once("exit", () => done(false));
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      if (buffer.length > 256) return done(false);
      while (buffer.includes("\n")) {
        const line = buffer.slice(0, buffer.indexOf("\n"));
        buffer = buffer.slice(line.length + 1);
        if (stage === "ready" && line === "ready") {
          stage = "held";
          const excl = terminalExclusive(0);
          if (excl.ok && excl.on) setTerminalExclusive(0, false);
          child.stdin?.write("open\n");
        } else if (stage === "held" && line === "held") {
          return done(true);
        } else {
          return done(false);
        }
      }
    });
  });
}
