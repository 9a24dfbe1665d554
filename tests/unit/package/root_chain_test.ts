/**
 * The walk "from a path up to `/`" (`shared/root_chain.ts`) that the modal's
 * red lines and doctor share: the first entry, from the path upward, that
 * others than root could change is the one named, whatever order the
 * `lstat`s came back in.
 */
import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { rootOnlyChainProblem } from "../../../shared/root_chain.ts";

let dir = "";
const asRoot = process.getuid?.() === 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-root-chain-"));
  // dir (0700) / open (0777) / closed (0755) / file (0644)
  await mkdir(join(dir, "open", "closed"), { recursive: true });
  await chmod(join(dir, "open"), 0o777);
  await chmod(join(dir, "open", "closed"), 0o755);
  await writeFile(join(dir, "open", "closed", "file"), "", { mode: 0o644 });
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("rootOnlyChainProblem", () => {
  it("root's program in root's directories: no problem", async () => {
    assert.equal(await rootOnlyChainProblem("/usr/bin/id", true), undefined);
  });

  it("a name that does not exist: unreadable, at the name itself", async () => {
    const missing = "/usr/bin/pi-root-chain-no-such-program";
    assert.deepEqual(await rootOnlyChainProblem(missing, true), {
      path: missing,
      kind: "unreadable",
    });
  });

  it("a path longer than the kernel takes: unreadable, at the path", async () => {
    const long = "/a".repeat(3000);
    assert.deepEqual(await rootOnlyChainProblem(long, true), { path: long, kind: "unreadable" });
  });

  it("names the first entry from the path upward that others could change", async () => {
    const file = join(dir, "open", "closed", "file");
    const problem = await rootOnlyChainProblem(file, true);
    if (asRoot) {
      // root's file in root's 0755 directory, below a directory anyone may write.
      assert.equal(problem?.path, join(dir, "open"));
      assert.equal(problem?.kind === "changeable" && problem.writable, true);
    } else {
      // Our own file: not root's.
      assert.equal(problem?.path, file);
      assert.equal(problem?.kind === "changeable" && problem.uid, process.getuid?.());
    }
  });

  it("a root-owned sticky directory counts as root's only with allowSticky", async () => {
    assert.equal(await rootOnlyChainProblem("/tmp", true), undefined);
    const problem = await rootOnlyChainProblem("/tmp", false);
    assert.equal(problem?.path, "/tmp");
    assert.equal(problem?.kind === "changeable" && problem.writable, true);
  });
});
