/**
 * The broker installer, run for real as root by tests/run.sh before the user
 * suites (which then use the installed broker). Also the `pi-secret-run`
 * refusals that need root to arrange: broker missing, protocol mismatch.
 *
 * Needs: root, PI_SUDO_PROMPT_TEST_USER (the throwaway user).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  chmod,
  chown,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { checkAllowlistFile } from "../../broker/allowlist.ts";
import { argvIsAllowlisted } from "../../broker/allowlist_policy.ts";
import { join } from "node:path";
import process from "node:process";
import {
  ALLOWLIST_APPEND,
  ALLOWLIST_PATH,
  BROKER_LAUNCHER,
  BROKER_ROOT,
  BROKER_VERSION_FILE,
  LEGACY_SUDOERS_FILE,
  PROOF_DIR,
  ROOT_DENO,
  SUDOERS_FILE,
} from "../../broker/paths.ts";
import {
  BROKER_REFUSALS,
  MAX_BROKERS_PER_UID,
  piSecretRunArgv,
} from "../../broker/broker_permissions.ts";
import { PACKAGE_VERSION } from "../../askpass/version.ts";
import { PROTOCOL_VERSION } from "../../askpass/protocol.ts";
import { resolveDenoBinary } from "../../shared/executables.ts";

import { asUser, REPO, run, USER } from "./root_helpers.ts";
const CONSUMER = "/usr/local/libexec/pi-sudo-prompt-test/consumer";

const install = (...extra: string[]) =>
  run("/bin/sh", [join(REPO, "broker/install.sh"), "--user", USER, ...extra]);

/** Runs pi-secret-run as the test user outside any session (fake socket/key). */
async function piSecretRunAsUser(): Promise<{ code: number; out: string }> {
  const deno = await resolveDenoBinary();
  assert.ok(deno);
  const argv = piSecretRunArgv(deno, join(REPO, "broker/pi_secret_run.ts"));
  return await run("/sbin/runuser", [
    "-u",
    USER,
    "--",
    "/usr/bin/env",
    "-i",
    "PATH=/usr/bin:/bin",
    `HOME=/home/${USER}`,
    "PI_ASKPASS_SOCKET=/tmp/none/askpass.sock",
    ...argv,
    "--label",
    "x",
    "--",
    "true",
  ]);
}

describe("broker installation (as root)", () => {
  it("runs as root with a throwaway user", () => {
    assert.equal(process.getuid?.(), 0, "tests/root must run as root");
    assert.match(USER, /^[a-z0-9]+$/, "PI_SUDO_PROMPT_TEST_USER must name the throwaway user");
  });

  it("pi-secret-run before installation: says how to install, with the exact installer path", async () => {
    const r = await piSecretRunAsUser();
    assert.equal(r.code, 125, r.out);
    assert.equal(
      r.out.trim(),
      `pi-secret-run: the broker is not installed: run /sudo-prompt install-broker in pi, or: sudo sh ${
        join(REPO, "broker/install.sh")
      }`,
    );
  });

  it("installs root-owned files, a visudo-valid rule and an empty allowlist", async () => {
    const r = await install();
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /installed \/usr\/local\/libexec\/pi-sudo-prompt/);
    for (
      const path of [BROKER_ROOT, BROKER_LAUNCHER, ROOT_DENO, BROKER_VERSION_FILE, SUDOERS_FILE]
    ) {
      const st = await lstat(path);
      assert.equal(st.uid, 0, `${path} owned by root`);
      assert.equal(st.mode & 0o022, 0, `${path} not writable by group/other`);
    }
    assert.equal((await lstat(SUDOERS_FILE)).mode & 0o777, 0o440);
    assert.equal((await run("/usr/sbin/visudo", ["-c"])).code, 0);
    const rule = await readFile(SUDOERS_FILE, "utf8");
    assert.match(rule, new RegExp(`^${USER} ALL=\\(root\\) NOPASSWD: ${BROKER_LAUNCHER}$`, "m"));
    assert.equal(
      await readFile(BROKER_VERSION_FILE, "utf8"),
      `version=${PACKAGE_VERSION}\nprotocol=${PROTOCOL_VERSION}\n`,
    );
    const allowlist = await readFile(ALLOWLIST_PATH, "utf8");
    assert.ok(allowlist.split("\n").every((l) => l === "" || l.startsWith("#")), "only comments");
    assert.match(allowlist, /keepassxc-cli show -q -t <db> <entry>/);
  });

  it("re-installing upgrades and keeps an edited allowlist", async () => {
    const edited = `# edited by the test\n${CONSUMER} report <name>\n${CONSUMER} hold <dir>\n` +
      "/usr/bin/keepassxc-cli show -q -a Password <db> <entry>\n";
    await writeFile(ALLOWLIST_PATH, edited);
    const r = await install();
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /upgraded/);
    assert.match(r.out, /kept the existing/);
    assert.equal(await readFile(ALLOWLIST_PATH, "utf8"), edited);
    assert.equal((await run("/usr/sbin/visudo", ["-c"])).code, 0);
    // One rule line for the user, not two.
    const rules = (await readFile(SUDOERS_FILE, "utf8")).split("\n").filter((l) =>
      l.startsWith(USER)
    );
    assert.equal(rules.length, 1);
  });

  it("pi-secret-run refuses a broker of another protocol version", async () => {
    const original = await readFile(BROKER_VERSION_FILE, "utf8");
    try {
      await writeFile(BROKER_VERSION_FILE, `version=9.9.9\nprotocol=${PROTOCOL_VERSION + 1}\n`);
      const r = await piSecretRunAsUser();
      assert.equal(r.code, 125, r.out);
      assert.match(
        r.out,
        new RegExp(
          `the installed broker speaks protocol ${
            PROTOCOL_VERSION + 1
          }, this package ${PROTOCOL_VERSION}: reinstall it`,
        ),
      );
    } finally {
      await writeFile(BROKER_VERSION_FILE, original);
    }
  });

  it("the installed allowlist made unsafe counts as empty (group-writable, symlink, not root's)", async () => {
    const argv = [CONSUMER, "report", "db1"];
    assert.equal(await argvIsAllowlisted(argv), true, "allowlisted while safe");
    const original = await readFile(ALLOWLIST_PATH, "utf8");
    const uid = Number((await run("/usr/bin/id", ["-u", USER])).out.trim());
    try {
      await chmod(ALLOWLIST_PATH, 0o664);
      assert.equal(await argvIsAllowlisted(argv), false, "group-writable");
      await chmod(ALLOWLIST_PATH, 0o644);
      await chown(ALLOWLIST_PATH, uid, 0);
      assert.equal(await argvIsAllowlisted(argv), false, "owned by the user");
      await chown(ALLOWLIST_PATH, 0, 0);
      await rename(ALLOWLIST_PATH, `${ALLOWLIST_PATH}.real`);
      await symlink(`${ALLOWLIST_PATH}.real`, ALLOWLIST_PATH);
      assert.equal(await argvIsAllowlisted(argv), false, "a symlink");
    } finally {
      await rm(ALLOWLIST_PATH, { force: true });
      await rm(`${ALLOWLIST_PATH}.real`, { force: true });
      await writeFile(ALLOWLIST_PATH, original, { mode: 0o644 });
      await chmod(ALLOWLIST_PATH, 0o644);
    }
    assert.equal(await argvIsAllowlisted(argv), true, "safe again");
  });

  it("refuses to install without a user, or as a non-root user", async () => {
    const noUser = await run("/bin/sh", [join(REPO, "broker/install.sh")]);
    assert.notEqual(noUser.code, 0);
    assert.match(noUser.out, /name the user who runs pi/);
    const asUser = await run("/sbin/runuser", [
      "-u",
      USER,
      "--",
      "/bin/sh",
      join(REPO, "broker/install.sh"),
      "--user",
      USER,
    ]);
    assert.notEqual(asUser.code, 0);
    assert.match(asUser.out, /must run as root/);
  });
});

describe("the broker called directly (hostile review, root-arranged parts)", () => {
  it("R6: a caller that dropped a supplementary group does not get it back in the consumer", async () => {
    const group = `pst${process.pid}`;
    assert.equal((await run("/usr/sbin/groupadd", [group])).code, 0);
    try {
      assert.equal((await run("/usr/sbin/usermod", ["-aG", group, USER])).code, 0);
      const extra = (await run("/usr/bin/getent", ["group", group])).out.split(":")[2];
      const gid = (await run("/usr/bin/id", ["-g", USER])).out.trim();
      const fakePi = [join(REPO, "node_modules/.bin/node"), join(REPO, "tests/helpers/fake_pi.ts")];
      const dropped = await asUser("clear", [...fakePi, "secret", "--", "/usr/bin/id", "-G"]);
      assert.match(dropped.out, /FAKE_PI \{"code":0,"requests":1\}/, dropped.out);
      assert.equal(dropped.out.split("\n")[0].trim(), gid, "only the primary group, as the caller");
      const held = await asUser("init", [...fakePi, "secret", "--", "/usr/bin/id", "-G"]);
      assert.match(held.out, /FAKE_PI \{"code":0,"requests":1\}/, held.out);
      assert.ok(
        held.out.split("\n")[0].split(" ").includes(extra),
        "a group the caller holds stays",
      );
    } finally {
      await run("/usr/sbin/groupdel", [group]);
    }
  });

  it("R2: proofs of dead brokers are swept; the per-user cap counts live brokers only", async () => {
    const uid = (await run("/usr/bin/id", ["-u", USER])).out.trim();
    await mkdir(PROOF_DIR, { recursive: true, mode: 0o711 });
    const stale: string[] = [];
    for (let i = 0; i < MAX_BROKERS_PER_UID + 2; i++) {
      const name = randomBytes(16).toString("hex");
      stale.push(name);
      const text = i === 0
        ? `id=${"a".repeat(32)}\npid=1\n`
        : `id=${"a".repeat(32)}\npid=1\nuid=${uid}\n`;
      await writeFile(join(PROOF_DIR, name), text, { mode: 0o644 });
    }
    const r = await asUser("init", [
      "/bin/sh",
      "-c",
      `/usr/bin/sudo -n ${BROKER_LAUNCHER} --socket /tmp/no-such-dir/askpass.sock --label x --cwd / -- /bin/true </dev/null; exit $?`,
    ]);
    assert.equal(r.code, 125, r.out);
    assert.equal(r.out, `pi-secret-broker: ${BROKER_REFUSALS.NO_SOCKET}\n`);
    const left = await readdir(PROOF_DIR);
    for (const name of stale) assert.ok(!left.includes(name), `stale proof ${name} swept`);
    assert.deepEqual(left.filter((n) => /^[0-9a-f]{32}$/.test(n)), [], "and its own removed");
  });

  it("R7: allowlist-append refuses a newline and anything the parser rejects; appends one valid line", async () => {
    const original = await readFile(ALLOWLIST_PATH, "utf8");
    const append = (entry: string) => run(ALLOWLIST_APPEND, [entry]);
    try {
      for (
        const [entry, expected] of [
          [`${CONSUMER} report <a>\n/bin/sh -c id`, /control characters/],
          [`${CONSUMER} report <a>\r`, /control characters/],
          ["relative/program x", /not one valid allowlist entry/],
          [`${CONSUMER} report <unclosed`, /not one valid allowlist entry/],
          ["# a comment", /not one valid allowlist entry/],
        ] as const
      ) {
        const r = await append(entry);
        assert.equal(r.code, 1, r.out);
        assert.match(r.out, expected);
        assert.equal(await readFile(ALLOWLIST_PATH, "utf8"), original, "unchanged");
      }
      const ok = await append(`${CONSUMER} report  <other>`);
      assert.equal(ok.code, 0, ok.out);
      assert.equal(ok.out.trim(), `allowlist-append: added: ${CONSUMER} report <other>`);
      assert.equal(
        await readFile(ALLOWLIST_PATH, "utf8"),
        `${original}${CONSUMER} report <other>\n`,
      );
      const again = await append(`${CONSUMER} report <other>`);
      assert.match(again.out, /already present/);
      const parsed = await checkAllowlistFile(ALLOWLIST_PATH);
      assert.ok(parsed.ok, "still a valid allowlist");
    } finally {
      await writeFile(ALLOWLIST_PATH, original);
    }
  });

  it("sudoers: the rule file sorts last; an old install's file is merged into it and removed", async () => {
    assert.ok(
      SUDOERS_FILE > "/etc/sudoers.d/pi-sudo-prompt" && SUDOERS_FILE > "/etc/sudoers.d/99-x",
    );
    const rule = `${USER} ALL=(root) NOPASSWD: ${BROKER_LAUNCHER}`;
    await writeFile(LEGACY_SUDOERS_FILE, `# old install\n${rule}\n`, { mode: 0o440 });
    const r = await install();
    assert.equal(r.code, 0, r.out);
    await assert.rejects(lstat(LEGACY_SUDOERS_FILE), { code: "ENOENT" });
    const rules = (await readFile(SUDOERS_FILE, "utf8")).split("\n").filter((l) => l === rule);
    assert.equal(rules.length, 1);
    assert.equal((await run("/usr/sbin/visudo", ["-c"])).code, 0);
  });

  it("doctor: a later sudoers rule with a password that overrides the broker's is detected", async () => {
    const override = "/etc/sudoers.d/zzzz-pi-sudo-prompt-test-override";
    const doctor = async () => {
      const r = await run("/sbin/runuser", [
        "-u",
        USER,
        "--",
        join(REPO, "node_modules/.bin/node"),
        "--no-warnings",
        "--input-type=module",
        "-e",
        `const d = await import(${JSON.stringify(join(REPO, "ops/doctor/runner.ts"))});` +
        'console.log(JSON.stringify(await d.runCheck("broker")));',
      ]);
      return JSON.parse(r.out.trim().split("\n").at(-1) ?? "{}");
    };
    const fine = await doctor();
    assert.equal(fine.status, "ok", fine.detail);
    // An installed copy that is not this package's (an update since the install) is named.
    const copy = join(BROKER_ROOT, "src", "kernel", "tty_ioctls.ts");
    const original = await readFile(copy);
    await writeFile(copy, new Uint8Array([...original, ...new TextEncoder().encode("// older\n")]));
    try {
      const stale = await doctor();
      assert.equal(stale.status, "warn", JSON.stringify(stale));
      assert.match(
        stale.detail,
        /root-owned copy of kernel\/tty_ioctls\.ts differs from this package/,
      );
      assert.match(stale.fix, /reinstall the broker/);
    } finally {
      await writeFile(copy, original);
    }
    assert.equal((await doctor()).status, "ok");
    await writeFile(override, `${USER} ALL=(ALL:ALL) ALL\n`, { mode: 0o440 });
    try {
      assert.equal((await run("/usr/sbin/visudo", ["-c"])).code, 0);
      const overridden = await doctor();
      assert.equal(overridden.status, "fail", JSON.stringify(overridden));
      assert.match(overridden.detail, /overrides its NOPASSWD rule/);
      assert.match(overridden.fix, /sorts after \/etc\/sudoers\.d\/zz-pi-sudo-prompt/);
    } finally {
      await rm(override, { force: true });
    }
  });
});
