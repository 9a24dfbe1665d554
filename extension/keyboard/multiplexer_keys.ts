/**
 * tmux as a key logger. Inside tmux every key the human types passes through
 * tmux's key tables before it reaches pi, and any process of the user can
 * change them: `bind -n a run-shell 'echo a >> log' \; send-keys a` records
 * each `a` and still types it. So before a modal opens (and while it is
 * open) the tables that apply to plain typing are read, and a binding for a
 * printable key refuses the modal (ADR 0007).
 *
 * What counts: bindings of the active key table (`key-table` option, `root`
 * by default) for a printable character, `Space`, the keypad, or `Any`; a
 * printable prefix key (typing it would switch to the prefix table, where
 * the next key can be bound to anything); and a client of pi's session
 * switched into any other table (`switch-client -T logger`, with `-r`
 * bindings and a long `repeat-time` it stays there).
 *
 * @module
 */
import { readdir, readFile, stat } from "node:fs/promises";
import process from "node:process";
import { readStat } from "../../kernel/peer_verification.ts";
import { firstExecutable } from "../../shared/executables.ts";
import type { Result } from "../../shared/result.ts";
import { spawnWithDeadline } from "../../shared/spawn_deadline.ts";
import { askTmuxControl, controlLine, MAX_ANSWER_BYTES } from "./tmux_control.ts";

/**
 * What the tmux check found. Refusals: `bound` printable keys;
 * `client_table`, a client of pi's session types into another key table
 * (`switch-client -T`); `focus`, typed keys would not reach pi's pane (issue
 * 21); `unreadable`, tmux did not answer (fail closed). `keys` names what the
 * notice shows: the keys as tmux names them, the table, or what took the keys.
 */
export type KeyTableVerdict = Result<
  Record<never, never>,
  "bound" | "client_table" | "focus" | "unreadable",
  { keys: readonly string[] }
>;

/**
 * Where keys typed in pi's session go, from the same tmux run: pi's pane
 * must be the active pane of the active window, not in a mode (copy mode
 * takes the keys), not hidden behind another pane's zoom; and no popup may
 * be open (its job is a child of the tmux server on a pty that is no
 * pane's). `command-prompt` and `display-menu` leave no trace in tmux 3.3's
 * formats: they cannot be seen (docs/threat-model.md).
 */
export interface FocusFacts {
  readonly paneActive: boolean;
  readonly windowActive: boolean;
  readonly paneInMode: boolean;
  readonly windowZoomed: boolean;
  /** The tmux server's pid, and every pane's tty (`/dev/pts/N`). */
  readonly serverPid: number | undefined;
  readonly paneTtys: readonly string[];
}

const MARKER = "pi-sudo-prompt-keys";

/**
 * Asks the tmux server of `TMUX` for the options and bindings that apply to
 * typing in pi's pane. One `tmux` run (rarely two), each with a deadline;
 * never throws.
 */
export async function checkTmuxKeyTables(
  env: { readonly TMUX?: string; readonly TMUX_PANE?: string },
  timeoutMs = 2000,
): Promise<KeyTableVerdict> {
  const tmuxEnv = env.TMUX;
  if (!tmuxEnv) return { ok: true };
  const target = env.TMUX_PANE && /^%[0-9]+$/.test(env.TMUX_PANE) ? ["-t", env.TMUX_PANE] : [];
  // Formats read options with the pane's session as context, so a
  // session-level key-table or prefix is the one reported.
  const head = [
    "display-message",
    "-p",
    ...target,
    `${MARKER} #{key-table} #{prefix} #{prefix2} ` +
    "#{pane_active}#{window_active}#{pane_in_mode}#{window_zoomed_flag} #{pid}",
  ];
  // Every pane's terminal: a tmux child on any other is a popup's job.
  const panes = ["list-panes", "-a", "-F", `${MARKER}-pane #{pane_tty}`];
  // Which table each client of pi's session types into right now: a client
  // can be switched to any table (`switch-client -T`), key-table option or
  // not. Control-mode clients (ours among them) type no keys: not listed.
  const clients = [
    "list-clients",
    ...target,
    "-F",
    `#{?client_control_mode,,${MARKER}-client #{client_key_table}}`,
  ];
  // Usually only the root table, in the same run: listing every table (copy
  // mode's are long) costs more. When that fails (a root table with no
  // bindings at all) or the session types into another key-table, every
  // table is listed, as one more run.
  // tmux by absolute path where it is installed (a `tmux` earlier on a
  // user-writable `PATH` could answer anything), else from `PATH`.
  const tmux = await firstExecutable(["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"]) ??
    "tmux";
  const ask = (commands: readonly (readonly string[])[]) =>
    askTmux(tmux, tmuxEnv, target[1], commands, timeoutMs);
  const rootOnly = await ask([head, clients, panes, ["list-keys", "-T", "root"]]);
  const table = splitWords(rootOnly?.split("\n")[0] ?? "")[1];
  const out = rootOnly !== undefined && table === "root"
    ? rootOnly
    : await ask([head, clients, panes, ["list-keys"]]);
  if (out === undefined) return { ok: false, reason: "unreadable", keys: [] };
  const keys = decideKeyTables(out);
  if (!keys.ok) return keys;
  const focus = await focusVerdict(out);
  if (focus.ok || !focus.keys[0]?.startsWith("a popup")) return focus;
  // tmux was asked before /proc was read: a pane made in between (a split)
  // has a process but was not listed yet. Ask once more before naming a popup.
  const again = await ask([head, panes]);
  return again === undefined ? focus : await focusVerdict(again);
}

async function focusVerdict(output: string): Promise<KeyTableVerdict> {
  const facts = focusFacts(output);
  if (!facts) return { ok: false, reason: "unreadable", keys: [] };
  const popup = facts.serverPid ? await popupJob(facts.serverPid, facts.paneTtys) : undefined;
  return decideFocus(facts, popup);
}

/** The focus facts of a tmux run's output; undefined when malformed. */
export function focusFacts(output: string): FocusFacts | undefined {
  const lines = output.split("\n");
  const head = splitWords(lines[0] ?? "");
  if (head[0] !== MARKER || head.length !== 6 || !/^[01]{4}$/.test(head[4])) return undefined;
  const [paneActive, windowActive, paneInMode, windowZoomed] = [...head[4]].map((c) => c === "1");
  const serverPid = /^[0-9]{1,10}$/.test(head[5]) ? Number(head[5]) : undefined;
  const paneTtys = lines.map((l) => splitWords(l))
    .filter((x) => x[0] === `${MARKER}-pane` && x.length === 2).map((x) => x[1]);
  return { paneActive, windowActive, paneInMode, windowZoomed, serverPid, paneTtys };
}

/** Where typed keys go instead of pi's pane, or ok (pure, for tests). */
export function decideFocus(facts: FocusFacts, popup: string | undefined): KeyTableVerdict {
  const away = (what: string): KeyTableVerdict => ({ ok: false, reason: "focus", keys: [what] });
  if (!facts.windowActive) return away("another window is the active one");
  if (!facts.paneActive) {
    return away(facts.windowZoomed ? "another pane is zoomed over pi's" : "another pane");
  }
  if (facts.paneInMode) return away("a mode of pi's pane (copy mode)");
  if (popup) return away(`a popup (${popup})`);
  return { ok: true };
}

/**
 * A child of the tmux server on a terminal that is no pane's: a popup's job.
 * Its pid and name, or undefined. Reads `/proc` (a few small files).
 */
async function popupJob(server: number, paneTtys: readonly string[]): Promise<string | undefined> {
  const paneDevs = new Set<number>();
  for (const tty of paneTtys) {
    const st = await stat(tty).catch(() => undefined);
    if (st) paneDevs.add(st.rdev);
  }
  // Read whole, not through a capped reader: a cut list could leave a popup's job out.
  const tasks = await readdir(`/proc/${server}/task`).catch(() => []);
  const children = (await Promise.all(
    tasks.map((t) => readFile(`/proc/${server}/task/${t}/children`, "utf8").catch(() => "")),
  )).join(" ");
  for (const pid of children.split(/\s+/).filter((p) => /^[0-9]+$/.test(p))) {
    const job = await readStat(Number(pid));
    if (!job) continue;
    // An unparsable terminal counts as no pane's: fail closed.
    if (job.ttyNr !== 0 && (job.ttyNr === undefined || !paneDevs.has(job.ttyNr))) {
      return `${pid} ${job.comm}`;
    }
  }
  return undefined;
}

/**
 * The output of `commands` run in order by the tmux server of `tmuxEnv`
 * (`TMUX`), or undefined when one fails or the deadline passes. Through the
 * control client kept for pi's pane (`tmux_control.ts`) when there is one,
 * else one tmux run with the commands joined by `;`.
 */
async function askTmux(
  tmux: string,
  tmuxEnv: string,
  pane: string | undefined,
  commands: readonly (readonly string[])[],
  timeoutMs: number,
): Promise<string | undefined> {
  const socket = tmuxEnv.split(",")[0];
  const lines = commands.map(controlLine);
  if (pane && socket.startsWith("/") && lines.every((l) => l !== undefined)) {
    const answer = await askTmuxControl(tmux, socket, pane, lines as string[], timeoutMs);
    if (answer.ok) return answer.outputs.join("");
    if (answer.reason === "command") return undefined;
  }
  const args = commands.flatMap((c, i) => i === 0 ? [...c] : [";", ...c]);
  const run = await spawnWithDeadline(tmux, args, {
    deadlineMs: timeoutMs,
    env: { ...process.env, TMUX: tmuxEnv },
    outputCap: MAX_ANSWER_BYTES,
  });
  return run.code === 0 && !run.truncated ? run.stdout : undefined;
}

/** The verdict on `tmux` output (see {@link checkTmuxKeyTables}); pure, for tests. */
export function decideKeyTables(output: string): KeyTableVerdict {
  const lines = output.split("\n");
  const head = splitWords(lines[0] ?? "");
  if (head[0] !== MARKER || head.length < 4) return { ok: false, reason: "unreadable", keys: [] };
  const [, table, prefix, prefix2] = head;
  const tables = new Set(["root", table]);
  const elsewhere = lines.map((l) => splitWords(l))
    .filter((w) => w[0] === `${MARKER}-client` && w.length === 2 && !tables.has(w[1]))
    .map((w) => w[1]);
  if (elsewhere.length > 0) {
    return { ok: false, reason: "client_table", keys: elsewhere.slice(0, 5) };
  }
  const keys: string[] = [];
  for (const p of [prefix, prefix2]) if (isPrintableKey(p)) keys.push(`prefix ${p}`);
  for (const line of lines.slice(1)) {
    const b = parseBinding(line);
    // A user key (`set -s user-keys[0] a`, then `bind -n User0 …`) is
    // matched before the plain character it stands for: any binding counts.
    if (b && tables.has(b.table) && (isPrintableKey(b.key) || /^User[0-9]+$/.test(b.key))) {
      keys.push(b.key);
    }
  }
  return keys.length === 0 ? { ok: true } : { ok: false, reason: "bound", keys: keys.slice(0, 10) };
}

/**
 * `bind-key [-r] [-N note] -T table key command…` as `list-keys` prints it.
 * The key may be escaped with a backslash (`\;`, `\#`, `\"`) or quoted.
 */
export function parseBinding(line: string): { table: string; key: string } | undefined {
  const words = splitWords(line);
  if (words[0] !== "bind-key") return undefined;
  let i = 1;
  let table: string | undefined;
  for (; i < words.length && words[i].startsWith("-"); i++) {
    if (words[i] === "-T") table = words[i + 1];
    if (words[i] === "-T" || words[i] === "-N") i++; // the flag's value
  }
  const key = words[i];
  return table === undefined || key === undefined ? undefined : { table, key };
}

function splitWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let quote: string | undefined;
  let any = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === "\\" && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += ch;
    } else if (ch === "\\" && i + 1 < line.length) {
      word += line[++i];
      any = true;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      any = true;
    } else if (ch === " " || ch === "\t") {
      if (any) words.push(word);
      word = "";
      any = false;
    } else {
      word += ch;
      any = true;
    }
  }
  if (any) words.push(word);
  return words;
}

/**
 * True for keys that type text: one printable character (any script),
 * `Space`, keypad keys, and `Any` (matches every key). Modified keys
 * (`C-a`, `M-a`) and named keys (`Enter`, `F1`, mouse events) do not.
 */
export function isPrintableKey(key: string): boolean {
  if (key === "Space" || key === "Any" || /^KP/.test(key)) return true;
  const chars = [...key];
  if (chars.length !== 1) return false;
  const code = chars[0].codePointAt(0) ?? 0;
  return code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0);
}
