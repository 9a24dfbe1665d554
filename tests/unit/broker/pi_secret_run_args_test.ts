/**
 * `pi-secret-run`'s command line (`parseCommandLine`, `node:util`
 * `parseArgs`): `--label TEXT -- PROGRAM ARGS…`; the command after `--` is
 * taken as it is, and anything else before `--` is refused.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseCommandLine } from "../../../broker/pi_secret_run.ts";

describe("pi-secret-run command line", () => {
  it("reads the label and the command after --", () => {
    assert.deepEqual(parseCommandLine(["--label", "db", "--", "keepassxc-cli", "show", "-q"]), {
      label: "db",
      argv: ["keepassxc-cli", "show", "-q"],
    });
    assert.deepEqual(parseCommandLine(["--label=a b", "--", "cat"]), {
      label: "a b",
      argv: ["cat"],
    });
    assert.deepEqual(parseCommandLine(["--", "cmd", "--label", "x", "--"]), {
      label: "",
      argv: ["cmd", "--label", "x", "--"],
    });
  });

  it("refuses anything else: no --, no command, an unknown option, a stray word", () => {
    for (
      const bad of [
        [],
        ["cmd"],
        ["--label", "x"],
        ["--label", "x", "--"],
        ["--"],
        ["--verbose", "--", "cmd"],
        ["stray", "--", "cmd"],
        ["--label"],
      ]
    ) assert.equal(parseCommandLine(bad), undefined, JSON.stringify(bad));
  });
});
