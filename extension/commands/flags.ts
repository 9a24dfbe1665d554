/**
 * pi's command-line flags of this extension, declared and read in one
 * place: `--sudo-strict` makes every sudo ask (ADR 0006);
 * `--sudo-refuse-risky` refuses what the modal would otherwise name in red;
 * `--sudo-quiet` keeps a modal from calling the user (bell, title, notification).
 *
 * @module
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { type CredentialCacheMode, resolveCacheMode } from "../channel/credential_policy.ts";

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
    description: "pi-sudo-prompt: every sudo asks (per-sudo approval; sudo caches nothing). " +
      "The default is one approval per tool call or ! command (also PI_SUDO_PROMPT_STRICT=1)",
  });
  pi.registerFlag("sudo-refuse-risky", {
    type: "boolean",
    default: false,
    description: "pi-sudo-prompt: refuse a sudo that lets its environment choose what root " +
      "runs (-s, -E, VAR=value) or runs a program you could have written, instead of warning " +
      "in red (also PI_SUDO_PROMPT_REFUSE_RISKY=1)",
  });
  pi.registerFlag("sudo-quiet", {
    type: "boolean",
    default: false,
    description: "pi-sudo-prompt: a modal does not ring the bell, set the terminal title or send " +
      "a desktop notification (also PI_SUDO_PROMPT_QUIET=1)",
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
