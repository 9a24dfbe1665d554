/**
 * The Node version pi needs, checked first by `bin/pi-sudo-prompt.mjs` and by `install` for the
 * `node` on PATH. Plain JavaScript so that an old Node can load it and say what is wrong.
 *
 * @module
 */

/** The oldest Node that runs pi, and so these tools. */
export const MIN_NODE = [22, 19, 0];

/**
 * `undefined` when `version` (`v22.19.0`) is at least {@link MIN_NODE}, else one line saying so,
 * with the fix.
 * @param {string} version
 * @returns {string | undefined}
 */
export function nodeVersionProblem(version) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (m) {
    const have = m.slice(1).map(Number);
    const i = have.findIndex((n, j) => n !== MIN_NODE[j]);
    if (i === -1 || have[i] > MIN_NODE[i]) return undefined;
  }
  return `pi-sudo-prompt needs Node >= ${MIN_NODE.join(".")} (the version pi needs), ` +
    `this is ${version}: install it with \`npm install -g node@22\`, then run the command again`;
}
