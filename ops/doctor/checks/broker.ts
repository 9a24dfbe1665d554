/**
 * Doctor check `broker`: the root broker (only for `pi-secret-run`) is installed root-owned,
 * speaks this extension's protocol, and sudo reaches it without a password for this user.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PROTOCOL_VERSION } from "../../../askpass/protocol.ts";
import { PACKAGE_VERSION } from "../../../askpass/version.ts";
import { SUDOERS_FILE } from "../../../broker/paths.ts";
import { ROOT_SOURCE_FILES } from "../../../broker/root_files.ts";
import { errnoCode } from "../../../shared/errno.ts";
import { type Context, defineCheck, type Finding } from "../context.ts";
import { exists, firstExisting, oneLine, SUDO_ENV } from "../helpers.ts";
import { rootOwnedProblem } from "../ownership.ts";
import { parseBrokerVersion } from "../../../broker/broker_version.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

const VERSION_FILE_MAX = 4096;
/** What the broker launcher exits with when started without arguments (its usage). */
const LAUNCHER_USAGE_EXIT = 125;

/** Root broker installed, root-owned, with the same protocol version, reachable through sudo. */
export const brokerCheck = defineCheck("broker", "broker", async (ctx) => {
  const installer = join(ctx.packageRoot, "broker", "install.sh");
  const installHint = msg.brokerInstallHint(installer);
  let text: string;
  try {
    text = await readFile(ctx.brokerVersionFile, "utf8");
  } catch (e) {
    if (errnoCode(e) === "ENOENT" || errnoCode(e) === "ENOTDIR") {
      return {
        status: "info",
        detail: msg.brokerNotInstalled,
        fix: installHint,
      };
    }
    return {
      status: "warn",
      detail: msg.brokerUnreadable(ctx.brokerVersionFile, errnoCode(e) ?? "error"),
      fix: msg.brokerReinstall(installHint),
    };
  }
  const { version, protocol } = parseBrokerVersion(text.slice(0, VERSION_FILE_MAX));
  if (protocol === undefined) {
    return {
      status: "fail",
      detail: msg.brokerNoProtocol(ctx.brokerVersionFile),
      fix: msg.brokerReinstallBroker(installHint),
    };
  }
  const shown = msg.brokerShown(oneLine(version ?? "?"), String(protocol));
  if (protocol !== PROTOCOL_VERSION) {
    return {
      status: "fail",
      detail: msg.brokerOtherProtocol(shown, PROTOCOL_VERSION),
      fix: msg.brokerReinstallBroker(installHint),
    };
  }
  if (!await exists(ctx.brokerLauncher)) {
    return {
      status: "fail",
      detail: msg.brokerNoLauncher(shown, ctx.brokerLauncher),
      fix: msg.brokerReinstallBroker(installHint),
    };
  }
  for (const p of [ctx.brokerVersionFile, ctx.brokerLauncher]) {
    const problem = await rootOwnedProblem(p, "file", true, ctx.uid);
    if (problem) {
      // sudo runs the launcher as root without a password: whoever can change it, or a directory
      // above it, gets root (docs/pi-secret-run.md).
      return {
        status: "fail",
        detail: msg.brokerNotRootOwned(shown, problem),
        fix: msg.brokerNotRootOwnedFix(installHint, installer),
      };
    }
  }
  const extensionVersion = version === PACKAGE_VERSION ? "" : msg.brokerExtension(PACKAGE_VERSION);
  const rule = await sudoRuleFinding(ctx, shown);
  if (rule) return rule;
  const stale = await staleCopy(ctx);
  if (stale) {
    // The broker and hardened mode run the installed copies: after an update they are old code,
    // and a file new to the package makes hardened mode fall back to the user-owned guardian.
    return {
      status: "warn",
      detail: msg.brokerStale(shown, stale),
      fix: msg.brokerReinstallBroker(installHint),
    };
  }
  return { status: "ok", detail: msg.brokerOk(shown, extensionVersion) };
});

/** The first source the installer copies whose installed copy is missing or not this package's. */
async function staleCopy(ctx: Context): Promise<string | undefined> {
  const installed = join(dirname(ctx.brokerLauncher), "src");
  for (const file of ROOT_SOURCE_FILES) {
    const [theirs, ours] = await Promise.all(
      [join(installed, file), join(ctx.packageRoot, file)].map((p) =>
        readFile(p).catch(() => undefined)
      ),
    );
    if (!theirs || !ours || !theirs.equals(ours)) return file;
  }
  return undefined;
}

/**
 * A later sudoers rule can override the broker's NOPASSWD one (docs/pi-secret-run.md). Checked as
 * `pi-secret-run` meets it: `sudo -n <launcher>` with no arguments, which (when the rule applies)
 * only prints the launcher's usage and exits 125 before any broker starts. `undefined` when fine
 * or not checkable (root, no sudo).
 */
async function sudoRuleFinding(ctx: Context, shown: string): Promise<Finding | undefined> {
  const sudo = await firstExisting(ctx.sudoCandidates);
  if (ctx.uid === 0 || !sudo) return undefined;
  const r = await ctx.run(sudo, ["-n", ctx.brokerLauncher], {
    env: SUDO_ENV,
    timeoutMs: ctx.commandTimeoutMs,
  });
  if (r.code === LAUNCHER_USAGE_EXIT && r.stderr.includes("pi-secret-broker:")) return undefined;
  const fix = msg.brokerRuleFix(SUDOERS_FILE);
  if (/password is required/.test(r.stderr)) {
    return {
      status: "fail",
      detail: msg.brokerAsksPassword(shown),
      fix: msg.brokerAsksPasswordFix(fix),
    };
  }
  return {
    status: "warn",
    detail: msg.brokerUnreached(
      shown,
      ctx.brokerLauncher,
      oneLine(r.stderr || r.spawnError || `exit ${r.code}`),
    ),
    fix: msg.brokerUnreachedFix(fix),
  };
}
