// @ts-check
/**
 * The one reader of a process's descriptor table (`/proc/<pid>/fd`), written
 * once for two runtimes' I/O. It is a generator: it yields the reads it needs
 * (the listing, then the links) and decides on the answers, so the `/proc`
 * walk's worker drives it with synchronous reads ({@link readDescriptorTableSync})
 * and the connection check on pi's thread with asynchronous ones
 * (`socket_peer.ts`).
 *
 * Plain JavaScript: the walk's worker imports it, and Node strips no types
 * below `node_modules`.
 *
 * @module
 */
import { readdirSync, readlinkSync } from "node:fs";
import { opendir, readlink } from "node:fs/promises";

/** Links read at once by the asynchronous reader (bounds the promises in flight). */
const LINK_BATCH = 64;

/**
 * A read the walk asks for: list the directory (at most `cap + 1` names are
 * needed), or read these links.
 * @typedef {{ list: string, cap: number } | { links: string[] }} DescriptorRead
 */

/**
 * The answer to a read. To a listing: the names, or the error's code. To the
 * links: per path, its text, `null` when it no longer exists (closed since the
 * listing), `undefined` when it could not be read.
 * @typedef {string[] | { errno: unknown } | (string | null | undefined)[]} DescriptorAnswer
 */

/**
 * A read table: the kept descriptors in fd order, and whether a link could not
 * be read (the caller decides whether that fails it). Or why there is none:
 * `gone` (no such process), `hidden` (EACCES: the process hides its tables),
 * `unreadable` (another error), `too_many` (more than `cap` descriptors).
 * @typedef {{ ok: true, fds: number, kept: [number, string][], unreadableLink: boolean }
 *   | { ok: false, reason: "gone" | "hidden" | "unreadable" | "too_many" }} DescriptorTable
 */

/**
 * Reads the descriptor table in `dir`, keeping the descriptors whose link
 * `keep` accepts. More than `cap` descriptors fail it rather than be read.
 * @param {string} dir
 * @param {number} cap
 * @param {(link: string) => boolean} keep
 * @returns {Generator<DescriptorRead, DescriptorTable, DescriptorAnswer>}
 */
export function* descriptorTable(dir, cap, keep) {
  const listed = yield { list: dir, cap };
  if (!Array.isArray(listed)) {
    const code = "errno" in listed ? listed.errno : undefined;
    const reason = code === "ENOENT" ? "gone" : code === "EACCES" ? "hidden" : "unreadable";
    return { ok: false, reason };
  }
  const fds = listed.filter((n) => typeof n === "string" && /^\d+$/.test(n)).map(Number);
  if (fds.length > cap) return { ok: false, reason: "too_many" };
  fds.sort((a, b) => a - b);
  const links = yield { links: fds.map((fd) => `${dir}/${fd}`) };
  /** @type {[number, string][]} */
  const kept = [];
  let unreadableLink = false;
  for (let i = 0; i < fds.length; i++) {
    const link = Array.isArray(links) ? links[i] : undefined;
    if (link === null) continue;
    if (typeof link !== "string") unreadableLink = true;
    else if (keep(link)) kept.push([fds[i], link]);
  }
  return { ok: true, fds: fds.length, kept, unreadableLink };
}

/** @param {unknown} e */
function errnoOf(e) {
  return typeof e === "object" && e !== null && "code" in e ? e.code : undefined;
}

/**
 * {@link descriptorTable} with synchronous reads, for the walk's worker
 * thread (never pi's).
 * @param {string} dir
 * @param {number} cap
 * @param {(link: string) => boolean} keep
 * @returns {DescriptorTable}
 */
export function readDescriptorTableSync(dir, cap, keep) {
  const walk = descriptorTable(dir, cap, keep);
  let step = walk.next();
  while (!step.done) {
    const read = step.value;
    /** @type {DescriptorAnswer} */
    let answer;
    if ("list" in read) {
      try {
        answer = readdirSync(read.list);
      } catch (e) {
        answer = { errno: errnoOf(e) };
      }
    } else {
      answer = read.links.map((path) => {
        try {
          return readlinkSync(path);
        } catch (e) {
          return errnoOf(e) === "ENOENT" ? null : undefined;
        }
      });
    }
    step = walk.next(answer);
  }
  return step.value;
}

/**
 * {@link descriptorTable} with asynchronous reads, for pi's thread: the
 * listing is streamed and stops at `cap + 1` names, the links are read
 * {@link LINK_BATCH} at a time.
 * @param {string} dir
 * @param {number} cap
 * @param {(link: string) => boolean} keep
 * @returns {Promise<DescriptorTable>}
 */
export async function readDescriptorTable(dir, cap, keep) {
  const walk = descriptorTable(dir, cap, keep);
  let step = walk.next();
  while (!step.done) {
    const read = step.value;
    step = walk.next(
      "list" in read ? await listNames(read.list, read.cap) : await readLinks(read.links),
    );
  }
  return step.value;
}

/**
 * @param {string} dir
 * @param {number} cap
 * @returns {Promise<string[] | { errno: unknown }>}
 */
async function listNames(dir, cap) {
  /** @type {string[]} */
  const names = [];
  try {
    const handle = await opendir(dir, { bufferSize: 128 });
    try {
      for await (const entry of handle) {
        names.push(entry.name);
        if (names.length > cap) break;
      }
    } finally {
      // The iterator closes the directory when it runs to the end or breaks;
      // closing twice throws.
      await handle.close().catch(() => {});
    }
  } catch (e) {
    return { errno: errnoOf(e) };
  }
  return names;
}

/**
 * @param {string[]} paths
 * @returns {Promise<(string | null | undefined)[]>}
 */
async function readLinks(paths) {
  /** @type {(string | null | undefined)[]} */
  const links = [];
  for (let i = 0; i < paths.length; i += LINK_BATCH) {
    links.push(
      ...await Promise.all(
        paths.slice(i, i + LINK_BATCH).map((path) =>
          readlink(path).catch((e) => errnoOf(e) === "ENOENT" ? null : undefined)
        ),
      ),
    );
  }
  return links;
}
