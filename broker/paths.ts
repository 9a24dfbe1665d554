/**
 * Where the root-owned parts live once installed (docs/design.md §5), in one place for
 * the installer, the broker, `pi-secret-run`, the extension and `doctor`.
 *
 * @module
 */

/** Root-owned directory with the broker launcher, sources and a deno copy. */
export const BROKER_ROOT = "/usr/local/libexec/pi-sudo-prompt";
/** The launcher sudo runs (NOPASSWD) as root. */
export const BROKER_LAUNCHER = `${BROKER_ROOT}/pi-secret-broker`;
/** Root-owned copy of the deno binary the broker (and hardened helper) run on. */
export const ROOT_DENO = `${BROKER_ROOT}/deno`;
/** Installed sources (broker and shared modules), root-owned. */
export const ROOT_SOURCES = `${BROKER_ROOT}/src`;
/** `version=<package version>` and `protocol=<protocol version>` lines. */
export const BROKER_VERSION_FILE = `${BROKER_ROOT}/VERSION`;
/** NOPASSWD for the broker launcher only; named to sort last, as sudo applies the last match. */
export const SUDOERS_FILE = "/etc/sudoers.d/zz-pi-sudo-prompt";
/** The rule's older name; merged into {@link SUDOERS_FILE} and removed on upgrade. */
export const LEGACY_SUDOERS_FILE = "/etc/sudoers.d/pi-sudo-prompt";
/** The allowlist of argument shapes (root-owned, not group/other writable). */
export const ALLOWLIST_PATH = "/etc/pi-sudo-prompt/allowlist";
/** Where the broker writes its per-request proof files (root 0711, made on demand). */
export const PROOF_DIR = "/run/pi-sudo-prompt";
/** Root-owned script that appends one confirmed entry (`/sudo-prompt allow`). */
export const ALLOWLIST_APPEND = `${BROKER_ROOT}/allowlist-append`;
