/**
 * `ops/pi_sources.ts`: which of pi's settings entries load this copy,
 * and the root-owned install command that fits each way of installing it
 * (the doctor's hardened-mode fix). `bin/node_version.mjs`: the Node pi needs.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  matchingSources,
  piRemoveCommand,
  rootOwnedInstallFix,
  shellWord,
  sourceTarget,
} from "../../../ops/pi_sources.ts";
import { MIN_NODE, nodeVersionProblem } from "../../../bin/node_version.mjs";

const AGENT = "/home/u/.pi/agent";
const NONE = new Map<string, string>();

describe("pi sources", () => {
  it("resolves npm, git and local entries the way pi does", () => {
    assert.deepEqual(sourceTarget("npm:pi-sudo-prompt@0.1.0", AGENT, AGENT), {
      kind: "npm",
      name: "pi-sudo-prompt",
    });
    assert.deepEqual(sourceTarget("npm:@scope/x", AGENT, AGENT), { kind: "npm", name: "@scope/x" });
    assert.deepEqual(sourceTarget("git:github.com/u/pi-sudo-prompt@v1", AGENT, AGENT), {
      kind: "git",
      path: `${AGENT}/git/github.com/u/pi-sudo-prompt`,
    });
    assert.deepEqual(sourceTarget("../../src/pi-sudo-prompt", AGENT, AGENT), {
      kind: "local",
      path: "/home/u/src/pi-sudo-prompt",
    });
    assert.deepEqual(sourceTarget("/opt/p", AGENT, AGENT), { kind: "local", path: "/opt/p" });
    assert.equal(sourceTarget("https://example.com/x", AGENT, AGENT), undefined);
    assert.equal(sourceTarget("git:../../etc", AGENT, AGENT), undefined);
  });

  it("matches only the entries that load this copy", () => {
    const root = "/home/u/src/pi-sudo-prompt";
    const packages = [
      "../../src/pi-sudo-prompt",
      { source: "/home/u/src/pi-sudo-prompt", extensions: [] },
      "npm:pi-sudo-prompt",
      "npm:other",
      "/home/u/src/other",
      42,
      { source: 7 },
    ];
    assert.deepEqual(matchingSources(packages, "user", AGENT, AGENT, root, NONE), [
      // pi remove resolves a relative path from the current directory: give it the absolute one.
      { source: "/home/u/src/pi-sudo-prompt", scope: "user" },
      { source: "/home/u/src/pi-sudo-prompt", scope: "user" },
    ]);
    // npm:pi-sudo-prompt is this copy only when it lives in a node_modules.
    const npmRoot = "/home/u/.npm-global/lib/node_modules/pi-sudo-prompt";
    assert.deepEqual(matchingSources(packages, "project", AGENT, AGENT, npmRoot, NONE), [
      { source: "npm:pi-sudo-prompt", scope: "project" },
    ]);
    // A symlinked local path matches through its real path.
    const real = new Map([["/home/u/link", root]]);
    assert.deepEqual(matchingSources(["/home/u/link"], "user", AGENT, AGENT, root, real), [
      { source: "/home/u/link", scope: "user" },
    ]);
    assert.deepEqual(matchingSources({ not: "a list" }, "user", AGENT, AGENT, root, NONE), []);
  });

  it("pi remove names the scope and quotes the source", () => {
    assert.equal(
      piRemoveCommand({ source: "npm:pi-sudo-prompt", scope: "user" }),
      "pi remove npm:pi-sudo-prompt",
    );
    assert.equal(
      piRemoveCommand({ source: "../my dir", scope: "project" }),
      "pi remove -l '../my dir'",
    );
    assert.equal(shellWord("it's"), `'it'\\''s'`);
  });

  it("the root-owned install fix fits each install kind", () => {
    const npmRoot = "/home/u/.npm-global/lib/node_modules/pi-sudo-prompt";
    assert.equal(
      rootOwnedInstallFix(npmRoot, "0.1.0", [{ source: "npm:pi-sudo-prompt", scope: "user" }]),
      "sudo npm install -g pi-sudo-prompt@0.1.0 && pi remove npm:pi-sudo-prompt && " +
        'pi install "$(sudo npm root -g)/pi-sudo-prompt"',
    );
    const checkout = "/home/u/src/pi-sudo-prompt";
    assert.equal(
      rootOwnedInstallFix(checkout, "0.1.0", [{ source: checkout, scope: "user" }]),
      "check that /home/u/src/pi-sudo-prompt holds only changes you made (git status), then: " +
        'cd "$(mktemp -d)" && npm pack /home/u/src/pi-sudo-prompt && ' +
        "sudo npm install -g ./pi-sudo-prompt-0.1.0.tgz && pi remove /home/u/src/pi-sudo-prompt && " +
        'pi install "$(sudo npm root -g)/pi-sudo-prompt"',
    );
    const git = `${AGENT}/git/github.com/u/pi-sudo-prompt`;
    assert.match(
      rootOwnedInstallFix(git, "0.1.0", [{
        source: "git:github.com/u/pi-sudo-prompt",
        scope: "user",
      }]),
      /npm pack \/home\/u\/\.pi\/agent\/git\/github\.com\/u\/pi-sudo-prompt && .* && pi remove git:github\.com\/u\/pi-sudo-prompt && /,
    );
    // Not registered at all (pi -e): remove by path, which pi ignores harmlessly.
    assert.match(
      rootOwnedInstallFix(checkout, "0.1.0", []),
      / && pi remove \/home\/u\/src\/pi-sudo-prompt && /,
    );
  });
});

describe("node version", () => {
  it("accepts the Node pi needs and newer, names the fix otherwise", () => {
    assert.deepEqual(MIN_NODE, [22, 19, 0]);
    for (const ok of ["v22.19.0", "v22.23.3", "v23.0.0", "v24.1.0", "22.19.1"]) {
      assert.equal(nodeVersionProblem(ok), undefined, ok);
    }
    for (const old of ["v22.18.9", "v20.20.2", "v18.19.0", "garbage"]) {
      assert.equal(
        nodeVersionProblem(old),
        `pi-sudo-prompt needs Node >= 22.19.0 (the version pi needs), this is ${old}: ` +
          "install it with `npm install -g node@22`, then run the command again",
      );
    }
  });
});
