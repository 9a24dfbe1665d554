/**
 * The Node version pi needs, checked before anything else loads: by
 * `bin/pi-sudo-prompt.mjs` for itself, and by `pi-sudo-prompt install` for
 * the `node` on PATH that will run pi. Plain JavaScript so that an old Node
 * can load it and say what is wrong in one line.
 *
 * @module
 */

/** The oldest Node that runs pi, and so these tools. */
export const MIN_NODE = [22, 19, 0];

/**
 * `undefined` when `version` (like `v22.19.0`) is at least {@link MIN_NODE},
 * else the one line that says so and how to fix it.
 *
 * @param {string} version
 * @returns {string | undefined}
 */
export function nodeVersionProblem(version) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (m) {
    // The first part that differs from MIN_NODE decides; all equal is recent enough.
    const have = m.slice(1).map(Number);
    const i = have.findIndex((n, j) => n !== MIN_NODE[j]);
    if (i === -1 || have[i] > MIN_NODE[i]) return undefined;
  }
  return `pi-sudo-prompt needs Node >= ${MIN_NODE.join(".")} (the version pi needs), ` +
    `this is ${version}: install it with \`npm install -g node@22\`, then run the command again`;
}
