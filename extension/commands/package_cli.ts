/**
 * Runs `bin/pi-sudo-prompt.mjs` with pi's Node and a deadline, so the doctor, the stored status and
 * the allowlist's grammar never load into pi's process.
 * @module
 */
import process from "node:process";
import { fileURLToPath } from "node:url";
import { type SpawnDeadlineResult, spawnWithDeadline } from "../../shared/spawn_deadline.ts";

const CLI = fileURLToPath(new URL("../../bin/pi-sudo-prompt.mjs", import.meta.url));

/** Runs `pi-sudo-prompt …args`; its output is capped at 256 KiB. */
export function runPackageCli(
  args: readonly string[],
  deadlineMs: number,
): Promise<SpawnDeadlineResult> {
  return spawnWithDeadline(process.execPath, [CLI, ...args], {
    deadlineMs,
    outputCap: 256 * 1024,
  });
}
