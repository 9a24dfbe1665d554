/**
 * `mod.ts`, imported the way a user of the published module would: the
 * module doc's example runs as written, and the public API names the whole
 * protocol (both halves), the verification reasons beside `verifyRequester`,
 * and the types its functions take.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as api from "../../../mod.ts";
import type { IncomingRequest, SecretPromptRequest, SecretRequest } from "../../../mod.ts";

describe("mod.ts", () => {
  it("the module example works as written", () => {
    const frame = api.encodeRequest({
      id: api.newRequestId(),
      prompt: "[sudo] password for alice: ",
      pid: 4242,
    });
    const read = new api.FrameReader().push(frame);
    assert.ok(read.ok && read.body);
    const decoded = api.decodeRequest(read.body);
    assert.ok(decoded.ok);
    assert.equal(decoded.message.prompt, "[sudo] password for alice: ");
  });

  it("exports both halves of the protocol, the refusals and verifyRequester", async () => {
    for (
      const name of [
        "encodeRequest",
        "encodeSecretRequest",
        "decodeRequest",
        "decodeIncoming",
        "decodeReply",
        "encodeResponse",
        "encodeDenied",
        "verifyRequester",
        "scanSudoOptions",
        "sanitizePrompt",
        "helperEnvironment",
      ] as const
    ) assert.equal(typeof api[name], "function", name);
    assert.equal(typeof api.VERIFY_REFUSALS.PEER_CHANGED, "string");
    assert.equal(api.MAX_SECRET_ARGS > 0 && api.MAX_LABEL_BYTES > 0, true);

    // The secret half round-trips through the public API alone.
    const secret: Omit<SecretRequest, "type"> = await secretFields();
    const frame = api.encodeSecretRequest(secret);
    const read = new api.FrameReader().push(frame);
    assert.ok(read.ok && read.body);
    const decoded = api.decodeIncoming(read.body);
    assert.ok(decoded.ok);
    const message: IncomingRequest = decoded.message;
    assert.equal(message.type, "secret_request");
  });

  it("types a prompter's secret request", () => {
    // Checked by deno check: a value of the exported type, as a prompter receives it.
    const request: SecretPromptRequest = {
      requestId: api.newRequestId(),
      argv: ["/usr/bin/keepassxc-cli", "show"],
      cwd: "/home/alice",
      label: "unverified",
      allowlisted: false,
      traceable: true,
      deadline: Date.now() + 120_000,
      waiting: () => 0,
      recheck: () => Promise.resolve(true),
    };
    assert.equal(request.waiting(), 0);
  });
});

/** The fields of a secret request, typed by the exported `SecretRequest`. */
function secretFields(): Promise<Omit<SecretRequest, "type">> {
  return Promise.resolve({
    id: api.newRequestId(),
    pid: 4242,
    label: "KeePassXC master password",
    argv: ["/usr/bin/keepassxc-cli", "show", "-q", "db.kdbx", "entry"],
    cwd: "/home/alice",
    allowlisted: false,
    proof: api.newRequestId(),
  });
}
