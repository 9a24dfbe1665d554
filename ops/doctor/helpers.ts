/**
 * Small helpers of the doctor's checks: one-line terminal text (through `askpass/prompt_text.ts`,
 * the package's one sanitiser), and probes that never throw.
 *
 * @module
 */
import { access, stat } from "node:fs/promises";
import { sanitizeUntrusted } from "../../askpass/prompt_text.ts";
import { readProcText } from "../../kernel/proc_reader.ts";
import { msg } from "../../shared/i18n/tools_locale.ts";

/** Most bytes read of a small `/proc` file (a sysctl value, `/proc/self/stat`). */
const SMALL_FILE_MAX = 4096;

/** The environment the checks run sudo with: plain paths, untranslated output. */
export const SUDO_ENV = { PATH: "/usr/bin:/bin", LC_ALL: "C", LANG: "C" };

/**
 * `text` on one line, safe to draw: newlines and tabs become a space; escape sequences and
 * control, formatting and bidi characters are removed; at most `max` code points.
 */
export function oneLine(text: string, max = Number.POSITIVE_INFINITY): string {
  return sanitizeUntrusted(text.replace(/[\r\n\t]+/g, " "), max);
}

/** A mode's permission bits as `0755`. */
export function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, "0")}`;
}

/** `" (you)"`, in the user's language, when `owner` is the agent's uid. */
export function you(owner: number, uid: number): string {
  return owner === uid ? msg.you : "";
}

/** The text of a small (procfs) file, or `undefined` when it cannot be read. */
export function readSmall(path: string): Promise<string | undefined> {
  return readProcText(path, SMALL_FILE_MAX);
}

/** The first of `paths` that exists, or `undefined`. */
export async function firstExisting(paths: readonly string[]): Promise<string | undefined> {
  for (const p of paths) if (await exists(p)) return p;
  return undefined;
}

/** Whether `path` exists (following symlinks). */
export async function exists(path: string): Promise<boolean> {
  return await stat(path).then(() => true, () => false);
}

/** Whether this process may access `path` as `mode` says (`constants.X_OK`, `R_OK`). */
export async function canAccess(path: string, mode: number): Promise<boolean> {
  return await access(path, mode).then(() => true, () => false);
}
