/**
 * The terminal guardian's Deno flags, in one place (each explained in `docs/permissions.md`).
 *
 * @module
 */
import { DENO_RUN_PINNED } from "../../askpass/helper_permissions.ts";

/**
 * argv of the guardian: the pinned flags and FFI for exactly the libc pi has
 * loaded. `modalGone`: its line if pi ends while a modal shows, in the user's
 * language (the guardian loads no language table).
 */
export function guardianArgv(
  denoPath: string,
  guardianPath: string,
  libcPath: string,
  ttyPath: string,
  modalGone: string,
): string[] {
  return [
    denoPath,
    ...DENO_RUN_PINNED,
    `--allow-ffi=${libcPath}`,
    guardianPath,
    libcPath,
    ttyPath,
    modalGone,
  ];
}
