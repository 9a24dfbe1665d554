/**
 * This extension's pi flags: `--sudo-strict` (every sudo asks, ADR 0006), `--sudo-refuse-risky`
 * (refuse what the modal would name in red), `--sudo-quiet` (no bell, title or notification).
 * @module
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { type CredentialCacheMode, resolveCacheMode } from "../channel/credential_policy.ts";
import { msg } from "../../shared/i18n/locale.ts";

/** What the flags (and their environment variables) select for a session. */
export interface SessionFlags {
  readonly cacheMode: CredentialCacheMode;
  readonly refuseRiskySudo: boolean;
  readonly quiet: boolean;
}

/** Declares the flags to pi (they show in `pi --help`). */
export function registerFlags(pi: ExtensionAPI): void {
  pi.registerFlag("sudo-strict", {
    type: "boolean",
    default: false,
    description: msg.flagStrict,
  });
  pi.registerFlag("sudo-refuse-risky", {
    type: "boolean",
    default: false,
    description: msg.flagRefuseRisky,
  });
  pi.registerFlag("sudo-quiet", {
    type: "boolean",
    default: false,
    description: msg.flagQuiet,
  });
}

/** The flags as set for this pi, with their environment variables. */
export function sessionFlags(
  pi: Pick<ExtensionAPI, "getFlag">,
  env: Record<string, string | undefined>,
): SessionFlags {
  return {
    cacheMode: resolveCacheMode(pi.getFlag("sudo-strict") === true, env),
    refuseRiskySudo: pi.getFlag("sudo-refuse-risky") === true ||
      env.PI_SUDO_PROMPT_REFUSE_RISKY === "1",
    quiet: pi.getFlag("sudo-quiet") === true || env.PI_SUDO_PROMPT_QUIET === "1",
  };
}
