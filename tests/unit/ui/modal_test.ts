/**
 * Unit tests for the sudo modal: rendering at several widths, keys, paste,
 * the byte cap, the countdown, sanitising, and the `ui.custom` wiring.
 *
 * Run: node --test tests/unit/ui/modal_test.ts (Node >= 22.18, type stripping).
 * Timers are mocked in every test, so no real interval is left running.
 */

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import { CURSOR_MARKER, visibleWidth } from "@earendil-works/pi-tui";
import { showSudoModal } from "../../../extension/ui/modal.ts";
import {
  renderSudoModal,
  SUDO_LOOK,
  type SudoModalState,
} from "../../../extension/ui/sudo_modal.ts";
import { formatCountdown, shellCommandText, shellQuote } from "../../../extension/ui/modal_text.ts";
import type { ModalTheme } from "../../../extension/ui/modal_frame.ts";
import type { PromptOutcome, PromptRequest } from "../../../askpass/prompter.ts";
import { KEY_DROP } from "../../../shared/modal_keys.ts";
import { msg } from "../../../shared/i18n/locale.ts";
import { drawingElsewhere } from "../../helpers/drawing_elsewhere.ts";
import {
  MaskedPromptModal,
  MAX_REPLY_LENGTH,
  type ModalUI,
} from "../../../extension/ui/masked_prompt.ts";
import { DENY_REASONS } from "../../../askpass/protocol.ts";
import { sanitizePrompt } from "../../../askpass/prompt_text.ts";

const theme: ModalTheme = { fg: (_c, s) => s, bold: (s) => s };
const NOW = 1_700_000_000_000;

beforeEach(() => mock.timers.enable({ apis: ["setInterval"] }));
afterEach(() => mock.timers.reset());

function makeRequest(overrides: Partial<PromptRequest> = {}): PromptRequest {
  return {
    requestId: "0123456789abcdef0123456789abcdef",
    sudoArgv: ["sudo", "-A", "apt-get", "install", "-y", "curl"],
    toolCommand: ["/bin/bash", "-c", "sudo apt-get install -y curl"],
    promptText: "[sudo] password for bob: ",
    attempt: 1,
    maxAttempts: 3,
    deadline: NOW + 114_000,
    waiting: () => 0,
    recheck: () => Promise.resolve(true),
    ...overrides,
  };
}

function makeState(overrides: Partial<SudoModalState> = {}): SudoModalState {
  return {
    request: makeRequest(),
    typedLength: 0,
    secondsLeft: 114,
    waiting: 0,
    focused: false,
    ...overrides,
  };
}

/** A modal with a controllable clock that records what it reports. */
function makeModal(overrides: Partial<PromptRequest> = {}) {
  const clock = { now: NOW };
  const outcomes: PromptOutcome[] = [];
  let renders = 0;
  const modal = new MaskedPromptModal({
    request: makeRequest(overrides),
    theme,
    draw: SUDO_LOOK.draw,
    requestRender: () => renders++,
    done: (o) => outcomes.push(o),
    now: () => clock.now,
  });
  return { modal, outcomes, clock, renders: () => renders };
}

function text(lines: readonly string[]): string {
  return lines.join("\n");
}

function bullets(lines: readonly string[]): number {
  const line = lines.find((l) => l.includes("Password: "));
  assert.ok(line, "password line rendered");
  return [...line].filter((ch) => ch === "•").length;
}

function submitted(outcomes: PromptOutcome[]): Uint8Array {
  assert.equal(outcomes.length, 1);
  const [outcome] = outcomes;
  assert.equal(outcome.kind, "submit");
  return outcome.kind === "submit" ? outcome.password : new Uint8Array();
}

const utf8 = (s: string) => new TextEncoder().encode(s);

describe("renderSudoModal", () => {
  const busy = makeState({
    request: makeRequest({
      sudoArgv: [
        "sudo",
        "-A",
        "sh",
        "-c",
        "x".repeat(300) + " && rm -rf /tmp/some/long/path/name",
      ],
      toolCommand: [
        "bash",
        "-c",
        Array.from({ length: 8 }, (_, i) => `echo line ${i} `.repeat(20))
          .join("\n"),
      ],
      promptText: "[sudo] " + "very long prompt ".repeat(30),
      attempt: 2,
    }),
    typedLength: 300,
    waiting: 2,
    focused: true,
  });

  for (const width of [40, 80, 120]) {
    test(`no line exceeds width ${width}`, () => {
      const lines = renderSudoModal(busy, width, theme);
      for (const line of lines) {
        assert.ok(
          visibleWidth(line) <= width,
          `${visibleWidth(line)} > ${width}: ${JSON.stringify(line)}`,
        );
      }
      assert.match(lines[0], /^╭─+╮$/);
      assert.match(lines.at(-1) ?? "", /^╰─+╯$/);
      assert.ok(lines.slice(1, -1).every((l) => l.startsWith("│ ")));
      assert.ok(text(lines).includes(CURSOR_MARKER), "cursor when focused");
    });
  }

  test("tiny widths never overflow either", () => {
    for (const width of [1, 5, 11, 12, 20]) {
      for (const line of renderSudoModal(busy, width, theme)) {
        assert.ok(visibleWidth(line) <= width, `${width}: ${line}`);
      }
    }
  });

  test("shows the spec's content", () => {
    const out = text(renderSudoModal(makeState({ typedLength: 4 }), 80, theme));
    assert.ok(out.includes(msg.sudoTitle));
    assert.equal(msg.sudoTitle, "🔐 Sudo Authentication Required");
    assert.ok(out.includes("Command: sudo -A apt-get install -y curl"));
    assert.ok(out.includes("Shell command:"));
    assert.ok(out.includes("  sudo apt-get install -y curl"));
    assert.ok(out.includes("sudo asks: «[sudo] password for bob:»"));
    assert.ok(out.includes("Password: ••••"));
    assert.ok(
      out.includes(
        "Press Enter to submit, Escape to cancel · auto-cancel in 1:54",
      ),
    );
    assert.ok(
      out.includes(
        "Your password is secure and will not be visible to the AI model.",
      ),
    );
    assert.ok(!out.includes("Incorrect password"));
    assert.ok(!out.includes("more waiting"));
    assert.ok(!out.includes(CURSOR_MARKER), "no cursor when unfocused");
  });

  test("names what the checks could not clear (issue 20): pid, start, parent, why, command; escapes inert; at most four", () => {
    const one = {
      pid: 4242,
      command: "pi --model x \x1b[2Jfake",
      started: "14:02:11",
      parent: "100 (bash)",
      why: "hides its open files: it may hold this terminal",
    };
    const out = text(renderSudoModal(makeState({ unchecked: [one] }), 80, theme));
    assert.match(out, /⚠ Not checked: if you do not know one of these, press Escape\./);
    assert.match(out, /• 4242, started 14:02:11, parent 100 \(bash\)/);
    assert.match(out, /hides its open files: it may hold this terminal/);
    assert.match(out, /pi --model x/);
    assert.ok(!out.includes("\x1b[2J"), "an escape in a command line stays inert");
    const many = Array.from({ length: 6 }, (_, i) => ({ ...one, pid: 100 + i }));
    const six = text(renderSudoModal(makeState({ unchecked: many }), 80, theme));
    assert.match(six, /… and 2 more/);
    assert.ok(!text(renderSudoModal(makeState(), 80, theme)).includes("Not checked"));
  });

  test("quotes argv elements with spaces or shell specials", () => {
    const state = makeState({
      request: makeRequest({
        sudoArgv: ["sudo", "cp", "my file", "it's", "$HOME", "", "a;b"],
      }),
    });
    assert.ok(
      text(renderSudoModal(state, 120, theme)).includes(
        `Command: sudo cp 'my file' 'it'\\''s' '$HOME' '' 'a;b'`,
      ),
    );
  });

  test("wraps a long Command line whole, never cut with an ellipsis", () => {
    const lines = renderSudoModal(busy, 40, theme);
    const start = lines.findIndex((l) => l.includes("Command: "));
    assert.ok(start > 0 && lines[start + 1].includes("x"), "wrapped over several lines");
    assert.ok(!lines.some((l) => /x…/.test(l)), "nothing cut");
    assert.ok(
      lines.some((l) => l.includes("to read it all")),
      "too long for the window: it scrolls",
    );
    // Continuation lines are indented under the text, not at the margin.
    assert.ok(lines[start + 1].startsWith("│          "));
  });

  test("attempt line appears only from attempt 2", () => {
    const at = (attempt: number) =>
      text(
        renderSudoModal(
          makeState({ request: makeRequest({ attempt, maxAttempts: 3 }) }),
          80,
          theme,
        ),
      );
    assert.ok(!at(1).includes("Incorrect password"));
    assert.ok(at(2).includes("Incorrect password, try again (2/3)"));
    assert.ok(at(3).includes("Incorrect password, try again (3/3)"));
  });

  test("the attempt line uses the theme's error colour", () => {
    const tagged: ModalTheme = {
      fg: (c, s) => `<${c}>${s}</${c}>`,
      bold: (s) => s,
    };
    const state = makeState({ request: makeRequest({ attempt: 2 }) });
    assert.ok(
      text(renderSudoModal(state, 80, tagged)).includes(
        "<error>Incorrect password, try again (2/3)</error>",
      ),
    );
  });

  test("N more waiting", () => {
    const out = text(renderSudoModal(makeState({ waiting: 3 }), 80, theme));
    assert.ok(out.includes("3 more waiting"));
  });

  test("a 20-line shell command is never cut: a window of lines, ↑/↓ scroll through every one", () => {
    const script = (n: number) =>
      Array.from({ length: n }, (_, i) => `echo line-${i + 1}`).join("\n") + "\n";
    const render = (n: number, scroll = 0) =>
      text(
        renderSudoModal(
          makeState({
            request: makeRequest({ toolCommand: ["bash", "-c", script(n)] }),
            scroll,
          }),
          80,
          theme,
        ),
      );
    // Short: everything shows, no scroll line.
    const three = render(3);
    for (let i = 1; i <= 3; i++) assert.ok(three.includes(`echo line-${i}`));
    assert.ok(!three.includes("to read it all"));
    // Long: a window, and scrolling reaches every line; nothing says "more" and hides it.
    const seen = new Set<number>();
    for (let scroll = 0; scroll <= 30; scroll++) {
      const out = render(20, scroll);
      assert.match(out, /↑\/↓ to read it all: lines \d+–\d+ of 22/);
      for (const m of out.matchAll(/echo line-(\d+)/g)) seen.add(Number(m[1]));
    }
    assert.equal(seen.size, 20, `every line reachable: ${[...seen].sort((a, b) => a - b)}`);
    assert.ok(render(20).includes("Command: "), "sudo's own argv comes first");
  });

  test("a long sudo argv wraps whole (the Command: line is never cut)", () => {
    const argv = ["/usr/bin/sudo", "-A", "sh", "-c", "x".repeat(600) + " END"];
    const all = new Set<string>();
    for (let scroll = 0; scroll < 20; scroll++) {
      all.add(
        text(
          renderSudoModal(
            makeState({ request: makeRequest({ sudoArgv: argv }), scroll }),
            80,
            theme,
          ),
        ),
      );
    }
    assert.ok([...all].some((out) => out.includes("END")), "the end of the argv can be read");
    assert.ok(![...all].some((out) => /x…/.test(out)), "never cut with …");
  });

  test("no shell command section when unknown", () => {
    const state = makeState({ request: makeRequest({ toolCommand: null }) });
    assert.ok(!text(renderSudoModal(state, 80, theme)).includes("Shell"));
  });

  test("password dots keep to the width", () => {
    const lines = renderSudoModal(makeState({ typedLength: 500 }), 40, theme);
    assert.ok(bullets(lines) < 40);
    assert.ok(lines.some((l) => l.includes("Password: …•")));
  });
});

describe("what the password approves, and what root may run unshown (issue 22)", () => {
  test("says whether it approves the whole command or one sudo", () => {
    const call = text(
      renderSudoModal(makeState({ request: makeRequest({ covers: "call" }) }), 80, theme),
    );
    assert.match(
      call.replace(/[│\s]+/g, " "),
      /Approves: everything the shell command above runs until it ends; its later sudos do not ask again\./,
    );
    for (const covers of ["sudo", undefined] as const) {
      const one = text(renderSudoModal(makeState({ request: makeRequest({ covers }) }), 80, theme));
      assert.match(one, /Approves: this one sudo\./);
    }
  });

  test("each warning is drawn whole after the command, in the error colour, unsafe characters spelt out", () => {
    const long = "APT_CONFIG=/tmp/" + "z".repeat(150) + ".conf: set in root's environment";
    // The error colour as a real theme draws it: zero-width SGR.
    const red: ModalTheme = {
      fg: (c, s) => c === "error" ? `\x1b[31m${s}\x1b[39m` : s,
      bold: (s) => s,
    };
    const lines = renderSudoModal(
      makeState({
        request: makeRequest({ warnings: ["-E: root keeps the environment", long, "a\u001b[2Jb"] }),
      }),
      80,
      red,
    );
    const all = text(lines);
    assert.ok(all.includes("\x1b[31m‼ -E: root keeps the environment\x1b[39m"), "in red");
    // Wrapped, never cut: every character of the long warning is on some row.
    assert.equal([...all].filter((ch) => ch === "z").length, 150, "the long warning is whole");
    assert.ok(!all.includes("…"), "nothing cut");
    assert.match(all, /z\.conf: set in root's environment/);
    assert.ok(!all.includes("\x1b[2J"), "the warning's own escape is not drawn");
    assert.match(all, /‼ a\\x1b\[2Jb/, "it is spelt out");
    const commandRow = lines.findIndex((l) => l.includes("Command:"));
    const warningRow = lines.findIndex((l) => l.includes("‼ -E"));
    assert.ok(commandRow >= 0 && warningRow > commandRow, "after the command");
  });
});

describe("sanitising", () => {
  /** Any character the terminal would act on, or a bidi control. */
  const UNSAFE =
    // deno-lint-ignore no-control-regex -- looking for control characters
    /[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

  test("sanitizePrompt (the modal's prompt line) removes escapes, controls and bidi", () => {
    assert.equal(
      sanitizePrompt(
        "\x1b[31m[sudo]\x1b[0m pass\x07word\x1b]0;title\x07 for\u202e bob\u2066:\x7f\r\n",
      ),
      "[sudo] password for bob:",
    );
    assert.equal(sanitizePrompt("a\x1b]8;;http://x\x1b\\b\x9b2Jc"), "abc");
    assert.equal(sanitizePrompt("a\x1b(Bb\x1bcc\x85d"), "abcd");
    assert.equal(sanitizePrompt("senha para movída: 🔑"), "senha para movída: 🔑");
  });

  test("sanitizePrompt keeps at most 200 code points", () => {
    const out = sanitizePrompt("😀".repeat(500));
    assert.equal([...out].length, 200);
    assert.ok(out.endsWith("…"));
    assert.equal(sanitizePrompt("x".repeat(200)), "x".repeat(200));
  });

  test("prompt, argv and shell command never put controls on screen", () => {
    const evil = "\x1b[2J\x1b]52;c;Zm9v\x07\u202e\u2067\r\n\x85\x00";
    const state = makeState({
      request: makeRequest({
        sudoArgv: ["sudo", `rm${evil}`, "-rf", "/tmp/x"],
        toolCommand: ["bash", "-c", `echo hi${evil}; sudo rm -rf /tmp/x`],
        promptText: `[sudo] password:${evil}`,
      }),
    });
    for (const width of [40, 80, 120]) {
      for (const line of renderSudoModal(state, width, theme)) {
        // Strip the modal's own sequences; nothing else may remain.
        const own = line.replaceAll(CURSOR_MARKER, "")
          .replaceAll("\x1b[7m", "").replaceAll("\x1b[27m", "")
          .replaceAll("\x1b[0m", "");
        assert.ok(!UNSAFE.test(own), JSON.stringify(line));
      }
    }
    const out = text(renderSudoModal(state, 120, theme));
    // argv is shown exactly, with the hidden characters spelled out.
    assert.ok(
      out.includes(
        "Command: sudo $'rm\\x1b[2J\\x1b]52;c;Zm9v\\x07\\u202e\\u2067\\r\\n\\x85\\x00' -rf /tmp/x",
      ),
      out,
    );
    assert.ok(out.includes("«[sudo] password:»"));
  });

  test("shellQuote", () => {
    assert.equal(shellQuote("apt-get"), "apt-get");
    assert.equal(shellQuote("/etc/hosts"), "/etc/hosts");
    assert.equal(shellQuote("café"), "café");
    assert.equal(shellQuote("a b"), "'a b'");
    assert.equal(shellQuote("*"), "'*'");
    assert.equal(shellQuote("it's"), `'it'\\''s'`);
    assert.equal(shellQuote(""), "''");
    assert.equal(shellQuote("a\tb'\\"), `$'a\\tb\\'\\\\'`);
  });

  test("shellCommandText shows the -c script of a shell", () => {
    assert.equal(shellCommandText(["/bin/bash", "-c", "ls"]), "ls");
    assert.equal(shellCommandText(["bash", "-lc", "ls -l"]), "ls -l");
    assert.equal(shellCommandText(["bash", "-l", "-c", "id"]), "id");
    assert.equal(shellCommandText(["bash", "x.sh", "-c", "y"]), "bash x.sh -c y");
    assert.equal(shellCommandText(["sh", "my script"]), "sh 'my script'");
  });
});

describe("SudoModal keys", () => {
  test("Enter submits exactly the bytes typed", () => {
    const { modal, outcomes } = makeModal();
    for (const ch of "hunter2") modal.handleInput(ch);
    assert.equal(bullets(modal.render(80)), 7);
    modal.handleInput("\r");
    assert.deepEqual(submitted(outcomes), utf8("hunter2"));
    assert.ok(modal.resolved);
  });

  test("multi-byte input: one dot per code point, UTF-8 bytes out", () => {
    for (const chunks of [[..."sǎo😀"], ["sǎo😀"]]) {
      const { modal, outcomes } = makeModal();
      for (const c of chunks) modal.handleInput(c);
      assert.equal(bullets(modal.render(80)), 4);
      modal.handleInput("\r");
      assert.deepEqual(submitted(outcomes), utf8("sǎo😀"));
    }
  });

  test("Backspace removes a whole code point", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("sǎo😀");
    modal.handleInput("\x7f");
    assert.equal(bullets(modal.render(80)), 3);
    modal.handleInput("\x7f");
    modal.handleInput("\x1b[127u"); // Kitty Backspace
    modal.handleInput("\b");
    modal.handleInput("\x7f"); // on empty: no-op
    modal.handleInput("ok");
    modal.handleInput("\x1b[13u"); // Kitty Enter
    assert.deepEqual(submitted(outcomes), utf8("ok"));
  });

  test("Escape and Ctrl+C cancel", () => {
    for (const key of ["\x1b", "\x03", "\x1b[27u", "\x1b[99;5u"]) {
      const { modal, outcomes } = makeModal();
      modal.handleInput("secret");
      modal.handleInput(key);
      assert.deepEqual(outcomes, [{ kind: "cancel" }], JSON.stringify(key));
    }
  });

  test("Kitty CSI-u printable characters are typed", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("\x1b[97u");
    modal.handleInput("\x1b[97:65;2u"); // Shift+a with shifted key
    modal.handleInput("\x1b[128512u");
    modal.handleInput("\r");
    assert.deepEqual(submitted(outcomes), utf8("aA😀"));
  });

  test("other keys and control characters are ignored", () => {
    const { modal, outcomes } = makeModal();
    for (const key of ["\x1b[A", "\x1bOP", "\x00", "x\x01", "\x1bx"]) {
      modal.handleInput(key);
    }
    assert.equal(bullets(modal.render(80)), 0);
    modal.handleInput("\r");
    assert.deepEqual(submitted(outcomes), new Uint8Array());
  });

  test("paste: markers stripped, CR/LF and controls dropped, no submit", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("\x1b[200~pa\r\nss\x1bwö\x00rd😀\r\x1b[201~");
    assert.equal(outcomes.length, 0, "Enter inside a paste is text");
    modal.handleInput("!");
    modal.handleInput("\r");
    assert.deepEqual(submitted(outcomes), utf8("passwörd😀!"));
  });

  test("input beyond 1023 UTF-8 bytes is ignored", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("\x1b[200~" + "a".repeat(1022) + "\x1b[201~");
    modal.handleInput("é"); // 2 bytes: would make 1024
    modal.handleInput("😀"); // 4 bytes
    modal.handleInput("b"); // 1 byte: fits exactly
    modal.handleInput("c");
    modal.handleInput("\r");
    assert.deepEqual(submitted(outcomes), utf8("a".repeat(1022) + "b"));
  });

  test("a long paste is cut at the cap, and Backspace frees room", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("\x1b[200~" + "é".repeat(600) + "\x1b[201~");
    modal.handleInput("\x7f"); // 511 é (1022 bytes) → 510
    modal.handleInput("x😀y"); // x fits; 😀 does not, nor does what follows
    modal.handleInput("\r");
    const bytes = submitted(outcomes);
    assert.equal(bytes.length, 1021);
    assert.deepEqual(bytes, utf8("é".repeat(510) + "x"));
  });

  test("resolves once; later input, abort and dispose do nothing", () => {
    const { modal, outcomes, renders } = makeModal();
    modal.handleInput("pw");
    modal.handleInput("\r");
    const before = renders();
    modal.handleInput("more");
    modal.handleInput("\r");
    modal.handleInput("\x1b");
    modal.abort();
    modal.dispose();
    assert.equal(outcomes.length, 1);
    assert.equal(renders(), before);
    // The typed password was cleared after submit.
    assert.equal(bullets(modal.render(80)), 0);
  });

  test("abort() cancels", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("pw");
    modal.abort();
    assert.deepEqual(outcomes, [{ kind: "cancel" }]);
    assert.equal(bullets(modal.render(80)), 0);
  });

  test("dispose() stops the timer and cancels an open prompt", () => {
    const { modal, outcomes, renders } = makeModal();
    modal.dispose();
    assert.deepEqual(outcomes, [{ kind: "cancel" }]);
    mock.timers.tick(5000);
    assert.equal(renders(), 0);
  });

  test("the live waiting count is rendered", () => {
    let waiting = 0;
    const { modal } = makeModal({ waiting: () => waiting });
    assert.ok(!text(modal.render(80)).includes("waiting"));
    waiting = 2;
    assert.ok(text(modal.render(80)).includes("2 more waiting"));
    modal.dispose();
  });
});

describe("the reply to the agent (issue 36)", () => {
  const reply = (lines: readonly string[]) => lines.find((l) => l.includes(msg.replyLabel));

  test("the modal opens on the password, and names the key to the reply", () => {
    const { modal } = makeModal();
    const out = text(modal.render(80));
    assert.ok(out.includes(msg.replyHint));
    assert.equal(reply(modal.render(80)), undefined);
    modal.handleInput("a");
    assert.equal(bullets(modal.render(80)), 1, "the first keys are the password's");
  });

  test("Tab moves the keys to the reply, shown in clear; Escape declines with it", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("\t");
    for (const ch of "use the venv") modal.handleInput(ch);
    const lines = modal.render(80);
    assert.equal(bullets(lines), 0, "nothing reached the password");
    assert.ok(reply(lines)?.includes("use the venv"));
    assert.ok(text(lines).includes("Enter or Escape: decline and send the reply"));
    modal.handleInput("\x1b");
    assert.deepEqual(outcomes, [{ kind: "cancel", reply: "use the venv" }]);
  });

  test("Enter in the reply declines: it never submits the password", () => {
    const { modal, outcomes } = makeModal();
    for (const ch of "secret") modal.handleInput(ch);
    modal.handleInput("\t");
    modal.handleInput("n");
    modal.handleInput("o");
    modal.handleInput("\r");
    assert.deepEqual(outcomes, [{ kind: "cancel", reply: "no" }]);
  });

  test("the two fields never mix: Tab back, and Enter submits only the password", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("p");
    modal.handleInput("\t");
    modal.handleInput("\x1b[200~why not\r\n\x1b[201~");
    modal.handleInput("\x7f"); // Backspace removes the reply's last character, not the password's
    modal.handleInput("\t");
    modal.handleInput("w");
    assert.equal(bullets(modal.render(80)), 2);
    assert.ok(reply(modal.render(80))?.includes("why no"));
    modal.handleInput("\r");
    assert.deepEqual(submitted(outcomes), utf8("pw"));
  });

  test("Escape with an empty reply is a plain cancel", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("\t");
    modal.handleInput(" ");
    modal.handleInput("\x1b");
    assert.deepEqual(outcomes, [{ kind: "cancel" }]);
  });

  test("controls, escapes, bidi and invisible characters never enter it; it is capped", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("\t");
    for (const key of ["\x1b[A", "x\x01", "\u202e", "\u200b"]) modal.handleInput(key);
    modal.handleInput("\x1b[200~a\u202eb\x1b]0;t\x07c\x1b[201~");
    modal.handleInput("\x1b[200~" + "z".repeat(2 * MAX_REPLY_LENGTH) + "\x1b[201~");
    modal.handleInput("\x1b");
    const got = outcomes[0];
    assert.equal(got.kind, "cancel");
    const r = got.kind === "cancel" ? got.reply ?? "" : "";
    assert.ok(r.startsWith("ab]0;tc"), r);
    assert.ok(![...r].some((ch) => ch.codePointAt(0)! < 0x20 || ch === "\u202e"));
    assert.equal([...r].length, MAX_REPLY_LENGTH);
  });

  test("every line still fits the width with a long reply", () => {
    const { modal } = makeModal();
    modal.handleInput("\t");
    modal.handleInput("\x1b[200~" + "😀".repeat(100) + "\x1b[201~");
    for (const width of [20, 40, 80]) {
      for (const line of modal.render(width)) assert.ok(visibleWidth(line) <= width, line);
    }
  });
});

describe("countdown", () => {
  test("formatCountdown", () => {
    assert.equal(formatCountdown(114), "1:54");
    assert.equal(formatCountdown(120), "2:00");
    assert.equal(formatCountdown(59), "0:59");
    assert.equal(formatCountdown(0), "0:00");
    assert.equal(formatCountdown(-3), "0:00");
  });

  test("shows M:SS left from the deadline and ticks every second", () => {
    const { modal, clock, renders, outcomes } = makeModal();
    assert.ok(text(modal.render(80)).includes("auto-cancel in 1:54"));
    clock.now += 60_000;
    mock.timers.tick(1000);
    assert.equal(renders(), 1, "tick asks for a redraw");
    assert.ok(text(modal.render(80)).includes("auto-cancel in 0:54"));
    clock.now += 53_500; // 0.5 s left: rounds up
    assert.ok(text(modal.render(80)).includes("auto-cancel in 0:01"));
    assert.equal(outcomes.length, 0);
    modal.dispose();
  });

  test("expiry resolves cancel by itself", () => {
    const { modal, clock, outcomes } = makeModal();
    modal.handleInput("almost");
    clock.now += 114_000;
    mock.timers.tick(1000);
    assert.deepEqual(outcomes, [{ kind: "cancel" }]);
    mock.timers.tick(5000);
    assert.equal(outcomes.length, 1);
    modal.handleInput("\r");
    assert.equal(outcomes.length, 1);
  });
});

describe("showSudoModal", () => {
  type Custom = ModalUI["custom"];
  type Factory = Parameters<Custom>[0];
  type Options = Parameters<Custom>[1];

  /** A fake `ctx.ui` that runs the factory like pi's interactive mode. */
  function fakeUI(callFactory = true) {
    const seen: {
      modal?: MaskedPromptModal<PromptRequest>;
      options?: Options;
      renders: number;
      factoryCalls: number;
    } = { renders: 0, factoryCalls: 0 };
    const custom = (factory: Factory, options?: Options) => {
      seen.options = options;
      if (!callFactory) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        seen.factoryCalls++;
        const tui = { requestRender: () => seen.renders++ };
        // Only requestRender() of the TUI and fg/bold of the theme are used.
        const component = factory(
          tui as never,
          theme as never,
          undefined as never,
          resolve,
        );
        seen.modal = component as MaskedPromptModal<PromptRequest>;
      });
    };
    return { ui: { custom } as unknown as ModalUI, seen };
  }

  test("opens a centred overlay and returns the submitted password", async () => {
    const { ui, seen } = fakeUI();
    const pending = showSudoModal(ui, makeRequest(), new AbortController().signal);
    assert.equal(seen.options?.overlay, true);
    const overlay = seen.options?.overlayOptions;
    assert.equal(
      typeof overlay === "function" ? overlay().anchor : overlay?.anchor,
      "center",
    );
    assert.equal(seen.options?.blocked?.message, msg.sudoBlocked);
    assert.ok(seen.modal instanceof MaskedPromptModal);
    assert.ok(text(seen.modal.render(80)).includes(msg.sudoTitle));
    seen.modal.handleInput("pässword");
    seen.modal.handleInput("\r");
    const outcome = await pending;
    assert.equal(outcome.kind, "submit");
    assert.deepEqual(
      outcome.kind === "submit" ? outcome.password : undefined,
      utf8("pässword"),
    );
  });

  test("abort closes the modal with cancel", async () => {
    const { ui, seen } = fakeUI();
    const controller = new AbortController();
    const pending = showSudoModal(ui, makeRequest(), controller.signal);
    seen.modal?.handleInput("half");
    controller.abort();
    assert.deepEqual(await pending, { kind: "cancel" });
    assert.ok(seen.modal?.resolved);
  });

  test("an already-aborted signal never opens the modal", async () => {
    const { ui, seen } = fakeUI();
    const controller = new AbortController();
    controller.abort();
    assert.deepEqual(
      await showSudoModal(ui, makeRequest(), controller.signal),
      { kind: "cancel" },
    );
    assert.equal(seen.factoryCalls, 0);
  });

  test("with `elsewhere`, its look is drawn there and pi's pane is titled for it", async () => {
    const { ui, seen } = fakeUI();
    const { elsewhere, drawn } = drawingElsewhere();
    const signal = new AbortController().signal;
    assert.deepEqual(await showSudoModal(ui, makeRequest(), signal, elsewhere), { kind: "cancel" });
    assert.ok(text(drawn()).includes(msg.sudoTitle), text(drawn()));
    assert.ok(text(seen.modal?.render(80) ?? []).includes(msg.sudoElsewhereTitle));
  });

  /** The fake UI with pi-tui's input listeners: `type` says whether a listener consumed the key. */
  function keyedUI() {
    const { ui, seen } = fakeUI();
    const listeners = new Set<(data: string) => { consume?: boolean } | undefined>();
    const notices: string[] = [];
    const keyed = Object.assign(ui, {
      onTerminalInput: (l: (data: string) => { consume?: boolean } | undefined) => {
        listeners.add(l);
        return () => void listeners.delete(l);
      },
      notify: (message: string) => void notices.push(message),
    }) as ModalUI;
    const type = (data: string) => [...listeners].some((l) => l(data)?.consume === true);
    return { ui: keyed, seen, type, notices, listening: () => listeners.size };
  }

  /** Opens a modal, draws it, types `typed` into it (when given), then withdraws it for `reason`. */
  async function withdraw(
    { ui, seen }: ReturnType<typeof keyedUI>,
    typed?: string,
    reason?: string,
  ): Promise<void> {
    const controller = new AbortController();
    const pending = showSudoModal(ui, makeRequest(), controller.signal);
    seen.modal?.render(80);
    if (typed !== undefined) seen.modal?.handleInput(typed);
    controller.abort(reason);
    await pending;
  }

  describe("keys typed after a modal closed without the human", () => {
    beforeEach(() => {
      mock.timers.reset();
      mock.timers.enable({ apis: ["setInterval", "setTimeout"] });
    });

    test("a withdrawn modal: the rest of the password is dropped until Enter, then keys reach pi", async () => {
      const keyed = keyedUI();
      const { type, notices, listening } = keyed;
      await withdraw(keyed, "hun");
      assert.equal(type("ter"), true, "the rest of the password is dropped");
      assert.equal(type("2"), true);
      assert.equal(type("\r"), true, "the Enter is dropped too");
      assert.equal(listening(), 0);
      assert.equal(type("hello"), false, "after the Enter, keys reach pi again");
      assert.deepEqual(notices, ["keys typed after the prompt closed were dropped"]);
    });

    test("the drop ends when the typing pauses, at a key that is not text, or when a new modal opens", async () => {
      const keyed = keyedUI();
      const { ui, seen, type } = keyed;
      await withdraw(keyed);
      assert.equal(type("a"), true);
      mock.timers.tick(KEY_DROP.idleMs - 1);
      assert.equal(type("b"), true, "each key extends the pause");
      mock.timers.tick(KEY_DROP.idleMs);
      assert.equal(type("c"), false, "a pause ends the drop");
      await withdraw(keyed);
      assert.equal(type("x"), true);
      assert.equal(type("\x1b"), false, "Escape ends the drop and reaches pi");
      assert.equal(type("y"), false);
      await withdraw(keyed);
      const next = showSudoModal(ui, makeRequest(), new AbortController().signal);
      assert.equal(type("z"), false, "a new modal takes the keys at once");
      seen.modal?.handleInput("\x1b");
      await next;
    });

    test("the rest of a password typed into a withdrawn modal is dropped even when another modal opens", async () => {
      const keyed = keyedUI();
      const { ui, seen, type, notices } = keyed;
      await withdraw(keyed, "hun");
      // The agent had queued a second request: its modal opens at once.
      let answer: unknown;
      const next = showSudoModal(ui, makeRequest(), new AbortController().signal)
        .then((outcome) => answer = outcome);
      const second = seen.modal;
      second?.render(80);
      /** pi's routing: a key no listener consumed goes to the focused modal. */
      const press = (data: string) => type(data) || second?.handleInput(data);
      const says = () => second?.render(80).join("\n").includes(msg.keysDropped);
      assert.equal(says(), true, "the second modal says keys are being dropped");
      for (const key of ["ter", "2", "\r"]) press(key);
      assert.equal(says(), false, "and stops saying it once the drop ended");
      await Promise.resolve();
      assert.equal(answer, undefined, "the rest and its Enter did not reach the second modal");
      assert.equal(second?.resolved, false);
      assert.deepEqual(notices, ["keys typed after the prompt closed were dropped"]);
      press("pw");
      press("\r");
      const outcome = await next as { kind: string; password?: Uint8Array };
      assert.equal(outcome.kind, "submit");
      assert.equal(
        new TextDecoder().decode(outcome.password),
        "pw",
        "keys after the Enter are its own",
      );
    });

    test("a drop that holds through a second modal also holds through a third when the second is withdrawn too", async () => {
      const keyed = keyedUI();
      const { type } = keyed;
      await withdraw(keyed, "hun");
      // The agent withdraws the second request as well, before the human pauses.
      await withdraw(keyed);
      const third = showSudoModal(keyed.ui, makeRequest(), new AbortController().signal);
      assert.equal(type("ter2"), true, "the rest of the password never reaches the third modal");
      keyed.seen.modal?.handleInput("\x1b");
      await third;
    });

    test("a modal withdrawn with nothing typed: a pause in typing counts too", async () => {
      const { ui, seen, type } = keyedUI();
      const first = new AbortController();
      const pending = showSudoModal(ui, makeRequest(), first.signal);
      seen.modal?.render(80);
      seen.modal?.handleInput("a");
      seen.modal?.handleInput("\x7f"); // Backspace: typed, then erased, just now
      first.abort();
      await pending;
      const next = showSudoModal(ui, makeRequest(), new AbortController().signal);
      assert.equal(type("b"), true, "the human was typing: the drop holds through the new modal");
      seen.modal?.handleInput("\x1b");
      await next;
    });

    test("a modal aborted before it was drawn, or because pi was stopped, drops nothing", async () => {
      const keyed = keyedUI();
      const { ui, type, listening } = keyed;
      const unseen = new AbortController();
      const pending = showSudoModal(ui, makeRequest(), unseen.signal);
      unseen.abort();
      await pending;
      assert.equal(listening(), 0);
      await withdraw(keyed, undefined, DENY_REASONS.PI_STOPPED);
      assert.equal(listening(), 0);
      assert.equal(type("fg"), false);
    });

    test("a modal closed because pi's session closes (quit, reload) drops nothing", async () => {
      const keyed = keyedUI();
      const { type, listening } = keyed;
      await withdraw(keyed, undefined, DENY_REASONS.SESSION_CLOSED);
      assert.equal(listening(), 0);
      assert.equal(type("/reload"), false);
    });

    test("a modal the human closed (Enter or Escape) drops nothing", async () => {
      const { ui, seen, type, listening } = keyedUI();
      const pending = showSudoModal(ui, makeRequest(), new AbortController().signal);
      seen.modal?.handleInput("pw");
      seen.modal?.handleInput("\r");
      await pending;
      assert.equal(listening(), 0);
      assert.equal(type("next"), false);
      const escaped = showSudoModal(ui, makeRequest(), new AbortController().signal);
      seen.modal?.handleInput("\x1b");
      await escaped;
      assert.equal(listening(), 0);
    });
  });

  test("RPC mode (factory never called) resolves cancel", async () => {
    const { ui } = fakeUI(false);
    assert.deepEqual(
      await showSudoModal(ui, makeRequest(), new AbortController().signal),
      { kind: "cancel" },
    );
  });
});
