/**
 * `deno task demo`: the whole flow in the real pi TUI with no API key. pi
 * starts with this extension and a scripted model whose first step runs
 * `sudo -k id -u` through the bash tool; the modal appears; type your sudo
 * password (or press Escape) and watch the result. Which password to type is
 * shown inside pi, above the editor (`demo_hint.ts`), once the TUI has started.
 *
 * Run it as a regular user who may use sudo with a password: root's sudo
 * never asks. Uses a throwaway agent directory, so your pi settings and
 * sessions are untouched; the session file is kept for you to inspect.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { FAUX_EXTENSION, nodeBinary, piCliPath, REPO_ROOT } from "./pi_runner.ts";
import type { FauxStep } from "./faux_provider.ts";

if (process.getuid?.() === 0) {
  console.error(
    "demo: you are root, and sudo never asks root for a password. Run it as a regular user with sudo rights.",
  );
  process.exit(1);
}

const dir = await mkdtemp(join(tmpdir(), "pi-sudo-prompt-demo-"));
const script: FauxStep[] = [
  { bash: "sudo -k id -u" },
  {
    text:
      "sudo printed the line above (0 means it ran as root). Your password went from the modal to sudo; it never reached me.",
  },
];
await writeFile(join(dir, "script.json"), JSON.stringify(script));
console.log(`demo: agent dir ${dir}/agent (session files are kept there)`);

const child = spawn(
  nodeBinary(),
  [
    piCliPath(),
    "--provider",
    "faux",
    "--model",
    "faux-1",
    "-e",
    FAUX_EXTENSION,
    "-e",
    join(REPO_ROOT, "tests/pi/demo_hint.ts"),
    "-e",
    join(REPO_ROOT, "index.ts"),
    "Please run `sudo -k id -u`.",
  ],
  {
    stdio: "inherit",
    env: {
      ...process.env,
      PI_CODING_AGENT_DIR: join(dir, "agent"),
      PI_OFFLINE: "1",
      PI_FAUX_SCRIPT: join(dir, "script.json"),
    },
  },
);
child.on("exit", (code) => process.exit(code ?? 1));
