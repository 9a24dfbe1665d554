/**
 * Parses the installed broker's `VERSION` file (written by `broker/install.sh`) in one place for
 * the session server, `pi-secret-run`, `status` and `doctor`. Pure: callers read the file.
 *
 * @module
 */

/** What a `VERSION` file says; a missing or malformed line is `undefined`. */
export interface BrokerVersion {
  /** The package version that installed the broker. */
  readonly version: string | undefined;
  /** The wire protocol the installed broker speaks. */
  readonly protocol: number | undefined;
}

/** Parses the text of a broker `VERSION` file. */
export function parseBrokerVersion(text: string): BrokerVersion {
  const version = /^version=(\S+)$/m.exec(text)?.[1];
  const protocol = /^protocol=(\d{1,6})$/m.exec(text)?.[1];
  return { version, protocol: protocol === undefined ? undefined : Number(protocol) };
}
