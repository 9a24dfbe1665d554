/**
 * Whether a password request may be answered, judged by whether sudo would then
 * keep a cached credential (a "ticket", keyed to the sudo's parent: a background
 * shell outliving the call could use it; docs/design.md §2 invariant 3, ADR 0006).
 * A ticket may be made only while a call runs, and is removed at its end; with no
 * call running, or per-sudo, a sudo argv (from `/proc`) without `-k` is refused.
 *
 * @module
 */
import { scanSudoOptions } from "../../askpass/sudo_args.ts";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";

/** `would_cache_credentials`: sudo would keep a cached credential (no `-k` in its argv). */
export const CREDENTIAL_REFUSALS = reasons("would_cache_credentials");

/** One of the values of {@link CREDENTIAL_REFUSALS}. */
export type CredentialRefusal = ReasonOf<typeof CREDENTIAL_REFUSALS>;

/**
 * How long an approval lasts: `"call"` (pi's default): sudo may cache while a call runs,
 * removed at its end (`call_credentials.ts`); `"none"` (per-sudo, the server's default): no cache.
 */
export type CredentialCacheMode = "none" | "call";

/**
 * Decides a request from its sudo's argv (`sudoArgv[0]` is the program): without
 * `-k`, accepted only when `cachingAllowed`, as creating a ticket the caller removes.
 */
export function credentialDecision(
  sudoArgv: readonly string[],
  cachingAllowed: boolean,
): Result<{ createsTicket: boolean }, CredentialRefusal> {
  if (sudoArgv.length > 0 && scanSudoOptions(sudoArgv.slice(1)).resetTimestamp) {
    return { ok: true, createsTicket: false };
  }
  if (cachingAllowed) return { ok: true, createsTicket: true };
  return { ok: false, reason: CREDENTIAL_REFUSALS.WOULD_CACHE_CREDENTIALS };
}

/** The session options that decide whether a ticket may be created right now (`SessionOptions`). */
export interface CachePolicyOptions {
  readonly credentialCache?: CredentialCacheMode;
  readonly callInProgress?: () => boolean;
}

/** True only in `"call"` mode while a call runs: else no call's end would remove the ticket. */
export function cachingAllowedNow(options: CachePolicyOptions): boolean {
  if (options.credentialCache !== "call") return false;
  try {
    return options.callInProgress?.() === true;
  } catch {
    return false; // fail closed
  }
}

/** `"call"` unless `--sudo-strict` or `PI_SUDO_PROMPT_STRICT=1` (ADR 0006, amended by issue 22). */
export function resolveCacheMode(
  strict: boolean,
  env: Readonly<Record<string, string | undefined>>,
): CredentialCacheMode {
  return strict || env.PI_SUDO_PROMPT_STRICT === "1" ? "none" : "call";
}
