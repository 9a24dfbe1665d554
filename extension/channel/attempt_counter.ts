/**
 * Counts password attempts per sudo process (sudo runs a fresh helper per try),
 * keyed on (pid, start time) so a recycled pid starts from zero.
 *
 * @module
 */
import type { ProcessRef } from "../../kernel/peer_verification.ts";

/** Sudo processes remembered (the oldest are forgotten first). */
const CAPACITY = 256;

/** Bounded map from a sudo process to the passwords already submitted to it. */
export class AttemptCounter {
  readonly #submitted = new Map<string, number>();

  /** The 1-based number of the attempt about to be made for `sudo`. */
  next(sudo: ProcessRef): number {
    return (this.#submitted.get(key(sudo)) ?? 0) + 1;
  }

  /** Records that a password was submitted to `sudo`. */
  recordSubmit(sudo: ProcessRef): void {
    const k = key(sudo);
    const n = (this.#submitted.get(k) ?? 0) + 1;
    this.#submitted.delete(k); // re-insert to keep insertion order = recency
    this.#submitted.set(k, n);
    while (this.#submitted.size > CAPACITY) {
      this.#submitted.delete(this.#submitted.keys().next().value as string);
    }
  }
}

function key(ref: ProcessRef): string {
  return `${ref.pid}:${ref.startTime}`;
}
