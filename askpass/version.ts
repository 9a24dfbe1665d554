/**
 * The package version, kept equal to `package.json` and `deno.json` (a test
 * checks all three). The wire protocol has its own number,
 * `PROTOCOL_VERSION` in `protocol.ts`, which changes only when the frames do.
 *
 * @module
 */

/** The release version of pi-sudo-prompt. */
export const PACKAGE_VERSION = "0.1.0";
