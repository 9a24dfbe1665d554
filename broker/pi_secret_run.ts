/**
 * `pi-secret-run --label TEXT -- PROGRAM ARGS…` (Deno, as the user): checks the preconditions,
 * resolves PROGRAM on PATH and calls the root broker with `sudo -n`, which asks pi for the secret
 * and writes it to PROGRAM's stdin; the secret never passes through this process. PROGRAM runs as
 * the user; its output and exit status pass through. Refusals: one line on stderr, exit status 125.
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
 * Parses `[--label TEXT] -- PROGRAM ARGS…` (`--label=TEXT` too): `--` is required, only the label
 * may precede it, and everything after it is the command as is. `undefined` for anything else.
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
 * One line for the refusal on an unexpected error: a missing Deno permission (started without its
 * pinned flags) says which and how to start it instead; anything else gives the error's name and
 * first line. Control characters are replaced, so the line cannot drive the terminal.
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
