import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ALLOWLIST_SYNTAX_ERRORS as SYNTAX,
  type AllowlistEntry,
  appendEntryText,
  checkShape,
  formatEntry,
  matchArgv,
  MAX_ALLOWLIST_BYTES,
  parseAllowlist,
  SHAPE_ERRORS,
  suggestShape,
} from "../../../broker/allowlist.ts";

/** Whether `checkShape` accepts `line` for `argv`. */
const shapeOk = (line: string, argv: readonly string[]) => checkShape(line, argv).ok;

const KP = "/usr/bin/keepassxc-cli";
const KP_LINE = `${KP} show -q -t <db> <entry>`;

/** Parses text that must be valid. */
function entries(text: string): readonly AllowlistEntry[] {
  const r = parseAllowlist(text);
  assert.ok(r.ok, `expected valid: ${JSON.stringify(r)}`);
  return r.entries;
}

describe("allowlist grammar", () => {
  it("parses literals and markers", () => {
    assert.deepEqual(entries(KP_LINE), [{
      program: KP,
      args: [
        { kind: "literal", value: "show" },
        { kind: "literal", value: "-q" },
        { kind: "literal", value: "-t" },
        { kind: "marker", name: "db" },
        { kind: "marker", name: "entry" },
      ],
    }]);
  });

  it("ignores blank lines and whole-line comments, keeps line order", () => {
    const text = [
      "# allowlist",
      "",
      "   ",
      "\t# indented comment",
      "/usr/bin/a x",
      "#/usr/bin/commented-out <db>",
      "/usr/bin/b",
      "",
    ].join("\n");
    assert.deepEqual(entries(text), [
      { program: "/usr/bin/a", args: [{ kind: "literal", value: "x" }] },
      { program: "/usr/bin/b", args: [] },
    ]);
    assert.deepEqual(entries(""), []);
    assert.deepEqual(entries("# only a comment"), []);
  });

  it("runs of spaces and tabs separate words; outer blanks are ignored", () => {
    assert.deepEqual(entries(`  ${KP}\t show  -q -t\t<db>   <entry>  `), entries(KP_LINE));
  });

  it("# inside a word is literal; marker names allow digits, _ and -", () => {
    assert.deepEqual(entries("/bin/x a#b <a1_b-c>")[0].args, [
      { kind: "literal", value: "a#b" },
      { kind: "marker", name: "a1_b-c" },
    ]);
  });

  it("reports the reason and 1-based line of the first malformed line; nothing else", () => {
    const cases: [string, string][] = [
      ["usr/bin/x a", SYNTAX.RELATIVE_PATH],
      ["./x a", SYNTAX.RELATIVE_PATH],
      ["<prog> a", SYNTAX.RELATIVE_PATH],
      ["/usr/../bin/x", SYNTAX.BAD_PATH],
      ["/usr/bin/..", SYNTAX.BAD_PATH],
      ["/usr//bin/x", SYNTAX.BAD_PATH],
      ["/usr/./bin/x", SYNTAX.BAD_PATH],
      ["/usr/bin/", SYNTAX.BAD_PATH],
      ["/", SYNTAX.BAD_PATH],
      ["/usr/bin/<x>", SYNTAX.BAD_PATH],
      ["/usr/bin/x a\r", SYNTAX.CONTROL_CHARACTER],
      ["/usr/bin/x a\x00b", SYNTAX.CONTROL_CHARACTER],
      ["/usr/bin/x a\x1bb", SYNTAX.CONTROL_CHARACTER],
      ["/usr/bin/x a\x7f", SYNTAX.CONTROL_CHARACTER],
      ["/usr/bin/x a\u00a0b", SYNTAX.CONTROL_CHARACTER], // NBSP: looks like two words
      ["/usr/bin/x a\u202eb", SYNTAX.CONTROL_CHARACTER], // bidi override
      ["/usr/bin/x a\u200bb", SYNTAX.CONTROL_CHARACTER], // zero-width space
      ["/usr/bin/x a\u2028b", SYNTAX.CONTROL_CHARACTER],
      ["/usr/bin/x \ud800", SYNTAX.CONTROL_CHARACTER], // lone surrogate
      ["# comment with a bell \x07", SYNTAX.CONTROL_CHARACTER],
      ["/usr/bin/x <>", SYNTAX.EMPTY_MARKER],
      ["/usr/bin/x <DB>", SYNTAX.BAD_MARKER],
      ["/usr/bin/x <1db>", SYNTAX.BAD_MARKER],
      ["/usr/bin/x <d.b>", SYNTAX.BAD_MARKER],
      ["/usr/bin/x <a<b>", SYNTAX.BAD_MARKER],
      ["/usr/bin/x <-x>", SYNTAX.BAD_MARKER],
      ["/usr/bin/x <db", SYNTAX.BAD_LITERAL],
      ["/usr/bin/x db>", SYNTAX.BAD_LITERAL],
      ["/usr/bin/x a<b>", SYNTAX.BAD_LITERAL],
      ["/usr/bin/x <", SYNTAX.BAD_LITERAL],
      ["/usr/bin/x >", SYNTAX.BAD_LITERAL],
      ["/usr/bin/x --out=>file", SYNTAX.BAD_LITERAL],
      ["/usr/bin/x show # trailing comment", SYNTAX.MISPLACED_COMMENT],
      ["/usr/bin/x #tag", SYNTAX.MISPLACED_COMMENT],
    ];
    for (const [line, reason] of cases) {
      const text = `# header\n${KP_LINE}\n\n${line}\n/usr/bin/later ok\n`;
      assert.deepEqual(parseAllowlist(text), { ok: false, reason, line: 4 }, JSON.stringify(line));
    }
    assert.deepEqual(parseAllowlist("<>"), { ok: false, reason: SYNTAX.RELATIVE_PATH, line: 1 });
    assert.deepEqual(parseAllowlist(`${KP_LINE}\r\n`), {
      ok: false,
      reason: SYNTAX.CONTROL_CHARACTER,
      line: 1,
    });
  });
});

describe("allowlist matching", () => {
  const list = entries(`# keepass\n${KP_LINE}\n`);
  const ok = (argv: string[]) => assert.equal(matchArgv(list, argv), true, argv.join(" | "));
  const no = (argv: string[]) => assert.equal(matchArgv(list, argv), false, argv.join(" | "));

  it("allows the exact shape, a path with spaces as one argument, # and unicode", () => {
    ok([KP, "show", "-q", "-t", "/home/me/db.kdbx", "mail"]);
    ok([KP, "show", "-q", "-t", "/home/me/My Passwords/db.kdbx", "Work / VPN token"]);
    ok([KP, "show", "-q", "-t", "db", "#entry"]);
    ok([KP, "show", "-q", "-t", "db", "entrada-é"]);
  });

  it("refuses other options, subcommands, extra or missing arguments", () => {
    no([KP, "show", "-s", "-t", "db", "e"]);
    no([KP, "show", "-s", "-q", "-t", "db", "e"]);
    no([KP, "export", "db"]);
    no([KP, "export", "-q", "-t", "db", "e"]);
    no([KP, "show", "-q", "-t", "db", "e", "extra"]);
    no([KP, "show", "-q", "-t", "db", "e", "-s"]);
    no([KP, "show", "-q", "-t", "db"]);
    no([KP, "show", "-q", "-t"]);
    no([KP]);
    no([]);
  });

  it("a marker refuses a value starting with - and an empty value", () => {
    no([KP, "show", "-q", "-t", "-s", "e"]);
    no([KP, "show", "-q", "-t", "db", "--show-protected"]);
    no([KP, "show", "-q", "-t", "db", "-"]);
    no([KP, "show", "-q", "-t", "", "e"]);
    no([KP, "show", "-q", "-t", "db", ""]);
  });

  it("refuses a different program path (no basename or symlink matching)", () => {
    no(["/usr/local/bin/keepassxc-cli", "show", "-q", "-t", "db", "e"]);
    no(["keepassxc-cli", "show", "-q", "-t", "db", "e"]);
    no(["/usr/bin//keepassxc-cli", "show", "-q", "-t", "db", "e"]);
    no([`${KP} `, "show", "-q", "-t", "db", "e"]);
  });

  it("literals match exactly (case, whitespace, prefixes)", () => {
    no([KP, "Show", "-q", "-t", "db", "e"]);
    no([KP, "show ", "-q", "-t", "db", "e"]);
    no([KP, "show", "-qt", "db", "e"]);
    no([KP, "show", "-q", "-tt", "db", "e"]);
  });

  it("any entry may match; an empty list matches nothing", () => {
    const two = entries(`/bin/a x\n/bin/b <v>\n`);
    assert.equal(matchArgv(two, ["/bin/a", "x"]), true);
    assert.equal(matchArgv(two, ["/bin/b", "y"]), true);
    assert.equal(matchArgv(two, ["/bin/a", "y"]), false);
    assert.equal(matchArgv([], ["/bin/a", "x"]), false);
    assert.equal(matchArgv(entries("/bin/true"), ["/bin/true"]), true);
    assert.equal(matchArgv(entries("/bin/true"), ["/bin/true", ""]), false);
  });
});

describe("allowlist formatting", () => {
  it("valid lines round-trip through parse and format", () => {
    for (
      const line of [
        KP_LINE,
        "/bin/true",
        "/opt/x y/z a#b -- --k=v <v1> <v_2-x>",
        "/usr/bin/ünï cödé",
      ]
    ) {
      const [e] = entries(line);
      assert.equal(formatEntry(e), line);
      assert.deepEqual(entries(formatEntry(e)), [e]);
    }
  });

  it("normalises separators", () => {
    assert.equal(formatEntry(entries(`\t${KP}  show -q\t-t <db>   <entry> `)[0]), KP_LINE);
  });
});

describe("/sudo-prompt allow helpers", () => {
  it("suggestShape: <db> <entry> for keepassxc-cli show -q -t, other arguments kept", () => {
    assert.deepEqual(suggestShape([KP, "show", "-q", "-t", "/home/me/My DB.kdbx", "mail"]), {
      ok: true,
      line: KP_LINE,
    });
    assert.deepEqual(
      suggestShape(["/opt/kp/keepassxc-cli", "show", "-q", "-t", "-a", "password", "db", "e"]),
      { ok: true, line: "/opt/kp/keepassxc-cli show -q -t -a password <db> <entry>" },
    );
  });

  it("suggestShape: otherwise the argv unchanged", () => {
    const cases: string[][] = [
      [KP, "show", "-s", "db", "e"],
      [KP, "show", "-q", "-t", "db"],
      [KP, "show", "-q", "-t", "db", "-e"],
      [KP, "export", "db"],
      ["/usr/bin/gpg", "--batch", "--passphrase-fd", "0", "-d", "f.gpg"],
      ["/usr/bin/true"],
    ];
    for (const argv of cases) {
      assert.deepEqual(suggestShape(argv), { ok: true, line: argv.join(" ") });
    }
  });

  it("suggestShape: markers only where a literal cannot be written", () => {
    assert.deepEqual(suggestShape(["/usr/bin/x", "a b", "#c", "<d>", "e\u00a0f", "ok"]), {
      ok: true,
      line: "/usr/bin/x <arg1> <arg2> <arg3> <arg4> ok",
    });
    assert.deepEqual(suggestShape(["/usr/bin/x", "ok", ""]), {
      ok: false,
      reason: SHAPE_ERRORS.UNREPRESENTABLE_ARGUMENT,
      index: 2,
    });
    assert.deepEqual(suggestShape(["/usr/bin/x", "--name=a b"]), {
      ok: false,
      reason: SHAPE_ERRORS.UNREPRESENTABLE_ARGUMENT,
      index: 1,
    });
    assert.deepEqual(suggestShape([]), { ok: false, reason: SHAPE_ERRORS.NO_PROGRAM });
    assert.deepEqual(suggestShape(["x", "a"]), {
      ok: false,
      reason: SHAPE_ERRORS.BAD_PROGRAM,
      syntax: SYNTAX.RELATIVE_PATH,
    });
    assert.deepEqual(suggestShape(["/a/../b"]), {
      ok: false,
      reason: SHAPE_ERRORS.BAD_PROGRAM,
      syntax: SYNTAX.BAD_PATH,
    });
  });

  it("every successful suggestion matches its argv", () => {
    const argvs: string[][] = [
      [KP, "show", "-q", "-t", "/home/me/My DB.kdbx", "mail"],
      ["/usr/bin/x", "a b", "#c", "<d>", "ok", "-v"],
      ["/usr/bin/true"],
    ];
    for (const argv of argvs) {
      const s = suggestShape(argv);
      assert.ok(s.ok);
      assert.equal(shapeOk(s.line, argv), true, s.line);
    }
  });

  it("shapeMatches / checkShape: the edited shape must match the argv shown", () => {
    const argv = [KP, "show", "-q", "-t", "/home/me/My DB.kdbx", "mail"];
    assert.equal(shapeOk(KP_LINE, argv), true);
    assert.equal(shapeOk(`${KP} show -q -t <db> mail`, argv), true);
    assert.equal(shapeOk(`  ${KP_LINE}\n`, argv), true); // an editor's final newline
    assert.deepEqual(checkShape(`${KP}  show -q -t <db>\t<entry>\n`, argv), {
      ok: true,
      entry: entries(KP_LINE)[0],
      line: KP_LINE,
    });
    // Widening or different shapes are refused.
    assert.deepEqual(checkShape(`${KP} show -q <t> <db> <entry>`, argv), {
      ok: false,
      reason: SHAPE_ERRORS.DOES_NOT_MATCH, // a marker never takes "-t"
    });
    assert.deepEqual(checkShape(`${KP} show -s -t <db> <entry>`, argv), {
      ok: false,
      reason: SHAPE_ERRORS.DOES_NOT_MATCH,
    });
    assert.deepEqual(checkShape(`${KP} show -q -t <db>`, argv), {
      ok: false,
      reason: SHAPE_ERRORS.DOES_NOT_MATCH,
    });
    assert.deepEqual(checkShape(`/usr/local/bin/keepassxc-cli show -q -t <db> <entry>`, argv), {
      ok: false,
      reason: SHAPE_ERRORS.DOES_NOT_MATCH,
    });
    // Not exactly one valid entry.
    for (const text of ["", "  \n", "# comment", `${KP_LINE}\n/bin/sh`, `${KP_LINE}\r/bin/sh`]) {
      assert.deepEqual(
        checkShape(text, argv),
        { ok: false, reason: SHAPE_ERRORS.NOT_ONE_ENTRY },
        JSON.stringify(text),
      );
    }
    assert.deepEqual(checkShape(`${KP} show -q -t <db> <>`, argv), {
      ok: false,
      reason: SHAPE_ERRORS.MALFORMED,
      syntax: SYNTAX.EMPTY_MARKER,
    });
    assert.equal(shapeOk(`${KP} show -q -t <db> <>`, argv), false);
  });

  it("appendEntryText: appends one normalised line, comments untouched", () => {
    const existing = "# examples:\n#/usr/bin/keepassxc-cli show -q -t <db> <entry>\n";
    assert.deepEqual(appendEntryText(existing, `  ${KP}  show -q -t <db> <entry>\n`), {
      ok: true,
      text: `${existing}${KP_LINE}\n`,
      line: KP_LINE,
    });
    assert.deepEqual(appendEntryText("# no final newline", KP_LINE), {
      ok: true,
      text: `# no final newline\n${KP_LINE}\n`,
      line: KP_LINE,
    });
    assert.deepEqual(appendEntryText("", KP_LINE), {
      ok: true,
      text: `${KP_LINE}\n`,
      line: KP_LINE,
    });
    const r = appendEntryText(existing, KP_LINE);
    assert.ok(r.ok);
    assert.ok(r.text.startsWith(existing));
    assert.deepEqual(entries(r.text), entries(KP_LINE));
  });

  it("appendEntryText: refuses injected lines, malformed lines and malformed files", () => {
    assert.deepEqual(appendEntryText("", `${KP_LINE}\n/bin/sh <x>`), {
      ok: false,
      reason: SHAPE_ERRORS.NOT_ONE_ENTRY,
    });
    assert.deepEqual(appendEntryText("", "# just a comment"), {
      ok: false,
      reason: SHAPE_ERRORS.NOT_ONE_ENTRY,
    });
    assert.deepEqual(appendEntryText("", "bin/x"), {
      ok: false,
      reason: SHAPE_ERRORS.MALFORMED,
      syntax: SYNTAX.RELATIVE_PATH,
    });
    assert.deepEqual(appendEntryText("# ok\n/bin/x <>\n", KP_LINE), {
      ok: false,
      reason: SHAPE_ERRORS.EXISTING_MALFORMED,
      syntax: SYNTAX.EMPTY_MARKER,
      line: 2,
    });
    const big = `# ${"x".repeat(MAX_ALLOWLIST_BYTES - 10)}\n`;
    assert.deepEqual(appendEntryText(big, KP_LINE), {
      ok: false,
      reason: SHAPE_ERRORS.TOO_LARGE,
    });
  });
});
