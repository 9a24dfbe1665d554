/**
 * Every named refusal is in one of about thirty groups with its advice, has
 * its detail line for the doctor, and its notice is one line that says what
 * happened, what to do and where the details are
 * (`extension/channel/refusal_advice.ts`, `ops/doctor/reason_details.ts`).
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
} from "../../../extension/channel/refusal_advice.ts";
import type { NamedReason } from "../../../extension/channel/refusal_advice.ts";
import { REASON_DETAILS } from "../../../ops/doctor/reason_details.ts";
import { en } from "../../../shared/i18n/en.ts";
import { toolsEn } from "../../../shared/i18n/tools_en.ts";

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
  it("covers exactly the named reasons, each in a group with a title and what to do, and its detail line", () => {
    // The doctor lists (and explains only) the reasons with a detail line.
    assert.deepEqual(Object.keys(REASON_DETAILS).sort(), [...new Set(ALL_NAMED)].sort());
    const groups = new Set<string>();
    for (const reason of ALL_NAMED) {
      const advice = refusalAdvice(reason);
      assert.ok(advice, reason);
      groups.add(advice.group);
      assert.ok(advice.title.length > 5 && advice.todo.length > 3, reason);
      assert.ok(!CONTROL.test(advice.title + advice.todo), reason);
      const detail = REASON_DETAILS[reason as NamedReason];
      assert.ok(detail.length > 10 && !CONTROL.test(detail), reason);
    }
    // About thirty groups stand for every reason (docs/design.md §1).
    assert.ok(groups.size >= 25 && groups.size <= 32, String(groups.size));
    assert.ok(ALL_NAMED.length > 2 * groups.size, String(ALL_NAMED.length));
  });

  it("pi's process loads the groups, not the detail lines (the doctor prints those)", () => {
    const piTable = en as Readonly<Record<string, unknown>>;
    for (const key of Object.keys(toolsEn).filter((k) => k.startsWith("why"))) {
      assert.ok(!Object.hasOwn(piTable, key), key);
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
      const advice = refusalAdvice(reason)!;
      assert.ok(text.includes(`: ${advice.title} (${reason}): ${advice.todo}`), text);
      assert.ok(text.endsWith(`details: /sudo-prompt doctor ${reason}`), text);
    }
    assert.match(refusalNotice(PROTOCOL_ERRORS.BAD_FIELD), /^refused a password request/);
    assert.equal(
      refusalNotice("not_a_reason"),
      "refused a password request (not_a_reason) · details: /sudo-prompt doctor not_a_reason",
    );
  });

  it("a process refusal names what happened, the reason, the pid and what to do", () => {
    assert.match(
      processRefusalNotice({ reason: PAIRING_REFUSALS.OTHER_SUDO_WITHOUT_HELPER, pid: 77 }),
      /^another sudo waits that could take your password \(other_sudo_without_helper, pid 77\)\. Stop it/,
    );
    assert.equal(processRefusalNotice({ reason: "not_a_reason" }), "not_a_reason");
  });
});
