#!/usr/bin/env node
/**
 * `pi-sudo-prompt <command>`: the package's command-line tools, runnable from
 * an npm install as well as from a checkout.
 *
 * - `doctor [--json] [--explain REASON]`: the checks of `/sudo-prompt doctor`, outside pi,
 *   or what a refusal named in one of pi's notices means.
 * - `audit verify [path]` | `audit tail [n] [path]`: the audit log.
 * - `status`: the installed broker, the allowlist and the audit log's last entries.
 * - `allowlist suggest ARGV_JSON` | `allowlist check LINE ARGV_JSON`: `/sudo-prompt allow`'s steps.
 * - `install`: checks this copy and registers it with pi (`pi install`).
 * - `uninstall`: `pi remove` for this copy, and the root broker if installed.
 *
 * Plain JavaScript on purpose: Node refuses to strip TypeScript types under
 * `node_modules` (`ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING`), so this file
 * loads the tools' `.ts` modules through a load hook that strips the types of
 * this package's own files with `node:module`'s `stripTypeScriptTypes`. The
 * code that runs is the same `.ts` a reviewer reads; nothing is built at pack
 * time. Needs Node ≥ 22.19, the version pi needs (checked first, in one line).
 *
 * Its own lines (the usage, an unknown command, a too-old Node) stay English
 * whatever the language: this file imports nothing of ours outside `bin/`
 * (`docs/design.md` §1), and an old Node could not load the TypeScript tables
 * of `shared/i18n/` anyway. The tools it loads speak the user's language.
 *
 * @module
 */
import { readFileSync, realpathSync } from "node:fs";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { nodeVersionProblem } from "./node_version.mjs";

const COMMANDS = {
  doctor: "../ops/doctor_cli.ts",
  audit: "../ops/audit_cli.ts",
  status: "../ops/status_cli.ts",
  allowlist: "../ops/allowlist_cli.ts",
  install: "../ops/install_cli.ts",
  uninstall: "../ops/uninstall_cli.ts",
};
const USAGE = "usage: pi-sudo-prompt doctor [--json] [--explain REASON] | audit verify [path] | " +
  "audit tail [n] [path] | status | allowlist suggest|check … | install | uninstall";

async function main() {
  const problem = nodeVersionProblem(process.version);
  if (problem) {
    console.error(problem);
    return 1;
  }
  const name = process.argv[2];
  const entry = Object.hasOwn(COMMANDS, name ?? "") ? COMMANDS[name] : undefined;
  if (!entry) {
    console.error(
      name === undefined ? USAGE : `pi-sudo-prompt: unknown command '${name}'\n${USAGE}`,
    );
    return 2;
  }
  const { registerHooks, stripTypeScriptTypes } = await import("node:module");
  const packageRoot = new URL("../", import.meta.url).href;
  // stripTypeScriptTypes warns that it is experimental, once per process;
  // every other warning still prints.
  process.removeAllListeners("warning");
  process.on("warning", (w) => {
    if (w.name !== "ExperimentalWarning") console.error(`${w.name}: ${w.message}`);
  });
  registerHooks({
    load(url, context, nextLoad) {
      // Only this package's own TypeScript, never a dependency's.
      if (
        url.endsWith(".ts") && url.startsWith(packageRoot) &&
        !url.slice(packageRoot.length).includes("node_modules/")
      ) {
        const source = stripTypeScriptTypes(readFileSync(new URL(url), "utf8"));
        return { format: "module", source, shortCircuit: true };
      }
      return nextLoad(url, context);
    },
  });
  // The tools read their own arguments from process.argv.slice(2).
  process.argv.splice(2, 1);
  await import(new URL(entry, import.meta.url).href);
}

// Run only as the program (npm links it as `pi-sudo-prompt`), not when a test
// imports nodeVersionProblem.
if (process.argv[1] && pathToFileURL(realpathSync(process.argv[1])).href === import.meta.url) {
  const code = await main();
  if (code !== undefined) process.exitCode = code;
}
