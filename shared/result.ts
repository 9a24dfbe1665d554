/**
 * The one shape of a decision's result, and its named reasons: each written once, as the value
 * that travels, with that value in capitals as its constant, so the two cannot drift apart.
 * @module
 */

/** A decision's result: its findings when `ok`, else a named reason and any details. */
export type Result<
  Found extends object,
  Reason extends string,
  Details extends object = Record<never, never>,
> =
  | ({ readonly ok: true } & Readonly<Found>)
  | ({ readonly ok: false; readonly reason: Reason } & Readonly<Details>);

/** Builds the frozen table `{ BAD_PATH: "bad_path", … }` of the given reasons. */
export function reasons<const R extends string>(
  ...spellings: readonly R[]
): { readonly [K in R as Uppercase<K>]: K } {
  const table: Record<string, string> = {};
  for (const spelling of spellings) {
    // Spellings are literals of the code: a bad one is caught at load.
    if (!/^[a-z][a-z0-9_]*$/.test(spelling) || spelling.toUpperCase() in table) {
      throw new Error(`reasons: ${spelling} is not a new snake_case reason`);
    }
    table[spelling.toUpperCase()] = spelling;
  }
  return Object.freeze(table) as { readonly [K in R as Uppercase<K>]: K };
}

/** One of the values of a {@link reasons} table. */
export type ReasonOf<T> = T[keyof T];
