/**
 * Doctor check `sudo`: sudo or sudo-rs, a version that can ask through an askpass, setuid root;
 * doas alone is unsupported.
 *
 * @module
 */
import { stat } from "node:fs/promises";
import { type CheckStatus, defineCheck, type Finding } from "../context.ts";
import { firstExisting, oneLine, SUDO_ENV } from "../helpers.ts";
import { msg } from "../../../shared/i18n/tools_locale.ts";

/** First sudo-rs release with `-A`/`--askpass` (sudo-rs CHANGELOG, after issue #1249). */
export const SUDO_RS_ASKPASS_SINCE = "0.2.11";
/** Oldest classic sudo the extension is tested with. */
const SUDO_TESTED_SINCE = "1.9";
const VERSION_LINE_MAX = 120;
const SETUID = 0o4000;

/** sudo flavour and version, setuid root; doas only: unsupported. */
export const sudoCheck = defineCheck("sudo", "sudo", async (ctx) => {
  const sudo = await firstExisting(ctx.sudoCandidates);
  const doas = await firstExisting(ctx.doasCandidates);
  if (!sudo) {
    if (doas) {
      return {
        status: "fail",
        detail: msg.sudoOnlyDoas(doas),
        fix: msg.sudoInstallOrRs(SUDO_RS_ASKPASS_SINCE),
      };
    }
    return {
      status: "fail",
      detail: msg.sudoNotFound(ctx.sudoCandidates.join(", ")),
      fix: msg.sudoInstall,
    };
  }
  const r = await ctx.run(sudo, ["-V"], { env: SUDO_ENV, timeoutMs: ctx.commandTimeoutMs });
  const findings: Finding[] = [];
  if (r.spawnError || r.timedOut) {
    const what = r.timedOut ? msg.sudoNoAnswer : msg.sudoCannotRun(String(r.spawnError));
    findings.push({ status: "fail", detail: what, fix: msg.sudoReinstall });
  } else {
    findings.push(versionFinding(parseSudoVersion(r.stdout || r.stderr)));
  }
  const st = await stat(sudo).catch(() => undefined);
  if (!st || st.uid !== 0 || (st.mode & SETUID) === 0) {
    findings.push({
      status: "fail",
      detail: msg.sudoNotSetuid(sudo),
      fix: msg.sudoNotSetuidFix(sudo),
    });
  }
  const merged = mergeFindings(findings);
  const doasNote = doas ? msg.sudoDoasUnused(doas) : "";
  return { ...merged, detail: `${merged.detail} (${sudo})${doasNote}` };
});

/** What `sudo -V` printed, classified. */
export interface SudoVersion {
  readonly flavour: "sudo" | "sudo-rs" | "unknown";
  /** `1.9.13p3`, `0.2.11`; absent when unrecognised. */
  readonly version?: string;
  /** The first non-empty line, without control characters. */
  readonly line: string;
}

/** Classifies the output of `sudo -V` (run with `LC_ALL=C`): which sudo, which version. */
export function parseSudoVersion(output: string): SudoVersion {
  const line = oneLine(output.split("\n").find((l) => l.trim() !== "") ?? "")
    .slice(0, VERSION_LINE_MAX);
  const classic = /^Sudo version (\d+\.\d+(?:\.\d+)?(?:[a-z]\d+)?)\b/.exec(line);
  if (classic) return { flavour: "sudo", version: classic[1], line };
  const rs = /^sudo-rs (\d+\.\d+\.\d+)\b/.exec(line);
  if (rs) return { flavour: "sudo-rs", version: rs[1], line };
  return { flavour: "unknown", line };
}

/** Numeric comparison of dotted versions (`1.9.13p3` compares as 1.9.13): -1, 0 or 1. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.split(".").map((p) => parseInt(p, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

function versionFinding(v: SudoVersion): Finding {
  if (v.flavour === "sudo" && v.version) {
    return compareVersions(v.version, SUDO_TESTED_SINCE) < 0
      ? {
        status: "warn",
        detail: msg.sudoOld(v.line),
        fix: msg.sudoOldFix,
      }
      : { status: "ok", detail: v.line };
  }
  if (v.flavour === "sudo-rs" && v.version) {
    return compareVersions(v.version, SUDO_RS_ASKPASS_SINCE) < 0
      ? {
        status: "fail",
        detail: msg.sudoRsOld(v.line, SUDO_RS_ASKPASS_SINCE),
        fix: msg.sudoRsOldFix(SUDO_RS_ASKPASS_SINCE),
      }
      : {
        status: "ok",
        detail: msg.sudoRsOk(v.line, SUDO_RS_ASKPASS_SINCE),
      };
  }
  return {
    status: "warn",
    detail: msg.sudoUnrecognised(v.line || msg.sudoNoOutput),
    fix: msg.sudoUseSupported(SUDO_RS_ASKPASS_SINCE),
  };
}

/** The worst verdict of several, their details and fixes joined. */
function mergeFindings(findings: readonly Finding[]): Finding {
  const rank: Record<CheckStatus, number> = { ok: 0, info: 1, warn: 2, fail: 3 };
  const worst = findings.reduce((a, b) => rank[b.status] > rank[a.status] ? b : a);
  const fixes = findings.map((f) => f.fix).filter((f): f is string => f !== undefined);
  return {
    status: worst.status,
    detail: findings.map((f) => f.detail).join("; "),
    ...(fixes.length > 0 ? { fix: fixes.join("; ") } : {}),
  };
}
