// @ts-check
/**
 * The one reader of a descriptor table (`/proc/<pid>/fd`; docs/design.md §7):
 * {@link descriptorTable} yields its reads and decides; the worker reads
 * synchronously, pi's thread asynchronously. Plain JavaScript, like the worker.
 *
 * @module
 */
import { readdirSync, readlinkSync } from "node:fs";
import { opendir, readlink } from "node:fs/promises";

/** Links read at once by the asynchronous reader (bounds the promises in flight). */
const LINK_BATCH = 64;

/**
 * Kept descriptors in fd order, the count listed, whether a link was unreadable;
 * or why no table: `gone`, `hidden` (EACCES), `unreadable`, `too_many` (past `cap`: not read).
 * @typedef {{ ok: true, fds: number, kept: [number, string][], unreadableLink: boolean }
 *   | { ok: false, reason: "gone" | "hidden" | "unreadable" | "too_many" }} DescriptorTable
 */

/**
 * Reads the table in `dir`, keeping descriptors whose link `keep` accepts.
 * Answers: to `list`, the names (at least `cap + 1` if more) or `{ errno }`; to
 * `links`, per path its text, `null` if closed since, `undefined` if unreadable.
 * (`any`: a generator has one answer type; each `yield` states its own.)
 * @param {string} dir
 * @param {number} cap
 * @param {(link: string) => boolean} keep
 * @returns {Generator<{ list: string, cap: number } | { links: string[] }, DescriptorTable, any>}
 */
export function* descriptorTable(dir, cap, keep) {
  /** @type {string[] | { errno: unknown }} */
  const listed = yield { list: dir, cap };
  if (!Array.isArray(listed)) {
    const { errno } = listed;
    const reason = errno === "ENOENT" ? "gone" : errno === "EACCES" ? "hidden" : "unreadable";
    return { ok: false, reason };
  }
  const fds = listed.filter((n) => /^\d+$/.test(n)).map(Number).sort((a, b) => a - b);
  if (fds.length > cap) return { ok: false, reason: "too_many" };
  /** @type {(string | null | undefined)[]} */
  const links = yield { links: fds.map((fd) => `${dir}/${fd}`) };
  /** @type {[number, string][]} */
  const kept = [];
  let unreadableLink = false;
  fds.forEach((fd, i) => {
    const link = links[i];
    if (link === undefined) unreadableLink = true;
    else if (link !== null && keep(link)) kept.push([fd, link]);
  });
  return { ok: true, fds: fds.length, kept, unreadableLink };
}

/** The `code` of a thrown error (`ENOENT`, `EACCES`), if any. @param {unknown} e */
export const errnoOf = (e) =>
  typeof e === "object" && e !== null && "code" in e ? e.code : undefined;
/** @param {unknown} e */
const closedOrUnreadable = (e) => errnoOf(e) === "ENOENT" ? null : undefined;

/**
 * {@link descriptorTable} with synchronous reads: for the walk's worker thread, never pi's.
 * @param {string} dir
 * @param {number} cap
 * @param {(link: string) => boolean} keep
 * @returns {DescriptorTable}
 */
export function readDescriptorTableSync(dir, cap, keep) {
  const walk = descriptorTable(dir, cap, keep);
  for (let step = walk.next();;) {
    if (step.done) return step.value;
    const read = step.value;
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
          return closedOrUnreadable(e);
        }
      });
    }
    step = walk.next(answer);
  }
}

/**
 * {@link descriptorTable} with asynchronous reads, for pi's thread: the listing
 * is streamed and stops past `cap`, links are read {@link LINK_BATCH} at a time.
 * @param {string} dir
 * @param {number} cap
 * @param {(link: string) => boolean} keep
 * @returns {Promise<DescriptorTable>}
 */
export async function readDescriptorTable(dir, cap, keep) {
  const walk = descriptorTable(dir, cap, keep);
  for (let step = walk.next();;) {
    if (step.done) return step.value;
    const read = step.value;
    /** @type {unknown[] | { errno: unknown }} */
    const answer = [];
    if ("list" in read) {
      try {
        const listing = await opendir(read.list, { bufferSize: 128 });
        try {
          for await (const entry of listing) if (answer.push(entry.name) > read.cap) break;
        } finally {
          // Node's iterator closes it at a break, and closing twice throws. (Deno 2
          // keeps the descriptor of a listing closed before its end: only a table
          // past the cap, refused, stops early.)
          await listing.close().catch(() => {});
        }
      } catch (e) {
        step = walk.next({ errno: errnoOf(e) });
        continue;
      }
    } else {
      for (let i = 0; i < read.links.length; i += LINK_BATCH) {
        const batch = read.links.slice(i, i + LINK_BATCH);
        answer.push(...await Promise.all(batch.map((p) => readlink(p).catch(closedOrUnreadable))));
      }
    }
    step = walk.next(answer);
  }
}
