import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { reasons } from "../../../shared/result.ts";
import { ALLOWLIST_FILE_REFUSALS } from "../../../broker/allowlist.ts";
import { WALK_FAILURES } from "../../../kernel/proc_walk.ts";

describe("reasons: a reason is written once", () => {
  it("names each spelling by its capitals, in a frozen table", () => {
    const table = reasons("bad_path", "too_large");
    assert.deepEqual({ ...table }, { BAD_PATH: "bad_path", TOO_LARGE: "too_large" });
    assert.ok(Object.isFrozen(table));
    assert.equal(ALLOWLIST_FILE_REFUSALS.UNSAFE_PARENT, "unsafe_parent");
    assert.equal(WALK_FAILURES.WORKER_FAILED, "worker_failed");
  });

  it("refuses a spelling that is not snake_case, or one given twice", () => {
    for (const bad of ["Bad", "bad path", "", "1st", "bad-path"]) {
      assert.throws(() => reasons(bad), /is not a new snake_case reason/, bad);
    }
    assert.throws(() => reasons("twice", "twice"), /twice is not a new/);
  });
});
