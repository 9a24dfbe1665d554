/**
 * The package version, equal to `package.json` and `deno.json` (a test checks all three). The
 * wire protocol has its own, `PROTOCOL_VERSION` in `protocol.ts`.
 *
 * @module
 */

/** The release version of pi-sudo-prompt. */
export const PACKAGE_VERSION = "0.1.0";
