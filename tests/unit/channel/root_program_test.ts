/**
 * The red lines of the sudo modal about the program root runs
 * (`extension/channel/root_program.ts`): a root-owned program in root's
 * directories is quiet; a program or a symlink that others than root could
 * change is named, even when the symlink points at a root-owned file (it
 * could be pointed elsewhere after the modal); options that let the
 * environment steer root are named too.
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { rootRunWarnings } from "../../../extension/channel/root_program.ts";

let dir = "";

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-root-program-"));
  // Writable by anyone, as a shared or user directory is for this purpose.
  await chmod(dir, 0o777);
  await symlink("/usr/bin/id", join(dir, "id-link"));
  await writeFile(join(dir, "tool"), "#!/bin/sh\n", { mode: 0o755 });
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("rootRunWarnings", () => {
  it("a root-owned program in root's directories: no warning", async () => {
    assert.deepEqual(await rootRunWarnings(["/usr/bin/sudo", "-A", "-k", "/usr/bin/id", "-u"]), []);
  });

  it("a program below a directory others can write: named", async () => {
    const [w] = await rootRunWarnings(["/usr/bin/sudo", "-A", join(dir, "tool")]);
    assert.match(w, /tool: (the program is not root's|.* is writable by others than root)/);
  });

  it("a symlink to a root-owned file, sitting where others can write: named (it could be re-pointed)", async () => {
    const [w] = await rootRunWarnings(["/usr/bin/sudo", "-A", join(dir, "id-link"), "-u"]);
    assert.ok(w, "a warning");
    assert.match(w, /id-link: /);
  });

  it("a bare name, -s, -E, --preserve-env=LIST and VAR=value: each named; -e takes no program", async () => {
    const warnings = await rootRunWarnings([
      "/usr/bin/sudo",
      "-A",
      "-E",
      "--preserve-env=PATH,HOME",
      "FOO=1",
      "mytool",
    ]);
    assert.equal(warnings.length, 3, warnings.join("\n"));
    assert.match(warnings[0], /^-E: root keeps the command's environment/, "-E keeps everything");
    assert.match(warnings[1], /^FOO=1: set in root's environment$/);
    assert.match(warnings[2], /^mytool: not an absolute path/);
    const list = await rootRunWarnings([
      "/usr/bin/sudo",
      "-A",
      "--preserve-env=PATH,HOME",
      "/usr/bin/id",
    ]);
    assert.deepEqual(list, [
      "--preserve-env=PATH,HOME: root keeps these variables from the command's environment",
    ]);
    const shell = await rootRunWarnings(["/usr/bin/sudo", "-A", "-s", "--", "id"]);
    assert.deepEqual(shell.map((w) => w.split(":")[0]), ["-s"]);
    assert.deepEqual(await rootRunWarnings(["/usr/bin/sudo", "-A", "-e", "/etc/hosts"]), []);
  });
});
