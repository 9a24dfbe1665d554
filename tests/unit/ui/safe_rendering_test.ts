/**
 * Tool calls, results and the model's text are drawn inert
 * (`extension/ui/safe_rendering.ts`, `askpass/prompt_text.ts`): escape
 * sequences that move the cursor, clear the screen or set a title never reach
 * the terminal; styling and links that pi's own renderers draw stay.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Component } from "@earendil-works/pi-tui";
import { hasUnsafe, keepStylingOnly, sanitizeMultiline } from "../../../askpass/prompt_text.ts";
import { cleanArgs, cleanMarkdown, inertRenderers } from "../../../extension/ui/safe_rendering.ts";

const E = "\x1b";
const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t };

describe("sanitizeMultiline", () => {
  it("removes escapes and controls, keeps line breaks and tabs, cuts nothing", () => {
    const text = `${E}[2J${E}[38;2;6;6;6mline one\tcell\n${E}]0;title${E}\\line two\u202e\n` +
      `\x9b31mthree${E}[0m` + "x".repeat(5000);
    assert.equal(sanitizeMultiline(text), `line one\tcell\nline two\nthree${"x".repeat(5000)}`);
  });

  it("an unterminated sequence never swallows the next line", () => {
    assert.equal(sanitizeMultiline(`a${E}]0;never ends\nsecond line`), "a\nsecond line");
  });

  it("the model's Markdown is cleaned the same way", () => {
    assert.equal(cleanMarkdown(`# Title${E}[H${E}[2J\n\n*ok*`), "# Title\n\n*ok*");
  });
});

describe("keepStylingOnly", () => {
  it("keeps SGR colours and OSC 8 links, drops cursor moves, clears, titles, DCS and 8-bit CSI", () => {
    const link = `${E}]8;;file:///tmp/x${E}\\x${E}]8;;${E}\\`;
    const line = `${E}[1m${E}[38;5;2mok${E}[0m ${link}${E}[10;20H${E}[2J${E}]0;evil${E}\\` +
      `${E}Pq#0;2;0;0;0${E}\\\x9b2Jend\x07\r`;
    assert.equal(keepStylingOnly(line), `${E}[1m${E}[38;5;2mok${E}[0m ${link}end`);
  });

  it("a plain line is unchanged", () => {
    assert.equal(keepStylingOnly("│ plain text │"), "│ plain text │");
  });
});

describe("unsafe characters", () => {
  /** The set, spelt out: C0 and C1 controls, DEL, and invisible formatting and bidi characters. */
  const unsafe = (cp: number) =>
    cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp === 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp === 0xfeff;

  it("hasUnsafe finds, and drawn text loses, exactly these code points (astral and lone surrogates kept)", () => {
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const ch = String.fromCodePoint(cp);
      const kept = unsafe(cp) ? "" : ch;
      if (hasUnsafe(ch) !== unsafe(cp) || keepStylingOnly(ch) !== kept) wrong.push(cp.toString(16));
    }
    assert.deepEqual(wrong, []);
    assert.equal(hasUnsafe("a😀b"), false);
    assert.equal(hasUnsafe("a\u202eb"), true);
  });
});

describe("cleanArgs", () => {
  it("cleans every string of nested arguments, keys too; other values stay", () => {
    const args = {
      path: `/tmp/${E}[2Jx`,
      edits: [{ oldText: "a\tb", newText: `${E}[31mred${E}[0m\nnext` }],
      [`k${E}[H`]: 3,
      flag: true,
      none: null,
    };
    assert.deepEqual(cleanArgs(args), {
      path: "/tmp/x",
      edits: [{ oldText: "a\tb", newText: "red\nnext" }],
      k: 3,
      flag: true,
      none: null,
    });
  });

  it("stops at a bounded depth (a cycle or a deep object cannot hang the draw)", () => {
    const deep: Record<string, unknown> = {};
    let node = deep;
    for (let i = 0; i < 50; i++) node = (node.next = {}) as Record<string, unknown>;
    assert.doesNotThrow(() => cleanArgs(deep));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.doesNotThrow(() => cleanArgs(cyclic));
  });
});

/** A renderer's component that draws the given lines, and records invalidations. */
function drawn(lines: string[]): Component & { invalidated: number } {
  return {
    invalidated: 0,
    render: () => lines,
    invalidate() {
      this.invalidated++;
    },
  };
}

describe("inertRenderers", () => {
  it("the renderer sees clean arguments and its own last component; what it draws keeps styling only", () => {
    const seen: unknown[] = [];
    const lasts: unknown[] = [];
    const own = drawn([`${E}[2J${E}[5;5H${E}[32mfake modal${E}[0m`]);
    const slots = inertRenderers("write", {
      renderCall: (args, _theme, context) => {
        seen.push(args, context.args);
        lasts.push(context.lastComponent);
        return own;
      },
    });
    const args = { path: "x", content: `${E}[2Jhello` };
    const first = slots.renderCall!(args, theme, { args, lastComponent: undefined });
    assert.deepEqual(first.render(80), [`${E}[32mfake modal${E}[0m`]);
    const second = slots.renderCall!(args, theme, { args, lastComponent: first });
    assert.equal(second, first, "the same component keeps the same wrapper");
    assert.deepEqual(seen, Array(4).fill({ path: "x", content: "hello" }));
    assert.deepEqual(lasts, [undefined, own], "the renderer gets its own component back");
    first.invalidate();
    assert.equal(own.invalidated, 1);
  });

  it("results are cleaned before the renderer sees them (an edit's diff loses the agent's colours)", () => {
    let diff = "";
    const slots = inertRenderers("edit", {
      renderResult: (result) => {
        diff = result.details.diff;
        return drawn([diff]);
      },
    });
    slots.renderResult!(
      { content: [], details: { diff: `+${E}[38;2;6;6;6mred` } },
      {},
      theme,
      { args: {} },
    );
    assert.equal(diff, "+red");
  });

  it("no call renderer: an inert JSON line replaces pi's fallback (which prints strings raw); no result renderer stays none", () => {
    const slots = inertRenderers(`my${E}[2Jtool`, {});
    const lines = slots.renderCall!({ text: `${E}[2Jhi\nthere` }, theme, { args: {} }).render(80);
    assert.deepEqual(lines.map((l) => l.trimEnd()), [`mytool {"text":"hi\\nthere"}`]);
    assert.equal(slots.renderResult, undefined);
  });
});
