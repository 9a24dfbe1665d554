/**
 * The terminal guardian, one per pi process: it holds pi's terminal and acts when
 * pi cannot (stopped, or dead), holding no secret and never reading the terminal.
 * With a modal on screen it erases it and drops unread keys until pi or the
 * user's shell reads again; it clears exclusive mode only once that shell has the
 * terminal, running, in its foreground (ADR 0008).
 *
 * pi hands it the terminal as fd 3 (ADR 0009 §3); once non-dumpable it writes
 * `held`, then reads one word a line; end of file means pi is gone. It is dumpable
 * from exec to `prctl`, a few ms: only a respawn happens while the agent runs, and
 * the agent, not its ancestor, may trace it only without Yama (then the holder
 * scans name what copied the terminal, ADR 0009 §2).
 *
 * @module
 */
import { parseStat, type ProcStat } from "../../kernel/proc.ts";
import { openDenoLibc } from "../../kernel/deno_libc.ts";
import { DUMPABLE_PRCTL, TTY_IOCTL } from "../../kernel/tty_ioctls.ts";

const [libcPath, ttyPath, modalGone] = Deno.args;
const encoder = new TextEncoder();
const O_RDONLY = 0o0;
const O_CLOEXEC = 0o2000000;
/** `c_lflag`'s offset in the kernel's `struct termios`, and its ECHO bit. */
const LFLAG_OFFSET = 12;
const ECHO = 0o10;
/** How often pi and its shell are looked at while something is to be watched. */
const POLL_MS = 50;

function say(word: string): void {
  Deno.stdout.writeSync(encoder.encode(word + "\n"));
}

function fail(reason: string): never {
  try {
    say(`error ${reason}`);
  } catch { /* pi is gone: nothing to tell */ }
  Deno.exit(1);
}

if (
  Deno.args.length !== 3 || !libcPath.startsWith("/") || !/^\/dev\/[a-z0-9/]+$/.test(ttyPath) ||
  // pi's text for the screen, in the user's language: one line, nothing a terminal obeys.
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  !/^[^\x00-\x1f\x7f-\x9f]{1,400}$/u.test(modalGone)
) {
  fail("usage");
}

const c = openDenoLibc(libcPath);

if (
  c.prctl(DUMPABLE_PRCTL.SET, 0n, 0n, 0n, 0n) !== 0 || c.prctl(DUMPABLE_PRCTL.GET, 0n, 0n, 0n, 0n)
) {
  fail("dumpable");
}

/** `/proc/<pid>/stat`, parsed; `undefined` when gone. One bounded read. */
function statOf(pid: number): ProcStat | undefined {
  const fd = c.open(encoder.encode(`/proc/${pid}/stat\0`), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return undefined;
  const buf = new Uint8Array(1024);
  const n = Number(c.read(fd, buf, BigInt(buf.length)));
  c.close(fd);
  if (n <= 0) return undefined;
  const stat = parseStat(new TextDecoder().decode(buf.subarray(0, n)));
  return stat?.pid === pid ? stat : undefined;
}

/** A process pinned by its start time: `undefined` once it is gone (or a zombie). */
function current(pid: number, startTime: bigint): ProcStat | undefined {
  const now = statOf(pid);
  return now?.startTime === startTime && now.state !== "Z" && now.state !== "X" ? now : undefined;
}

const stopped = (s: ProcStat) => s.state === "T" || s.state === "t";

// pi is our parent; its parent is the shell, if any.
const pi = statOf(Deno.ppid);
if (!pi) fail("no pi");
const shell = statOf(pi.ppid);
/** A job-control shell on pi's terminal: pi runs in a process group of its own. */
const jobShell = shell !== undefined && shell.ttyNr === pi.ttyNr && pi.ttyNr !== 0 &&
  shell.pgrp !== pi.pgrp;

/** pi's terminal: pi's own descriptor, handed over at spawn (ADR 0009 §3). */
const fd = 3;
if (c.ioctlPtr(fd, BigInt(TTY_IOCTL.TCGETS), new Uint8Array(64)) !== 0) fail("no terminal");
// Exclusive mode is pi's to set, never ours: pi set it before it started
// us, and a Ctrl+Z while we start up has already cleared it for the shell.
say("held");

/** Reads stdin up to the next newline; `undefined` at end of file. */
const reader = Deno.stdin.readable.getReader();
let pending = "";
async function nextLine(): Promise<string | undefined> {
  const decoder = new TextDecoder();
  while (!pending.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) return undefined;
    pending += decoder.decode(value);
    if (pending.length > 64) fail("input");
  }
  const line = pending.slice(0, pending.indexOf("\n"));
  pending = pending.slice(line.length + 1);
  return line;
}

let modal = false;
let scrubbing = false;
let releaseWanted = false;
let piGone = false;
let released = false;
let warnedShell = false;

function write(text: string): void {
  const bytes = encoder.encode(text);
  c.write(fd, bytes, BigInt(bytes.length));
}

function flushInput(): void {
  c.ioctl(fd, BigInt(TTY_IOCTL.TCFLSH), BigInt(TTY_IOCTL.TCIFLUSH));
}

/**
 * Echo off: a password typed blindly at the modal's image must not show (pi may
 * have turned echo on as it left); pi, or a shell that takes over, sets its own.
 */
function echoOff(): void {
  const tio = new Uint8Array(64);
  if (c.ioctlPtr(fd, BigInt(TTY_IOCTL.TCGETS), tio) !== 0) return;
  const view = new DataView(tio.buffer);
  view.setUint32(LFLAG_OFFSET, view.getUint32(LFLAG_OFFSET, true) & ~ECHO, true);
  c.ioctlPtr(fd, BigInt(TTY_IOCTL.TCSETS), tio);
}

function eraseModal(): void {
  echoOff();
  flushInput();
  write(`\x1b[?1049l\x1b[0m\x1b[2J\x1b[3J\x1b[H${modalGone}\r\n`);
  modal = false;
  scrubbing = true;
}

/** True when the user's shell has the terminal again: its foreground group, and running. */
function shellHasTerminal(): boolean | "gone" {
  if (!shell) return "gone";
  const now = current(shell.pid, shell.startTime);
  if (!now) return "gone";
  if (now.tpgid === now.pgrp && !stopped(now)) return true;
  if (stopped(now) && !warnedShell) {
    warnedShell = true;
    write(
      `\r\npi-sudo-prompt: pi's shell (process ${shell.pid}) was stopped by another process; ` +
        `this terminal stays closed to other processes until it runs again ` +
        `(from another terminal: kill -CONT ${shell.pid})\r\n`,
    );
  }
  return false;
}

function release(): void {
  c.ioctl(fd, BigInt(TTY_IOCTL.TIOCNXCL), 0n);
  released = true;
}

function poll(): void {
  const now = current(pi!.pid, pi!.startTime);
  if (!now) piGone = true;
  const away = piGone || (now !== undefined && stopped(now));
  if (modal && away) eraseModal();
  if (scrubbing) {
    // Until pi reads again, or the user's shell does: then its keys are its own.
    if (!away || (jobShell && shellHasTerminal() === true)) scrubbing = false;
    else flushInput();
  }
  if (released) return;
  if (piGone) {
    // Without a job-control shell on this terminal, nothing else will read it.
    const taken = jobShell ? shellHasTerminal() : "gone";
    if (taken !== false) release();
  } else if (releaseWanted && away && jobShell && shellHasTerminal() === true) {
    release();
  }
}

let timer: ReturnType<typeof setInterval> | undefined;
function watch(): void {
  const wanted = modal || scrubbing || releaseWanted || piGone;
  if (wanted && !timer) timer = setInterval(tick, POLL_MS);
  if (!wanted && timer) {
    clearInterval(timer);
    timer = undefined;
  }
}
function tick(): void {
  poll();
  if (piGone && released) Deno.exit(0);
  watch();
}

for (;;) {
  const line = await nextLine();
  if (line === undefined) break;
  if (line === "modal on") modal = true;
  else if (line === "modal off") modal = false;
  else if (line === "scrub") scrubbing = true;
  else if (line === "suspend") releaseWanted = true;
  else if (line === "resume") {
    releaseWanted = false;
    scrubbing = false;
    released = false; // pi set exclusive mode again
    warnedShell = false;
  }
  watch();
}
// pi is gone (its end of the pipe closed).
piGone = true;
tick();
