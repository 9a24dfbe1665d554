/**
 * The modal's red lines about a sudo (issue 22, ADR 0006): options that let the
 * command's environment choose what root runs, and a program the user (so the
 * agent) could have written, or named without an absolute path (sudo then searches
 * its `secure_path`, or the command's `PATH`). The wrapper makes names in root's
 * directories absolute (`shell_injection.ts`), so `sudo apt-get …` shows no warning.
 *
 * @module
 */
import { realpath } from "node:fs/promises";
import { normalize } from "node:path";
import { scanSudoOptions } from "../../askpass/sudo_args.ts";
import { rootOnlyChainProblem } from "../../shared/root_chain.ts";
import { type ReasonOf, reasons } from "../../shared/result.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** `risky_sudo`: a red warning, refused as asked by `--sudo-refuse-risky`. */
export const ROOT_RUN_REFUSALS = reasons("risky_sudo");

/** One of the values of {@link ROOT_RUN_REFUSALS}. */
export type RootRunRefusal = ReasonOf<typeof ROOT_RUN_REFUSALS>;

/** Longest wait for the file-system checks of one program (a hung mount). */
const CHECK_DEADLINE_MS = 1000;

/**
 * Why a sudo (argv without the program) may run other than what it shows, one line
 * each: `-s` runs `$SHELL`; `-E`, `--preserve-env` keep e.g. `APT_CONFIG` or
 * `PYTHONPATH`; `VAR=value` sets them for root. The caller escapes untrusted parts.
 */
export function sudoRunRisks(args: readonly string[]): string[] {
  const scan = scanSudoOptions(args);
  const risks: string[] = [];
  if (scan.shell) risks.push(msg.riskShell);
  if (scan.preserveEnv === true) risks.push(msg.riskPreserveEnv);
  else if (scan.preserveEnv) risks.push(msg.riskPreserveList(scan.preserveEnv.join(",")));
  for (const a of scan.assignments) risks.push(msg.riskAssignment(a));
  return risks;
}

/** Every red line for this sudo argv (`sudoArgv[0]`: sudo), in the modal's order. Never throws. */
export async function rootRunWarnings(sudoArgv: readonly string[]): Promise<string[]> {
  const args = sudoArgv.slice(1);
  const warnings = sudoRunRisks(args);
  const scan = scanSudoOptions(args);
  if (scan.noCommand || scan.shell || scan.commandIndex < 0) return warnings;
  const program = args[scan.commandIndex];
  if (!program.startsWith("/")) {
    warnings.push(msg.programNotAbsolute(program));
    return warnings;
  }
  const problem = await withDeadline(writableBy(program), CHECK_DEADLINE_MS);
  if (problem !== null) warnings.push(`${program}: ${problem ?? msg.programNotCheckedInTime}`);
  return warnings;
}

/**
 * Null when root alone could change what runs: the named path and every directory
 * above it (a symlink there could be repointed after the modal), and the resolved
 * file with its directories, are root's and writable by root alone. Else what is not.
 */
async function writableBy(program: string): Promise<string | null> {
  // The named chain, and the resolved one (undefined: no such file), walked at once.
  const resolved = realpath(program).then((real) => chainProblem(real, program), () => undefined);
  const [named, real] = await Promise.all([chainProblem(normalize(program), program), resolved]);
  if (real === undefined) return msg.programMissing;
  return named ?? real;
}

/** The first of `path` and its parent directories that others than root can change. */
async function chainProblem(path: string, named: string): Promise<string | null> {
  const problem = await rootOnlyChainProblem(path, true);
  if (!problem) return null;
  if (problem.kind === "unreadable") return msg.pathNotCheckable(problem.path);
  const what = problem.path === named || problem.path === path ? msg.theProgram : problem.path;
  return problem.uid !== 0 ? msg.notRootsProgram(what) : msg.writableByNonRoot(what);
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => timer = setTimeout(resolve, ms, undefined));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
