import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { scanSudoOptions } from "../../../askpass/sudo_args.ts";
import { sudoScannerFunction } from "../../../extension/channel/shell_injection.ts";

/** [args, needs -A] */
const CASES: [string[], boolean][] = [
  [["id", "-u"], true],
  [["-k", "id"], true],
  [["-A", "id"], false],
  [["--askpass", "id"], false],
  [["-S", "id"], false],
  [["--stdin", "id"], false],
  [["-nS", "true"], false],
  [["-kA", "true"], false],
  [["-Su", "root", "id"], false],
  [["-u", "root", "id"], true],
  [["-u", "-S", "id"], true], // -S is the user name here
  [["-uroot", "-S", "id"], false],
  [["-p", "-A", "id"], true], // -A is the prompt text
  [["--prompt", "-S", "id"], true],
  [["--prompt=-S", "id"], true],
  [["--user=root", "-A", "id"], false],
  [["grep", "-S", "x"], true], // the command's own -S
  [["--", "-S"], true],
  [["-h"], true],
  [["-hhostA", "id"], true], // host value, not -A
  [["-E", "-H", "-i"], true],
  [["-C", "5", "-S", "id"], false],
  [["-g", "wheel", "id"], true],
  [[], true],
  [["-"], true],
  [["-v"], true],
  [["-K"], true],
];

function shellSays(args: string[]): Promise<boolean> {
  const script = `${sudoScannerFunction()}\n__pi_sudo_needs_askpass "$@"`;
  return new Promise((resolve, reject) => {
    execFile("/bin/sh", ["-c", script, "sh", ...args], { timeout: 5000 }, (err) => {
      if (!err) return resolve(true);
      if (typeof err.code === "number" && err.code === 1) return resolve(false);
      reject(err);
    });
  });
}

describe("sudo argument scanning", () => {
  for (const [args, needs] of CASES) {
    it(`${JSON.stringify(args)} → ${needs ? "add -A" : "leave alone"}`, async () => {
      assert.equal(!scanSudoOptions(args).passwordSource, needs, "reference implementation");
      assert.equal(await shellSays(args), needs, "POSIX sh scanner (dash)");
    });
  }

  it("the scanner also works in bash, under set -eu", async () => {
    const script =
      `set -eu\n${sudoScannerFunction()}\nif __pi_sudo_needs_askpass -nS true; then echo add; else echo keep; fi\n__pi_sudo_needs_askpass -u root id && echo add2`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        "/bin/bash",
        ["-c", script],
        { timeout: 5000 },
        (e, so) => e ? reject(e) : resolve(so),
      )
    );
    assert.equal(out, "keep\nadd2\n");
  });
});

/** [args, sudo's ignore_ticket at the end of option parsing] */
const RESET_CASES: [string[], boolean][] = [
  [["true"], false],
  [["-k", "true"], true],
  [["-A", "-k", "true"], true],
  [["-kA", "true"], true],
  [["-Ak", "true"], true],
  [["-nkA", "true"], true],
  [["--reset-timestamp", "true"], true],
  [["--reset", "true"], true], // unambiguous abbreviation
  [["--res", "true"], true],
  [["--re", "true"], false], // ambiguous (remove-/reset-timestamp): sudo refuses
  [["--reset-timestamp=1", "true"], false], // a usage error in sudo, never counted
  [["true", "-k"], false], // the command's own -k
  [["sh", "-c", "sudo -k true"], false],
  [["--", "-k"], false],
  [["-u", "-k", "true"], false], // -k is the user name
  [["-uk", "true"], false], // -u with the value "k"
  [["-p", "-k", "true"], false], // the prompt text
  [["--prompt", "-k", "true"], false],
  [["--user=-k", "true"], false],
  [["-hk"], false], // -h with the host "k"
  [["-k", "-K"], false], // -K clears ignore_ticket again
  [["-kK"], false],
  [["--remove-timestamp"], false],
  [["-K", "-k"], true],
  [["FOO=1", "-k", "true"], true], // VAR=value: sudo reads options after it
  [["-E", "-k", "-u", "root", "id"], true],
  [["-C", "5", "-k", "id"], true],
  [["/bin/true", "-k"], false],
  [["-N", "true"], false], // --no-update: not accepted (ADR 0006)
  [[], false],
];

function shellResets(args: string[]): Promise<boolean> {
  const script = `${sudoScannerFunction()}\n__pi_sudo_needs_askpass "$@" || true\necho "$__pi_k"`;
  return new Promise((resolve, reject) => {
    execFile("/bin/sh", ["-c", script, "sh", ...args], { timeout: 5000 }, (err, out) => {
      if (err) return reject(err);
      resolve(out === "1\n");
    });
  });
}

describe("sudo -k detection (sudo's ignore_ticket)", () => {
  for (const [args, resets] of RESET_CASES) {
    it(`${JSON.stringify(args)} → ${resets ? "resets" : "may cache"}`, async () => {
      assert.equal(scanSudoOptions(args).resetTimestamp, resets, "reference implementation");
      assert.equal(await shellResets(args), resets, "POSIX sh scanner (dash)");
    });
  }
});
