/**
 * pi the way a user starts it, for the real-pi terminal suites
 * (`terminal_test.ts`, `signals_test.ts`): from an interactive bash with job
 * control in a tmux pane, plus what those suites ask of the pane's terminal
 * (does it open, who runs under whom) and of the shell (a sudo typed there).
 *
 * @module
 */
import assert from "node:assert/strict";
import { closeSync, constants, openSync } from "node:fs";
import type { FauxStep } from "./faux_provider.ts";
import { type PiLaunch, preparePi, waitForPiReady } from "./pi_runner.ts";
import { TmuxSession } from "../helpers/tmux.ts";
import { testPassword } from "../helpers/test_env.ts";
import { childrenOf, EXTENSION, waitFor } from "./attack_scripts/pi_checks.ts";
import { shQuote } from "../../extension/channel/shell_injection.ts";

const PASSWORD = testPassword();

/**
 * pi started from an interactive bash in a tmux pane, the way a user starts
 * it; `run` gets the pane, its terminal and pi's pid once the terminal is
 * exclusive.
 */
export async function withPiInBash(
  run: (p: { tmux: TmuxSession; tty: string; pi: number; launch: PiLaunch }) => Promise<void>,
  options: {
    script?: FauxStep[];
    before?: (tmux: TmuxSession, tty: string) => Promise<void>;
    /** pi's `LANG` (see `PiLaunchOptions.locale`). */
    locale?: string;
  } = {},
): Promise<void> {
  const launch = await preparePi({
    script: options.script ?? [{ text: "hello" }],
    extensions: [EXTENSION],
    locale: options.locale,
  });
  const tmux = await TmuxSession.start({
    argv: ["/bin/bash", "--norc", "--noprofile"],
    env: { ...launch.env, PS1: "shell$ " },
    cwd: launch.cwd,
    cols: 120,
    rows: 40,
  });
  try {
    await tmux.waitFor("shell$", 10_000);
    const tty = (await tmux.tmux("display-message", "-p", "-t", tmux.target, "#{pane_tty}"))
      .stdout.trim();
    await options.before?.(tmux, tty);
    await tmux.sendText(launch.argv.map(shQuote).join(" "));
    await tmux.sendKeys("Enter");
    await waitForPiReady(tmux);
    // pi is drawn before its session_start work ends; the guard follows.
    await waitFor("the terminal to be exclusive", () => Promise.resolve(busy(tty)), 10_000);
    // The pane runs a wrapper sh, which runs bash, which runs pi.
    const pi = await waitFor("the pi process", async () => {
      for (const shell of await childrenOf(tmux.pid)) {
        for (const pid of await childrenOf(shell)) return pid;
      }
      return undefined;
    }, 5_000);
    await run({ tmux, tty, pi, launch });
  } finally {
    await tmux.kill();
    await launch.cleanup();
  }
}

/** Runs `sudo -k -v` in the pane's shell, types the password, waits for `marker`. */
export async function sudoInShell(tmux: TmuxSession, marker: string): Promise<void> {
  // The output (SUDO-42) differs from the command text, which the leftover
  // of pi's screen may surround.
  const n = Number(marker.slice(5));
  await tmux.sendText(`sudo -k -v && echo SUDO-$((${n - 2} + 2))`);
  await tmux.sendKeys("Enter");
  await tmux.waitFor(/password for/, 10_000);
  await tmux.sendText(PASSWORD);
  await tmux.sendKeys("Enter");
  const screen = await tmux.waitFor(new RegExp(marker), 15_000);
  assert.ok(!screen.includes(PASSWORD));
}

export function opens(tty: string): true | undefined {
  return tryOpen(tty) === "ok" ? true : undefined;
}

export function busy(tty: string): true | undefined {
  return tryOpen(tty) === "EBUSY" ? true : undefined;
}

/** Screen text with pi's own line wrapping undone (one space for any run of blanks). */
export function flat(screen: string): string {
  return screen.replace(/\s+/g, " ");
}

/** `open(2)` of `path` for reading without becoming its controlling terminal. */
export function tryOpen(path: string): string {
  try {
    closeSync(openSync(path, constants.O_RDONLY | constants.O_NOCTTY | constants.O_NONBLOCK));
    return "ok";
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? "error";
  }
}
