/**
 * `pi-sudo-prompt uninstall`: undoes `install` and `/sudo-prompt install-broker`: removes the root
 * broker (through sudo), runs `pi remove` for every settings entry that loads this copy, and names
 * what is left to you (the audit log; an `npm uninstall` line). Exit 1 when a step failed.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import process from "node:process";
import { BROKER_ROOT, SUDOERS_FILE } from "../broker/paths.ts";
import { defaultAuditPath } from "../extension/audit/entry.ts";
import { PACKAGE_NAME, piRemoveCommand, registeredSources, shellWord } from "./pi_sources.ts";
import { spawnWithDeadline } from "../shared/spawn_deadline.ts";
import { msg } from "../shared/i18n/tools_locale.ts";
import { findPi, finish, packageRoot as root, problem, say } from "./cli_report.ts";

/** How long one step (sudo with a password typed, or `pi remove` running npm) may take. */
const STEP_DEADLINE_MS = 180_000;

/** Runs `cmd args` with the terminal passed through; its exit code, or -1 at the deadline. */
async function runInteractive(cmd: string, args: readonly string[]): Promise<number> {
  const r = await spawnWithDeadline(cmd, args, { stdio: "inherit", deadlineMs: STEP_DEADLINE_MS });
  return r.code ?? -1;
}

say(msg.uninstallStart(root));

const installer = join(root, "broker", "install.sh");
const removeBroker = `sh ${shellWord(installer)} --uninstall`;
if (!existsSync(BROKER_ROOT) && !existsSync(SUDOERS_FILE)) {
  say(msg.uninstallNoBroker);
} else if (process.getuid?.() === 0) {
  say(msg.uninstallBrokerAsRoot(`${removeBroker} --user NAME`));
} else if (!process.stdin.isTTY && !process.env.SUDO_ASKPASS) {
  // No terminal and no askpass (outside pi): sudo could not ask for the password.
  problem(msg.uninstallBrokerNoTerminal(`sudo ${removeBroker}`));
} else {
  say(msg.uninstallRemovingBroker(`sudo ${removeBroker}`));
  const code = await runInteractive("sudo", ["sh", installer, "--uninstall"]);
  if (code === 0) say(msg.uninstallBrokerRemoved);
  else problem(msg.uninstallBrokerFailed(`sudo ${removeBroker}`, code));
}

const { pi, localPi } = await findPi();
const sources = await registeredSources(root, process.cwd(), process.env);
if (sources.length === 0) say(msg.uninstallNoEntry);
// npm: sources last: pi then uninstalls the package these files belong to.
sources.sort((a, b) => Number(a.source.startsWith("npm:")) - Number(b.source.startsWith("npm:")));
for (const source of sources) {
  const command = piRemoveCommand(source);
  const args = [...(source.scope === "project" ? ["remove", "-l"] : ["remove"]), source.source];
  if (!pi && !localPi) {
    problem(msg.uninstallNoPi(command));
    continue;
  }
  const code = await runInteractive(pi ?? process.execPath, pi ? args : [localPi!, ...args]);
  if (code === 0) say(`  ✓ ${command}`);
  else problem(msg.cliStepFailed(command, code));
}

say(msg.uninstallKeptAudit(defaultAuditPath()));
const parts = root.split(sep);
const nm = parts.lastIndexOf("node_modules");
if (nm > 0 && parts[nm + 1] === PACKAGE_NAME && !sources.some((s) => s.source.startsWith("npm:"))) {
  // <prefix>/lib/node_modules/pi-sudo-prompt: npm's global layout.
  const lib = parts.slice(0, nm).join(sep);
  const prefix = lib.endsWith(`${sep}lib`) ? dirname(lib) : undefined;
  say(
    prefix
      ? msg.uninstallFilesStay(`npm uninstall -g --prefix ${shellWord(prefix)} ${PACKAGE_NAME}`)
      : msg.uninstallFilesStayIn(`npm uninstall ${PACKAGE_NAME}`, shellWord(lib)),
  );
} else if (nm < 0) {
  say(msg.uninstallFilesYours(root));
}

finish(msg.uninstallDone);
