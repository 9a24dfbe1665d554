/**
 * The `packages` entries of pi's settings that load this copy (`npm:`, `git:` or a local path),
 * and the commands that fit how it was installed: for `uninstall` (`pi remove`) and the doctor's
 * hardened-mode fix, which must work for this copy, not a package that may not be on the
 * registry. Only {@link registeredSources} reads files.
 *
 * @module
 */
import { readFile, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve, sep } from "node:path";
import { msg } from "../shared/i18n/tools_locale.ts";

/** The npm name of this package, as in `package.json`. */
export const PACKAGE_NAME = "pi-sudo-prompt";

/** One `packages` entry of pi's settings that loads this copy. */
export interface PiSource {
  /**
   * What `pi remove` takes: the entry itself, or a local one's absolute path (`pi remove`
   * resolves a relative path from the current directory).
   */
  readonly source: string;
  /** `user`: `~/.pi/agent/settings.json`; `project`: `<cwd>/.pi/settings.json` (`pi remove -l`). */
  readonly scope: "user" | "project";
}

/** pi's agent directory: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent` (pi's `getAgentDir`). */
export function piAgentDir(env: Readonly<Record<string, string | undefined>>): string {
  const dir = env.PI_CODING_AGENT_DIR;
  return dir ? expandHome(dir) : join(homedir(), ".pi", "agent");
}

/** `path` with a leading `~` or `~/` replaced by the home directory, as pi expands it. */
function expandHome(path: string): string {
  return path === "~" ? homedir() : path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
}

/** Where a settings entry points, as pi resolves it. */
export type SourceTarget =
  | { readonly kind: "npm"; readonly name: string }
  | { readonly kind: "git"; readonly path: string }
  | { readonly kind: "local"; readonly path: string };

/**
 * Where the settings entry `source` points: a local path is relative to `baseDir` (the settings
 * file's directory), a git source under `<agentDir>/git/<host>/<path>`; `undefined` for shapes pi
 * would not load as a package directory (an `https:` URL, a malformed entry).
 */
export function sourceTarget(
  source: string,
  baseDir: string,
  agentDir: string,
): SourceTarget | undefined {
  if (source.startsWith("npm:")) {
    const spec = source.slice(4).trim();
    // "@scope/name@1.2.3" or "name@1.2.3": the version is after the last "@" past index 0.
    const at = spec.lastIndexOf("@");
    return { kind: "npm", name: at > 0 ? spec.slice(0, at) : spec };
  }
  if (source.startsWith("git:")) {
    const rest = source.slice(4).replace(/@[^/@]*$/, "").replace(/\.git$/, "");
    if (!rest || rest.includes("..")) return undefined;
    return { kind: "git", path: join(agentDir, "git", ...rest.split("/")) };
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(source)) return undefined;
  const expanded = expandHome(source);
  return { kind: "local", path: isAbsolute(expanded) ? expanded : resolve(baseDir, expanded) };
}

/** The entries of `packages` (any shape) that load the package at the real path `root`. */
export function matchingSources(
  packages: unknown,
  scope: PiSource["scope"],
  baseDir: string,
  agentDir: string,
  root: string,
  realPaths: ReadonlyMap<string, string>,
): PiSource[] {
  const found: PiSource[] = [];
  for (const source of entrySources(packages)) {
    const target = sourceTarget(source, baseDir, agentDir);
    if (!target) continue;
    const hit = target.kind === "npm"
      ? target.name === PACKAGE_NAME && root.split(sep).includes("node_modules")
      : (realPaths.get(target.path) ?? target.path) === root;
    if (hit) found.push({ source: target.kind === "local" ? target.path : source, scope });
  }
  return found;
}

/** The source of each entry of a settings file's `packages` (a string, or an object's `source`). */
function entrySources(packages: unknown): string[] {
  if (!Array.isArray(packages)) return [];
  return packages.map((e) => typeof e === "string" ? e : e?.source)
    .filter((s): s is string => typeof s === "string");
}

/** `settings.packages` of the JSON file at `path`, or `undefined` when absent or unreadable. */
function settingsPackages(path: string): Promise<unknown> {
  return readFile(path, "utf8").then((text) => JSON.parse(text)?.packages).catch(() => undefined);
}

/** The settings entries, user and project (`<cwd>/.pi/settings.json`), that load `root`. */
export async function registeredSources(
  root: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<PiSource[]> {
  const agentDir = piAgentDir(env);
  const realRoot = await realpath(root).catch(() => root);
  const found: PiSource[] = [];
  for (const [scope, dir] of [["user", agentDir], ["project", join(cwd, ".pi")]] as const) {
    const packages = await settingsPackages(join(dir, "settings.json"));
    const realPaths = new Map<string, string>();
    for (const source of entrySources(packages)) {
      const target = sourceTarget(source, dir, agentDir);
      if (target && target.kind !== "npm") {
        realPaths.set(target.path, await realpath(target.path).catch(() => target.path));
      }
    }
    found.push(...matchingSources(packages, scope, dir, agentDir, realRoot, realPaths));
  }
  return found;
}

/** `pi remove` for `source`, shell-quoted when needed. */
export function piRemoveCommand(source: PiSource): string {
  return `pi remove ${source.scope === "project" ? "-l " : ""}${shellWord(source.source)}`;
}

/**
 * The command that installs this package root-owned and points pi at it: from the registry when
 * this copy came from it, else a tarball of this copy, which the agent could have changed (so the
 * fix says to check it first).
 */
export function rootOwnedInstallFix(
  root: string,
  version: string,
  sources: readonly PiSource[],
): string {
  const removes = sources.map(piRemoveCommand);
  const fromNpm = sources.some((s) => s.source.startsWith("npm:"));
  if (removes.length === 0) removes.push(`pi remove ${shellWord(root)}`);
  const repoint = `${removes.join(" && ")} && pi install "$(sudo npm root -g)/${PACKAGE_NAME}"`;
  if (fromNpm) return `sudo npm install -g ${PACKAGE_NAME}@${version} && ${repoint}`;
  return msg.hardenedCheckChanges(shellWord(root)) +
    `cd "$(mktemp -d)" && npm pack ${shellWord(root)} && ` +
    `sudo npm install -g ./${PACKAGE_NAME}-${version}.tgz && ${repoint}`;
}

/** `word` as one POSIX shell word: bare when it is plainly safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
