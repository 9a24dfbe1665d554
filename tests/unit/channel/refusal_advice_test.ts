/**
 * Every named refusal has advice, and its notice is one line that says what
 * to do and where the details are (`extension/channel/refusal_advice.ts`).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DENY_REASONS, PROTOCOL_ERRORS } from "../../../askpass/protocol.ts";
import { VERIFY_REFUSALS } from "../../../kernel/peer_verification.ts";
import { PIPE_HANDOVER_ERRORS } from "../../../kernel/sudo_pipe.ts";
import { CREDENTIAL_REFUSALS } from "../../../extension/channel/credential_policy.ts";
import { CONNECTION_ERRORS } from "../../../extension/channel/session_types.ts";
import { TERMINAL_REFUSALS } from "../../../extension/keyboard/terminal_holders.ts";
import { PAIRING_REFUSALS } from "../../../extension/pairing/sudo_pairing.ts";
import { ROOT_RUN_REFUSALS } from "../../../extension/channel/root_program.ts";
import {
  processRefusalNotice,
  refusalAdvice,
  refusalNotice,
  refusalReasons,
} from "../../../extension/channel/refusal_advice.ts";

const ALL_NAMED = [
  DENY_REASONS,
  PROTOCOL_ERRORS,
  VERIFY_REFUSALS,
  PIPE_HANDOVER_ERRORS,
  CREDENTIAL_REFUSALS,
  CONNECTION_ERRORS,
  TERMINAL_REFUSALS,
  PAIRING_REFUSALS,
  ROOT_RUN_REFUSALS,
].flatMap((named) => Object.values(named) as string[]);

// deno-lint-ignore no-control-regex -- the point of the test
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

describe("refusal advice", () => {
  it("covers exactly the named reasons, each with what it means and what to do", () => {
    assert.deepEqual([...refusalReasons()], [...new Set(ALL_NAMED)].sort());
    for (const reason of ALL_NAMED) {
      const advice = refusalAdvice(reason);
      assert.ok(advice, reason);
      assert.ok(advice.means.length > 10 && advice.todo.length > 3, reason);
      assert.ok(!CONTROL.test(advice.means + advice.todo), reason);
    }
  });

  it("a name that is no reason has no advice (no prototype keys either)", () => {
    assert.equal(refusalAdvice("toString"), undefined);
    assert.equal(refusalAdvice("__proto__"), undefined);
    assert.equal(refusalAdvice("not_a_reason"), undefined);
  });

  it("the notice is one line: the reason, what to do, and the doctor command", () => {
    for (const reason of ALL_NAMED) {
      const text = refusalNotice(reason);
      assert.ok(!CONTROL.test(text), text);
      assert.ok(text.includes(`(${reason}): ${refusalAdvice(reason)!.todo}`), text);
      assert.ok(text.endsWith(`details: /sudo-prompt doctor ${reason}`), text);
    }
    assert.match(refusalNotice(PROTOCOL_ERRORS.BAD_FIELD), /^refused a password request/);
    assert.equal(
      refusalNotice("not_a_reason"),
      "refused a password request (not_a_reason) · details: /sudo-prompt doctor not_a_reason",
    );
  });

  it("a process refusal names the reason, the pid, what was seen and what to do", () => {
    assert.match(
      processRefusalNotice({ reason: PAIRING_REFUSALS.OTHER_SUDO_WITHOUT_HELPER, pid: 77 }),
      /^other_sudo_without_helper \(pid 77\): another sudo of yours waits .*\. Stop it/,
    );
    assert.equal(processRefusalNotice({ reason: "not_a_reason" }), "not_a_reason");
  });
});
