/**
 * The language tables (`shared/i18n/`, issue 36; pi's and the tools', issue 35): every table has English's
 * keys and no other, each key the same kind (text or function) with the same
 * parameters placed in its text, the same `code` spans and line breaks; and
 * the language follows `LC_ALL`, then `LC_MESSAGES`, then `LANG`. Last, the
 * doctor and `audit verify`, run as child processes, speak the language of
 * their environment.
 * Runs under Node and Deno.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { en } from "../../../shared/i18n/en.ts";
import { type Language, pickLanguage, TABLES } from "../../../shared/i18n/locale.ts";
import { toolsEn } from "../../../shared/i18n/tools_en.ts";
import { TOOL_TABLES } from "../../../shared/i18n/tools_locale.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** A marker for parameter `i`: a number, so that a count compares as one and a text shows it. */
const marker = (i: number) => 900_001 + i;

/** What a key reads with markers for its parameters. */
function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  const fn = value as (...args: number[]) => string;
  return fn(...Array.from({ length: fn.length }, (_, i) => marker(i)));
}

/** The `code` spans of a text, sorted. */
function codeSpans(text: string): string[] {
  return [...text.matchAll(/`[^`]*`/g)].map((m) => m[0]).sort();
}

/**
 * Why `table` is no translation of `english`: keys missing or extra, a key of
 * another kind (text or function), another number of parameters, a parameter
 * not placed (or placed where English does not), other `code` spans, another
 * number of lines, other leading or trailing space (layout). Empty when none.
 */
function tableProblems(
  english: Readonly<Record<string, unknown>>,
  table: Readonly<Record<string, unknown>>,
): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(table)) {
    if (!Object.hasOwn(english, key)) problems.push(`${key}: not in English`);
  }
  for (const [key, value] of Object.entries(english)) {
    if (!Object.hasOwn(table, key)) {
      problems.push(`${key}: missing`);
      continue;
    }
    const theirs = table[key];
    if (typeof theirs !== typeof value) {
      problems.push(`${key}: a ${typeof theirs}, English has a ${typeof value}`);
      continue;
    }
    const arity = typeof value === "function" ? value.length : 0;
    if (typeof theirs === "function" && theirs.length !== arity) {
      problems.push(`${key}: ${theirs.length} parameters, English has ${arity}`);
      continue;
    }
    let a: string, b: string;
    try {
      [a, b] = [textOf(value), textOf(theirs)];
    } catch (e) {
      problems.push(`${key}: throws (${e})`);
      continue;
    }
    if (b.trim() === "") problems.push(`${key}: empty`);
    for (let i = 0; i < arity; i++) {
      const m = String(marker(i));
      if (a.includes(m) !== b.includes(m)) problems.push(`${key}: parameter ${i + 1} not placed`);
    }
    if (codeSpans(a).join() !== codeSpans(b).join()) problems.push(`${key}: other \`code\``);
    if (a.split("\n").length !== b.split("\n").length) problems.push(`${key}: other lines`);
    const lead = (s: string) => s.length - s.trimStart().length;
    if (lead(a) !== lead(b) || /\s$/.test(a) !== /\s$/.test(b)) {
      problems.push(`${key}: other leading or trailing space`);
    }
  }
  return problems;
}

const ENGLISH = en as Readonly<Record<string, unknown>>;
const OTHERS = (Object.keys(TABLES) as Language[]).filter((l) => l !== "en");

describe("language tables", () => {
  it("English is the table all others are checked against, and there are others", () => {
    assert.equal(TABLES.en, en);
    assert.ok(OTHERS.includes("pt_BR"));
  });

  for (const language of OTHERS) {
    it(`${language}: every key of English, and no other, with the same parameters`, () => {
      assert.deepEqual(tableProblems(ENGLISH, TABLES[language]), []);
    });
    it(`${language}, the tools' table: every key of English's, and no other, with the same parameters`, () => {
      assert.equal(TOOL_TABLES.en, toolsEn);
      assert.deepEqual(
        tableProblems(toolsEn as Readonly<Record<string, unknown>>, TOOL_TABLES[language]),
        [],
      );
    });
  }

  it("pi's table and the tools' table share no key (the tools' table spreads over pi's)", () => {
    assert.deepEqual(Object.keys(toolsEn).filter((k) => Object.hasOwn(en, k)), []);
  });

  it("the check fails on a missing key, an extra key, a parameter too few or not placed", () => {
    const good = TABLES.pt_BR as Readonly<Record<string, unknown>>;
    const without = { ...good };
    delete without.todoRetry;
    assert.deepEqual(tableProblems(ENGLISH, without), ["todoRetry: missing"]);
    assert.deepEqual(tableProblems(ENGLISH, { ...good, extraKey: "x" }), [
      "extraKey: not in English",
    ]);
    assert.deepEqual(tableProblems(ENGLISH, { ...good, refusedRequest: () => "recusado" }), [
      "refusedRequest: 0 parameters, English has 1",
    ]);
    assert.deepEqual(
      tableProblems(ENGLISH, { ...good, refusedRequest: (_reason: string) => "recusado" }),
      ["refusedRequest: parameter 1 not placed"],
    );
    assert.deepEqual(tableProblems(ENGLISH, { ...good, todoRetry: "execute de novo" }), [
      "todoRetry: other `code`",
    ]);
    assert.deepEqual(tableProblems(ENGLISH, { ...good, passwordLabel: "Senha:" }), [
      "passwordLabel: other leading or trailing space",
    ]);
  });
});

describe("pickLanguage: LC_ALL, then LC_MESSAGES, then LANG (empty values skipped)", () => {
  const cases: [Record<string, string | undefined>, Language][] = [
    [{}, "en"],
    [{ LANG: "C.UTF-8" }, "en"],
    [{ LANG: "C" }, "en"],
    [{ LANG: "POSIX" }, "en"],
    [{ LANG: "en_US.UTF-8" }, "en"],
    [{ LANG: "de_DE.UTF-8" }, "en"],
    [{ LANG: "pt_BR.UTF-8" }, "pt_BR"],
    [{ LANG: "pt_BR" }, "pt_BR"],
    [{ LANG: "pt_PT.UTF-8" }, "pt_BR"],
    [{ LANG: "pt" }, "pt_BR"],
    [{ LANG: "pt.UTF-8" }, "pt_BR"],
    [{ LANG: "pt_BR@latin" }, "pt_BR"],
    [{ LANG: "ptx" }, "en"],
    [{ LANG: "pt_BR.UTF-8", LC_MESSAGES: "C" }, "en"],
    [{ LANG: "C.UTF-8", LC_MESSAGES: "pt_BR.UTF-8" }, "pt_BR"],
    [{ LANG: "pt_BR.UTF-8", LC_MESSAGES: "pt_BR.UTF-8", LC_ALL: "C" }, "en"],
    [{ LANG: "C", LC_MESSAGES: "en_US.UTF-8", LC_ALL: "pt_BR.UTF-8" }, "pt_BR"],
    [{ LANG: "pt_BR.UTF-8", LC_ALL: "" }, "pt_BR"],
    [{ LANG: "pt_BR.UTF-8", LC_ALL: "", LC_MESSAGES: "" }, "pt_BR"],
    [{ LANG: "", LC_MESSAGES: "pt_BR.UTF-8" }, "pt_BR"],
    [{ LANG: "pt_BR.UTF-8", LC_CTYPE: "C", LANGUAGE: "en" }, "pt_BR"],
  ];
  for (const [env, want] of cases) {
    it(`${JSON.stringify(env)} → ${want}`, () => assert.equal(pickLanguage(env), want));
  }
});

describe("a child process speaks its environment's language", () => {
  /** `pi-sudo-prompt doctor --explain cancelled` with exactly these locale variables. */
  const explain = (locale: Record<string, string>) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        `${ROOT}node_modules/.bin/node`,
        [`${ROOT}bin/pi-sudo-prompt.mjs`, "doctor", "--explain", "cancelled"],
        { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...locale }, timeout: 60_000 },
        (err, stdout) => err ? reject(err) : resolve(String(stdout)),
      );
    });

  it("LANG=pt_BR.UTF-8: Portuguese; LC_ALL=C over it: English; no locale: English", async () => {
    const [pt, c, none] = await Promise.all([
      explain({ LANG: "pt_BR.UTF-8" }),
      explain({ LANG: "pt_BR.UTF-8", LC_ALL: "C" }),
      explain({}),
    ]);
    assert.match(pt, /^cancelled\n {2}o que houve: você apertou Escape/);
    assert.match(pt, /o que fazer: nada\n/);
    for (const english of [c, none]) {
      assert.match(english, /^cancelled\n {2}what happened: you pressed Escape/);
    }
  });

  it("pi-sudo-prompt audit verify: LANG=pt_BR.UTF-8 Portuguese, LC_ALL=C English", async () => {
    /** `pi-sudo-prompt audit verify` of a log that does not exist, with these locale variables. */
    const verify = (locale: Record<string, string>) =>
      new Promise<string>((resolve, reject) => {
        execFile(
          `${ROOT}node_modules/.bin/node`,
          [`${ROOT}bin/pi-sudo-prompt.mjs`, "audit", "verify", "/nonexistent/audit.jsonl"],
          { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...locale }, timeout: 60_000 },
          (err, stdout) => err ? reject(err) : resolve(String(stdout)),
        );
      });
    const [pt, c] = await Promise.all([
      verify({ LANG: "pt_BR.UTF-8" }),
      verify({ LANG: "pt_BR.UTF-8", LC_ALL: "C" }),
    ]);
    assert.equal(
      pt,
      "audit: ainda não há log de auditoria (procurado em /nonexistent/audit.jsonl); o pi o " +
        "cria quando uma sessão interativa começa com esta extensão\n",
    );
    assert.equal(
      c,
      "audit: no audit log yet (looked for /nonexistent/audit.jsonl); pi creates it when an " +
        "interactive session starts with this extension\n",
    );
  });
});

describe("the lines pi hands to its Deno helpers", () => {
  it("the guardian's and the keeper's lines are one line, with no control character and no single quote, in every language", () => {
    for (const [language, table] of Object.entries(TABLES)) {
      for (const line of [table.modalGone, table.stoppedWithModal]) {
        // deno-lint-ignore no-control-regex -- matching control characters is the point
        assert.match(line, /^[^\x00-\x1f\x7f-\x9f']{1,400}$/u, `${language}: ${line}`);
      }
    }
  });
});
