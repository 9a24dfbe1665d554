/**
 * Proof that the tmux + faux-provider harness drives the real pi TUI:
 * a bash-tool override with a spawnHook, a `user_bash` handler, an overlay
 * opened from a tool's execute(), and print mode.
 *
 * Run: node_modules/.bin/node --test tests/pi/harness_test.ts
 *
 * @module
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FauxStep } from "./faux_provider.ts";
import { preparePi, readSessions, runPiPrint, startPi } from "./pi_runner.ts";

/**
 * Inline test extension: overrides `bash` (spawnHook injects MARKER=hello),
 * shows an overlay "MODAL-OPEN" before each tool call (Enter closes it), and
 * injects the same env into `!` commands through `user_bash`.
 */
const TEST_EXTENSION = `
import {
  createBashToolDefinition,
  createLocalBashOperations,
  type ExtensionAPI,
} from "@earendil-works/pi-coding-agent";
import { Key, matchesKey, type Component } from "@earendil-works/pi-tui";

const inject = (env: NodeJS.ProcessEnv) => ({ ...env, MARKER: "hello" });

class Modal implements Component {
  private done: (r: string) => void;
  constructor(done: (r: string) => void) { this.done = done; }
  render(width: number): string[] {
    return ["+-- MODAL-OPEN --+", "| enter: close   |", "+----------------+"]
      .map((l) => l.slice(0, width));
  }
  handleInput(data: string): void {
    if (matchesKey(data, Key.enter)) this.done("enter");
  }
  invalidate(): void {}
}

export default function (pi: ExtensionAPI) {
  const proto = createBashToolDefinition(process.cwd());
  pi.registerTool({
    ...proto,
    async execute(id, params, signal, onUpdate, ctx) {
      if (ctx.hasUI) {
        await ctx.ui.custom<string>((_tui, _theme, _kb, done) => new Modal(done), {
          overlay: true,
          overlayOptions: { anchor: "center", width: 24 },
        });
      }
      const tool = createBashToolDefinition(ctx.cwd, {
        spawnHook: ({ command, cwd, env }) => ({ command, cwd, env: inject(env) }),
      });
      return tool.execute(id, params, signal, onUpdate, ctx);
    },
  });
  pi.on("user_bash", () => {
    const local = createLocalBashOperations();
    return {
      operations: {
        exec: (command, cwd, options) =>
          local.exec(command, cwd, { ...options, env: inject(process.env) }),
      },
    };
  });
}
`;

const SCRIPT: FauxStep[] = [
  { bash: 'echo "marker=$MARKER"' },
  { text: "all done" },
];

let extDir = "";
let extPath = "";

before(async () => {
  extDir = await mkdtemp(join(tmpdir(), "pi-harness-ext-"));
  extPath = join(extDir, "marker_ext.ts");
  await writeFile(extPath, TEST_EXTENSION);
});

after(async () => {
  await rm(extDir, { recursive: true, force: true });
});

test("interactive pi in tmux: bash override, overlay, user_bash", {
  timeout: 90_000,
}, async (t) => {
  const pi = await startPi({
    script: SCRIPT,
    extensions: [extPath],
    // A leaked outer value would show up as "marker=outer".
    env: { MARKER: "outer" },
  });
  t.diagnostic(`pi ready after ${pi.startupMs} ms`);
  try {
    const term = pi.tmux;
    await term.sendText("go");
    await term.sendKeys("Enter");

    const modal = await term.waitFor("MODAL-OPEN", 15_000);
    assert.doesNotMatch(modal, /^\s*marker=/m, "command ran before the modal closed");
    await term.sendKeys("Enter");
    await term.waitForGone("MODAL-OPEN", 5_000);

    await term.waitFor(/^\s*marker=hello\s*$/m, 15_000);
    await term.waitFor(/^\s*all done\s*$/m, 15_000);

    await term.sendText('!echo "bang=$MARKER"');
    await term.sendKeys("Enter");
    await term.waitFor(/^\s*bang=hello\s*$/m, 15_000);

    const screen = await term.capture({ history: true });
    assert.doesNotMatch(screen, /=outer/);
    const sessions = await pi.readSessions();
    assert.match(sessions, /marker=hello/);
    assert.match(sessions, /bang=hello/);
  } finally {
    await pi.close();
  }
});

test("print mode: pi -p exits 0 within the deadline", {
  timeout: 60_000,
}, async () => {
  const launch = await preparePi({
    script: SCRIPT,
    extensions: [extPath],
    env: { MARKER: "outer" },
  });
  try {
    const started = Date.now();
    const r = await runPiPrint(launch, "go", 30_000);
    const detail = `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
    assert.equal(r.timedOut, false, `pi -p timed out\n${detail}`);
    assert.equal(r.code, 0, `pi -p exited ${r.code}\n${detail}`);
    assert.match(r.stdout, /all done/);
    assert.ok(Date.now() - started < 30_000);
    assert.match(await readSessions(launch), /marker=hello/);
  } finally {
    await launch.cleanup();
  }
});
