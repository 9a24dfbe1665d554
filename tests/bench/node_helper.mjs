// The Node counterpart of askpass/helper.ts for the startup comparison in
// tests/bench/bench.ts: it loads the same protocol modules and makes the same
// self-checks (argv, prompt size, fstat(1) is sudo's root-owned FIFO, real ==
// effective uid, no code-loading variables), then stops where the Deno
// helper stops when stdout is not sudo's pipe. It never connects anywhere.
import { fstatSync } from "node:fs";
import process from "node:process";
import { MAX_PROMPT_BYTES } from "../../askpass/protocol.ts";
import { HELPER_FORBIDDEN_ENV } from "../../askpass/helper_permissions.ts";

const encoder = new TextEncoder();

function fail(reason) {
  process.stderr.write(`pi-askpass: ${reason}\n`);
  process.exit(1);
}

const args = process.argv.slice(2);
if (args.length !== 1) fail("expected exactly one argument (sudo's prompt)");
if (encoder.encode(args[0]).length > MAX_PROMPT_BYTES) fail("prompt longer than 1 KiB");
let out;
try {
  out = fstatSync(1);
} catch {
  fail("stdout is not open");
}
if (!out.isFIFO() || out.uid !== 0 || (out.mode & 0o777) !== 0o600) {
  fail("stdout is not sudo's private pipe; run only by sudo -A");
}
if (process.getuid() !== process.geteuid()) fail("real and effective uid differ");
for (const name of HELPER_FORBIDDEN_ENV) {
  if (process.env[name] !== undefined) fail(`refusing to run with ${name} set`);
}
fail("benchmark helper stops after its self-checks");
