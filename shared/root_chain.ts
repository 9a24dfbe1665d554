/**
 * Whether root alone could have changed a path: the one walk "from the path
 * up to `/`" that the modal's red lines (`extension/channel/root_program.ts`)
 * and doctor's ownership checks (`ops/doctor/ownership.ts`) share. Each
 * caller words the problem its own way.
 *
 * @module
 */
import type { Stats } from "node:fs";
import { lstat } from "node:fs/promises";
import { dirname } from "node:path";

/** Group- or other-writable permission bits. */
const GROUP_OTHER_WRITE = 0o022;
/** The sticky bit of a directory such as `/tmp`. */
const STICKY = 0o1000;

/** The first entry on a chain that others than root could change. */
export type ChainProblem =
  | { readonly path: string; readonly kind: "unreadable" }
  | {
    readonly path: string;
    readonly kind: "changeable";
    /** Its owner (not root's when not 0). */
    readonly uid: number;
    /** Its permission bits. */
    readonly mode: number;
    /** Group or others may write it (`mode & 0o020` tells which). */
    readonly writable: boolean;
  };

/**
 * The first of `path` and the directories above it (as named, not resolved)
 * that is not root's, or that group or others may write, or `undefined`
 * when root alone could have changed each. A symlink's own mode means
 * nothing, only its owner counts (the caller walks the resolved path too).
 * With `allowSticky`, a root-owned sticky directory such as `/tmp` counts
 * as root's: others can add names to it, not replace root's.
 */
export async function rootOnlyChainProblem(
  path: string,
  allowSticky: boolean,
): Promise<ChainProblem | undefined> {
  const chain = [path];
  for (let p = path; p !== "/" && dirname(p) !== p;) chain.push(p = dirname(p));
  // The path itself first: a name that does not exist or is not root's (what
  // an agent can make) ends the walk at one lstat. Then every directory above
  // it at once (this runs between a request and its modal), judged in order.
  const judge = (p: string, st: Stats | undefined) =>
    st ? changeable(p, st, allowSticky) : { path: p, kind: "unreadable" as const };
  const first = judge(path, await lstat(path).catch(() => undefined));
  if (first) return first;
  const above = chain.slice(1);
  const stats = await Promise.all(above.map((p) => lstat(p).catch(() => undefined)));
  return above.map((p, i) => judge(p, stats[i])).find((problem) => problem);
}

/**
 * Whether others than root could change `path`, whose status is `st` (its
 * owner, or group or others by its write bits): the test of each chain entry.
 */
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
