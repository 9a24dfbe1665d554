/**
 * What the modal says in red about a sudo before anyone types (issue 22,
 * ADR 0006): the options that let the command's environment choose what root
 * runs ({@link sudoRunRisks}), and the program itself when the user (and so the
 * agent) could have written it, or when its name is no absolute path (sudo
 * then looks it up on its `secure_path`, or on the command's `PATH` where
 * none is set). The wrapper passes an absolute path from the root-owned
 * directories whenever the program is there (`shell_injection.ts`), so a
 * plain `sudo apt-get …` shows no warning.
 *
 * @module
 */
import { realpath } from "node:fs/promises";
import { normalize } from "node:path";
import { scanSudoOptions } from "../../askpass/sudo_args.ts";
import { rootOnlyChainProblem } from "../../shared/root_chain.ts";
import { type ReasonOf, reasons } from "../../shared/result.ts";
import { msg } from "../../shared/i18n/locale.ts";

/**
 * Named refusal when the user asked for red warnings to refuse (`--sudo-refuse-risky`):
 * - `risky_sudo`: the sudo would run something its argv does not show (see the module comment).
 */
export const ROOT_RUN_REFUSALS = reasons("risky_sudo");

/** One of the values of {@link ROOT_RUN_REFUSALS}. */
export type RootRunRefusal = ReasonOf<typeof ROOT_RUN_REFUSALS>;

/** Longest wait for the file-system checks of one program (a hung mount). */
const CHECK_DEADLINE_MS = 1000;

/**
 * Why a sudo (its argv without the program) may run something other than
 * what its argv shows (issue 22, ADR 0006), one line each for the modal:
 * `-s` runs `$SHELL`, `-E` and `--preserve-env` keep variables such as
 * `APT_CONFIG` or `PYTHONPATH`, `VAR=value` sets them for root. Pure; the
 * modal shows each in red, the caller escaping their untrusted parts.
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

/**
 * Every red line for this sudo argv (`sudoArgv[0]` is sudo itself), in the
 * order the modal shows them. Never throws.
 */
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
 * Null when root alone could have changed what runs: the program as named,
 * every directory above that name (a symlink sitting in them could be
 * pointed elsewhere after the modal), and the file it resolves to with every
 * directory above it, are root's and writable by root alone. Otherwise what
 * is not.
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
