/**
 * tmux's lock, which takes the keyboard from tmux (ADR 0009 §1): for one request
 * pi listens on a fresh socket and asks tmux to lock every client of pi's session
 * with the keeper as `lock-command`. Only a keeper checked through the kernel
 * (`keeper_check.ts`) makes a locked client; what tmux answers decides nothing.
 *
 * @module
 */
import { createServer, type Server, type Socket } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import process from "node:process";
import { getPeerCredentials } from "../../kernel/peer_credentials.ts";
import { socketFd } from "../../kernel/socket_fd.ts";
import { readStat } from "../../kernel/peer_verification.ts";
import { ancestors } from "../../kernel/proc.ts";
import { readProcLink } from "../../kernel/proc_reader.ts";
import { firstExecutable } from "../../shared/executables.ts";
import { spawnWithDeadline } from "../../shared/spawn_deadline.ts";
import { ownUid } from "../../shared/own_uid.ts";
import { entrySource, libcPath } from "./entry_source.ts";
import { checkKeeper, type ExpectedKeeper, type LockedClient } from "./keeper_check.ts";
import { keeperArgv, keeperEnvironment, keeperLockCommand } from "./lock_keeper_permissions.ts";
import { msg } from "../../shared/i18n/locale.ts";
import { HARDENED_KEEPER_FILES } from "../../broker/root_files.ts";

/** Deadline of one tmux run. */
const TMUX_RUN_MS = 3000;
/** Keepers accepted per lock: every client of a session, and a few more. */
const MAX_KEEPERS = 16;
/** Deadline of one keeper's check. */
const KEEPER_CHECK_MS = 3000;

/** Where pi's tmux server and pane are, from pi's own `TMUX` and `TMUX_PANE`. */
export interface TmuxPlace {
  readonly socket: string;
  readonly pane: string;
}

/** pi's tmux, from its environment (set by tmux; the agent cannot change it), if any. */
export function tmuxPlace(
  env: Readonly<Record<string, string | undefined>>,
): TmuxPlace | undefined {
  const socket = env.TMUX?.split(",")[0];
  const pane = env.TMUX_PANE;
  if (!socket || !socket.startsWith("/") || !pane || !/^%[0-9]{1,9}$/.test(pane)) return undefined;
  return { socket, pane };
}

/** Whether a tmux server is among pi's ancestors (keys pass through it even with `TMUX` unset). */
export async function tmuxAmongAncestors(): Promise<boolean> {
  for await (const pid of ancestors(process.ppid, readStat)) {
    const exe = await readProcLink(`/proc/${pid}/exe`);
    if (exe !== undefined && /\/tmux$/.test(exe)) return true;
  }
  return false;
}

/** A verified locked client and the keeper connection that holds its lock. */
export interface HeldLock {
  readonly locked: LockedClient;
  /** Ends this client's lock: the keeper drops typed keys and exits, tmux unlocks. */
  release(): void;
  /** Called once when the keeper's connection ends (the keeper died, or was released). */
  onEnd(listener: () => void): void;
}

/** Named reasons a lock could not even be asked for. */
export type LockStartFailure = "no_keeper" | "no_tmux" | "unsafe_path" | "listen_failed";

/** What one request's locks are made of: the keepers' socket, tmux and its `lock-command`. */
interface LockSetup {
  readonly server: Server;
  readonly dir: string;
  readonly command: string;
  readonly tmux: string;
  readonly place: TmuxPlace;
  readonly expected: ExpectedKeeper;
}

/** The locks of one request. */
export class ClientLocks {
  readonly #s: LockSetup;
  readonly #held = new Set<Socket>();
  #accepted = 0;
  #closed = false;

  private constructor(setup: LockSetup) {
    this.#s = setup;
  }

  /** Listens for keepers, telling `onClient` each verified one; {@link lock} locks. */
  static async open(
    place: TmuxPlace,
    onClient: (held: HeldLock) => void,
  ): Promise<{ ok: true; locks: ClientLocks } | { ok: false; reason: LockStartFailure }> {
    const [source, tmux, env] = await Promise.all([
      entrySource("extension/keyboard/lock_keeper.ts", HARDENED_KEEPER_FILES),
      firstExecutable(["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"]),
      firstExecutable(["/usr/bin/env", "/bin/env"]),
    ]);
    const libc = libcPath();
    if (!source || !libc || !env) return { ok: false, reason: "no_keeper" };
    if (!tmux) return { ok: false, reason: "no_tmux" };
    const dir = await mkdtemp(join(tmpdir(), "pi-sudo-prompt-lock-"));
    const socket = join(dir, "k");
    const keeper = {
      deno: source.deno,
      keeper: source.path,
      denoDir: source.denoDir,
      libc,
      socket,
      pi: process.pid,
      piStopped: msg.stoppedWithModal,
    };
    const command = keeperLockCommand(keeper, env);
    if (!command) {
      await rm(dir, { recursive: true, force: true });
      return { ok: false, reason: "unsafe_path" };
    }
    const expected = {
      uid: ownUid(),
      exe: source.deno,
      argv: keeperArgv(keeper),
      environment: keeperEnvironment(keeper),
    };
    const server = createServer({ allowHalfOpen: false });
    const locks = new ClientLocks({ server, dir, command, tmux, place, expected });
    server.on("connection", (s) => void locks.#accept(s, onClient));
    const listening = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(socket, () => resolve(true));
    });
    if (!listening) {
      await locks.close();
      return { ok: false, reason: "listen_failed" };
    }
    server.on("error", () => {});
    return { ok: true, locks };
  }

  /** Asks tmux to lock every client of pi's session, setting `lock-command` for this run only. */
  async lock(): Promise<void> {
    if (this.#closed) return;
    const t = ["-t", this.#s.place.pane];
    await spawnWithDeadline(this.#s.tmux, [
      "-S",
      this.#s.place.socket,
      "set-option",
      ...t,
      "lock-command",
      this.#s.command,
      ";",
      "lock-session",
      ...t,
      ";",
      "set-option",
      "-u",
      ...t,
      "lock-command",
    ], { deadlineMs: TMUX_RUN_MS, env: { PATH: "/usr/bin:/bin", LC_ALL: "C.UTF-8" } });
  }

  async #accept(socket: Socket, onClient: (held: HeldLock) => void): Promise<void> {
    if (this.#closed || ++this.#accepted > MAX_KEEPERS) return void socket.destroy();
    this.#held.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => this.#held.delete(socket));
    // The keeper sends nothing: a byte from it is not our keeper.
    socket.on("data", () => socket.destroy());
    const fd = socketFd(socket);
    const creds = fd === undefined ? undefined : getPeerCredentials(fd);
    if (!creds?.ok) return void socket.destroy();
    const timer = setTimeout(() => socket.destroy(), KEEPER_CHECK_MS);
    const checked = await checkKeeper(creds.creds.pid, this.#s.expected).finally(() =>
      clearTimeout(timer)
    );
    if (!checked.ok || socket.destroyed || this.#closed) return void socket.destroy();
    onClient({
      locked: checked.locked,
      release: () => socket.destroy(),
      onEnd: (listener) => {
        if (socket.destroyed) queueMicrotask(listener);
        else socket.once("close", listener);
      },
    });
  }

  /** Releases every lock and stops listening; removes the socket's directory. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const s of this.#held) s.destroy();
    this.#held.clear();
    await new Promise<void>((resolve) => this.#s.server.close(() => resolve()));
    await rm(this.#s.dir, { recursive: true, force: true }).catch(() => {});
  }
}
