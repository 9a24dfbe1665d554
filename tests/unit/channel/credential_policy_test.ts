/**
 * The credential policy (ADR 0006): the pure decision on sudo's argv, the
 * mode from flags and environment, the per-call bookkeeping, and the
 * generated `sudo` wrapper run for real under dash with a stand-in for sudo
 * that prints the argv it receives.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  cachingAllowedNow,
  CREDENTIAL_REFUSALS,
  type CredentialCacheMode,
  credentialDecision,
  resolveCacheMode,
} from "../../../extension/channel/credential_policy.ts";
import { CallTracker } from "../../../extension/channel/call_credentials.ts";
import { sudoWrapperScript } from "../../../extension/channel/shell_injection.ts";

const REFUSED = { ok: false, reason: CREDENTIAL_REFUSALS.WOULD_CACHE_CREDENTIALS };

describe("credentialDecision", () => {
  it("a sudo without -k is refused would_cache_credentials", () => {
    assert.deepEqual(credentialDecision(["/usr/bin/sudo", "-A", "true"], false), REFUSED);
  });

  it("-k in any form sudo reads as its own option is accepted, creating no ticket", () => {
    for (
      const argv of [
        ["/usr/bin/sudo", "-A", "-k", "true"],
        ["/usr/bin/sudo", "-kA", "true"],
        ["/usr/bin/sudo", "-A", "--reset", "id"],
        ["sudo", "-A", "FOO=1", "-k", "id"],
      ]
    ) {
      assert.deepEqual(
        credentialDecision(argv, false),
        { ok: true, createsTicket: false },
        argv.join(" "),
      );
    }
  });

  it("a -k that is not sudo's option does not count", () => {
    for (
      const argv of [
        ["/usr/bin/sudo", "-A", "true", "-k"],
        ["/usr/bin/sudo", "-A", "-u", "-k", "true"],
        ["/usr/bin/sudo", "-A", "-p", "-k", "true"],
        ["/usr/bin/sudo", "-A", "--", "-k"],
        ["/usr/bin/sudo", "-A", "-k", "-K"],
        ["/usr/bin/sudo", "-A", "-N", "true"],
        [],
      ]
    ) {
      assert.deepEqual(credentialDecision(argv, false), REFUSED, argv.join(" "));
    }
  });

  it("the opt-in mode accepts a sudo without -k and says it creates a ticket", () => {
    assert.deepEqual(credentialDecision(["/usr/bin/sudo", "-A", "true"], true), {
      ok: true,
      createsTicket: true,
    });
  });
});

describe("cachingAllowedNow and resolveCacheMode", () => {
  it("caching only in the call mode, and only while a call runs", () => {
    assert.equal(cachingAllowedNow({}), false);
    assert.equal(cachingAllowedNow({ credentialCache: "none", callInProgress: () => true }), false);
    assert.equal(cachingAllowedNow({ credentialCache: "call" }), false);
    assert.equal(
      cachingAllowedNow({ credentialCache: "call", callInProgress: () => false }),
      false,
    );
    assert.equal(cachingAllowedNow({ credentialCache: "call", callInProgress: () => true }), true);
    const throwing = () => {
      throw new Error("x");
    };
    assert.equal(cachingAllowedNow({ credentialCache: "call", callInProgress: throwing }), false);
  });

  it("pi's default is one approval per call; per-sudo is --sudo-strict or PI_SUDO_PROMPT_STRICT=1", () => {
    assert.equal(resolveCacheMode(false, {}), "call");
    assert.equal(resolveCacheMode(false, { PI_SUDO_PROMPT_STRICT: "1" }), "none");
    assert.equal(resolveCacheMode(false, { PI_SUDO_PROMPT_STRICT: "yes" }), "call");
    assert.equal(resolveCacheMode(true, {}), "none");
  });
});

describe("CallTracker", () => {
  it("a call ending after an answer given during it must remove credentials", () => {
    const t = new CallTracker();
    assert.equal(t.inProgress(), false);
    const a = t.begin();
    assert.equal(t.inProgress(), true);
    assert.equal(t.end(a), false, "no answer: nothing to remove");
    const b = t.begin();
    t.noteAnswer();
    assert.equal(t.end(b), true);
    assert.equal(t.inProgress(), false);
  });

  it("overlapping calls: every call that spans the answer removes (either may own the ticket)", () => {
    const t = new CallTracker();
    const a = t.begin();
    const b = t.begin();
    t.noteAnswer();
    const c = t.begin(); // began after the answer
    assert.equal(t.end(a), true);
    assert.equal(t.inProgress(), true);
    assert.equal(t.end(c), false);
    assert.equal(t.end(b), true);
    assert.equal(t.inProgress(), false);
  });
});

/** Runs the generated wrapper under dash; the stand-in "sudo" prints one argument a line. */
async function wrapperArgv(cache: CredentialCacheMode, args: string[]): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "pi-wrapper-test-"));
  try {
    const fake = join(dir, "fake-sudo");
    await writeFile(fake, '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n');
    await chmod(fake, 0o700);
    const wrapper = join(dir, "sudo");
    await writeFile(wrapper, sudoWrapperScript(fake, cache));
    await chmod(wrapper, 0o700);
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        "/bin/sh",
        [wrapper, ...args],
        { timeout: 5000 },
        (e, so) => e ? reject(e) : resolve(so),
      )
    );
    return out === "" ? [] : out.replace(/\n$/, "").split("\n");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("the generated sudo wrapper", () => {
  const CASES: [string[], string[], string[]][] = [
    // args, per-sudo ("none") argv, per-call ("call") argv; a bare program
    // name found in a root-owned directory is passed as its absolute path
    [["id", "-u"], ["-A", "-k", "/usr/bin/id", "-u"], ["-A", "/usr/bin/id", "-u"]],
    [["-k", "id", "-u"], ["-A", "-k", "/usr/bin/id", "-u"], ["-A", "-k", "/usr/bin/id", "-u"]],
    [["-kA", "true"], ["-kA", "/usr/bin/true"], ["-kA", "/usr/bin/true"]],
    [["-A", "true"], ["-k", "-A", "/usr/bin/true"], ["-A", "/usr/bin/true"]],
    [["--reset", "true"], ["-A", "--reset", "/usr/bin/true"], ["-A", "--reset", "/usr/bin/true"]],
    [["-u", "-k", "true"], ["-A", "-k", "-u", "-k", "/usr/bin/true"], [
      "-A",
      "-u",
      "-k",
      "/usr/bin/true",
    ]],
    [["true", "-k"], ["-A", "-k", "/usr/bin/true", "-k"], ["-A", "/usr/bin/true", "-k"]],
    [["-S", "true"], ["-k", "-S", "/usr/bin/true"], ["-S", "/usr/bin/true"]],
    [["-n", "id"], ["-A", "-k", "-n", "/usr/bin/id"], ["-A", "-n", "/usr/bin/id"]],
    [["-K"], ["-A", "-k", "-K"], ["-A", "-K"]],
    // what is not a program run as given, or not found in root's directories, is left alone
    [["-s", "id"], ["-A", "-k", "-s", "id"], ["-A", "-s", "id"]],
    [["-e", "hosts"], ["-A", "-k", "-e", "hosts"], ["-A", "-e", "hosts"]],
    [["./x.sh", "a"], ["-A", "-k", "./x.sh", "a"], ["-A", "./x.sh", "a"]],
    [["no-such-program"], ["-A", "-k", "no-such-program"], ["-A", "no-such-program"]],
    [["FOO=1", "--", "id", "a b"], ["-A", "-k", "FOO=1", "--", "/usr/bin/id", "a b"], [
      "-A",
      "FOO=1",
      "--",
      "/usr/bin/id",
      "a b",
    ]],
    [[], ["-A"], ["-A"]], // a bare sudo still prints its usage
  ];
  for (const [args, none, call] of CASES) {
    it(`sudo ${args.join(" ")} → per sudo: ${none.join(" ")}; per call: ${call.join(" ")}`, async () => {
      assert.deepEqual(await wrapperArgv("none", args), none);
      assert.deepEqual(await wrapperArgv("call", args), call);
    });
  }

  it("the per-sudo wrapper's argv always passes the server's policy", async () => {
    for (const [args] of CASES) {
      if (args.length === 0 || args.includes("-S") || args.includes("-K")) continue;
      const argv = ["/usr/bin/sudo", ...await wrapperArgv("none", args)];
      assert.equal(credentialDecision(argv, false).ok, true, argv.join(" "));
    }
  });
});
