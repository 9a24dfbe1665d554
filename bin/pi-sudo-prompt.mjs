#!/usr/bin/env node
/**
 * `pi-sudo-prompt <command>`: the package's command-line tools, from an npm install or a checkout.
 *
 * Plain JavaScript: Node refuses to strip types under `node_modules`
 * (`ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING`), so a load hook strips this package's own `.ts`
 * with `stripTypeScriptTypes`; the code that runs is the `.ts` a reviewer reads. Its own lines stay
 * English: it imports nothing of ours outside `bin/` (`docs/design.md` §1).
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
  // Drops ExperimentalWarnings (stripTypeScriptTypes warns once); every other warning prints.
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

// Run only as the program, not when imported.
if (process.argv[1] && pathToFileURL(realpathSync(process.argv[1])).href === import.meta.url) {
  const code = await main();
  if (code !== undefined) process.exitCode = code;
}
