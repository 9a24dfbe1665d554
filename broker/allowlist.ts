/**
 * The allowlist of argument shapes (docs/design.md §5, docs/pi-secret-run.md): its grammar, the
 * matcher the root broker applies to the real argv, the `/sudo-prompt allow` helpers, and
 * {@link checkAllowlistFile}, the only function that does I/O. Runtime-neutral (Deno and Node).
 *
 * Grammar: one entry a line, the real absolute program path then the exact argument shape,
 * separated by spaces or tabs; blank lines and lines whose first non-blank is `#` are skipped.
 * A marker `<name>` matches one non-empty argument not starting with `-` (same-named markers are
 * independent); any other word matches only itself. No globs, quotes, escapes or optional
 * arguments. An argument starting with `#` is refused: it is almost always a trailing comment.
 * Fail closed: one malformed line ({@link ALLOWLIST_SYNTAX_ERRORS}) makes the file count as empty.
 *
 * @module
 */
import { type BigIntStats, constants } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";
import { errnoCode } from "../shared/errno.ts";
import { type ReasonOf, reasons, type Result } from "../shared/result.ts";

/** Largest allowlist file accepted, in bytes; a bigger one counts as empty. */
export const MAX_ALLOWLIST_BYTES = 64 * 1024;

/**
 * Why a line is malformed (the whole file then counts as empty):
 * - `relative_path`: the program path does not start with `/`.
 * - `bad_path`: the program path has an empty, `.` or `..` component, or a `<`/`>`.
 * - `control_character`: a control, invisible formatting or non-ASCII space character anywhere
 *   in the file (a CRLF's `\r` too).
 * - `empty_marker`: `<>`; `bad_marker`: a marker name not `[a-z][a-z0-9_-]*`.
 * - `bad_literal`: a literal containing `<` or `>`.
 * - `misplaced_comment`: an argument starting with `#`.
 * - `not_utf8`: the file is not valid UTF-8.
 */
export const ALLOWLIST_SYNTAX_ERRORS = reasons(
  "relative_path",
  "bad_path",
  "control_character",
  "empty_marker",
  "bad_marker",
  "bad_literal",
  "misplaced_comment",
  "not_utf8",
);

/** One of the values of {@link ALLOWLIST_SYNTAX_ERRORS}. */
export type AllowlistSyntaxError = ReasonOf<typeof ALLOWLIST_SYNTAX_ERRORS>;

/** One word of an argument shape: a literal or a `<marker>`. */
export type ShapeToken =
  | { readonly kind: "literal"; readonly value: string }
  | { readonly kind: "marker"; readonly name: string };

/** One allowlist entry: the real absolute program path and its exact argument shape. */
export interface AllowlistEntry {
  /** Real absolute path of the program, compared with argv[0] exactly. */
  readonly program: string;
  /** The shape of argv[1…], one token per argument. */
  readonly args: readonly ShapeToken[];
}

/** Result of {@link parseAllowlist}. */
export type ParseResult = Result<
  { entries: readonly AllowlistEntry[] },
  AllowlistSyntaxError,
  { line: number }
>;

const SYNTAX = ALLOWLIST_SYNTAX_ERRORS;

/**
 * Refused anywhere: controls (tab aside, a separator), formatting (bidi, zero-width), lone
 * surrogates, line/paragraph separators, and any space but U+0020 (an NBSP would make one
 * argument look like two).
 */
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Zs}]/u;
const MARKER_NAME = /^[a-z][a-z0-9_-]*$/;

/** Whether `s` holds a forbidden character (tab and space excluded when `allowSeparators`). */
function hasForbidden(s: string, allowSeparators: boolean): boolean {
  for (const c of s) {
    if (allowSeparators && (c === " " || c === "\t")) continue;
    if (FORBIDDEN.test(c)) return true;
  }
  return false;
}

/** Checks an absolute, normalised program path; `undefined` when valid. */
function programPathError(path: string): AllowlistSyntaxError | undefined {
  if (hasForbidden(path, false)) return SYNTAX.CONTROL_CHARACTER;
  if (!path.startsWith("/")) return SYNTAX.RELATIVE_PATH;
  if (path.includes("<") || path.includes(">")) return SYNTAX.BAD_PATH;
  for (const part of path.slice(1).split("/")) {
    if (part === "" || part === "." || part === "..") return SYNTAX.BAD_PATH;
  }
  return undefined;
}

function isLiteralWord(arg: string): boolean {
  return arg !== "" && !hasForbidden(arg, false) && !arg.includes("<") && !arg.includes(">") &&
    !arg.startsWith("#");
}

/** Whether a marker matches `arg`: one non-empty argument not starting with `-`. */
function markerAccepts(arg: string): boolean {
  return arg.length > 0 && !arg.startsWith("-");
}

type LineResult =
  | { readonly kind: "skip" }
  | { readonly kind: "entry"; readonly entry: AllowlistEntry }
  | { readonly kind: "error"; readonly reason: AllowlistSyntaxError };

function parseLine(raw: string): LineResult {
  if (hasForbidden(raw, true)) return { kind: "error", reason: SYNTAX.CONTROL_CHARACTER };
  const w = raw.split(/[ \t]+/).filter((word) => word !== "");
  if (w.length === 0 || w[0].startsWith("#")) return { kind: "skip" };
  const program = w[0];
  const pathError = programPathError(program);
  if (pathError) return { kind: "error", reason: pathError };
  const args: ShapeToken[] = [];
  for (const word of w.slice(1)) {
    if (word.length >= 2 && word.startsWith("<") && word.endsWith(">")) {
      const name = word.slice(1, -1);
      if (name === "") return { kind: "error", reason: SYNTAX.EMPTY_MARKER };
      if (!MARKER_NAME.test(name)) return { kind: "error", reason: SYNTAX.BAD_MARKER };
      args.push({ kind: "marker", name });
    } else if (word.includes("<") || word.includes(">")) {
      return { kind: "error", reason: SYNTAX.BAD_LITERAL };
    } else if (word.startsWith("#")) {
      return { kind: "error", reason: SYNTAX.MISPLACED_COMMENT };
    } else {
      args.push({ kind: "literal", value: word });
    }
  }
  return { kind: "entry", entry: { program, args } };
}

/** Parses `\n`-separated allowlist text; one malformed line fails it all. Never throws. */
export function parseAllowlist(text: string): ParseResult {
  const entries: AllowlistEntry[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const r = parseLine(lines[i]);
    if (r.kind === "error") return { ok: false, reason: r.reason, line: i + 1 };
    if (r.kind === "entry") entries.push(r.entry);
  }
  return { ok: true, entries };
}

function matchEntry(entry: AllowlistEntry, argv: readonly string[]): boolean {
  if (argv.length !== entry.args.length + 1 || argv[0] !== entry.program) return false;
  for (let i = 0; i < entry.args.length; i++) {
    const token = entry.args[i];
    const arg = argv[i + 1];
    if (typeof arg !== "string") return false;
    if (token.kind === "literal" ? arg !== token.value : !markerAccepts(arg)) return false;
  }
  return true;
}

/**
 * Whether some entry allows `argv` exactly (argv[0]: the real program path, symlinks already
 * resolved by the caller). Never throws.
 */
export function matchArgv(entries: readonly AllowlistEntry[], argv: readonly string[]): boolean {
  return entries.some((entry) => matchEntry(entry, argv));
}

/**
 * An entry's allowlist line, single-spaced. Parsing it gives back an equal entry for entries from
 * {@link parseAllowlist}; a hand-built entry outside the grammar gives a malformed line.
 */
export function formatEntry(entry: AllowlistEntry): string {
  const shape = entry.args.map((t) => t.kind === "marker" ? `<${t.name}>` : t.value);
  return [entry.program, ...shape].join(" ");
}

/**
 * Why the `/sudo-prompt allow` helpers refuse a shape or an append: `no_program` (empty argv),
 * `bad_program` (argv[0]; see `syntax`), `unrepresentable_argument` (no literal or marker can match
 * argument `index`), `not_one_entry` (blank, a comment, or several lines), `malformed` and
 * `existing_malformed` (the shape, or the existing text; see `syntax`, `line`), `does_not_match`
 * (not the argv it was made for), `too_large` (over {@link MAX_ALLOWLIST_BYTES}).
 */
export const SHAPE_ERRORS = reasons(
  "no_program",
  "bad_program",
  "unrepresentable_argument",
  "not_one_entry",
  "malformed",
  "does_not_match",
  "existing_malformed",
  "too_large",
);

/** One of the values of {@link SHAPE_ERRORS}. */
export type ShapeError = ReasonOf<typeof SHAPE_ERRORS>;

/** Result of {@link suggestShape}. */
export type SuggestResult =
  | { readonly ok: true; readonly line: string }
  | {
    readonly ok: false;
    readonly reason: ShapeError;
    /** For `unrepresentable_argument`: the argv index. */
    readonly index?: number;
    /** For `bad_program`: what is wrong with argv[0]. */
    readonly syntax?: AllowlistSyntaxError;
  };

/** Result of {@link checkShape}. */
export type ShapeCheck =
  | {
    readonly ok: true;
    readonly entry: AllowlistEntry;
    /** The normalised line (single spaces) that {@link appendEntryText} writes. */
    readonly line: string;
  }
  | { readonly ok: false; readonly reason: ShapeError; readonly syntax?: AllowlistSyntaxError };

/** Result of {@link appendEntryText}. */
export type AppendResult =
  | {
    readonly ok: true;
    /** The whole new file text. */
    readonly text: string;
    /** The normalised line that was appended (without its newline). */
    readonly line: string;
  }
  | {
    readonly ok: false;
    readonly reason: ShapeError;
    readonly syntax?: AllowlistSyntaxError;
    /** For `existing_malformed`: the 1-based line of the existing text. */
    readonly line?: number;
  };

/**
 * The editable starting point of `/sudo-prompt allow` for `argv` (argv[0]: the real program path).
 * `keepassxc-cli show -q -t … DB ENTRY` suggests `<db> <entry>` for the last two when a marker can
 * match them. Otherwise every argument is kept as is (no guess at which options are safe); one
 * that cannot be a literal becomes `<argN>` (N: its index), or, when no marker can match it either
 * (empty, or starting with `-`), the result is `unrepresentable_argument`.
 */
export function suggestShape(argv: readonly string[]): SuggestResult {
  if (argv.length === 0) return { ok: false, reason: SHAPE_ERRORS.NO_PROGRAM };
  const program = argv[0];
  const syntax = programPathError(program);
  if (syntax) return { ok: false, reason: SHAPE_ERRORS.BAD_PROGRAM, syntax };
  const out: string[] = [program];
  const n = argv.length;
  const keepass = program.slice(program.lastIndexOf("/") + 1) === "keepassxc-cli" && n >= 6 &&
    argv[1] === "show" && argv[2] === "-q" && argv[3] === "-t" && markerAccepts(argv[n - 2]) &&
    markerAccepts(argv[n - 1]);
  for (let i = 1; i < n; i++) {
    const arg = argv[i];
    if (keepass && i === n - 2) out.push("<db>");
    else if (keepass && i === n - 1) out.push("<entry>");
    else if (isLiteralWord(arg)) out.push(arg);
    else if (markerAccepts(arg)) out.push(`<arg${i}>`);
    else return { ok: false, reason: SHAPE_ERRORS.UNREPRESENTABLE_ARGUMENT, index: i };
  }
  return { ok: true, line: out.join(" ") };
}

/** Parses text that must hold exactly one entry line (outer blanks and newlines trimmed). */
function parseSingleEntry(
  text: string,
): Result<{ entry: AllowlistEntry }, ShapeError, { syntax?: AllowlistSyntaxError }> {
  const trimmed = text.replace(/^[ \t\r\n]+/, "").replace(/[ \t\r\n]+$/, "");
  if (/[\r\n]/.test(trimmed)) return { ok: false, reason: SHAPE_ERRORS.NOT_ONE_ENTRY };
  const r = parseLine(trimmed);
  if (r.kind === "skip") return { ok: false, reason: SHAPE_ERRORS.NOT_ONE_ENTRY };
  if (r.kind === "error") return { ok: false, reason: SHAPE_ERRORS.MALFORMED, syntax: r.reason };
  return { ok: true, entry: r.entry };
}

/**
 * Checks the shape edited in `/sudo-prompt allow`: exactly one valid entry line (outer blanks and
 * newlines trimmed, e.g. an editor's final newline) that matches the `argv` shown. Returns the
 * entry and its normalised line, for the confirmation and {@link appendEntryText}.
 */
export function checkShape(shapeLine: string, argv: readonly string[]): ShapeCheck {
  const r = parseSingleEntry(shapeLine);
  if (!r.ok) return r;
  if (!matchEntry(r.entry, argv)) return { ok: false, reason: SHAPE_ERRORS.DOES_NOT_MATCH };
  return { ok: true, entry: r.entry, line: formatEntry(r.entry) };
}

/**
 * The new allowlist text with one entry appended, for `/sudo-prompt allow` to write through sudo:
 * `existingText` byte for byte, a `\n` if it lacks one, the normalised line and a `\n`. Refused
 * when `entryLine` is not one valid entry, when the existing text is malformed (the file would
 * still count as empty), or when the result exceeds {@link MAX_ALLOWLIST_BYTES}.
 */
export function appendEntryText(existingText: string, entryLine: string): AppendResult {
  const r = parseSingleEntry(entryLine);
  if (!r.ok) return r;
  const existing = parseAllowlist(existingText);
  if (!existing.ok) {
    const { reason: syntax, line } = existing;
    return { ok: false, reason: SHAPE_ERRORS.EXISTING_MALFORMED, syntax, line };
  }
  const line = formatEntry(r.entry);
  const sep = existingText === "" || existingText.endsWith("\n") ? "" : "\n";
  const text = `${existingText}${sep}${line}\n`;
  if (new TextEncoder().encode(text).length > MAX_ALLOWLIST_BYTES) {
    return { ok: false, reason: SHAPE_ERRORS.TOO_LARGE };
  }
  return { ok: true, text, line };
}

/**
 * Why {@link checkAllowlistFile} treats the allowlist as empty:
 * - `bad_path`: the path is not absolute and normalised; `missing`: it or a directory is absent.
 * - `symlink` (never followed), `not_regular`, `not_root_owned`: what the file is.
 * - `writable_by_others`: group- or other-writable; `too_large`: over {@link MAX_ALLOWLIST_BYTES}.
 * - `unsafe_parent`: a directory up to `/` is a symlink, not root's, or group/other writable.
 * - `unreadable`: it could not be opened or read, or changed while it was checked.
 * - `malformed`: a malformed line (see `syntax`, `line`).
 */
export const ALLOWLIST_FILE_REFUSALS = reasons(
  "bad_path",
  "missing",
  "symlink",
  "not_regular",
  "not_root_owned",
  "writable_by_others",
  "unsafe_parent",
  "too_large",
  "unreadable",
  "malformed",
);

/** One of the values of {@link ALLOWLIST_FILE_REFUSALS}. */
export type AllowlistFileRefusal = ReasonOf<typeof ALLOWLIST_FILE_REFUSALS>;

/** Result of {@link checkAllowlistFile}: `ok: false` means "counts as an empty list". */
export type AllowlistFileResult =
  | {
    readonly ok: true;
    readonly entries: readonly AllowlistEntry[];
    /** The file's text, for {@link appendEntryText}. */
    readonly text: string;
  }
  | {
    readonly ok: false;
    readonly reason: AllowlistFileRefusal;
    /** The offending directory, for `unsafe_parent`. */
    readonly path?: string;
    /** For `malformed`: the 1-based line. */
    readonly line?: number;
    /** For `malformed`: what is wrong with that line. */
    readonly syntax?: AllowlistSyntaxError;
  };

/** Options of {@link checkAllowlistFile}. */
export interface AllowlistFileOptions {
  /**
   * TEST-ONLY: the uid the file (and, besides root, its directories) must be owned by, so tests
   * without root can exercise these rules. Default 0 (root): the only value production may use.
   */
  readonly ownerUid?: number;
}

const REFUSE = ALLOWLIST_FILE_REFUSALS;

const GROUP_OTHER_WRITE = 0o022n;

/** Decodes UTF-8 strictly; on failure, the 1-based line holding the first bad byte. */
function decodeUtf8(bytes: Uint8Array): { ok: true; text: string } | { ok: false; line: number } {
  const strict = new TextDecoder("utf-8", { fatal: true });
  try {
    return { ok: true, text: strict.decode(bytes) };
  } catch {
    // Only to name the line: `\n` is never inside a multi-byte sequence, so lines decode alone.
    for (let start = 0, line = 1; start <= bytes.length; line++) {
      const newline = bytes.indexOf(0x0a, start);
      const end = newline < 0 ? bytes.length : newline;
      try {
        strict.decode(bytes.subarray(start, end));
      } catch {
        return { ok: false, line };
      }
      start = end + 1;
    }
    return { ok: false, line: 1 };
  }
}

/**
 * Reads and validates the allowlist file at `path` (normally `ALLOWLIST_PATH`); any refusal means
 * "counts as empty". Never follows a symlink, never throws. A POSIX ACL granting write shows in the
 * group bits; a sticky world-writable directory such as `/tmp` is unsafe. The opened file's `fstat`
 * must show the same device and inode and pass the checks again; at most the size cap is read.
 */
export async function checkAllowlistFile(
  path: string,
  opts: AllowlistFileOptions = {},
): Promise<AllowlistFileResult> {
  const owner = BigInt(opts.ownerUid ?? 0);
  if (programPathError(path) !== undefined) return { ok: false, reason: REFUSE.BAD_PATH };

  let st: BigIntStats;
  try {
    st = await lstat(path, { bigint: true });
  } catch (e) {
    const code = errnoCode(e);
    const missing = code === "ENOENT" || code === "ENOTDIR";
    return { ok: false, reason: missing ? REFUSE.MISSING : REFUSE.UNREADABLE };
  }
  const fileRefusal = (s: BigIntStats): AllowlistFileRefusal | undefined => {
    if (s.isSymbolicLink()) return REFUSE.SYMLINK;
    if (!s.isFile()) return REFUSE.NOT_REGULAR;
    if (s.uid !== owner) return REFUSE.NOT_ROOT_OWNED;
    if ((s.mode & GROUP_OTHER_WRITE) !== 0n) return REFUSE.WRITABLE_BY_OTHERS;
    if (s.size > BigInt(MAX_ALLOWLIST_BYTES)) return REFUSE.TOO_LARGE;
    return undefined;
  };
  const first = fileRefusal(st);
  if (first) return { ok: false, reason: first };

  for (let dir = parentOf(path); dir !== undefined; dir = parentOf(dir)) {
    const d = await lstat(dir, { bigint: true }).catch(() => undefined);
    const ownerOk = d?.uid === 0n || d?.uid === owner;
    if (!d?.isDirectory() || !ownerOk || (d.mode & GROUP_OTHER_WRITE) !== 0n) {
      return { ok: false, reason: REFUSE.UNSAFE_PARENT, path: dir };
    }
  }

  let bytes: Uint8Array;
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = errnoCode(e);
    if (code === "ELOOP") return { ok: false, reason: REFUSE.SYMLINK };
    if (code === "ENOENT") return { ok: false, reason: REFUSE.MISSING };
    return { ok: false, reason: REFUSE.UNREADABLE };
  }
  try {
    const f = await handle.stat({ bigint: true });
    if (f.dev !== st.dev || f.ino !== st.ino) return { ok: false, reason: REFUSE.UNREADABLE };
    const again = fileRefusal(f);
    if (again) return { ok: false, reason: again };
    const buf = new Uint8Array(MAX_ALLOWLIST_BYTES + 1);
    let length = 0;
    while (length < buf.length) {
      const { bytesRead } = await handle.read(buf, length, buf.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > MAX_ALLOWLIST_BYTES) return { ok: false, reason: REFUSE.TOO_LARGE };
    bytes = buf.subarray(0, length);
  } catch {
    return { ok: false, reason: REFUSE.UNREADABLE };
  } finally {
    await handle.close().catch(() => {});
  }

  const decoded = decodeUtf8(bytes);
  if (!decoded.ok) {
    return { ok: false, reason: REFUSE.MALFORMED, line: decoded.line, syntax: SYNTAX.NOT_UTF8 };
  }
  const parsed = parseAllowlist(decoded.text);
  if (!parsed.ok) {
    return { ok: false, reason: REFUSE.MALFORMED, line: parsed.line, syntax: parsed.reason };
  }
  return { ok: true, entries: parsed.entries, text: decoded.text };
}

/** The parent of a normalised absolute path; `undefined` for `/`. */
function parentOf(path: string): string | undefined {
  if (path === "/") return undefined;
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}
