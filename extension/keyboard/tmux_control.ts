/**
 * One tmux control-mode client (`tmux -C attach -f no-output,ignore-size`)
 * kept for pi's life, through which the keyboard gate asks its questions.
 * The gate asks before each modal and every 100 ms while one is open;
 * starting a tmux client each time costs a process start (about as much as
 * the whole question), and its fork blocks pi's one JavaScript thread. A
 * question here is one line written to a pipe and one block read back.
 *
 * Control mode answers each command line with `%begin <time> <n> <flags>`,
 * its output, then `%end …` or `%error …` with the same number; blocks of
 * commands typed on this client have flag 1 (the attach's own block has 0);
 * lines outside blocks are notifications and are ignored. Every question has
 * a deadline; a client that misses one, overflows, errs at the pipe level or
 * exits is killed and forgotten, and the caller falls back to a one-shot
 * tmux run. It never types keys, so the gate does not count control clients
 * among those whose key table matters.
 *
 * @module
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import crypto from "node:crypto";
import process from "node:process";
import type { Result } from "../../shared/result.ts";

/**
 * Largest answer to one question (list-keys of a heavily customised tmux fits); a bigger one
 * kills the client, and a one-shot tmux run that prints more fails closed.
 */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Questions waiting at once; more are answered `unavailable` (the caller runs tmux itself). */
const MAX_PENDING = 16;
/** After a client died, wait this long before starting another. */
const RESTART_AFTER_MS = 2000;
/** No live client answered: the caller runs tmux itself. */
const UNAVAILABLE = Object.freeze({ ok: false, reason: "unavailable" } as const);

/**
 * What one question got back. `command`: tmux ran it and said no (`%error`);
 * `unavailable`: no live client answered.
 */
export type ControlAnswer = Result<{ outputs: readonly string[] }, "command" | "unavailable">;

interface Pending {
  readonly expected: number;
  readonly outputs: string[];
  failed: boolean;
  readonly resolve: (answer: ControlAnswer) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** A tmux command line for control mode: every argument single-quoted; undefined if one cannot be. */
export function controlLine(args: readonly string[]): string | undefined {
  if (args.some((a) => /['\n\r\0]/.test(a))) return undefined;
  return args.map((a) => `'${a}'`).join(" ");
}

class ControlClient {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending: Pending[] = [];
  #buffer = "";
  #block: { lines: string[]; bytes: number; head: string; ours: boolean } | undefined;
  #dead = false;
  #answered = false;

  constructor(
    tmux: string,
    socket: string,
    pane: string,
    onDeath: (answeredOnce: boolean) => void,
  ) {
    const env = { ...process.env };
    delete env.TMUX; // a client started inside tmux would refuse to nest
    this.#child = spawn(
      tmux,
      ["-S", socket, "-C", "attach-session", "-t", pane, "-f", "no-output,ignore-size"],
      { stdio: ["pipe", "pipe", "pipe"], env },
    );
    // The client must never keep pi running.
    this.#child.unref();
    for (const s of [this.#child.stdin, this.#child.stdout, this.#child.stderr]) {
      (s as unknown as { unref?: () => void }).unref?.();
    }
    this.#child.stdout.setEncoding("utf8");
    this.#child.stdout.on("data", (chunk: string) => this.#read(chunk));
    this.#child.stderr.resume();
    this.#child.stdin.on("error", () => this.kill());
    this.#child.on("error", () => this.kill());
    this.#child.on("exit", () => {
      this.kill();
      onDeath(this.#answered);
    });
  }

  get dead(): boolean {
    return this.#dead;
  }

  ask(lines: readonly string[], timeoutMs: number): Promise<ControlAnswer> {
    if (this.#dead || this.#pending.length >= MAX_PENDING) return Promise.resolve(UNAVAILABLE);
    return new Promise((resolve) => {
      const pending: Pending = {
        expected: lines.length,
        outputs: [],
        failed: false,
        resolve,
        // A missed deadline leaves the stream out of step: the client goes.
        timer: setTimeout(() => this.kill(), timeoutMs),
      };
      this.#pending.push(pending);
      this.#child.stdin.write(lines.map((l) => `${l}\n`).join(""));
    });
  }

  kill(): void {
    if (this.#dead) return;
    this.#dead = true;
    try {
      this.#child.kill("SIGKILL");
    } catch { /* already gone */ }
    for (const p of this.#pending.splice(0)) {
      clearTimeout(p.timer);
      p.resolve(UNAVAILABLE);
    }
  }

  #read(chunk: string): void {
    this.#buffer += chunk;
    let nl: number;
    while ((nl = this.#buffer.indexOf("\n")) >= 0) {
      const line = this.#buffer.slice(0, nl);
      this.#buffer = this.#buffer.slice(nl + 1);
      this.#line(line);
      if (this.#dead) return;
    }
    if (this.#buffer.length > MAX_ANSWER_BYTES) this.kill();
  }

  #line(line: string): void {
    const block = this.#block;
    if (!block) {
      const begin = /^%begin (\d+ \d+) (\d+)$/.exec(line);
      if (begin) {
        this.#block = { lines: [], bytes: 0, head: begin[1], ours: begin[2] === "1" };
      } else if (line === "%exit" || line.startsWith("%exit ")) this.kill();
      return;
    }
    // Its end repeats the begin's time and number.
    const end = /^%(end|error) (\d+ \d+) \d+$/.exec(line);
    if (!end || end[2] !== block.head) {
      block.bytes += line.length + 1;
      if (block.bytes > MAX_ANSWER_BYTES) return this.kill();
      block.lines.push(line);
      return;
    }
    this.#block = undefined;
    if (!block.ours) return;
    const pending = this.#pending[0];
    if (!pending) return this.kill(); // an answer nobody asked for: out of step
    pending.outputs.push(block.lines.length ? `${block.lines.join("\n")}\n` : "");
    if (end[1] === "error") pending.failed = true;
    if (pending.outputs.length < pending.expected) return;
    this.#pending.shift();
    clearTimeout(pending.timer);
    this.#answered = true;
    pending.resolve(
      pending.failed ? { ok: false, reason: "command" } : { ok: true, outputs: pending.outputs },
    );
  }
}

const clients = new Map<string, ControlClient>();
const diedAt = new Map<string, number>();

/**
 * Asks tmux the command lines (see {@link controlLine}) through the control
 * client of `socket`, attached to `pane`'s session, starting it if needed.
 * Never throws; `unavailable` means the caller should run tmux itself.
 */
export async function askTmuxControl(
  tmux: string,
  socket: string,
  pane: string,
  lines: readonly string[],
  timeoutMs: number,
): Promise<ControlAnswer> {
  const key = `${tmux}\0${socket}\0${pane}`;
  let client = clients.get(key);
  if (!client || client.dead) {
    if (performance.now() - (diedAt.get(key) ?? -Infinity) < RESTART_AFTER_MS) return UNAVAILABLE;
    try {
      client = new ControlClient(tmux, socket, pane, (answeredOnce) => {
        // One that never answered (a tmux older than 3.2 refuses `-f`) is not tried again.
        diedAt.set(key, answeredOnce ? performance.now() : Infinity);
        if (clients.get(key) === client) clients.delete(key);
      });
    } catch {
      diedAt.set(key, performance.now());
      return UNAVAILABLE;
    }
    clients.set(key, client);
  }
  // The last answer must be a fresh random word: an answer that tmux did not
  // frame for these questions (text that looks like control output, a
  // stream out of step) cannot end with it, and the client is dropped.
  const nonce = `pi-sudo-prompt-${crypto.randomUUID()}`;
  const answer = await client.ask(
    [...lines, controlLine(["display-message", "-p", nonce])!],
    timeoutMs,
  );
  if (!answer.ok) return answer;
  if (answer.outputs.at(-1) !== `${nonce}\n`) {
    client.kill();
    return UNAVAILABLE;
  }
  return { ok: true, outputs: answer.outputs.slice(0, -1) };
}

/** Stops every control client (pi's session ends; tests). */
export function closeTmuxControl(): void {
  for (const client of clients.values()) client.kill();
  clients.clear();
}
