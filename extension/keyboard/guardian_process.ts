/**
 * The terminal guardian's life, seen from pi: starting it, the handshake, and a
 * respawn when it dies (at most a few a minute).
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { DENO_RUN_PINNED } from "../../askpass/helper_permissions.ts";
import { readStat } from "../../kernel/peer_verification.ts";
import { HARDENED_GUARDIAN_FILES } from "../../broker/root_files.ts";
import { entrySource, libcPath } from "./entry_source.ts";
import { type GuardState, RELEASE_COMMAND, tellGuardian } from "./guard_state.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** How long the guardian may take to start and to take the terminal. */
const GUARDIAN_START_MS = 15_000;
/** Respawns of a guardian that died, at most this many per minute. */
const MAX_RESPAWNS_PER_MINUTE = 3;
const NOT_HELD = msg.guardianNotHeld(RELEASE_COMMAND);
const KEEPS_DYING = msg.guardianKeepsDying(RELEASE_COMMAND);

/** Starts the guardian for `s`'s terminal and records it; a problem is noted, never thrown. */
export async function spawnGuardian(s: GuardState): Promise<void> {
  const libc = libcPath();
  const source = libc && s.ttyPath
    ? await entrySource("extension/keyboard/terminal_guardian.ts", HARDENED_GUARDIAN_FILES)
    : undefined;
  if (!libc || !s.ttyPath || !source) {
    s.problems.push(msg.guardianUnavailable);
    return;
  }
  let child: ChildProcess;
  try {
    // The pinned flags and FFI for exactly the libc pi has loaded (docs/permissions.md); the last
    // argument is its line if pi ends while a modal shows (it loads no language table).
    const argv = [...DENO_RUN_PINNED, `--allow-ffi=${libc}`, source.path, libc, s.ttyPath];
    // pi's own descriptor becomes the guardian's fd 3: exclusive mode is never
    // cleared for it to open the terminal (ADR 0009 §3).
    child = spawn(source.deno, [...argv, msg.modalGone], {
      stdio: ["pipe", "pipe", "ignore", 0],
      detached: true, // its own session: no job-control signals from pi's terminal
      env: { DENO_DIR: source.denoDir, NO_COLOR: "1" },
    });
  } catch (e) {
    s.problems.push(msg.guardianDidNotStart((e as Error).message));
    return;
  }
  s.guardianRootOwned = source.rootOwned;
  const ok = await handshake(child);
  if (!ok) {
    child.kill("SIGKILL");
    if (!s.problems.includes(NOT_HELD)) s.problems.push(NOT_HELD);
    respawnLater(s);
    return;
  }
  const start = child.pid === undefined ? undefined : (await readStat(child.pid))?.startTime;
  // It died while its start was read: the exit handler below would never run.
  if (child.exitCode !== null || child.signalCode !== null) return respawnLater(s);
  s.guardian = child;
  s.guardianStart = start;
  if (s.modals > 0) tellGuardian(s, "modal on"); // a respawned guardian learns what shows
  // Neither the child nor its pipes may keep pi's event loop alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void })?.unref?.();
  (child.stdout as unknown as { unref?: () => void })?.unref?.();
  child.once("exit", () => {
    if (s.exiting || s.guardian !== child) return;
    s.guardian = undefined;
    s.guardianStart = undefined;
    respawnLater(s);
  });
}

/**
 * Starts a new guardian now or, after {@link MAX_RESPAWNS_PER_MINUTE} in the
 * last minute, once it is over. Until one holds the terminal, modals are
 * refused (`terminal_unguarded`) and the terminal stays exclusive.
 */
function respawnLater(s: GuardState): void {
  const now = Date.now();
  s.respawns = s.respawns.filter((t) => now - t < 60_000);
  const wait = s.respawns.length >= MAX_RESPAWNS_PER_MINUTE ? 60_000 - (now - s.respawns[0]) : 0;
  if (wait > 0 && !s.problems.includes(KEEPS_DYING)) s.problems.push(KEEPS_DYING);
  setTimeout(() => {
    if (s.exiting || s.guardian) return;
    s.respawns.push(Date.now());
    void spawnGuardian(s);
  }, wait).unref();
}

/** `held`: non-dumpable, holding fd 3. Any other line, an exit or the deadline: no guardian. */
function handshake(child: ChildProcess): Promise<boolean> {
  return new Promise((resolve) => {
    let buffer = "";
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
      if (!buffer.includes("\n")) return;
      done(buffer.slice(0, buffer.indexOf("\n")) === "held");
    });
  });
}
