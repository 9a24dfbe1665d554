// The Node counterpart of askpass/helper.ts for the startup comparison in
// tests/bench/bench.ts: it loads the same protocol modules and makes the same
// self-checks (argv, prompt size, no code-loading variables), then stops where
// the Deno helper stops when no session socket is configured. It never
// connects anywhere.
import process from "node:process";
import { MAX_PROMPT_BYTES } from "../../askpass/protocol.ts";
import { HELPER_ENV, HELPER_FORBIDDEN_ENV } from "../../askpass/helper_permissions.ts";

const encoder = new TextEncoder();

function fail(reason) {
  process.stderr.write(`pi-askpass: ${reason}\n`);
  process.exit(1);
}

const args = process.argv.slice(2);
if (args.length !== 1) fail("expected exactly one argument (sudo's prompt)");
if (encoder.encode(args[0]).length > MAX_PROMPT_BYTES) fail("prompt longer than 1 KiB");
for (const name of HELPER_FORBIDDEN_ENV) {
  if (process.env[name] !== undefined) fail(`refusing to run with ${name} set`);
}
if (process.env[HELPER_ENV.SOCKET] === undefined) fail("no session socket configured");
fail("benchmark helper stops after its self-checks");
