/**
 * `pi-secret-run --label TEXT -- PROGRAM ARGS…`: runs PROGRAM with a secret
 * on its stdin, typed by the human into pi's "Secret request" modal. The
 * secret never passes through this process: the root broker asks pi for it
 * and writes it to PROGRAM's stdin; PROGRAM runs as you, never as root.
 *
 * This client (Deno, your user) only checks the preconditions, resolves
 * PROGRAM on your PATH, and calls the broker with `sudo -n`. PROGRAM's
 * stdout, stderr and exit status pass through. Every refusal is one line on
 * stderr and exit status 125.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { PROTOCOL_VERSION } from "../askpass/protocol.ts";
import { BROKER_REFUSAL_EXIT, brokerArgs, PI_SECRET_RUN_SUDO } from "./broker_permissions.ts";
import { BROKER_LAUNCHER, BROKER_VERSION_FILE } from "./paths.ts";
import { parseBrokerVersion } from "./broker_version.ts";

const USAGE = "usage: pi-secret-run [--label TEXT] -- PROGRAM [ARGS...]";
const encoder = new TextEncoder();

const MAX_CAUSE_CHARS = 300;

function refuse(reason: string): never {
  Deno.stderr.writeSync(encoder.encode(`pi-secret-run: ${reason}\n`));
  Deno.exit(BROKER_REFUSAL_EXIT);
}

/**
 * `--label TEXT -- PROGRAM ARGS…` (the label may be omitted; `--label=TEXT`
 * too), read with `node:util`'s `parseArgs`. `--` is required, and nothing
 * but the label may come before it: everything after it is the command,
 * taken as it is. `undefined` for anything else.
 */
export function parseCommandLine(
  args: readonly string[],
): { label: string; argv: string[] } | undefined {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: { label: { type: "string" } },
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch {
    return undefined;
  }
  const end = parsed.tokens.findIndex((t) => t.kind === "option-terminator");
  if (end < 0 || parsed.tokens.slice(0, end).some((t) => t.kind === "positional")) return undefined;
  if (parsed.positionals.length === 0) return undefined;
  return { label: parsed.values.label ?? "", argv: parsed.positionals };
}

/** Whether `error` is Deno 2 refusing a call its permission flags do not allow. */
function isMissingPermission(error: unknown): boolean {
  return error instanceof Error && error.name === "NotCapable";
}

/**
 * One line naming why the client stopped on an unexpected error, for its
 * refusal: a missing Deno permission (the client started with `deno run`
 * but without its pinned flags) says which one and how to start it instead;
 * anything else gives the error's name and first line. Control characters
 * are replaced, so the line cannot drive the terminal.
 */
export function failureCause(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  // deno-lint-ignore no-control-regex -- replacing control characters is the point
  const first = raw.split("\n")[0].replace(/[\u0000-\u001f\u007f-\u009f]/g, "?")
    .slice(0, MAX_CAUSE_CHARS);
  if (isMissingPermission(error)) {
    return `started without its pinned Deno permissions: ${first}. Run it as pi-secret-run in ` +
      "pi's bash tool (the session's launcher passes the flags, docs/permissions.md)";
  }
  const name = error instanceof Error ? error.name : typeof error;
  return `internal error: ${name}: ${first}`;
}

/** PROGRAM as an absolute path: as given when it has a slash, else found on PATH. */
async function resolveOnPath(program: string, cwd: string): Promise<string> {
  if (program.includes("/")) return program.startsWith("/") ? program : `${cwd}/${program}`;
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir.startsWith("/")) continue;
    try {
      const st = await Deno.stat(`${dir}/${program}`);
      if (st.isFile && ((st.mode ?? 0) & 0o111) !== 0) return `${dir}/${program}`;
    } catch (e) {
      if (isMissingPermission(e)) throw e; // not "command not found"
    }
  }
  refuse(`${program}: command not found`);
}

/** The installer's path, for the "not installed" message. */
const INSTALLER = new URL("./install.sh", import.meta.url).pathname;

async function checkBroker(): Promise<void> {
  let version: string;
  try {
    await Deno.stat(BROKER_LAUNCHER);
    version = await Deno.readTextFile(BROKER_VERSION_FILE);
  } catch (e) {
    if (isMissingPermission(e)) throw e; // not "not installed"
    refuse(
      `the broker is not installed: run /sudo-prompt install-broker in pi, or: sudo sh ${INSTALLER}`,
    );
  }
  const protocol = parseBrokerVersion(version).protocol ?? "?";
  if (protocol !== PROTOCOL_VERSION) {
    refuse(
      `the installed broker speaks protocol ${protocol}, this package ${PROTOCOL_VERSION}: ` +
        `reinstall it (/sudo-prompt install-broker, or sudo sh ${INSTALLER})`,
    );
  }
}

async function main(): Promise<void> {
  if (Deno.build.os !== "linux") refuse("only Linux is supported");
  const parsed = parseCommandLine(Deno.args);
  if (!parsed) refuse(USAGE);
  const socketPath = Deno.env.get("PI_ASKPASS_SOCKET");
  if (!socketPath) {
    refuse("not inside an interactive pi session (run it from pi's bash tool or a ! command)");
  }
  await checkBroker();
  const cwd = Deno.cwd();
  const argv = [await resolveOnPath(parsed.argv[0], cwd), ...parsed.argv.slice(1)];
  const child = new Deno.Command(PI_SECRET_RUN_SUDO, {
    args: ["-n", BROKER_LAUNCHER, ...brokerArgs({ socketPath, label: parsed.label, cwd, argv })],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const status = await child.status;
  Deno.exit(status.signal ? 128 + 15 : status.code);
}

if (import.meta.main) main().catch((e) => refuse(failureCause(e)));
