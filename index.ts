/**
 * The pi entry point (`package.json` → `pi.extensions`). It sits at the
 * package root because pi names an extension after the folder of its entry
 * file: here that is the package's own folder, `pi-sudo-prompt`, where
 * `extension/index.ts` would be listed as `extension`. The extension itself
 * lives in `extension/`.
 *
 * @module
 */
export { default } from "./extension/index.ts";
