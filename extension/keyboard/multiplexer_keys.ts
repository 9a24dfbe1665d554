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
import { execFile } from "node:child_process";
import process from "node:process";
import { firstExecutable } from "../channel/deno_binary.ts";

/** What the tmux check found. */
export type KeyTableVerdict =
  | { readonly ok: true }
  | {
    readonly ok: false;
    /**
     * `bound` printable keys; `client_table`: a client of pi's session types
     * into another key table (`switch-client -T`), named in `keys`;
     * `unreadable` (tmux did not answer: fail closed).
     */
    readonly why: "bound" | "client_table" | "unreadable";
    /** The keys, as tmux names them, for the notice. */
    readonly keys: readonly string[];
  };

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
  if (!env.TMUX) return { ok: true };
  const target = env.TMUX_PANE && /^%[0-9]+$/.test(env.TMUX_PANE) ? ["-t", env.TMUX_PANE] : [];
  // Formats read options with the pane's session as context, so a
  // session-level key-table or prefix is the one reported.
  const head = ["display-message", "-p", ...target, `${MARKER} #{key-table} #{prefix} #{prefix2}`];
  // Which table each client of pi's session types into right now: a client
  // can be switched to any table (`switch-client -T`), key-table option or not.
  const clients = ["list-clients", ...target, "-F", `${MARKER}-client #{client_key_table}`];
  // Usually only the root table, in the same run: listing every table (copy
  // mode's are long) costs more. When that fails (a root table with no
  // bindings at all) or the session types into another key-table, every
  // table is listed, as one more run.
  const tmux = await tmuxPath();
  const rootOnly = await runTmux(
    tmux,
    env.TMUX,
    [...head, ";", ...clients, ";", "list-keys", "-T", "root"],
    timeoutMs,
  );
  const table = splitWords(rootOnly?.split("\n")[0] ?? "")[1];
  const out = rootOnly !== undefined && table === "root"
    ? rootOnly
    : await runTmux(tmux, env.TMUX, [...head, ";", ...clients, ";", "list-keys"], timeoutMs);
  if (out === undefined) return { ok: false, why: "unreadable", keys: [] };
  return decideKeyTables(out);
}

/**
 * tmux by absolute path where it is installed (a `tmux` earlier on a
 * user-writable `PATH` could answer anything), else from `PATH`.
 */
async function tmuxPath(): Promise<string> {
  return await firstExecutable(["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"]) ?? "tmux";
}

function runTmux(
  tmux: string,
  socket: string,
  args: string[],
  timeoutMs: number,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      tmux,
      args,
      { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024, env: { ...process.env, TMUX: socket } },
      (error, stdout) => resolve(error ? undefined : stdout),
    );
  });
}

/** The verdict on `tmux` output (see {@link checkTmuxKeyTables}); pure, for tests. */
export function decideKeyTables(output: string): KeyTableVerdict {
  const lines = output.split("\n");
  const head = splitWords(lines[0] ?? "");
  if (head[0] !== MARKER || head.length !== 4) return { ok: false, why: "unreadable", keys: [] };
  const [, table, prefix, prefix2] = head;
  const tables = new Set(["root", table]);
  const elsewhere = lines.map((l) => splitWords(l))
    .filter((w) => w[0] === `${MARKER}-client` && w.length === 2 && !tables.has(w[1]))
    .map((w) => w[1]);
  if (elsewhere.length > 0) return { ok: false, why: "client_table", keys: elsewhere.slice(0, 5) };
  const keys: string[] = [];
  for (const p of [prefix, prefix2]) if (isPrintableKey(p)) keys.push(`prefix ${p}`);
  for (const line of lines.slice(1)) {
    const b = parseBinding(line);
    if (b && tables.has(b.table) && isPrintableKey(b.key)) keys.push(b.key);
  }
  return keys.length === 0 ? { ok: true } : { ok: false, why: "bound", keys: keys.slice(0, 10) };
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
  while (i < words.length && words[i].startsWith("-")) {
    if (words[i] === "-T") {
      table = words[i + 1];
      i += 2;
    } else if (words[i] === "-N") i += 2;
    else i += 1;
  }
  const key = words[i];
  if (table === undefined || key === undefined) return undefined;
  return { table, key };
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
