/**
 * The broker installer, run for real as root by tests/run.sh before the user
 * suites (which then use the installed broker). Also the `pi-secret-run`
 * refusals that need root to arrange: broker missing, protocol mismatch.
 *
 * Needs: root, PI_SUDO_PROMPT_TEST_USER (the throwaway user).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmod, chown, lstat, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { argvIsAllowlisted } from "../../broker/allowlist_policy.ts";
import { join } from "node:path";
import process from "node:process";
import {
  ALLOWLIST_PATH,
  BROKER_LAUNCHER,
  BROKER_ROOT,
  BROKER_VERSION_FILE,
  ROOT_DENO,
  SUDOERS_FILE,
} from "../../broker/paths.ts";
import { piSecretRunArgv } from "../../broker/broker_permissions.ts";
import { PACKAGE_VERSION } from "../../askpass/version.ts";
import { PROTOCOL_VERSION } from "../../askpass/protocol.ts";
import { resolveDenoBinary } from "../../extension/deno_binary.ts";

const REPO = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const USER = process.env.PI_SUDO_PROMPT_TEST_USER ?? "";
const CONSUMER = "/usr/local/libexec/pi-sudo-prompt-test/consumer";

function run(file: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; out: string }>((resolve) => {
    execFile(file, args, {
      timeout: 120_000,
      env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", ...env },
    }, (err, stdout, stderr) => {
      resolve({
        code: err ? (typeof err.code === "number" ? err.code : 1) : 0,
        out: stdout + stderr,
      });
    });
  });
}

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
    `PI_ASKPASS_SECRET=${"0".repeat(64)}`,
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
