import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { type SessionOptions, sessionSettings } from "../../../extension/channel/session_types.ts";

const prompter = { prompt: () => Promise.resolve({ kind: "cancelled" as const }) };

describe("session settings: test seams out of the product's options", () => {
  it("a limit or a path set among the options has no effect; as tuning it does", () => {
    const smuggled = {
      prompter,
      timeoutMs: 1,
      helperPath: "/tmp/rogue",
    } as unknown as SessionOptions;
    const settings = sessionSettings(smuggled, {});
    assert.equal(settings.timeoutMs, undefined);
    assert.equal(settings.helperPath, undefined);
    const tuned = sessionSettings({ prompter } as unknown as SessionOptions, { timeoutMs: 1 });
    assert.equal(tuned.timeoutMs, 1);
  });

  it("the extension starts its session with options only", () => {
    const source = readFileSync(new URL("../../../extension/index.ts", import.meta.url), "utf8");
    const calls = source.match(/startSession\(/g) ?? [];
    assert.equal(calls.length, 1);
    assert.doesNotMatch(source, /SessionTuning|pairing:|helperPath|denoPath|runtimeBase/);
    // One argument: the call's object literal closes the call.
    const call = source.slice(source.indexOf("startSession("));
    assert.match(call, /^startSession\(\{[\s\S]*?\n {4}\}\);/);
  });
});
