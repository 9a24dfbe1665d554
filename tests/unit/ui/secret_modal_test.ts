/**
 * Unit tests for the "🔑 Secret request" modal of `pi-secret-run`: content,
 * widths, the allowlist warning, the unverified label, keys, countdown and the
 * `ui.custom` wiring. The shared input machinery is covered in depth by
 * modal_test.ts; this checks that the secret modal gets all of it.
 *
 * Run: node --test tests/unit/ui/secret_modal_test.ts (Node >= 22.18), or
 * deno test -A tests/unit/ui/secret_modal_test.ts.
 * Timers are mocked in every test, so no real interval is left running.
 */

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import { CURSOR_MARKER, visibleWidth } from "@earendil-works/pi-tui";
import { showSecretModal } from "../../../extension/ui/modal.ts";
import { MaskedPromptModal, type ModalUI } from "../../../extension/ui/masked_prompt.ts";
import {
  renderSecretModal,
  SECRET_LOOK,
  type SecretModalState,
} from "../../../extension/ui/secret_modal.ts";
import { renderSudoModal, type SudoModalState } from "../../../extension/ui/sudo_modal.ts";
import type { ModalTheme } from "../../../extension/ui/modal_frame.ts";
import type { PromptOutcome, SecretPromptRequest } from "../../../askpass/prompter.ts";
import { msg } from "../../../shared/i18n/locale.ts";
import { drawingElsewhere } from "../../helpers/drawing_elsewhere.ts";

const plain: ModalTheme = { fg: (_c, s) => s, bold: (s) => s };
/** Marks every colour, so tests can see which text gets which colour. */
const tagged: ModalTheme = { fg: (c, s) => `<${c}>${s}</${c}>`, bold: (s) => `<b>${s}</b>` };
const NOW = 1_700_000_000_000;
/** The inverse-video cursor block the input line always ends with. */
const CURSOR_BLOCK = "\x1b[7m \x1b[27m";
const NOTE = "The secret goes to this command's stdin and will not be visible to the AI model.";

beforeEach(() => mock.timers.enable({ apis: ["setInterval"] }));
afterEach(() => mock.timers.reset());

function makeRequest(overrides: Partial<SecretPromptRequest> = {}): SecretPromptRequest {
  return {
    requestId: "0123456789abcdef0123456789abcdef",
    argv: ["/usr/bin/keepassxc-cli", "show", "-q", "-t", "db.kdbx", "npm"],
    cwd: "/home/bob/project",
    label: "KeePassXC master password",
    allowlisted: true,
    traceable: false,
    deadline: NOW + 114_000,
    waiting: () => 0,
    recheck: () => Promise.resolve(true),
    ...overrides,
  };
}

function makeState(overrides: Partial<SecretModalState> = {}): SecretModalState {
  return {
    request: makeRequest(),
    typedLength: 0,
    secondsLeft: 114,
    waiting: 0,
    focused: false,
    ...overrides,
  };
}

function makeModal(overrides: Partial<SecretPromptRequest> = {}) {
  const clock = { now: NOW };
  const outcomes: PromptOutcome[] = [];
  let renders = 0;
  const modal = new MaskedPromptModal({
    request: makeRequest(overrides),
    theme: plain,
    draw: SECRET_LOOK.draw,
    requestRender: () => renders++,
    done: (o) => outcomes.push(o),
    now: () => clock.now,
  });
  return { modal, outcomes, clock, renders: () => renders };
}

function text(lines: readonly string[]): string {
  return lines.join("\n");
}

/** Box content only: borders removed, lines trimmed on the right. */
function content(lines: readonly string[]): string[] {
  return lines.slice(1, -1).map((l) => l.replace(/^│ /, "").replace(/ *│$/, ""));
}

function bullets(lines: readonly string[]): number {
  const line = lines.find((l) => l.includes("Secret: "));
  assert.ok(line, "secret line rendered");
  return [...line].filter((ch) => ch === "•").length;
}

function submitted(outcomes: PromptOutcome[]): Uint8Array {
  assert.equal(outcomes.length, 1);
  const [outcome] = outcomes;
  assert.equal(outcome.kind, "submit");
  return outcome.kind === "submit" ? outcome.password : new Uint8Array();
}

const utf8 = (s: string) => new TextEncoder().encode(s);

describe("renderSecretModal", () => {
  const busy = makeState({
    request: makeRequest({
      argv: ["/opt/tools/" + "x".repeat(150), "--db", "/home/bob/My Passwords.kdbx", "it's"],
      label: "A very long label that goes on ".repeat(12),
      allowlisted: false,
    }),
    typedLength: 400,
    waiting: 2,
    focused: true,
  });

  for (const width of [40, 80, 120]) {
    test(`no line exceeds width ${width}`, () => {
      for (const state of [busy, makeState()]) {
        const lines = renderSecretModal(state, width, plain);
        for (const line of lines) {
          assert.ok(
            visibleWidth(line) <= width,
            `${visibleWidth(line)} > ${width}: ${JSON.stringify(line)}`,
          );
        }
        assert.match(lines[0], /^╭─+╮$/);
        assert.match(lines.at(-1) ?? "", /^╰─+╯$/);
        assert.ok(lines.slice(1, -1).every((l) => l.startsWith("│ ") && l.endsWith(" │")));
      }
      const out = text(renderSecretModal(busy, width, plain));
      assert.ok(out.includes(CURSOR_MARKER), "cursor when focused");
      assert.ok(out.includes("(unverified)"), "the marker survives a cut label");
      assert.ok(out.includes("more waiting"));
    });
  }

  test("tiny widths never overflow either", () => {
    for (const width of [1, 5, 11, 12, 20]) {
      for (const line of renderSecretModal(busy, width, plain)) {
        assert.ok(visibleWidth(line) <= width, `${width}: ${line}`);
      }
    }
  });

  test("shows the spec's content, in order", () => {
    const lines = content(renderSecretModal(makeState({ typedLength: 5 }), 120, plain));
    assert.deepEqual(lines.map((l) => l.replace(CURSOR_BLOCK, "")), [
      msg.secretTitle,
      "",
      "Command: /usr/bin/keepassxc-cli show -q -t db.kdbx npm",
      "In: /home/bob/project",
      "Label: «KeePassXC master password» (unverified)",
      "",
      "Secret: •••••",
      msg.replyHint,
      "",
      "Press Enter to submit, Escape to cancel · auto-cancel in 1:54",
      NOTE,
    ]);
  });

  test("the title is its own, not the sudo modal's", () => {
    assert.equal(msg.secretTitle, "🔑 Secret request");
    assert.notEqual(msg.secretTitle, msg.sudoTitle);
    const out = text(renderSecretModal(makeState(), 80, plain));
    assert.ok(out.includes(msg.secretTitle));
    assert.ok(!out.includes(msg.sudoTitle));
    assert.ok(!out.includes("Sudo"));
    assert.ok(!out.includes("Password:"), "the input is called Secret");
    const sudoState: SudoModalState = {
      request: {
        sudoArgv: ["sudo", "true"],
        toolCommand: null,
        promptText: "[sudo] password:",
        attempt: 1,
        maxAttempts: 3,
      },
      typedLength: 0,
      secondsLeft: 114,
      waiting: 0,
      focused: false,
    };
    assert.notEqual(
      renderSudoModal(sudoState, 80, plain)[1],
      renderSecretModal(makeState(), 80, plain)[1],
      "first content lines differ",
    );
  });

  test("the working directory is shown, quoted, controls escaped", () => {
    const out = text(renderSecretModal(makeState(), 80, plain));
    assert.match(out, /In: \/home\/bob\/project/);
    const odd = text(
      renderSecretModal(makeState({ request: makeRequest({ cwd: "/tmp/a b\x1b[2J" }) }), 80, plain),
    );
    assert.ok(!odd.includes("\x1b[2J"), "no escape reaches the screen");
    assert.match(odd, /In: \$'\/tmp\/a b/);
  });

  test("the warning appears iff not allowlisted, in the error colour", () => {
    const render = (allowlisted: boolean, theme = tagged) =>
      text(renderSecretModal(makeState({ request: makeRequest({ allowlisted }) }), 120, theme));
    assert.equal(
      msg.notAllowlistedWarning,
      "⚠ Not on the allowlist: this command may show the agent what you type.",
    );
    assert.ok(render(false).includes(`<error>${msg.notAllowlistedWarning}</error>`));
    assert.ok(!render(true).includes("allowlist"));
    assert.ok(!render(true).includes("⚠"));
    // Wrapped at a narrow width, every piece of it is still in the error
    // colour (a zero-width ANSI theme here, so the tags do not take room).
    const RED = "\x1b[31m";
    const ansi: ModalTheme = {
      fg: (c, s) => c === "error" ? `${RED}${s}\x1b[39m` : s,
      bold: (s) => s,
    };
    const narrow = content(
      renderSecretModal(makeState({ request: makeRequest({ allowlisted: false }) }), 40, ansi),
    );
    const first = narrow.findIndex((l) => l.includes("⚠"));
    const secret = narrow.findIndex((l) => l.startsWith("Secret: "));
    const pieces = narrow.slice(first, secret - 1);
    assert.ok(pieces.length >= 2, JSON.stringify(narrow));
    for (const line of pieces) {
      assert.ok(line.startsWith(RED) && !line.includes("…"), JSON.stringify(line));
    }
    assert.equal(
      pieces.map((l) => l.replaceAll(RED, "").replaceAll("\x1b[39m", "").trim()).join(" "),
      msg.notAllowlistedWarning,
    );
  });

  test("the trace line appears iff the agent can trace the command (no Yama, or ptrace_scope 0), in the warning colour", () => {
    const render = (traceable: boolean) =>
      text(renderSecretModal(makeState({ request: makeRequest({ traceable }) }), 120, tagged));
    assert.ok(render(true).includes(`<warning>${msg.traceableWarning}</warning>`), render(true));
    assert.ok(!render(false).includes("trace"));
    assert.match(msg.traceableWarning, /the agent can trace it and read the secret/);
  });

  test("the warning sits between the label and the secret field", () => {
    const lines = content(
      renderSecretModal(makeState({ request: makeRequest({ allowlisted: false }) }), 120, plain),
    );
    const label = lines.findIndex((l) => l.startsWith("Label: "));
    const warning = lines.indexOf(msg.notAllowlistedWarning);
    const secret = lines.findIndex((l) => l.startsWith("Secret: "));
    assert.ok(label < warning && warning < secret, JSON.stringify(lines));
  });

  test("the label is framed, marked unverified, and styled apart", () => {
    const out = text(renderSecretModal(makeState(), 120, tagged));
    assert.ok(
      out.includes(
        "<muted>Label: </muted><warning>«KeePassXC master password»</warning>" +
          " <b><warning>(unverified)</warning></b>",
      ),
      out,
    );
  });

  test("the label is sanitised: no escapes, controls or bidi reach the screen", () => {
    const UNSAFE =
      // deno-lint-ignore no-control-regex -- looking for control characters
      /[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;
    const evil = "\x1b[2J\x1b]52;c;Zm9v\x07\u202e\u2067\r\n\x85\x00\x7f";
    const state = makeState({
      request: makeRequest({
        label: `\x1b[32mKeePass\x1b[0m${evil} master\u200b password\n\nCommand: rm -rf /`,
        argv: ["/usr/bin/cat", `a${evil}`],
      }),
    });
    for (const width of [40, 80, 120]) {
      for (const line of renderSecretModal(state, width, plain)) {
        const own = line.replaceAll(CURSOR_MARKER, "")
          .replaceAll("\x1b[7m", "").replaceAll("\x1b[27m", "");
        assert.ok(!UNSAFE.test(own), JSON.stringify(line));
      }
    }
    const lines = content(renderSecretModal(state, 120, plain));
    const label = lines.find((l) => l.startsWith("Label: "));
    assert.equal(
      label,
      "Label: «KeePass master passwordCommand: rm -rf /» (unverified)",
    );
    // The forged "Command:" never starts a line of its own.
    assert.equal(lines.filter((l) => l.startsWith("Command: ")).length, 1);
    // argv is shown exactly, hidden characters spelled out, as for sudo.
    assert.ok(
      lines.includes(
        "Command: /usr/bin/cat $'a\\x1b[2J\\x1b]52;c;Zm9v\\x07\\u202e\\u2067\\r\\n\\x85\\x00\\x7f'",
      ),
      JSON.stringify(lines),
    );
  });

  test("a long label wraps indented, is cut with …, and keeps the marker", () => {
    const state = makeState({
      request: makeRequest({ label: "Command: fake line ".repeat(20) }),
    });
    const lines = content(renderSecretModal(state, 60, plain));
    const start = lines.findIndex((l) => l.startsWith("Label: "));
    const end = lines.findIndex((l) => l.startsWith("Secret: "));
    const label = lines.slice(start, end - 1);
    assert.ok(label.length >= 3 && label.length <= 4, JSON.stringify(label));
    for (const l of label.slice(1)) assert.ok(l.startsWith("       "), JSON.stringify(l));
    assert.ok(label.some((l) => l.includes("…")));
    assert.ok(label.at(-1)?.includes("(unverified)"));
  });

  test("argv is quoted like the sudo modal's", () => {
    const state = makeState({
      request: makeRequest({ argv: ["/usr/bin/cp", "my file", "it's", "$HOME", "", "a;b"] }),
    });
    assert.ok(
      text(renderSecretModal(state, 120, plain)).includes(
        `Command: /usr/bin/cp 'my file' 'it'\\''s' '$HOME' '' 'a;b'`,
      ),
    );
  });

  test("masked input: one • per code point, tail kept at narrow widths", () => {
    assert.equal(bullets(renderSecretModal(makeState({ typedLength: 7 }), 80, plain)), 7);
    const lines = renderSecretModal(makeState({ typedLength: 500 }), 40, plain);
    assert.ok(bullets(lines) < 40);
    assert.ok(lines.some((l) => l.includes("Secret: …•")));
  });

  test("countdown text", () => {
    for (const [seconds, shown] of [[114, "1:54"], [120, "2:00"], [9, "0:09"], [0, "0:00"]]) {
      assert.ok(
        text(renderSecretModal(makeState({ secondsLeft: seconds as number }), 80, plain))
          .includes(`auto-cancel in ${shown}`),
      );
    }
  });

  test("N more waiting only when others wait, and no attempt line", () => {
    assert.ok(!text(renderSecretModal(makeState(), 80, plain)).includes("waiting"));
    const out = text(renderSecretModal(makeState({ waiting: 3 }), 80, tagged));
    assert.ok(out.includes("<warning>3 more waiting</warning>"));
    assert.ok(!out.includes("Incorrect"));
    assert.ok(!out.includes("try again"));
  });

  test("no cursor marker when unfocused", () => {
    assert.ok(!text(renderSecretModal(makeState(), 80, plain)).includes(CURSOR_MARKER));
  });
});

describe("SecretModal keys", () => {
  test("is the masked-input component, drawn with the secret look", () => {
    const { modal } = makeModal();
    assert.ok(text(modal.render(80)).includes(msg.secretTitle));
    modal.dispose();
  });

  test("Enter submits exactly the bytes typed, never rendered", () => {
    const { modal, outcomes } = makeModal();
    for (const ch of "hunter2") modal.handleInput(ch);
    modal.handleInput("sǎo😀");
    const out = text(modal.render(80));
    assert.equal(bullets(modal.render(80)), 11);
    assert.ok(!out.includes("hunter2") && !out.includes("sǎo"));
    modal.handleInput("\r");
    assert.deepEqual(submitted(outcomes), utf8("hunter2sǎo😀"));
    assert.ok(modal.resolved);
  });

  test("Backspace, paste and the byte cap work as in the sudo modal", () => {
    const { modal, outcomes } = makeModal();
    modal.handleInput("\x1b[200~pa\r\nss\x1bwö\x00rd😀\r\x1b[201~");
    assert.equal(outcomes.length, 0, "Enter inside a paste is text");
    modal.handleInput("\x7f");
    modal.handleInput("\x1b[200~" + "a".repeat(2000) + "\x1b[201~");
    modal.handleInput("\x1b[13u"); // Kitty Enter
    const bytes = submitted(outcomes);
    assert.equal(bytes.length, 1023);
    assert.deepEqual(bytes.subarray(0, 9), utf8("passwörd"));
  });

  test("Escape and Ctrl+C cancel", () => {
    for (const key of ["\x1b", "\x03", "\x1b[27u", "\x1b[99;5u"]) {
      const { modal, outcomes } = makeModal();
      modal.handleInput("secret");
      modal.handleInput(key);
      assert.deepEqual(outcomes, [{ kind: "cancel" }], JSON.stringify(key));
      assert.equal(bullets(modal.render(80)), 0, "typed text cleared");
    }
  });

  test("resolves once; later input, abort and dispose do nothing", () => {
    const { modal, outcomes, renders } = makeModal();
    modal.handleInput("pw");
    modal.handleInput("\r");
    const before = renders();
    modal.handleInput("more");
    modal.handleInput("\x1b");
    modal.abort();
    modal.dispose();
    assert.equal(outcomes.length, 1);
    assert.equal(renders(), before);
  });

  test("the countdown ticks, then cancels at the deadline", () => {
    const { modal, clock, renders, outcomes } = makeModal();
    assert.ok(text(modal.render(80)).includes("auto-cancel in 1:54"));
    clock.now += 60_000;
    mock.timers.tick(1000);
    assert.equal(renders(), 1);
    assert.ok(text(modal.render(80)).includes("auto-cancel in 0:54"));
    modal.handleInput("almost");
    clock.now += 54_000;
    mock.timers.tick(1000);
    assert.deepEqual(outcomes, [{ kind: "cancel" }]);
    modal.handleInput("\r");
    assert.equal(outcomes.length, 1);
  });

  test("dispose() stops the timer and cancels", () => {
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
    waiting = 4;
    assert.ok(text(modal.render(80)).includes("4 more waiting"));
    modal.dispose();
  });
});

describe("showSecretModal", () => {
  type Custom = ModalUI["custom"];
  type Factory = Parameters<Custom>[0];
  type Options = Parameters<Custom>[1];

  function fakeUI(callFactory = true) {
    const seen: {
      modal?: MaskedPromptModal<SecretPromptRequest>;
      options?: Options;
      factoryCalls: number;
    } = {
      factoryCalls: 0,
    };
    const custom = (factory: Factory, options?: Options) => {
      seen.options = options;
      if (!callFactory) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        seen.factoryCalls++;
        const tui = { requestRender: () => {} };
        const component = factory(tui as never, plain as never, undefined as never, resolve);
        seen.modal = component as MaskedPromptModal<SecretPromptRequest>;
      });
    };
    return { ui: { custom } as unknown as ModalUI, seen };
  }

  test("opens a centred auth overlay and returns the submitted secret", async () => {
    const { ui, seen } = fakeUI();
    const pending = showSecretModal(ui, makeRequest(), new AbortController().signal);
    assert.equal(seen.options?.overlay, true);
    const overlay = seen.options?.overlayOptions;
    assert.equal(typeof overlay === "function" ? overlay().anchor : overlay?.anchor, "center");
    assert.deepEqual(seen.options?.blocked, { kind: "auth", message: msg.secretBlocked });
    assert.ok(seen.modal instanceof MaskedPromptModal);
    assert.ok(text(seen.modal.render(80)).includes(msg.secretTitle));
    seen.modal.handleInput("sécret");
    seen.modal.handleInput("\r");
    const outcome = await pending;
    assert.equal(outcome.kind, "submit");
    assert.deepEqual(outcome.kind === "submit" ? outcome.password : undefined, utf8("sécret"));
  });

  test("abort closes the modal with cancel", async () => {
    const { ui, seen } = fakeUI();
    const controller = new AbortController();
    const pending = showSecretModal(ui, makeRequest(), controller.signal);
    seen.modal?.handleInput("half");
    controller.abort();
    assert.deepEqual(await pending, { kind: "cancel" });
    assert.ok(seen.modal?.resolved);
  });

  test("Escape resolves cancel", async () => {
    const { ui, seen } = fakeUI();
    const pending = showSecretModal(ui, makeRequest(), new AbortController().signal);
    seen.modal?.handleInput("x");
    seen.modal?.handleInput("\x1b");
    assert.deepEqual(await pending, { kind: "cancel" });
  });

  test("an already-aborted signal never opens the modal", async () => {
    const { ui, seen } = fakeUI();
    const controller = new AbortController();
    controller.abort();
    assert.deepEqual(await showSecretModal(ui, makeRequest(), controller.signal), {
      kind: "cancel",
    });
    assert.equal(seen.factoryCalls, 0);
  });

  test("RPC mode (factory never called) resolves cancel", async () => {
    const { ui } = fakeUI(false);
    assert.deepEqual(
      await showSecretModal(ui, makeRequest(), new AbortController().signal),
      { kind: "cancel" },
    );
  });

  test("with `elsewhere`, its look is drawn there and pi's pane is titled for it", async () => {
    const { ui, seen } = fakeUI();
    const { elsewhere, drawn } = drawingElsewhere();
    const signal = new AbortController().signal;
    assert.deepEqual(await showSecretModal(ui, makeRequest(), signal, elsewhere), {
      kind: "cancel",
    });
    assert.ok(text(drawn()).includes(msg.secretTitle), text(drawn()));
    assert.ok(text(seen.modal?.render(80) ?? []).includes(msg.secretElsewhereTitle));
  });
});
