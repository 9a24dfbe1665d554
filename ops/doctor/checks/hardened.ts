/**
 * Doctor check `hardened` (ADR 0003): which files pi and the helper run the agent could modify,
 * how to make them root-owned, and, always, what hardened mode does not cover (ADR 0009 §5).
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
import { msg } from "../../../shared/i18n/tools_locale.ts";

const CACHE_LABEL = msg.hardenedCache;
/** What hardened mode never covers (ADR 0009 §5): whatever runs in pi's process sees the keys. */
export const NOT_COVERED: string = msg.hardenedNotCovered;
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
export const hardenedCheck = defineCheck("hardened", msg.hardenedTitle, async (ctx) => {
  if (ctx.uid === 0) {
    return {
      status: "info",
      detail: msg.hardenedRoot,
    };
  }
  const items = await exposed(ctx);
  if (items.length === 0) {
    return {
      status: "ok",
      detail: msg.hardenedOk(NOT_COVERED),
    };
  }
  const listed = items.map(({ label, problems }) =>
    problems.length > 1
      ? msg.hardenedItemMore(label, problems[0], problems.length - 1)
      : msg.hardenedItem(label, problems[0])
  );
  const usesRootCopy = ctx.helperPath === ctx.rootHelperPath;
  const rootCopy = !usesRootCopy &&
    !await rootOwnedProblem(ctx.rootHelperPath, "file", false, ctx.uid) &&
    !await rootOwnedProblem(ctx.rootDenoPath, "file", false, ctx.uid);
  const copyNote = rootCopy ? msg.hardenedCopyUnused(ctx.rootHelperPath) : "";
  const fixes: string[] = [];
  if (items.some((i) => i.label !== CACHE_LABEL)) {
    const sources = await registeredSources(ctx.packageRoot, process.cwd(), process.env);
    fixes.push(
      msg.hardenedInstallRootOwned(rootOwnedInstallFix(ctx.packageRoot, PACKAGE_VERSION, sources)),
    );
  }
  if (items.some((i) => i.label === CACHE_LABEL)) {
    fixes.push(
      rootCopy ? msg.hardenedTurnOn : msg.hardenedWithBroker,
    );
  }
  return {
    status: "warn",
    detail: msg.hardenedNot(copyNote, listed.join("; "), NOT_COVERED),
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
  add(msg.hardenedExtension, pkg);
  add(msg.hardenedHelper, [await rootOwned(ctx.helperPath, "file")]);
  if (ctx.denoPath) add(msg.hardenedDeno, [await rootOwned(ctx.denoPath, "file")]);
  if (ctx.koffiDir) add(msg.hardenedKoffi, await treeProblems(ctx.koffiDir, ctx.uid));
  const cache = ctx.denoCacheDir
    ? await rootOwned(ctx.denoCacheDir, "dir")
    : msg.hardenedSessionCache;
  add(CACHE_LABEL, [cache]);
  return items;
}
