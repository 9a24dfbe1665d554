/**
 * The long property-based fuzz run: `deno task fuzz [--seed N] [--runs N] [--only TEXT]`.
 *
 * Picks a random seed unless one is given and prints it first, so any
 * failure can be replayed with `--seed`. Runs every property of
 * `properties.ts` with its `longRuns` (or `--runs` for all), prints one line
 * per property, fast-check's report under each failure, and exits non-zero
 * if any property failed.
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { ALL_PROPERTIES } from "./properties.ts";

const USAGE = "usage: deno task fuzz [--seed N] [--runs N] [--only TEXT]";

function integer(
  name: string,
  text: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`--${name} must be an integer in [${min}, ${max}]\n${USAGE}`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        seed: { type: "string" },
        runs: { type: "string" },
        only: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const seed = integer("seed", values.seed, -(2 ** 31), 2 ** 31 - 1) ??
    (crypto.getRandomValues(new Int32Array(1))[0]);
  const runs = integer("runs", values.runs, 1, 100_000_000);
  const only = values.only?.toLowerCase();
  const selected = ALL_PROPERTIES.filter((p) => !only || p.name.toLowerCase().includes(only));
  if (selected.length === 0) {
    console.error(`no property matches --only ${values.only}`);
    return 2;
  }

  console.log(
    `fuzz seed ${seed} (replay: deno task fuzz --seed ${seed}${runs ? ` --runs ${runs}` : ""})`,
  );
  let failed = 0;
  const started = performance.now();
  for (const property of selected) {
    const numRuns = runs ?? property.longRuns;
    const t0 = performance.now();
    try {
      await property.run({ numRuns, seed });
      console.log(`ok   ${property.name} (${numRuns} runs, ${seconds(t0)})`);
    } catch (error) {
      failed++;
      console.log(`FAIL ${property.name} (${numRuns} runs, ${seconds(t0)})`);
      const report = error instanceof Error ? error.message : String(error);
      console.log(report.split("\n").map((line) => `     ${line}`).join("\n"));
    }
  }
  const passed = selected.length - failed;
  console.log(`${passed} passed, ${failed} failed (seed ${seed}, ${seconds(started)})`);
  return failed === 0 ? 0 : 1;
}

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

process.exitCode = await main();
