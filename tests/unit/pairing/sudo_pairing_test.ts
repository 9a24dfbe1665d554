/**
 * The pure pairing decisions of ADR 0005 (`extension/pairing/sudo_pairing.ts`):
 * which neighbours of a helper make a password unsafe to send, which of
 * those are transient (wait and look again), and how root's verdict reads.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  decidePairing,
  type FrontEnd,
  type FrontEndChild,
  type HelperShape,
  looksLikeHelper,
  type PairedHelper,
  PAIRING_REFUSALS,
  type PairingSnapshot,
  parseRootPairingVerdict,
  pipeInodeOf,
  ROOT_PAIRING_NOT_PERMITTED,
} from "../../../extension/pairing/sudo_pairing.ts";

const UID = 1000;
const DENO = "/opt/deno";
const PREFIX = [DENO, "run", "--no-prompt", "/opt/helper.ts"];
const SHAPE: HelperShape = { uid: UID, exePath: DENO, argvPrefix: PREFIX, ownFrontEnds: new Set() };

const ME: PairedHelper = { helperPid: 101, sudoPid: 100, pipeInode: 5000 };

function child(pid: number, over: Partial<FrontEndChild> = {}): FrontEndChild {
  return { pid, state: "S", uid: UID, exe: "/usr/bin/dash", argv: ["sh", "x"], ...over };
}
function helperChild(pid: number): FrontEndChild {
  return child(pid, { exe: DENO, argv: [...PREFIX, "[sudo] password for u: "] });
}
function frontEnd(pid: number, children: FrontEndChild[], over: Partial<FrontEnd> = {}): FrontEnd {
  return { pid, comm: "sudo", state: "S", ttyNr: 0, children, ...over };
}
function snap(frontEnds: FrontEnd[], holders: [number, number[]][] = []): PairingSnapshot {
  return { frontEnds, pipeHolders: new Map(holders) };
}
const mine = frontEnd(100, [helperChild(101)]);

describe("decidePairing", () => {
  it("accepts a lone helper whose pipe only it holds", () => {
    assert.deepEqual(decidePairing(ME, [], snap([mine], [[5000, [101]]]), SHAPE), { ok: true });
  });

  it("the pipe swap: another sudo whose askpass exited (zombie) refuses, transiently", () => {
    const hidden = frontEnd(200, [child(201, { state: "Z", exe: undefined, argv: [] })]);
    const d = decidePairing(ME, [], snap([mine, hidden], [[5000, [101]]]), SHAPE);
    assert.deepEqual(d, {
      ok: false,
      reason: PAIRING_REFUSALS.OTHER_SUDO_FOREIGN_ASKPASS,
      transient: true,
      pid: 200,
    });
  });

  it("another sudo waiting with no child and no terminal refuses (the swap's signature); at a terminal, or a setuid program not named sudo, it is named for the human instead", () => {
    const bare = frontEnd(200, []);
    const atTty = frontEnd(300, [], { ttyNr: 34816 });
    const xorg = frontEnd(400, [], { comm: "Xorg.wrap" });
    const a = decidePairing(ME, [], snap([mine, bare]), SHAPE);
    assert.ok(!a.ok && a.reason === PAIRING_REFUSALS.OTHER_SUDO_WITHOUT_HELPER && a.transient);
    assert.deepEqual(decidePairing(ME, [], snap([mine, atTty]), SHAPE), {
      ok: true,
      unverified: [atTty],
    });
    assert.deepEqual(decidePairing(ME, [], snap([mine, xorg, atTty]), SHAPE), {
      ok: true,
      unverified: [xorg, atTty],
    });
  });

  it("another sudo running its command (root-owned child) is fine", () => {
    const running = frontEnd(200, [child(201, { uid: 0, exe: undefined, argv: ["apt"] })]);
    assert.deepEqual(decidePairing(ME, [], snap([mine, running]), SHAPE), { ok: true });
  });

  it("another sudo running a command as another user is fine", () => {
    const other = frontEnd(200, [child(201, { uid: 1001 })]);
    assert.deepEqual(decidePairing(ME, [], snap([mine, other]), SHAPE), { ok: true });
  });

  it("two sudo calls at once: the other front end's child is a verified helper of this session", () => {
    const other: PairedHelper = { helperPid: 201, sudoPid: 200, pipeInode: 6000 };
    const fe = frontEnd(200, [helperChild(201)]);
    assert.deepEqual(decidePairing(ME, [other], snap([mine, fe]), SHAPE), { ok: true });
  });

  it("a verified helper counts only under its own front end", () => {
    // Registered as sudo 200's, but found under sudo 300: not accounted for.
    const other: PairedHelper = { helperPid: 201, sudoPid: 200, pipeInode: 6000 };
    const d = decidePairing(ME, [other], snap([mine, frontEnd(300, [helperChild(201)])]), SHAPE);
    assert.ok(!d.ok && d.reason === PAIRING_REFUSALS.OTHER_SUDO_HELPER_NOT_QUEUED);
  });

  it("a helper still starting (pinned deno, launcher argv) is transient, named apart", () => {
    const d = decidePairing(ME, [], snap([mine, frontEnd(200, [helperChild(201)])]), SHAPE);
    assert.ok(!d.ok && d.reason === PAIRING_REFUSALS.OTHER_SUDO_HELPER_NOT_QUEUED && d.transient);
  });

  it("two helpers on one pipe: refused at once (not transient)", () => {
    const twin: PairedHelper = { helperPid: 201, sudoPid: 200, pipeInode: 5000 };
    const d = decidePairing(ME, [twin], snap([mine, frontEnd(200, [helperChild(201)])]), SHAPE);
    assert.deepEqual(d, {
      ok: false,
      reason: PAIRING_REFUSALS.STDOUT_PIPE_SHARED,
      transient: false,
      pid: 201,
    });
  });

  it("another process holding the pipe: refused at once", () => {
    const d = decidePairing(ME, [], snap([mine], [[5000, [101, 4242]]]), SHAPE);
    assert.deepEqual(d, {
      ok: false,
      reason: PAIRING_REFUSALS.STDOUT_PIPE_HELD_ELSEWHERE,
      transient: false,
      pid: 4242,
    });
  });

  it("an unreadable fd 1 is refused", () => {
    const d = decidePairing({ ...ME, pipeInode: undefined }, [], snap([mine]), SHAPE);
    assert.ok(!d.ok && d.reason === PAIRING_REFUSALS.STDOUT_PIPE_UNKNOWN && !d.transient);
  });

  it("ignores its own sudo, our own root-check sudo and zombie front ends", () => {
    const own = frontEnd(400, []);
    const dead = frontEnd(500, [], { state: "Z" });
    const shape = { ...SHAPE, ownFrontEnds: new Set([400]) };
    assert.deepEqual(decidePairing(ME, [], snap([mine, own, dead]), shape), { ok: true });
  });

  it("a stopped front end still counts (it can be resumed to read the pipe)", () => {
    const stopped = frontEnd(200, [child(201, { state: "Z" })], { state: "T" });
    assert.equal(decidePairing(ME, [], snap([mine, stopped]), SHAPE).ok, false);
  });
});

describe("looksLikeHelper", () => {
  it("needs the pinned deno, the exact argv prefix and one prompt", () => {
    assert.equal(looksLikeHelper(helperChild(1), SHAPE), true);
    assert.equal(looksLikeHelper(child(1, { exe: DENO, argv: [...PREFIX] }), SHAPE), false);
    assert.equal(
      looksLikeHelper(child(1, { exe: DENO, argv: [...PREFIX, "p", "x"] }), SHAPE),
      false,
    );
    assert.equal(
      looksLikeHelper(child(1, { exe: "/tmp/deno", argv: [...PREFIX, "p"] }), SHAPE),
      false,
    );
    assert.equal(looksLikeHelper({ ...helperChild(1), state: "Z" }, SHAPE), false);
  });
});

describe("pipeInodeOf", () => {
  it("reads pipe:[N] and nothing else", () => {
    assert.equal(pipeInodeOf("pipe:[12345]"), 12345);
    for (const bad of ["socket:[1]", "pipe:[]", "pipe:[0]", "pipe:[1]x", "/dev/null", undefined]) {
      assert.equal(pipeInodeOf(bad), undefined, String(bad));
    }
  });
});

describe("parseRootPairingVerdict", () => {
  it("exit 0 with the paired line is the only acceptance", () => {
    assert.deepEqual(parseRootPairingVerdict(0, "pi-pairing: paired\n"), { ok: true });
    assert.equal(parseRootPairingVerdict(0, "").ok, false);
    assert.equal(parseRootPairingVerdict(1, "pi-pairing: paired\n").ok, false);
  });

  it("exit 1 not-paired is a refusal; anything else means the check did not run", () => {
    assert.deepEqual(parseRootPairingVerdict(1, "pi-pairing: not-paired held_elsewhere\n"), {
      ok: false,
      reason: PAIRING_REFUSALS.ROOT_PAIRING_REFUSED,
      detail: "not-paired held_elsewhere",
    });
    for (
      const [code, out] of [[125, "pi-pairing: usage"], [1, "sudo: a password is required"], [
        null,
        "",
      ]] as const
    ) {
      const v = parseRootPairingVerdict(code, out);
      assert.ok(!v.ok && v.reason === PAIRING_REFUSALS.ROOT_PAIRING_UNAVAILABLE, `${code} ${out}`);
    }
  });

  it("strips control characters from the detail", () => {
    const v = parseRootPairingVerdict(1, "pi-pairing: not-paired \x1b[2Jx\n");
    assert.ok(!v.ok && "detail" in v && !v.detail.includes("\x1b"));
  });
});

describe("parseRootPairingVerdict: a rule for another user", () => {
  it("sudo's own 'a password is required' means the root layer is not ours to ask", () => {
    assert.deepEqual(
      parseRootPairingVerdict(1, "", "sudo: a password is required\n"),
      { ok: false, reason: ROOT_PAIRING_NOT_PERMITTED },
    );
    // …but not when the check printed anything, nor with another exit status.
    for (const [code, out] of [[1, "x\n"], [2, ""]] as const) {
      const v = parseRootPairingVerdict(code, out, "sudo: a password is required\n");
      assert.ok(!v.ok && v.reason === PAIRING_REFUSALS.ROOT_PAIRING_UNAVAILABLE, `${code}`);
    }
  });
});
