/**
 * `broker/root_files.ts` is the one list of root-owned sources: the
 * installer's `sed` reads exactly it, the hardened helper set is the helper
 * and everything it imports, and every module the root-run entry points
 * import is in the list (a missing one would fail only once installed).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { HARDENED_HELPER_FILES, ROOT_SOURCE_FILES } from "../../../broker/root_files.ts";

const ROOT = new URL("../../../", import.meta.url).pathname.replace(/\/$/, "");

/** The package-relative paths of `entry` and every local module it imports. */
function localImports(entry: string, seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const text = readFileSync(join(ROOT, entry), "utf8");
  for (const m of text.matchAll(/from\s+"(\.{1,2}\/[^"]+\.ts)"/g)) {
    localImports(relative(ROOT, join(ROOT, dirname(entry), m[1])), seen);
  }
  return seen;
}

describe("root-owned sources", () => {
  it("install.sh reads exactly ROOT_SOURCE_FILES from the module", () => {
    const install = readFileSync(join(ROOT, "broker/install.sh"), "utf8");
    const sed = /sources=\$\(sed -n '([^']+)' \\\n\s+"\$pkg\/broker\/root_files\.ts"\)/.exec(
      install,
    );
    assert.ok(sed, "install.sh reads broker/root_files.ts with sed");
    const out = execFileSync("sed", ["-n", sed[1], join(ROOT, "broker/root_files.ts")], {
      encoding: "utf8",
    });
    assert.deepEqual(out.trim().split("\n"), [...ROOT_SOURCE_FILES]);
  });

  it("the hardened helper set is the helper and all it imports", () => {
    assert.deepEqual(
      [...localImports("askpass/helper.ts")].sort(),
      [...HARDENED_HELPER_FILES].sort(),
    );
  });

  it("every module the root-run entry points import is installed", () => {
    for (const entry of ["broker/broker.ts", "broker/allowlist_append.ts", "askpass/helper.ts"]) {
      for (const file of localImports(entry)) {
        assert.ok(
          (ROOT_SOURCE_FILES as readonly string[]).includes(file),
          `${entry} imports ${file}, which install.sh does not copy`,
        );
      }
    }
  });
});
