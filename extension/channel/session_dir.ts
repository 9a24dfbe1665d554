/**
 * The per-session private directory (`$XDG_RUNTIME_DIR/pi-sudo-prompt-XXXXXX`, else
 * under `/tmp`), 0700 and ours, checked with `lstat` after creation so a planted
 * symlink or pre-created directory is refused. Its owner file (pid, start time)
 * lets later sessions remove the directories of dead pi processes.
 *
 * @module
 */
import { lstat, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseStat } from "../../kernel/proc.ts";
import { readProcText } from "../../kernel/proc_reader.ts";
import { ownUid } from "../../shared/own_uid.ts";
import type { Result } from "../../shared/result.ts";

/** Prefix of every session directory name. */
export const SESSION_DIR_PREFIX = "pi-sudo-prompt-";
const OWNER_FILE = "owner";

/** Named reasons a session directory cannot be used. */
export const SESSION_DIR_ERRORS = {
  CREATE_FAILED: "session_dir_create_failed",
  UNSAFE: "session_dir_unsafe",
} as const;

/** One of the values of {@link SESSION_DIR_ERRORS}. */
export type SessionDirError = typeof SESSION_DIR_ERRORS[keyof typeof SESSION_DIR_ERRORS];

/** Where session directories are created: `XDG_RUNTIME_DIR` when it is ours and private. */
export async function chooseRuntimeBase(
  env: Record<string, string | undefined> = process.env,
): Promise<string> {
  const xdg = env.XDG_RUNTIME_DIR;
  return xdg?.startsWith("/") && await isPrivateDir(xdg) ? xdg : "/tmp";
}

/** Creates and checks a fresh private session directory under `base`. */
export async function createSessionDir(
  base: string,
): Promise<Result<{ dir: string }, SessionDirError>> {
  const dir = await mkdtemp(join(base, SESSION_DIR_PREFIX)).catch(() => undefined);
  if (dir === undefined) return { ok: false, reason: SESSION_DIR_ERRORS.CREATE_FAILED };
  // mkdtemp creates 0700, but check what is really there, without following links.
  if (!await isPrivateDir(dir)) return { ok: false, reason: SESSION_DIR_ERRORS.UNSAFE };
  const start = parseStat(await readProcText(`/proc/${process.pid}/stat`) ?? "")?.startTime;
  const owner = `${process.pid} ${start ?? "?"}\n`;
  const written = await writeFile(join(dir, OWNER_FILE), owner, { mode: 0o600, flag: "wx" })
    .then(() => true, () => false);
  if (!written) {
    // A full disk, a quota: leave nothing behind.
    await rm(dir, { recursive: true, force: true }).catch(() => {});
    return { ok: false, reason: SESSION_DIR_ERRORS.CREATE_FAILED };
  }
  return { ok: true, dir };
}

/**
 * Removes session directories under `base` whose owner is gone (or its pid reused), only
 * our own private non-symlink ones with our prefix. Returns the removed paths.
 */
export async function removeStaleSessionDirs(base: string): Promise<string[]> {
  const names = await readdir(base).catch((): string[] => []);
  const removed: string[] = [];
  for (const name of names.filter((n) => n.startsWith(SESSION_DIR_PREFIX)).slice(0, 256)) {
    const dir = join(base, name);
    if (!await isPrivateDir(dir)) continue;
    const owner = await readFile(join(dir, OWNER_FILE), "utf8").catch(() => undefined);
    if (owner === undefined) continue; // being created right now, or not ours to judge
    const [pidText, startText] = owner.trim().split(" ");
    const pid = Number(pidText);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    const stat = parseStat(await readProcText(`/proc/${pid}/stat`) ?? "");
    if (stat && String(stat.startTime) === startText) continue; // still alive
    await rm(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

async function isPrivateDir(path: string): Promise<boolean> {
  const st = await lstat(path).catch(() => undefined);
  return !!st && st.isDirectory() && st.uid === ownUid() && (st.mode & 0o077) === 0;
}
