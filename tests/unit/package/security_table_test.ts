/**
 * Keeps `docs/security-tests.md` honest: every row of its tables that is not
 * marked `pending` must name a test file that exists and a test name that
 * appears verbatim in that file (starting a string literal, as the first
 * argument of `it`/`test` or as the loop label a generated name is built
 * from). Runs under Node (`node --test`) and Deno (`deno test -A`).
 */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
/** The tables, in two files (one would pass the package's per-file size limit). */
const DOCS = ["docs/security-tests.md", "docs/security-tests-2.md"];
const readDocs = () => DOCS.map((d) => readFileSync(join(REPO_ROOT, d), "utf8")).join("\n");
const STATUSES = ["proven", "pending"] as const;

/** One data row of a table that has `Test file`, `Test name` and `Status` columns. */
export interface TableRow {
  /** 1-based line number in the document. */
  readonly line: number;
  readonly cells: Readonly<Record<string, string>>;
}

/** Splits a Markdown table line into trimmed cells; `|` inside a code span does not split. */
export function splitRow(line: string): string[] {
  const body = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  const cells: string[] = [];
  let cell = "";
  let inCode = false;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === "\\" && body[i + 1] === "|") {
      cell += "|";
      i++;
    } else if (ch === "`") {
      inCode = !inCode;
      cell += ch;
    } else if (ch === "|" && !inCode) {
      cells.push(cell.trim());
      cell = "";
    } else {
      cell += ch;
    }
  }
  cells.push(cell.trim());
  return cells;
}

/** The rows of every table whose header has `Test file`, `Test name` and `Status`. */
export function parseTables(markdown: string): TableRow[] {
  const lines = markdown.split("\n");
  const rows: TableRow[] = [];
  let header: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line.trim().startsWith("|")) {
      header = undefined;
      continue;
    }
    const cells = splitRow(line);
    if (header === undefined) {
      const next = lines[i + 1] ?? "";
      const isSeparator = next.trim().startsWith("|") &&
        splitRow(next).every((c) => /^:?-+:?$/.test(c));
      if (
        isSeparator && ["Test file", "Test name", "Status"].every((h) => cells.includes(h))
      ) {
        header = cells;
        i++; // the separator line
      } else {
        header = [];
      }
      continue;
    }
    if (header.length === 0) continue; // a table of another kind
    const record: Record<string, string> = {};
    header.forEach((h, k) => record[h] = cells[k] ?? "");
    if (cells.length !== header.length) record["__cell_count"] = String(cells.length);
    rows.push({ line: i + 1, cells: record });
  }
  return rows;
}

/** The text of a cell that is exactly one code span, else undefined. */
export function codeSpan(cell: string): string | undefined {
  const m = /^`([^`]+)`$/.exec(cell.trim());
  return m ? m[1] : undefined;
}

/**
 * Problems with the tables of `markdown`, one string each (empty: all good).
 * `readSource(path)` returns a repository file's text, or undefined when it
 * is not a regular file.
 */
export function checkTables(
  markdown: string,
  readSource: (path: string) => string | undefined,
): string[] {
  const problems: string[] = [];
  const rows = parseTables(markdown);
  if (rows.length === 0) problems.push("no table with Test file, Test name and Status columns");
  for (const { line, cells } of rows) {
    const at = `line ${line}`;
    if (cells["__cell_count"] !== undefined) {
      problems.push(`${at}: ${cells["__cell_count"]} cells, the header has a different count`);
      continue;
    }
    const status = codeSpan(cells["Status"]) ?? cells["Status"];
    if (!(STATUSES as readonly string[]).includes(status)) {
      problems.push(`${at}: status ${JSON.stringify(cells["Status"])} is not proven or pending`);
      continue;
    }
    if (status === "pending") continue;
    const file = codeSpan(cells["Test file"]);
    const name = codeSpan(cells["Test name"]);
    if (!file) {
      problems.push(`${at}: no test file (a repository path in backticks)`);
      continue;
    }
    if (!name) {
      problems.push(`${at}: no test name (in backticks)`);
      continue;
    }
    if (file.startsWith("/") || file.split("/").includes("..")) {
      problems.push(`${at}: ${file} is not a path inside the repository`);
      continue;
    }
    const source = readSource(file);
    if (source === undefined) {
      problems.push(`${at}: test file ${file} does not exist`);
      continue;
    }
    const literal = ['"', "'", "`"].some((q) => source.includes(q + name));
    if (!literal) {
      problems.push(`${at}: ${file} has no test named ${JSON.stringify(name)}`);
    }
  }
  return problems;
}

function readRepoFile(path: string): string | undefined {
  const full = join(REPO_ROOT, path);
  try {
    if (!statSync(full).isFile()) return undefined;
    return readFileSync(full, "utf8");
  } catch {
    return undefined;
  }
}

describe("docs/security-tests.md and security-tests-2.md", () => {
  it("every row not marked pending names an existing file and a test that is in it", () => {
    for (const doc of DOCS) {
      const problems = checkTables(readFileSync(join(REPO_ROOT, doc), "utf8"), readRepoFile);
      assert.deepEqual(problems, [], doc);
    }
  });

  it("covers attacks and faults, with proven and pending rows", () => {
    const rows = parseTables(readDocs());
    const status = (r: TableRow) => codeSpan(r.cells["Status"]) ?? r.cells["Status"];
    assert.ok(rows.filter((r) => status(r) === "proven").length >= 30, "proven rows");
    assert.ok(rows.some((r) => status(r) === "pending"), "the broker rows are pending");
    const files = new Set(rows.map((r) => codeSpan(r.cells["Test file"])));
    for (const f of ["tests/pi/agent_attacks_test.ts", "tests/pi/faults_test.ts"]) {
      assert.ok(files.has(f), `${f} is cited`);
    }
  });
});

describe("the checker itself", () => {
  const header = "| # | What | Test file | Test name | Status |\n| - | --- | --- | --- | --- |\n";
  const files: Record<string, string> = {
    "tests/a_test.ts": 'it("does a thing | with a bar", () => {});\nit(`${x} killed`, f);',
  };
  const read = (p: string) => files[p];

  it("accepts verbatim names, a name with | in a code span, and a template as written", () => {
    const doc = header +
      "| 1 | x | `tests/a_test.ts` | `does a thing | with a bar` | `proven` |\n" +
      "| 2 | x | `tests/a_test.ts` | `${x} killed` | proven |\n";
    assert.deepEqual(checkTables(doc, read), []);
  });

  it("ignores pending rows, even without a test", () => {
    const doc = header + "| 1 | x | `tests/broker_test.ts` | (to be written) | `pending` |\n";
    assert.deepEqual(checkTables(doc, read), []);
  });

  it("reports a missing test, a missing file, a wrong name, a bad status and a bad row", () => {
    const doc = header +
      "| 1 | x | | | `proven` |\n" +
      "| 2 | x | `tests/nope_test.ts` | `does a thing` | `proven` |\n" +
      "| 3 | x | `tests/a_test.ts` | `does another thing` | `proven` |\n" +
      "| 4 | x | `tests/a_test.ts` | `a thing` | `proven` |\n" +
      "| 5 | x | `tests/a_test.ts` | `does a thing` | `maybe` |\n" +
      "| 6 | x | `tests/a_test.ts` |\n" +
      "| 7 | x | `../etc/passwd` | `root` | `proven` |\n";
    const problems = checkTables(doc, read);
    assert.equal(problems.length, 7, problems.join("\n"));
    assert.match(problems[0], /line 3: no test file/);
    assert.match(problems[1], /line 4: test file tests\/nope_test.ts does not exist/);
    assert.match(problems[2], /line 5: .* has no test named "does another thing"/);
    assert.match(problems[3], /line 6: .* has no test named "a thing"/, "a mid-name fragment");
    assert.match(problems[4], /line 7: status "`maybe`"/);
    assert.match(problems[5], /line 8: 3 cells/);
    assert.match(problems[6], /line 9: .* not a path inside the repository/);
  });

  it("a document without such a table is a failure", () => {
    assert.deepEqual(checkTables("# nothing here\n", read), [
      "no table with Test file, Test name and Status columns",
    ]);
  });
});
