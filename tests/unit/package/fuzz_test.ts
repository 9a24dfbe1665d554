/**
 * Property-based fuzzing with a FIXED seed (reproducible in CI): every
 * property of `tests/fuzz/properties.ts` with its modest `ciRuns`. The long,
 * randomly seeded run is `deno task fuzz`.
 */
import { describe, it } from "node:test";
import { ALL_PROPERTIES, CI_SEED } from "../../fuzz/properties.ts";

describe(`property-based fuzzing (fast-check, seed ${CI_SEED})`, () => {
  for (const property of ALL_PROPERTIES) {
    it(property.name, () => property.run({ numRuns: property.ciRuns, seed: CI_SEED }));
  }
});
