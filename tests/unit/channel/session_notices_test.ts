import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { NOTICE_INTERVAL_MS, observeSession } from "../../../extension/channel/session_notices.ts";
import type { SessionEvent } from "../../../extension/channel/session_types.ts";
import { DENY_REASONS } from "../../../askpass/protocol.ts";

function observed() {
  const notices: string[] = [];
  const modals: boolean[] = [];
  const recorded: SessionEvent[] = [];
  let answers = 0;
  let clock = 1_000_000;
  const on = observeSession({
    notify: (t) => notices.push(t),
    modalShown: (open) => modals.push(open),
    answered: () => answers++,
    record: (e) => recorded.push(e),
  }, () => clock);
  return {
    on,
    notices,
    modals,
    recorded,
    answers: () => answers,
    wait: (ms: number) => clock += ms,
  };
}

describe("session notices (what index.ts wires to the session's events)", () => {
  it("a modal shown once and closed once drives the terminal guard once each way; an answer ends the call's approval", () => {
    const o = observed();
    o.on({ kind: "prompted", requestId: "a", attempt: 1 });
    o.on({ kind: "prompted", requestId: "a", attempt: 2 }); // a second attempt: the same modal
    o.on({ kind: "answered", requestId: "a", attempt: 2 });
    o.on({ kind: "denied", requestId: "a", reason: DENY_REASONS.CANCELLED });
    assert.deepEqual(o.modals, [true, false]);
    assert.equal(o.answers(), 1);
    assert.equal(o.recorded.length, 4, "every event is recorded");
  });

  it("a refusal with its own notice shows it with the doctor hint; the same one again within the interval does not", () => {
    const o = observed();
    const refused: SessionEvent = {
      kind: "refused",
      reason: "terminal_shared",
      requestId: "r1",
      notice: "process 42 (cat) has this terminal open",
    };
    o.on(refused);
    o.on({ ...refused, requestId: "r2" });
    assert.equal(o.notices.length, 1);
    assert.match(o.notices[0], /^pi-sudo-prompt: no password prompt: process 42 \(cat\)/);
    assert.match(o.notices[0], /doctor terminal_shared/);
    o.on({ ...refused, requestId: "r3", notice: "something else" });
    assert.equal(o.notices.length, 2, "a new notice waits for no interval");
    o.wait(NOTICE_INTERVAL_MS);
    o.on({ ...refused, requestId: "r4", notice: "something else" });
    assert.equal(o.notices.length, 3);
  });

  it("other refusals show at most once per interval; a refusal of no request (a stray connection) never shows", () => {
    const o = observed();
    o.on({ kind: "refused", reason: "peer_exe_mismatch" });
    assert.equal(o.notices.length, 0);
    o.on({ kind: "refused", reason: "peer_exe_mismatch", requestId: "x" });
    o.on({ kind: "refused", reason: "helper_traced", requestId: "y" });
    assert.equal(o.notices.length, 1);
    assert.match(o.notices[0], /^pi-sudo-prompt: /);
    o.wait(NOTICE_INTERVAL_MS);
    o.on({ kind: "refused", reason: "helper_traced", requestId: "z" });
    assert.equal(o.notices.length, 2);
  });
});
