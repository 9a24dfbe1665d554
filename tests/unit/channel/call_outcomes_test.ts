/**
 * What the agent hears of a request that ended without a password
 * (`extension/channel/call_outcomes.ts`): one fixed line per kind of ending,
 * to every call in progress, at most four, never twice the same.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CallOutcomes } from "../../../extension/channel/call_outcomes.ts";

const ASK = "Ask the user before you run sudo again.";

describe("call outcomes", () => {
  it("Escape, the timeout, a refusal and a wrong password each give their line; an answer none", () => {
    const o = new CallOutcomes();
    const call = o.open();
    o.note({ kind: "denied", requestId: "a", reason: "cancelled" });
    o.note({ kind: "denied", requestId: "b", reason: "timeout" });
    o.note({ kind: "refused", requestId: "c", reason: "peer_exe_mismatch" });
    o.note({ kind: "answered", requestId: "d", attempt: 1 });
    o.note({ kind: "refused", reason: "malformed_frame" }); // no request of a call
    assert.deepEqual(o.close(call), [
      `pi-sudo-prompt: the user declined the sudo password request. ${ASK}`,
      `pi-sudo-prompt: the sudo password request timed out: nobody answered in time. ${ASK}`,
      `pi-sudo-prompt: pi refused the sudo password request (peer_exe_mismatch). ${ASK}`,
    ]);
  });

  it("a secret request is named so; every open call hears it; at most four lines, none twice", () => {
    const o = new CallOutcomes();
    const [a, b] = [o.open(), o.open()];
    o.note({
      kind: "queued",
      requestId: "s",
      request: "secret",
      argv: ["/bin/true"],
      attempt: 1,
      verifyMs: 1,
    });
    o.note({ kind: "denied", requestId: "s", reason: "cancelled" });
    assert.deepEqual(o.close(a), [`pi-sudo-prompt: the user declined the secret request. ${ASK}`]);
    for (const id of ["1", "2", "3", "4", "5"]) {
      o.note({ kind: "denied", requestId: id, reason: "cancelled" });
      o.note({ kind: "denied", requestId: id, reason: "attempts_exhausted" });
      o.note({ kind: "refused", requestId: id, reason: "helper_traced" });
      o.note({ kind: "denied", requestId: id, reason: "timeout" });
    }
    o.note({ kind: "refused", requestId: "6", reason: "risky_sudo" });
    assert.equal(o.close(b).length, 4);
  });

  it("the user's reply reaches the agent in the line, quoted as their words and sanitised", () => {
    const o = new CallOutcomes();
    const call = o.open();
    o.note({
      kind: "denied",
      requestId: "r",
      reason: "cancelled",
      reply: "don't touch /etc\x1b[2J\u202e, use the venv",
    });
    assert.deepEqual(o.close(call), [
      "pi-sudo-prompt: the user declined the sudo password request, and replied (the user's own " +
      `words): «don't touch /etc, use the venv». ${ASK}`,
    ]);
  });
});
