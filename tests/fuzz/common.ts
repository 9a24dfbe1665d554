/**
 * Shared shape of the property-based fuzz suites (fast-check).
 *
 * Every property is an async function of {@link FuzzOptions} that resolves
 * when `numRuns` generated cases pass and rejects with fast-check's report
 * (counterexample, seed, replay path) otherwise. A suite file exports a list
 * of {@link FuzzProperty}; `properties.ts` concatenates the lists, and both
 * the fixed-seed unit test and the long `deno task fuzz` run iterate over it.
 *
 * @module
 */
import fc from "fast-check";

/** How long and from where to run a property. */
export interface FuzzOptions {
  /** Generated cases (for batched properties: batches). */
  readonly numRuns: number;
  /** fast-check seed (32-bit integer); the same seed replays the same cases. */
  readonly seed: number;
}

/** One named property of the registry. */
export interface FuzzProperty {
  readonly name: string;
  /** Runs for the fixed-seed pass in `tests/unit/package/fuzz_test.ts` (keep it quick). */
  readonly ciRuns: number;
  /** Runs for the long `deno task fuzz` pass, unless `--runs` overrides it. */
  readonly longRuns: number;
  readonly run: (options: FuzzOptions) => Promise<void>;
}

/** fast-check parameters for a run: the seed, the run count, shrinking on. */
export function params<T>(options: FuzzOptions): fc.Parameters<T> {
  return { numRuns: options.numRuns, seed: options.seed };
}

/** Runs a synchronous property and turns its report into a rejection. */
export function checkSync<T>(property: fc.IProperty<T>, options: FuzzOptions): Promise<void> {
  try {
    fc.assert(property, params<T>(options));
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(withCause(error));
  }
}

/** Runs an asynchronous property; rejects with fast-check's report on failure. */
export async function checkAsync<T>(
  property: fc.IAsyncProperty<T>,
  options: FuzzOptions,
): Promise<void> {
  try {
    await fc.assert(property, params<T>(options));
  } catch (error) {
    throw withCause(error);
  }
}

/**
 * fast-check's report (seed, replay path, shrunk counterexample) with the
 * failing check's own message appended: fast-check keeps that in `cause`.
 */
function withCause(error: unknown): unknown {
  if (!(error instanceof Error) || !(error.cause instanceof Error)) return error;
  const report = new Error(`${error.message.trimEnd()}\nFailure: ${error.cause.message}`, {
    cause: error.cause,
  });
  return report;
}

/** Plain equality of two byte arrays. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Throws `message` (with the values as JSON) unless `condition` holds. */
export function expect(condition: boolean, message: string, ...values: unknown[]): void {
  if (!condition) {
    const detail = values.map((v) =>
      JSON.stringify(
        v,
        (_k, x) =>
          x instanceof Uint8Array
            ? `<bytes ${Array.from(x)}>`
            : typeof x === "bigint"
            ? `${x}n`
            : x,
      )
    );
    throw new Error(detail.length > 0 ? `${message}: ${detail.join(" ")}` : message);
  }
}
