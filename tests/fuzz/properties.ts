/**
 * Every property-based fuzz property of the project, as one registry.
 *
 * Each suite file exports its properties as functions of
 * `{ numRuns, seed }` (rejecting with fast-check's report) and a list of
 * {@link FuzzProperty}. To add a suite, write one more file under
 * `tests/fuzz/` and add its list to {@link ALL_PROPERTIES} below (the
 * allowlist suite, written to its own interface, is adapted here): both the
 * fixed-seed unit test and `deno task fuzz` pick it up from there.
 *
 * @module
 */
import type { FuzzProperty } from "./common.ts";
import { PROTOCOL_PROPERTIES } from "./protocol_props.ts";
import { PROC_PROPERTIES } from "./proc_props.ts";
import { SUDO_PROPERTIES } from "./sudo_props.ts";
import { ALLOWLIST_PROPERTIES } from "./allowlist_properties.ts";

export type { FuzzOptions, FuzzProperty } from "./common.ts";
export * from "./protocol_props.ts";
export * from "./proc_props.ts";
export * from "./sudo_props.ts";
export { sudoOptionModel } from "./sudo_model.ts";

/** The allowlist suite (synchronous, throwing functions by name) in registry form. */
const ALLOWLIST: readonly FuzzProperty[] = Object.entries(ALLOWLIST_PROPERTIES).map((
  [name, property],
) => ({
  name: `allowlist: ${name}`,
  ciRuns: 300,
  longRuns: 30000,
  run: (options) => {
    try {
      property(options);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  },
}));

/** All properties, in the order they run. */
export const ALL_PROPERTIES: readonly FuzzProperty[] = [
  ...PROTOCOL_PROPERTIES,
  ...PROC_PROPERTIES,
  ...SUDO_PROPERTIES,
  ...ALLOWLIST,
];

/** The seed of the fixed-seed pass in CI. */
export const CI_SEED = 20261130;
