/**
 * Whether a password request may be answered, judged by what sudo would do
 * with the password afterwards: keep a cached credential (a "ticket") or not.
 *
 * docs/design.md §2 invariant 3: an approval ends with the tool call or `!`
 * command that asked for it. sudo keys a ticket to the parent process of the
 * sudo (with no tty), so a ticket created inside a tool call lets any later
 * `sudo -n` of that parent (a background shell that outlives the call) run
 * as root without a modal. So a ticket may be made only while a call runs,
 * and every ticket is removed when such a call ends (pi's default, `"call"`);
 * with no call running, or in the per-sudo mode, a request whose sudo argv
 * (read by the server from `/proc/<sudo>/cmdline`) lacks `-k` (sudo's
 * `ignore_ticket`) is refused before any modal opens. See ADR 0006.
 *
 * @module
 */
import { scanSudoOptions } from "../../askpass/sudo_args.ts";
import { type ReasonOf, reasons, type Result } from "../../shared/result.ts";

/**
 * Named refusals of the credential policy:
 * - `would_cache_credentials`: sudo would keep a cached credential after the password (no `-k` in its argv).
 */
export const CREDENTIAL_REFUSALS = reasons("would_cache_credentials");

/** One of the values of {@link CREDENTIAL_REFUSALS}. */
export type CredentialRefusal = ReasonOf<typeof CREDENTIAL_REFUSALS>;

/**
 * How long an approval may last. `"call"` (pi's default, see
 * {@link resolveCacheMode}): sudo may cache the password while a tool call or
 * `!` command runs, so the later sudos of that call do not ask; the extension
 * removes every cached credential when the call ends (`call_credentials.ts`).
 * `"none"` (per-sudo, and the session server's own default): a password
 * answers one sudo and no credential is cached.
 */
export type CredentialCacheMode = "none" | "call";

/**
 * Decides a password request from the argv of the sudo that asks
 * (`sudoArgv[0]` is the program). Without `-k` in effect it is accepted only
 * when `cachingAllowed` (the opt-in mode, while a call is running), and then
 * reported as creating a ticket so the caller knows to remove it.
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

/**
 * True only in the opt-in `"call"` mode while a call is running: a ticket
 * created with no call running would have no call end to remove it.
 */
export function cachingAllowedNow(options: CachePolicyOptions): boolean {
  if (options.credentialCache !== "call") return false;
  try {
    return options.callInProgress?.() === true;
  } catch {
    return false; // fail closed
  }
}

/**
 * The mode from pi's flag and the environment (ADR 0006, as amended by issue
 * 22): one approval per tool call or `!` command (`"call"`) unless
 * `--sudo-strict` or `PI_SUDO_PROMPT_STRICT=1` asks for per-sudo (`"none"`).
 */
export function resolveCacheMode(
  strict: boolean,
  env: Readonly<Record<string, string | undefined>>,
): CredentialCacheMode {
  return strict || env.PI_SUDO_PROMPT_STRICT === "1" ? "none" : "call";
}
