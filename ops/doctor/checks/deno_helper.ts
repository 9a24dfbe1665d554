/**
 * Doctor check `deno`: the pinned deno runs, and the askpass helper under the launcher's pinned
 * flags enforces its checks (refuses a code-loading variable, writing nothing to stdout).
 *
 * @module
 */
import { constants } from "node:fs";
import { mkdtemp, open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  helperArgvPrefix,
  helperEnvironment,
  isSafeFlagPath,
} from "../../../askpass/helper_permissions.ts";
import { type CommandResult, type Context, defineCheck, type Finding } from "../context.ts";
import { canAccess, oneLine } from "../helpers.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

const STDERR_LINE_MAX = 160;
/** The refusal the helper prints when a code-loading variable is set. */
const REFUSAL = "refusing to run with NODE_OPTIONS set";

/** The deno binary runs the helper with the pinned flags. */
export const denoHelperCheck = defineCheck("deno", msg.denoTitle, async (ctx) => {
  const deno = ctx.denoPath;
  if (!deno) {
    return {
      status: "fail",
      detail: msg.denoNotFound,
      fix: msg.denoNotFoundFix,
    };
  }
  if (!await canAccess(deno, constants.X_OK)) {
    return { status: "fail", detail: msg.denoNotExecutable(deno), fix: msg.denoNpmCi };
  }
  const version = await ctx.run(deno, ["--version"], {
    env: { NO_COLOR: "1" },
    timeoutMs: ctx.commandTimeoutMs,
  });
  if (version.code !== 0) {
    return {
      status: "fail",
      detail: msg.denoVersionFailed(deno, describeFailure(version)),
      fix: msg.denoDamagedFix,
    };
  }
  const denoVersion = /^deno (\S+)/.exec(version.stdout)?.[1] ?? msg.denoUnknownVersion;
  if (!await canAccess(ctx.helperPath, constants.R_OK)) {
    return {
      status: "fail",
      detail: msg.denoHelperMissing(ctx.helperPath),
      fix: msg.denoReinstall,
    };
  }
  for (const p of [deno, ctx.helperPath]) {
    if (!isSafeFlagPath(p)) {
      return {
        status: "fail",
        detail: msg.denoUnsafePath(p),
        fix: msg.denoUnsafePathFix,
      };
    }
  }
  const probeFailure = await probeHelper(ctx, deno);
  if (probeFailure) return probeFailure;
  const pinned = await packageDenoVersion(ctx.packageRoot);
  const note = pinned && pinned !== denoVersion ? msg.denoPins(pinned) : "";
  return {
    status: pinned && pinned !== denoVersion ? "warn" : "ok",
    detail: msg.denoOk(denoVersion, note, deno),
    ...(note ? { fix: msg.denoGetPinned } : {}),
  };
});

/** Runs the helper as the launcher would, with `NODE_OPTIONS` set; a finding unless it refused. */
async function probeHelper(ctx: Context, deno: string): Promise<Finding | undefined> {
  const dir = await mkdtemp(join(ctx.tmpBase, "pi-sudo-doctor-"));
  try {
    const socketPath = join(dir, "askpass.sock");
    const argv = [...helperArgvPrefix(deno, ctx.helperPath, socketPath), "doctor probe"];
    const env = {
      ...envObject(helperEnvironment({
        denoDir: join(dir, "deno-cache"),
        socketPath,
        deadlineMs: ctx.commandTimeoutMs,
      })),
      // Harmless to deno itself, but one of the code-loading variables the helper must refuse:
      // the refusal proves the helper's code ran under the pinned flags and enforces its checks.
      NODE_OPTIONS: "--no-warnings",
    };
    // stdout: a regular file, so that a helper that did not refuse would be seen writing.
    const outPath = join(dir, "stdout");
    const out = await open(outPath, "wx", 0o600);
    let probe: CommandResult;
    try {
      probe = await ctx.run(argv[0], argv.slice(1), {
        env,
        timeoutMs: ctx.commandTimeoutMs,
        stdoutFd: out.fd,
      });
    } finally {
      await out.close();
    }
    const written = await readFile(outPath, "utf8").catch(() => "?");
    const refused = probe.code === 1 && probe.stdout === "" && written === "" &&
      probe.stderr.includes(REFUSAL);
    if (refused) return undefined;
    return {
      status: "fail",
      detail: msg.denoNoRefusal(describeFailure(probe), written ? msg.denoWroteStdout : ""),
      fix: msg.denoNoRefusalFix,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** How a command failed, in a few words and the first line of its stderr. */
function describeFailure(r: CommandResult): string {
  if (r.spawnError) return msg.denoCouldNotStart(r.spawnError);
  if (r.timedOut) return msg.denoKilledAtDeadline;
  const said = oneLine(r.stderr.trim().split("\n")[0] ?? "").slice(0, STDERR_LINE_MAX);
  const how = r.code !== null ? msg.denoExited(r.code) : msg.denoKilledBy(String(r.signal));
  return said ? `${how}: ${said}` : how;
}

async function packageDenoVersion(root: string): Promise<string | undefined> {
  const pkg = await readFile(join(root, "package.json"), "utf8").then(JSON.parse).catch(() => {});
  const v = pkg?.dependencies?.deno;
  return typeof v === "string" && /^\d+\.\d+\.\d+$/.test(v) ? v : undefined;
}

function envObject(entries: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    entries.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]),
  );
}
