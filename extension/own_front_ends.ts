/**
 * The `sudo -n` front ends this pi process starts itself to ask root (the
 * pairing check of ADR 0005, the terminal check of ADR 0007). The pairing
 * checks look at every setuid-root front end of the user and must not count
 * these as strangers. One set per process: both checks may run at once.
 *
 * @module
 */

const KEY = Symbol.for("pi-sudo-prompt.own-front-ends");

/** pids of our own `sudo -n` children that are still running. */
export function ownFrontEnds(): Set<number> {
  const g = globalThis as unknown as Record<symbol, Set<number> | undefined>;
  return g[KEY] ??= new Set<number>();
}
