/**
 * The pi entry point (`package.json` → `pi.extensions`), at the package root because pi names an
 * extension after its entry file's folder: `pi-sudo-prompt` here, `extension` otherwise.
 * @module
 */
export { default } from "./extension/index.ts";
