/**
 * checkAllowlistFile on real files. Runs as the non-root test user in CI and
 * as root locally: as non-root, the test-only `ownerUid` option stands in for
 * root so the file and directory rules can still be exercised; the default
 * (root only) is tested on real root-owned paths.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmod, chown, lstat, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import {
  ALLOWLIST_FILE_REFUSALS as REFUSE,
  ALLOWLIST_SYNTAX_ERRORS as SYNTAX,
  type AllowlistFileOptions,
  checkAllowlistFile,
  MAX_ALLOWLIST_BYTES,
  parseAllowlist,
} from "../../../broker/allowlist.ts";

const uid = process.getuid?.() ?? -1;
const isRoot = uid === 0;
/** As root: the strict default. Otherwise: our own uid stands in for root (test-only option). */
const asOwner: AllowlistFileOptions = isRoot ? {} : { ownerUid: uid };
const GOOD = "# examples\n\n/usr/bin/keepassxc-cli show -q -t <db> <entry>\n";
const NOBODY = 65534;

/** Independent check that every directory up to `/` is safe for `owner` (precondition only). */
async function chainSafe(dir: string, owner: number): Promise<boolean> {
  for (let d = dir;; d = dirname(d)) {
    const s = await lstat(d).catch(() => undefined);
    if (!s || !s.isDirectory() || (s.uid !== 0 && s.uid !== owner) || (s.mode & 0o022) !== 0) {
      return false;
    }
    if (d === "/") return true;
  }
}

/**
 * A fresh directory whose whole ancestor chain is safe: as root under a
 * root-owned 0755 system directory (not /tmp or /var/tmp, which are
 * world-writable); as non-root under $HOME (with ownerUid = our uid).
 */
async function makeSafeBase(): Promise<string | undefined> {
  const candidates = isRoot ? ["/run", "/var/lib", "/opt"] : [homedir()];
  for (const parent of candidates) {
    if (!(await chainSafe(parent, uid))) continue;
    try {
      const dir = await mkdtemp(join(parent, ".pi-sudo-prompt-allowlist-test-"));
      await chmod(dir, 0o755);
      return dir;
    } catch {
      // not writable here: try the next one
    }
  }
  return undefined;
}

/** Writes `text` to `path` with exactly `mode` (umask-proof). */
async function put(path: string, text: string | Uint8Array, mode = 0o644): Promise<string> {
  await writeFile(path, text);
  await chmod(path, mode);
  return path;
}

describe("checkAllowlistFile", () => {
  let tmp = "";
  let safe: string | undefined;
  const inTmp: string[] = [];

  before(async () => {
    tmp = await mkdtemp("/tmp/pi-sudo-prompt-allowlist-");
    safe = await makeSafeBase();
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
    if (safe) await rm(safe, { recursive: true, force: true });
    for (const f of inTmp) await rm(f, { force: true });
  });

  it("refuses a path that is not absolute and normalised", async () => {
    for (const p of ["etc/passwd", "/etc/../etc/passwd", "/etc//passwd", "/etc/passwd/", ""]) {
      assert.deepEqual(await checkAllowlistFile(p), { ok: false, reason: REFUSE.BAD_PATH }, p);
    }
  });

  it("refuses a missing file", async () => {
    assert.deepEqual(await checkAllowlistFile(join(tmp, "absent"), asOwner), {
      ok: false,
      reason: REFUSE.MISSING,
    });
    const file = await put(join(tmp, "plain"), GOOD);
    assert.deepEqual(await checkAllowlistFile(join(file, "below"), asOwner), {
      ok: false,
      reason: REFUSE.MISSING,
    });
    assert.deepEqual(await checkAllowlistFile("/etc/pi-sudo-prompt-test-absent/allowlist"), {
      ok: false,
      reason: REFUSE.MISSING,
    });
  });

  it("refuses a symlink, even to a root-owned file", async () => {
    const target = await put(join(tmp, "target"), GOOD);
    await symlink(target, join(tmp, "link"));
    await symlink("/etc/passwd", join(tmp, "link-to-root-file"));
    for (const name of ["link", "link-to-root-file"]) {
      assert.deepEqual(await checkAllowlistFile(join(tmp, name), asOwner), {
        ok: false,
        reason: REFUSE.SYMLINK,
      });
    }
  });

  it("refuses what is not a regular file", async () => {
    await mkdir(join(tmp, "a-dir"), { mode: 0o755 });
    assert.deepEqual(await checkAllowlistFile(join(tmp, "a-dir"), asOwner), {
      ok: false,
      reason: REFUSE.NOT_REGULAR,
    });
    assert.deepEqual(await checkAllowlistFile("/dev/null"), {
      ok: false,
      reason: REFUSE.NOT_REGULAR,
    });
  });

  it("refuses a file not owned by root", async () => {
    const file = await put(join(tmp, "not-root"), GOOD);
    if (isRoot) await chown(file, NOBODY, NOBODY);
    // The strict default: only uid 0 owns a valid allowlist.
    assert.deepEqual(await checkAllowlistFile(file), { ok: false, reason: REFUSE.NOT_ROOT_OWNED });
    if (!isRoot) {
      // And the test-only option does not loosen anything else: another uid still fails.
      assert.deepEqual(await checkAllowlistFile(file, { ownerUid: uid + 1 }), {
        ok: false,
        reason: REFUSE.NOT_ROOT_OWNED,
      });
    }
  });

  it("refuses a group-writable or world-writable file", async () => {
    for (const mode of [0o664, 0o646, 0o666, 0o620, 0o602]) {
      const file = await put(join(tmp, `mode-${mode.toString(8)}`), GOOD, mode);
      assert.deepEqual(
        await checkAllowlistFile(file, asOwner),
        { ok: false, reason: REFUSE.WRITABLE_BY_OTHERS },
        mode.toString(8),
      );
    }
  });

  it("refuses a file over the size cap", async () => {
    const big = `# ${"x".repeat(MAX_ALLOWLIST_BYTES)}\n`;
    const file = await put(join(tmp, "big"), big);
    assert.deepEqual(await checkAllowlistFile(file, asOwner), {
      ok: false,
      reason: REFUSE.TOO_LARGE,
    });
  });

  it("refuses a file under /tmp (sticky, world-writable) even when the file itself is fine", async () => {
    const t = await lstat("/tmp");
    assert.ok(t.isDirectory() && (t.mode & 0o1002) === 0o1002, "precondition: /tmp is 1777");
    // Directly in /tmp.
    const direct = await put(`${tmp}-direct`, GOOD);
    inTmp.push(direct);
    assert.deepEqual(await checkAllowlistFile(direct, asOwner), {
      ok: false,
      reason: REFUSE.UNSAFE_PARENT,
      path: "/tmp",
    });
    // In our own 0755 directory below /tmp: that one passes, /tmp does not.
    await mkdir(join(tmp, "etc"), { mode: 0o755 });
    await chmod(join(tmp, "etc"), 0o755);
    await chmod(tmp, 0o755);
    const nested = await put(join(tmp, "etc", "allowlist"), GOOD);
    assert.deepEqual(await checkAllowlistFile(nested, asOwner), {
      ok: false,
      reason: REFUSE.UNSAFE_PARENT,
      path: "/tmp",
    });
  });

  it("refuses a symlinked parent directory", async () => {
    await mkdir(join(tmp, "real"), { mode: 0o755 });
    await put(join(tmp, "real", "allowlist"), GOOD);
    await symlink(join(tmp, "real"), join(tmp, "via"));
    assert.deepEqual(await checkAllowlistFile(join(tmp, "via", "allowlist"), asOwner), {
      ok: false,
      reason: REFUSE.UNSAFE_PARENT,
      path: join(tmp, "via"),
    });
  });

  it("the strict default walks real root-owned directories up to / (/etc/passwd)", async () => {
    const s = await lstat("/etc/passwd");
    assert.ok(s.isFile() && s.uid === 0 && (s.mode & 0o022) === 0, "precondition");
    // The file and /etc and / pass every ownership rule; only the content fails.
    assert.deepEqual(await checkAllowlistFile("/etc/passwd"), {
      ok: false,
      reason: REFUSE.MALFORMED,
      line: 1,
      syntax: SYNTAX.RELATIVE_PATH,
    });
  });

  describe("in a directory chain that is safe", () => {
    // A base this test cannot use is a failure, not a skip: under deno test a
    // skipped step would be counted as passed.
    const need = (_t: unknown): string | undefined => {
      if (!safe) {
        assert.fail(
          isRoot ? "no writable root-owned 0755 base (/run, /var/lib, /opt)" : "$HOME is unusable",
        );
      }
      return safe;
    };

    it("accepts a safe file and returns its entries and text", async (t) => {
      const base = need(t);
      if (!base) return;
      const file = await put(join(base, "allowlist"), GOOD);
      const r = await checkAllowlistFile(file, asOwner);
      const parsed = parseAllowlist(GOOD);
      assert.ok(parsed.ok);
      assert.deepEqual(r, { ok: true, entries: parsed.entries, text: GOOD });
      if (!isRoot) {
        // Our own file under $HOME is still refused by the strict default.
        assert.deepEqual(await checkAllowlistFile(file), {
          ok: false,
          reason: REFUSE.NOT_ROOT_OWNED,
        });
      }
    });

    it("accepts exactly the size cap; an empty file is an empty list", async (t) => {
      const base = need(t);
      if (!base) return;
      const full = `# ${"x".repeat(MAX_ALLOWLIST_BYTES - 3)}\n`;
      assert.equal(full.length, MAX_ALLOWLIST_BYTES);
      const r = await checkAllowlistFile(await put(join(base, "full"), full), asOwner);
      assert.equal(r.ok, true);
      assert.deepEqual(await checkAllowlistFile(await put(join(base, "empty"), ""), asOwner), {
        ok: true,
        entries: [],
        text: "",
      });
    });

    it("a malformed line or invalid UTF-8 makes the file count as empty, with the line", async (t) => {
      const base = need(t);
      if (!base) return;
      const bad = await put(join(base, "bad"), `${GOOD}/usr/bin/x <>\n`);
      assert.deepEqual(await checkAllowlistFile(bad, asOwner), {
        ok: false,
        reason: REFUSE.MALFORMED,
        line: 4,
        syntax: SYNTAX.EMPTY_MARKER,
      });
      const bytes = new Uint8Array([...new TextEncoder().encode("# a\n# b\n/bin/x "), 0xff, 0x0a]);
      assert.deepEqual(await checkAllowlistFile(await put(join(base, "latin"), bytes), asOwner), {
        ok: false,
        reason: REFUSE.MALFORMED,
        line: 3,
        syntax: SYNTAX.NOT_UTF8,
      });
    });

    it("refuses a group-writable parent directory", async (t) => {
      const base = need(t);
      if (!base) return;
      const dir = join(base, "gw");
      await mkdir(dir);
      await chmod(dir, 0o775);
      const file = await put(join(dir, "allowlist"), GOOD);
      assert.deepEqual(await checkAllowlistFile(file, asOwner), {
        ok: false,
        reason: REFUSE.UNSAFE_PARENT,
        path: dir,
      });
    });

    // Registered only where it can run: as root (tests/run.sh's root phase
    // imports this file too), since only root can chown a directory away.
    (isRoot ? it : () => {})(
      "refuses a parent directory owned by another user (root only)",
      async (t) => {
        const base = need(t);
        if (!base) return;
        const dir = join(base, "nobody");
        await mkdir(dir, { mode: 0o755 });
        const file = await put(join(dir, "allowlist"), GOOD);
        await chown(dir, NOBODY, NOBODY);
        assert.deepEqual(await checkAllowlistFile(file), {
          ok: false,
          reason: REFUSE.UNSAFE_PARENT,
          path: dir,
        });
      },
    );

    // Registered only as a non-root user (the CI user suites): root reads any file.
    (isRoot ? () => {} : it)(
      "reports an unreadable file (non-root only: root reads any file)",
      async (t) => {
        const base = need(t);
        if (!base) return;
        const file = await put(join(base, "write-only"), GOOD, 0o200);
        assert.deepEqual(await checkAllowlistFile(file, asOwner), {
          ok: false,
          reason: REFUSE.UNREADABLE,
        });
      },
    );
  });
});
