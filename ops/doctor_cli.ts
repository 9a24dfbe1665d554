/**
 * `pi-sudo-prompt doctor [--json] [--width N]`: the checks of `/sudo-prompt doctor`, outside pi
 * (exit 1 when a check failed); `--explain REASON`: a refusal named in a notice (exit 2 for no
 * such name or a bad argument). `/sudo-prompt doctor` runs this in a process of its own, so none
 * of the doctor loads into pi; `--inside-pi '{"session": {...}, "piState": {...}}'` hands it what
 * only pi knows. Runs under Node, the runtime pi uses, so the FFI check loads koffi as pi would.
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { doctorExitCode, type DoctorOptions, renderDoctor, runDoctor } from "./doctor/runner.ts";
import { PACKAGE_VERSION } from "../askpass/version.ts";
import { explainRefusal } from "./doctor/explain.ts";
import { msg } from "../shared/i18n/tools_locale.ts";

const USAGE = msg.doctorUsage;

let values: { json?: boolean; explain?: string; width?: string; "inside-pi"?: string };
let insidePi: DoctorOptions | undefined;
try {
  ({ values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      json: { type: "boolean" },
      explain: { type: "string" },
      width: { type: "string" },
      "inside-pi": { type: "string" },
    },
    strict: true,
  }));
  if (values.width !== undefined && !/^[1-9][0-9]{1,2}$/.test(values.width)) {
    throw new Error(msg.doctorWidth);
  }
  if (values["inside-pi"] !== undefined) insidePi = parseInsidePi(values["inside-pi"]);
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
  const checks = await runDoctor(insidePi);
  if (json) {
    console.log(JSON.stringify(checks, null, 2));
  } else {
    const width = values.width
      ? Number(values.width)
      : Math.min(process.stdout.columns || 100, 100);
    console.log(`pi-sudo-prompt ${PACKAGE_VERSION} doctor`);
    for (const line of renderDoctor(checks, width)) console.log(line);
  }
  process.exitCode = doctorExitCode(checks);
}

/** `--inside-pi`'s JSON, checked field by field; anything else is refused whole. */
function parseInsidePi(text: string): DoctorOptions {
  const bad = () => new Error(msg.doctorInsidePi);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw bad();
  }
  const o = raw as { session?: Record<string, unknown>; piState?: Record<string, unknown> };
  if (typeof o !== "object" || o === null) throw bad();
  const path = (v: unknown) => {
    if (v === undefined) return undefined;
    if (typeof v !== "string" || !v.startsWith("/")) throw bad();
    return v;
  };
  const s = o.session ?? {};
  const p = o.piState;
  if (p !== undefined) {
    const ok = typeof p === "object" && p !== null &&
      ["started", "exclusive", "nonDumpable", "dumpableByChoice", "guardianRootOwned"].every((k) =>
        typeof p[k] === "boolean"
      ) &&
      Array.isArray(p.problems) && p.problems.every((x) => typeof x === "string") &&
      (p.ttyPath === undefined || typeof p.ttyPath === "string") &&
      (p.rdev === undefined || typeof p.rdev === "number") &&
      (p.guardianPid === undefined || typeof p.guardianPid === "number");
    if (!ok) throw bad();
  }
  return {
    denoPath: path(s.denoPath),
    helperPath: path(s.helperPath),
    denoCacheDir: path(s.denoCacheDir),
    piState: p as DoctorOptions["piState"],
  };
}
