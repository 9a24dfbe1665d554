/**
 * `pi-sudo-prompt doctor` (`deno task doctor` in a checkout): the checks of `/sudo-prompt doctor`, outside pi.
 *
 * Prints one screen of checks (see `ops/doctor/runner.ts`) and exits 0, or 1 when any
 * check failed. `--json` prints the checks as a JSON array instead. A bad
 * argument prints the usage and exits 2.
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

let json = false;
try {
  json = parseArgs({
    args: process.argv.slice(2),
    options: { json: { type: "boolean", default: false } },
    strict: true,
  }).values.json === true;
} catch (e) {
  console.error(
    `doctor: ${e instanceof Error ? e.message : e}\nusage: pi-sudo-prompt doctor [--json]`,
  );
  process.exit(2);
}

const checks = await runDoctor();
if (json) {
  console.log(JSON.stringify(checks, null, 2));
} else {
  const width = Math.min(process.stdout.columns || 100, 100);
  console.log(`pi-sudo-prompt ${PACKAGE_VERSION} doctor`);
  for (const line of renderDoctor(checks, width)) console.log(line);
}
process.exitCode = doctorExitCode(checks);
