/**
 * A copy of the product's sources with some lines changed: how a test proves
 * that a check matters (the attack succeeds without it), or proves one layer
 * alone, without a switch in product code that could turn a check off.
 *
 * @module
 */
import assert from "node:assert/strict";
import { cp, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "./test_env.ts";

/** One change to one product file of a copy of the checkout. */
export interface Mutation {
  readonly file: string;
  readonly from: string;
  readonly to: string;
}

/**
 * Copies the product's sources into `dir` and applies `mutations` (each must
 * match, so a mutation never silently does nothing); `node_modules` is the
 * checkout's. Returns `dir`.
 */
export async function mutatedCopy(dir: string, mutations: readonly Mutation[]): Promise<string> {
  for (
    const name of ["index.ts", "package.json", "askpass", "kernel", "extension", "broker", "shared"]
  ) {
    await cp(join(REPO_ROOT, name), join(dir, name), { recursive: true });
  }
  await cp(join(REPO_ROOT, "ops"), join(dir, "ops"), { recursive: true });
  await symlink(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"));
  for (const m of mutations) {
    const path = join(dir, m.file);
    const text = await readFile(path, "utf8");
    assert.ok(text.includes(m.from), `mutation target missing in ${m.file}: ${m.from}`);
    await writeFile(path, text.replace(m.from, m.to));
  }
  return dir;
}

/** The pairing's root layer off (ADR 0005): the user-level checks decide alone. */
export const ROOT_PAIRING_OFF: Mutation = {
  file: "extension/pairing/pairing_guard.ts",
  from: "    if (await rootCheckInstalled(PAIRING_CHECK)) {",
  to: "    if (false) {",
};

/** The pairing's user level off: without root's verdict, a request counts as paired. */
export const USER_PAIRING_OFF: Mutation = {
  file: "extension/pairing/pairing_guard.ts",
  from: "    return await this.#userLevel(requestId, entry, notBefore);",
  to: "    return { ok: true, rootChecked: false };",
};

/** The walk of `/proc` the user level would read, not started ahead. */
export const PAIRING_WALK_OFF: Mutation = {
  file: "extension/pairing/pairing_guard.ts",
  from: "    void walkProcesses({ uid, gid, notBefore: arrivedAt, deadline });",
  to: "",
};
