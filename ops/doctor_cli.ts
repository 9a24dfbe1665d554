/**
 * `pi-sudo-prompt doctor` (`deno task doctor` in a checkout): the checks of `/sudo-prompt doctor`,
 * outside pi; exit 1 when any check failed. `--json` prints them as JSON; `--explain REASON`
 * explains a refusal named in a notice (exit 2 for no such name, or a bad argument).
 *
 * Runs under Node ≥ 22.19 (through `bin/pi-sudo-prompt.mjs`), the
 * runtime pi itself uses, so the FFI check loads koffi exactly as pi would.
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { doctorExitCode, renderDoctor, runDoctor } from "./doctor/runner.ts";
import { PACKAGE_VERSION } from "../askpass/version.ts";
import { explainRefusal } from "./doctor/explain.ts";

const USAGE = "usage: pi-sudo-prompt doctor [--json] [--explain REASON]";

let values: { json?: boolean; explain?: string };
try {
  ({ values } = parseArgs({
    args: process.argv.slice(2),
    options: { json: { type: "boolean" }, explain: { type: "string" } },
    strict: true,
  }));
} catch (e) {
  console.error(`doctor: ${e instanceof Error ? e.message : e}\n${USAGE}`);
  process.exit(2);
}
const { json, explain } = values;

if (explain !== undefined) {
  const explained = explainRefusal(explain);
  if (explained.ok) console.log(explained.lines.join("\n"));
  else console.error(`doctor: ${explained.reason}`);
  process.exitCode = explained.ok ? 0 : 2;
} else {
  const checks = await runDoctor();
  if (json) {
    console.log(JSON.stringify(checks, null, 2));
  } else {
    const width = Math.min(process.stdout.columns || 100, 100);
    console.log(`pi-sudo-prompt ${PACKAGE_VERSION} doctor`);
    for (const line of renderDoctor(checks, width)) console.log(line);
  }
  process.exitCode = doctorExitCode(checks);
}
