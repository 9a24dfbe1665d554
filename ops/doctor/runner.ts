/**
 * The doctor's runner: the checks' order, a deadline for each (an error or expiry becomes a
 * `"fail"`, never a throw; text is cleaned of control characters), and the rendered screen.
 * Runtime-neutral (`node:` built-ins only): it runs under Node and under `deno test`.
 *
 * @module
 */
import { allowlistCheck } from "./checks/allowlist.ts";
import { brokerCheck } from "./checks/broker.ts";
import { denoHelperCheck } from "./checks/deno_helper.ts";
import { displayCheck } from "./checks/display.ts";
import { ffiCheck } from "./checks/ffi.ts";
import { hardenedCheck } from "./checks/hardened.ts";
import { legacyTiocstiCheck } from "./checks/legacy_tiocsti.ts";
import { multiplexerCheck } from "./checks/multiplexer.ts";
import { dumpableCheck, terminalCheck } from "./checks/pi_process.ts";
import { platformCheck } from "./checks/platform.ts";
import { ptraceScopeCheck } from "./checks/ptrace_scope.ts";
import { sudoCheck } from "./checks/sudo.ts";
import { syslogCheck } from "./checks/syslog.ts";
import { xdgRuntimeDirCheck } from "./checks/xdg_runtime_dir.ts";
import {
  type CheckStatus,
  type Context,
  type DoctorCheck,
  type DoctorOptions,
  type Finding,
  resolveContext,
} from "./context.ts";
import { oneLine } from "./helpers.ts";
import { msg } from "../../shared/i18n/tools_locale.ts";

export type { CheckStatus, DoctorCheck, DoctorOptions } from "./context.ts";

/** The checks, in the order {@link runDoctor} returns them and the screen shows them. */
const CHECKS = [
  platformCheck,
  sudoCheck,
  xdgRuntimeDirCheck,
  ffiCheck,
  ptraceScopeCheck,
  legacyTiocstiCheck,
  denoHelperCheck,
  brokerCheck,
  allowlistCheck,
  hardenedCheck,
  syslogCheck,
  terminalCheck,
  dumpableCheck,
  multiplexerCheck,
  displayCheck,
] as const;

/** The id of one check (`"platform"`, `"hardened"`, …): what {@link runCheck} takes. */
export type DoctorCheckId = typeof CHECKS[number]["id"];

/** The check ids, in the order {@link runDoctor} returns them. */
export const DOCTOR_CHECK_IDS: readonly DoctorCheckId[] = CHECKS.map((c) => c.id);

const DEFAULT_CHECK_TIMEOUT_MS = 15_000;
/** Longest detail or fix kept, in code points. */
const DETAIL_MAX = 1000;
const TITLE_WIDTH = 16;
const DEFAULT_WIDTH = 100;

/** Runs every check (concurrently) and returns them in {@link DOCTOR_CHECK_IDS} order. */
export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const ctx = resolveContext(options);
  return await Promise.all(CHECKS.map((check) => guarded(check, ctx, options)));
}

/** Runs one check by id, with the same deadline and cleaning as {@link runDoctor}; never throws. */
export async function runCheck(
  id: DoctorCheckId,
  options: DoctorOptions = {},
): Promise<DoctorCheck> {
  return await guarded(CHECKS.find((c) => c.id === id)!, resolveContext(options), options);
}

async function guarded(
  { id, title, run }: typeof CHECKS[number],
  context: Promise<Context>,
  options: DoctorOptions,
): Promise<DoctorCheck> {
  const limit = options.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const ctx = await context;
    const expired = new Promise<Finding>((resolve) => {
      timer = setTimeout(resolve, limit, {
        status: "fail",
        detail: msg.doctorExpired(limit),
        fix: msg.doctorExpiredFix,
      });
    });
    const finding = await Promise.race([run(ctx), expired]);
    return { id, title, ...clean(finding) };
  } catch (e) {
    return {
      id,
      title,
      status: "fail",
      detail: msg.doctorError(oneLine(e instanceof Error ? e.message : String(e))),
      fix: msg.doctorErrorFix,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** 1 when any check failed, else 0: the exit code of `pi-sudo-prompt doctor`. */
export function doctorExitCode(checks: readonly DoctorCheck[]): number {
  return checks.some((c) => c.status === "fail") ? 1 : 0;
}

/** The marker in front of each verdict; the TUI colours a line by it. */
const STATUS_MARKERS: Record<CheckStatus, string> = { ok: "✓", warn: "!", fail: "✗", info: "i" };

/**
 * Plain-text lines (no ANSI): per check `<marker> <title> <detail>` wrapped at `width` (only a
 * word longer than a line exceeds it), then `fix: …` indented; last, the count of each verdict.
 */
export function renderDoctor(checks: readonly DoctorCheck[], width = DEFAULT_WIDTH): string[] {
  const indent = " ".repeat(2 + TITLE_WIDTH + 1);
  const fix = `${indent}${msg.doctorFix}`;
  const under = " ".repeat(fix.length);
  const lines: string[] = [];
  for (const c of checks) {
    const head = `${STATUS_MARKERS[c.status]} ${oneLine(c.title).padEnd(TITLE_WIDTH)} `;
    lines.push(...wrap(oneLine(c.detail), head, indent, width));
    if (c.fix) lines.push(...wrap(oneLine(c.fix), fix, under, width));
  }
  const n = (s: CheckStatus) => checks.filter((c) => c.status === s).length;
  lines.push(msg.doctorSummary(checks.length, n("ok"), n("warn"), n("fail"), n("info")));
  return lines;
}

function wrap(text: string, first: string, rest: string, width: number): string[] {
  const out: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(" ").filter((w) => w.length > 0)) {
    if (!empty && line.length + 1 + word.length > width) {
      out.push(line);
      line = rest + word;
    } else {
      line += (empty ? "" : " ") + word;
    }
    empty = false;
  }
  out.push(line.trimEnd());
  return out;
}

/** A finding whose detail and fix are one safe line each, capped at {@link DETAIL_MAX}. */
function clean(f: Finding): Finding {
  return {
    status: f.status,
    detail: oneLine(f.detail, DETAIL_MAX),
    ...(f.fix ? { fix: oneLine(f.fix, DETAIL_MAX) } : {}),
  };
}
