/**
 * Child process for the fail-closed test: starts a session (under
 * `--require no_koffi.cjs`), runs real sudo through it, and prints the
 * outcome as one JSON line.
 */
import process from "node:process";
import { type SessionEvent, startSession } from "../../extension/channel/session_server.ts";
import { ScriptedPrompter } from "./scripted_prompter.ts";
import { runToolCommand } from "./tool_command.ts";
import { testPassword } from "./test_env.ts";

const prompter = new ScriptedPrompter([{ submit: testPassword() }]);
const events: SessionEvent[] = [];
const started = await startSession({ prompter, onEvent: (e) => events.push(e) });
if (!started.ok) {
  console.log(JSON.stringify({ startError: started.reason }));
  process.exit(0);
}
const r = await runToolCommand(started.session, "sudo -k id -u", 20_000);
await started.session.close();
console.log(JSON.stringify({
  prompts: prompter.seen.length,
  stdout: r.stdout,
  stderr: r.stderr,
  refusals: events.filter((e) => e.kind === "refused").map((e) => e.kind === "refused" && e.reason),
}));
