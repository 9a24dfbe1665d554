/**
 * Every property-based fuzz property of the project, as one registry.
 *
 * Each suite file exports its properties as functions of
 * `{ numRuns, seed }` (rejecting with fast-check's report) and a list of
 * {@link FuzzProperty}. To add a suite (the allowlist parser and matcher,
 * for instance), write `tests/fuzz/allowlist_props.ts` exporting
 * `ALLOWLIST_PROPERTIES` and add it to {@link ALL_PROPERTIES} below: both the
 * fixed-seed unit test and `deno task fuzz` pick it up from there.
 *
 * @module
 */
import type { FuzzProperty } from "./common.ts";
import { PROTOCOL_PROPERTIES } from "./protocol_props.ts";
import { PROC_PROPERTIES } from "./proc_props.ts";
import { SUDO_PROPERTIES } from "./sudo_props.ts";

export type { FuzzOptions, FuzzProperty } from "./common.ts";
export * from "./protocol_props.ts";
export * from "./proc_props.ts";
export * from "./sudo_props.ts";
export { sudoOptionModel } from "./sudo_model.ts";

/** All properties, in the order they run. */
export const ALL_PROPERTIES: readonly FuzzProperty[] = [
  ...PROTOCOL_PROPERTIES,
  ...PROC_PROPERTIES,
  ...SUDO_PROPERTIES,
];

/** The seed of the fixed-seed pass in CI. */
export const CI_SEED = 20261130;
