/**
 * What `pi-sudo-prompt install` and `uninstall` share: the package root, their step-by-step
 * report (which sets the exit code), and where pi is.
 *
 * @module
 */
import { realpath } from "node:fs/promises";
import { delimiter, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { firstExecutable } from "../shared/executables.ts";
import { msg } from "../shared/i18n/tools_locale.ts";

/** This package's root, as a real path. */
export const packageRoot = await realpath(fileURLToPath(new URL("..", import.meta.url)));

let problems = 0;

/** Prints one line of the report. */
export function say(line: string): void {
  console.log(line);
}

/** Prints one failed step; {@link finish} then reports the count and exits 1. */
export function problem(line: string): void {
  problems++;
  say(`  ✗ ${line}`);
}

/** Prints `done`, or how many problems there were, and sets the exit code (1 on any problem). */
export function finish(done: string): void {
  say(problems === 0 ? done : msg.cliProblems(problems));
  process.exitCode = problems === 0 ? 0 : 1;
}

/** The first executable `name` in the absolute directories of `PATH`. */
export function onPath(name: string): Promise<string | undefined> {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter((d) => d.startsWith("/"));
  return firstExecutable(dirs.map((d) => join(d, name)));
}

/**
 * `pi` on PATH, else a checkout's dev-dependency pi, which `npx pi` runs with the checkout's Node.
 */
export async function findPi(): Promise<{ pi?: string; localPi?: string }> {
  const pi = await onPath("pi");
  if (pi) return { pi };
  return { localPi: await firstExecutable([join(packageRoot, "node_modules", ".bin", "pi")]) };
}
