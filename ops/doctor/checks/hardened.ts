/**
 * Doctor check `hardened`: which of the files pi and the helper run (the
 * extension, the helper, the deno binary, koffi, the Deno cache) the agent
 * could modify, and how to make them root-owned (hardened mode, ADR 0003);
 * and, always, what hardened mode does not cover (ADR 0009 §5).
 *
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import { PACKAGE_VERSION } from "../../../askpass/version.ts";
import { registeredSources, rootOwnedInstallFix } from "../../pi_sources.ts";
import { type Context, defineCheck } from "../context.ts";
import { exists } from "../helpers.ts";
import { rootOwnedProblem, treeProblems } from "../ownership.ts";

const CACHE_LABEL = "the helper's Deno cache";
/**
 * What hardened mode never covers, said whatever its state (ADR 0009 §5):
 * everything that runs inside pi's own process sees the modal's keys.
 */
export const NOT_COVERED = "Not covered by hardened mode: pi itself, node, and every other " +
  "extension or package pi loads (~/.pi/agent/extensions, the packages in pi's settings) run " +
  "inside pi's process and see the modal's keys: code that can rewrite those files can read " +
  "your password";
/** The package's entries that hold code pi or the helper loads. */
const PACKAGE_ENTRIES = [
  "package.json",
  "index.ts",
  "mod.ts",
  "bin",
  "extension",
  "kernel",
  "askpass",
  "broker",
  "ops",
  "shared",
];

/** Which files the agent could modify; hardened mode active or not. */
export const hardenedCheck = defineCheck("hardened", "hardened mode", async (ctx) => {
  if (ctx.uid === 0) {
    return {
      status: "info",
      detail: "running as root: sudo never asks for a password, hardened mode does not apply",
    };
  }
  const items = await exposed(ctx);
  if (items.length === 0) {
    return {
      status: "ok",
      detail: "hardened: the extension, helper, deno binary and Deno cache are root-owned; the " +
        `agent cannot rewrite them. ${NOT_COVERED}`,
    };
  }
  const listed = items.map(({ label, problems }) =>
    `${label} (${problems[0]}${problems.length > 1 ? `, +${problems.length - 1} more` : ""})`
  );
  const usesRootCopy = ctx.helperPath === ctx.rootHelperPath;
  const rootCopy = !usesRootCopy &&
    !await rootOwnedProblem(ctx.rootHelperPath, "file", false, ctx.uid) &&
    !await rootOwnedProblem(ctx.rootDenoPath, "file", false, ctx.uid);
  const copyNote = rootCopy
    ? ` (a root-owned helper copy exists (${ctx.rootHelperPath}) but is not the one in use)`
    : "";
  const fixes: string[] = [];
  if (items.some((i) => i.label !== CACHE_LABEL)) {
    const sources = await registeredSources(ctx.packageRoot, process.cwd(), process.env);
    fixes.push(
      `install root-owned: ${rootOwnedInstallFix(ctx.packageRoot, PACKAGE_VERSION, sources)}`,
    );
  }
  if (items.some((i) => i.label === CACHE_LABEL)) {
    fixes.push(
      rootCopy
        ? "turn on hardened mode so the extension runs the root-owned helper, deno and cache"
        : "the root-owned helper and cache come with /sudo-prompt install-broker (hardened mode)",
    );
  }
  return {
    status: "warn",
    detail: `not hardened${copyNote}: the agent could modify ${listed.join("; ")}. ${NOT_COVERED}`,
    fix: fixes.join("; "),
  };
});

type Exposed = { readonly label: string; readonly problems: readonly string[] };

/** What the agent could modify, each part with its problems (deduplicated), in a fixed order. */
async function exposed(ctx: Context): Promise<Exposed[]> {
  const items: Exposed[] = [];
  const add = (label: string, problems: readonly (string | undefined)[]) => {
    const found = problems.filter((p) => p !== undefined);
    if (found.length > 0) items.push({ label, problems: [...new Set(found)] });
  };
  const rootOwned = (path: string, kind: "file" | "dir") =>
    rootOwnedProblem(path, kind, true, ctx.uid);
  const pkg = [await rootOwned(ctx.packageRoot, "dir")];
  for (const name of PACKAGE_ENTRIES) {
    const p = join(ctx.packageRoot, name);
    if (await exists(p)) pkg.push(...await treeProblems(p, ctx.uid));
  }
  add("the extension", pkg);
  add("the askpass helper", [await rootOwned(ctx.helperPath, "file")]);
  if (ctx.denoPath) add("the deno binary", [await rootOwned(ctx.denoPath, "file")]);
  if (ctx.koffiDir) add("koffi (loaded into pi)", await treeProblems(ctx.koffiDir, ctx.uid));
  const cache = ctx.denoCacheDir
    ? await rootOwned(ctx.denoCacheDir, "dir")
    : "a per-session deno-cache in your session directory";
  add(CACHE_LABEL, [cache]);
  return items;
}
