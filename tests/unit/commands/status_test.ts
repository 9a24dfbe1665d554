/**
 * `/sudo-prompt status`: the system-log line reports what this session's
 * audit log did (its own sink's state and counts), not a fresh probe.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { statusLines } from "../../../extension/commands/status.ts";

const STORED = ["broker: not installed", "allowlist: 0 entries", "", "audit log: /x", "  (none)"];

describe("status", () => {
  it("the system-log line comes from the session's audit log, under the stored audit lines", () => {
    const sent = statusLines(undefined, STORED, { syslog: "ok", syslogSent: 7, syslogDropped: 1 });
    assert.ok(
      sent.includes("  copy in the system log (journalctl -t pi-sudo-prompt): 7 sent, 1 dropped"),
      sent.join("\n"),
    );
    assert.equal(
      sent.indexOf("  copy in the system log (journalctl -t pi-sudo-prompt): 7 sent, 1 dropped"),
      sent.indexOf("audit log: /x") + 1,
      sent.join("\n"),
    );
    const none = statusLines(undefined, STORED, {
      syslog: "syslog_socket_missing",
      syslogSent: 0,
      syslogDropped: 0,
    });
    assert.ok(none.includes("  no copy in the system log: syslog socket missing"), none.join("\n"));
    const closed = statusLines(undefined, STORED);
    assert.ok(closed.includes("  not open in this session"), closed.join("\n"));
  });
});
