/**
 * The one place where the terminal guardian's Deno flags are written down
 * (each is explained in `docs/permissions.md`).
 *
 * @module
 */
import { DENO_RUN_PINNED } from "../../askpass/helper_permissions.ts";

/**
 * argv of the guardian: the pinned `deno run` flags and FFI for exactly the
 * libc that pi itself has loaded. FFI is the only way to `ioctl` and `prctl`
 * from Deno; scoping it to one library file is the narrowest form Deno has.
 * `modalGone` is the line it shows if pi ends while a modal shows, in the
 * user's language (the guardian loads no language table).
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
