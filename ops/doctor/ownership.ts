/**
 * Root ownership probes for the broker, allowlist and hardened-mode checks: whether the agent (a
 * process of the user) could rewrite a file or a tree.
 *
 * @module
 */
import { lstat, readdir, realpath, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { errnoCode } from "../../shared/errno.ts";
import { changeable, rootOnlyChainProblem } from "../../shared/root_chain.ts";
import { octal, you } from "./helpers.ts";
import { msg } from "../../shared/i18n/tools_locale.ts";

/** Most entries of a tree {@link treeProblems} examines. */
const TREE_ENTRY_LIMIT = 2_000;

/**
 * Why `path` is not a safe root-owned file or directory, or `undefined`: no symlink, the right
 * type, owned by root, not writable by group or others; every directory above it, also after
 * resolving symlinks, root-owned and not writable by group or others. `allowSticky` accepts a
 * root-owned sticky ancestor such as `/tmp`.
 */
export async function rootOwnedProblem(
  path: string,
  kind: "file" | "dir",
  allowSticky: boolean,
  uid: number,
): Promise<string | undefined> {
  const st = await lstat(path).catch((e) => errnoCode(e) ?? "error");
  if (typeof st === "string") return st === "ENOENT" ? msg.ownMissing(path) : `${path}: ${st}`;
  if (st.isSymbolicLink()) return msg.ownSymlink(path);
  if (kind === "file" && !st.isFile()) return msg.ownNotRegular(path);
  if (kind === "dir" && !st.isDirectory()) return msg.ownNotDirectory(path);
  const own = changeableProblem(changeable(path, st, kind === "dir" && allowSticky), uid);
  if (own) return own;
  // Every directory above it, as named and as resolved: a symlink on the
  // way counts by its owner, its target by the resolved chain.
  const parent = dirname(path);
  const real = await realpath(parent).catch(() => undefined);
  if (real === undefined) return msg.ownUnresolved(parent);
  for (const start of real === parent ? [parent] : [parent, real]) {
    const problem = await rootOnlyChainProblem(start, allowSticky);
    if (problem?.kind === "unreadable") return msg.ownUnexamined(problem.path);
    if (problem) return changeableProblem(problem, uid);
  }
  return undefined;
}

/** Problems of the entries of a tree (bounded), the root included but not its ancestors. */
export async function treeProblems(root: string, uid: number): Promise<string[]> {
  const problems: string[] = [];
  const top = await lstat(root).catch(() => undefined);
  if (!top) return [msg.ownUnexamined(root)];
  const first = await rootOwnedProblem(root, top.isDirectory() ? "dir" : "file", true, uid);
  if (first) problems.push(first);
  const queue = [root];
  let seen = 0;
  while (queue.length > 0 && seen < TREE_ENTRY_LIMIT) {
    const dir = queue.shift()!;
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (++seen > TREE_ENTRY_LIMIT) break;
      const p = join(dir, name);
      const st = await lstat(p).catch(() => undefined);
      if (!st) continue;
      if (st.isSymbolicLink() && st.uid !== 0) {
        problems.push(msg.ownForeignSymlink(p, st.uid, you(st.uid, uid)));
        continue;
      }
      // A root's symlink counts by its target (a dangling one by nothing).
      const target = st.isSymbolicLink() ? await stat(p).catch(() => undefined) : st;
      const problem = target && changeableProblem(changeable(p, target, false), uid);
      if (problem) problems.push(problem);
      if (st.isDirectory()) queue.push(p);
    }
  }
  return problems;
}

/** The words for an entry others than root can change: its write bits first, then its owner. */
function changeableProblem(
  p: { path: string; uid: number; mode: number; writable: boolean } | undefined,
  uid: number,
): string | undefined {
  if (!p) return undefined;
  if (p.writable) {
    return (p.mode & 0o020)
      ? msg.ownWritableByGroup(p.path, octal(p.mode))
      : msg.ownWritableByOthers(p.path, octal(p.mode));
  }
  return msg.ownOwnedBy(p.path, p.uid, you(p.uid, uid));
}
