/**
 * Whether root alone could have changed a path: the walk up to `/` shared by the modal's red lines
 * (`extension/channel/root_program.ts`) and doctor's ownership checks.
 * @module
 */
import type { Stats } from "node:fs";
import { lstat } from "node:fs/promises";
import { dirname } from "node:path";

const GROUP_OTHER_WRITE = 0o022;
const STICKY = 0o1000;

/** The first entry on a chain that others than root could change. */
export type ChainProblem =
  | { readonly path: string; readonly kind: "unreadable" }
  | {
    readonly path: string;
    readonly kind: "changeable";
    readonly uid: number;
    readonly mode: number;
    /** Group or others may write it (`mode & 0o020` tells which). */
    readonly writable: boolean;
  };

/**
 * The first of `path` and the directories above it (as named, not resolved) that others than root
 * could change, or `undefined`. A symlink's mode means nothing, only its owner (the caller walks
 * the resolved path too). With `allowSticky`, a root-owned sticky directory such as `/tmp` counts
 * as root's: others can add names to it, not replace root's.
 */
export async function rootOnlyChainProblem(
  path: string,
  allowSticky: boolean,
): Promise<ChainProblem | undefined> {
  const chain = [path];
  for (let p = path; p !== "/" && dirname(p) !== p;) chain.push(p = dirname(p));
  // The path first: a missing or non-root name (what an agent can make) ends the walk at one lstat.
  // Then every directory above at once (this runs between a request and its modal), in order.
  const judge = (p: string, st: Stats | undefined) =>
    st ? changeable(p, st, allowSticky) : { path: p, kind: "unreadable" as const };
  const first = judge(path, await lstat(path).catch(() => undefined));
  if (first) return first;
  const above = chain.slice(1);
  const stats = await Promise.all(above.map((p) => lstat(p).catch(() => undefined)));
  return above.map((p, i) => judge(p, stats[i])).find((problem) => problem);
}

/** Whether others than root could change `path` (status `st`): the test of each chain entry. */
export function changeable(
  path: string,
  st: Stats,
  allowSticky: boolean,
): Extract<ChainProblem, { kind: "changeable" }> | undefined {
  const sticky = allowSticky && st.uid === 0 && st.isDirectory() && (st.mode & STICKY) !== 0;
  const writable = (st.mode & GROUP_OTHER_WRITE) !== 0 && !sticky && !st.isSymbolicLink();
  if (st.uid !== 0 || writable) {
    return { path, kind: "changeable", uid: st.uid, mode: st.mode, writable };
  }
  return undefined;
}
