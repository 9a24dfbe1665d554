/**
 * The messages a newcomer meets when something is missing (issue 12, item
 * 5), each asserted word for word: `audit verify` with no log yet, the
 * suite run without root, `pi-secret-run` started without its pinned Deno
 * flags, the start-up warning when the pinned deno is missing, the demo's
 * hint. Runs under Node and Deno; the CLIs run as child processes.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { failureCause } from "../../../broker/pi_secret_run.ts";
import { BROKER_REFUSAL_EXIT } from "../../../broker/broker_permissions.ts";
import { SESSION_START_ERRORS } from "../../../extension/channel/session_server.ts";
import { PACKAGE_ROOT, startFailureNotice } from "../../../extension/channel/start_notice.ts";
import { demoHint } from "../../pi/demo_hint.ts";
import { nodeVersionProblem } from "../../../bin/node_version.mjs";

const ROOT = new URL("../../../", import.meta.url).pathname.replace(/\/$/, "");
const NODE = `${ROOT}/node_modules/.bin/node`;
const DENO = `${ROOT}/node_modules/deno/deno`;
/** Names the deno binary for {@link runDeno}'s shell. */
const DENO_VAR = "PI_TEST_DENO";

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `file args` in the checkout with exactly `env`; never rejects. */
function run(file: string, args: string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      { cwd: ROOT, env, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    child.stdin?.end();
  });
}

/**
 * `deno args…` with exactly `env`. The path goes through a variable: under
 * `deno test`, `node:child_process` adds `-A` to any argv that names Deno's
 * own binary, and these tests are about missing permissions.
 */
function runDeno(args: string[], env: Record<string, string>): Promise<Ran> {
  return run("/bin/sh", ["-c", `exec "$${DENO_VAR}" "$@"`, "sh", ...args], {
    ...env,
    [DENO_VAR]: DENO,
  });
}

/** A minimal environment: PATH and HOME, no colours. */
function baseEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/",
    NO_COLOR: "1",
  };
}

async function withTmp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "pi-messages-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("messages", () => {
  it("audit verify with no log yet: says so, where it looked, and exits 0", async () => {
    await withTmp(async (dir) => {
      const path = join(dir, "state", "pi-sudo-prompt", "audit.jsonl");
      const r = await run(NODE, ["ops/audit_cli.ts", "verify", path], baseEnv());
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, "");
      assert.equal(
        r.stdout,
        `audit: no audit log yet (looked for ${path}); ` +
          "pi creates it when an interactive session starts with this extension\n",
      );
      // The default path comes from XDG_STATE_HOME.
      const byDefault = await run(NODE, ["ops/audit_cli.ts", "verify"], {
        ...baseEnv(),
        XDG_STATE_HOME: join(dir, "xdg"),
      });
      assert.equal(byDefault.code, 0, byDefault.stderr);
      assert.match(
        byDefault.stdout,
        /^audit: no audit log yet \(looked for .*\/xdg\/pi-sudo-prompt\/audit\.jsonl\)/,
      );
    });
  });

  it("tests/run.sh without root: says how to run it and offers test:unit", {
    skip: process.getuid?.() === 0 ? "needs a non-root user (the suite runs this as one)" : false,
  }, async () => {
    const r = await run("sh", ["tests/run.sh"], baseEnv());
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "0 passed, 1 failed\n");
    assert.deepEqual(r.stderr.trimEnd().split("\n"), [
      "tests/run.sh: the whole suite needs root: it creates a throwaway user with a sudo " +
      "password for the real-sudo tests. Run it as root: sudo npm test (CI does).",
      "tests/run.sh: without root, npm run test:unit (or deno task test:unit) runs everything " +
      "that does not need it: the static checks and the unit tests under Deno and Node.",
    ]);
  });

  describe("pi-secret-run started with plain deno run", () => {
    const pinnedHint = ". Run it as pi-secret-run in pi's bash tool (the session's launcher " +
      "passes the flags, docs/permissions.md)\n";

    it("no flags: names the missing env permission, one line, exit 125", async () => {
      const r = await runDeno(
        [
          "run",
          "--no-config",
          "broker/pi_secret_run.ts",
          "--label",
          "x",
          "--",
          "true",
        ],
        baseEnv(),
      );
      assert.equal(r.code, BROKER_REFUSAL_EXIT);
      assert.equal(r.stdout, "");
      assert.equal(
        r.stderr,
        "pi-secret-run: started without its pinned Deno permissions: Requires env access to " +
          '"PI_ASKPASS_SOCKET", run again with the --allow-env flag' + pinnedHint,
      );
    });

    it("no --allow-read: names it instead of claiming the broker is not installed", async () => {
      const r = await runDeno(
        [
          "run",
          "--no-config",
          "--allow-env",
          "broker/pi_secret_run.ts",
          "--label",
          "x",
          "--",
          "true",
        ],
        { ...baseEnv(), PI_ASKPASS_SOCKET: "/nonexistent/s" },
      );
      assert.equal(r.code, BROKER_REFUSAL_EXIT);
      assert.match(
        r.stderr,
        /^pi-secret-run: started without its pinned Deno permissions: Requires read access to "\/[^"]+", run again with the --allow-read flag\. Run it as pi-secret-run/,
      );
      assert.equal(r.stderr.split("\n").length, 2, "one line");
    });

    it("any other error: its name and first line, controls replaced", () => {
      assert.equal(
        failureCause(new TypeError("bad thing\n    at main (x.ts:1:1)")),
        "internal error: TypeError: bad thing",
      );
      assert.equal(failureCause("odd\u001b[2J"), "internal error: string: odd?[2J");
    });
  });

  describe("start-up warning", () => {
    it("deno_not_found names the fix: npm ci in the package directory (a checkout)", async () => {
      const root = `${await mkdtemp(join(tmpdir(), "pi-sudo-prompt-"))}/`;
      try {
        await writeFile(join(root, "package-lock.json"), "{}");
        assert.equal(
          startFailureNotice(SESSION_START_ERRORS.DENO_NOT_FOUND, root),
          "pi-sudo-prompt: disabled (deno_not_found): the pinned deno binary is missing; fix: " +
            `npm ci in ${root}, then /reload. Until then sudo will not prompt`,
        );
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    });

    it("without a lockfile (an npm install) the fix is npm install", async () => {
      const root = `${await mkdtemp(join(tmpdir(), "pi-sudo-prompt-"))}/`;
      try {
        assert.ok(
          startFailureNotice(SESSION_START_ERRORS.DENO_NOT_FOUND, root).includes(
            `fix: npm install --omit=dev in ${root}, then`,
          ),
        );
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    });

    it("other reasons keep the short warning", () => {
      assert.equal(
        startFailureNotice(SESSION_START_ERRORS.SESSION_DIR),
        "pi-sudo-prompt: disabled (session_dir); sudo will not prompt",
      );
    });

    it("this checkout is the package root and has a lockfile: the fix is npm ci there", () => {
      assert.equal(PACKAGE_ROOT.replace(/\/$/, ""), ROOT);
      assert.ok(
        startFailureNotice(SESSION_START_ERRORS.DENO_NOT_FOUND).includes(
          `npm ci in ${PACKAGE_ROOT},`,
        ),
      );
    });
  });

  it("the demo's hint names whose password to type", () => {
    assert.equal(
      demoHint("alice"),
      "demo: when the modal opens, type the sudo password of alice (your login password), " +
        "or press Escape to cancel. Quit with Ctrl+D.",
    );
  });
  describe("pi-sudo-prompt, the command of an npm install", () => {
    const BIN = `${ROOT}/bin/pi-sudo-prompt.mjs`;
    const SYSTEM_NODE = "/usr/bin/node";
    const systemNodeVersion = (() => {
      try {
        return execFileSync(SYSTEM_NODE, ["--version"], { encoding: "utf8" }).trim();
      } catch {
        return undefined;
      }
    })();

    it("under a Node older than pi needs: one line with the fix, exit 1", {
      skip: systemNodeVersion && nodeVersionProblem(systemNodeVersion)
        ? false
        : `no Node older than 22.19 at ${SYSTEM_NODE} (found ${systemNodeVersion ?? "none"})`,
    }, async () => {
      const r = await run(SYSTEM_NODE, [BIN, "doctor"], baseEnv());
      assert.equal(r.code, 1);
      assert.equal(r.stdout, "");
      assert.equal(
        r.stderr,
        `pi-sudo-prompt needs Node >= 22.19.0 (the version pi needs), this is ${systemNodeVersion}: ` +
          "install it with `npm install -g node@22`, then run the command again\n",
      );
    });

    it("no command or an unknown one: the usage, exit 2", async () => {
      const usage =
        "usage: pi-sudo-prompt doctor [--json] [--explain REASON] | audit verify [path] | " +
        "audit tail [n] [path] | status | allowlist suggest|check … | install | uninstall\n";
      const none = await run(NODE, [BIN], baseEnv());
      assert.equal(none.code, 2);
      assert.equal(none.stderr, usage);
      const bogus = await run(NODE, [BIN, "bogus"], baseEnv());
      assert.equal(bogus.code, 2);
      assert.equal(bogus.stderr, `pi-sudo-prompt: unknown command 'bogus'\n${usage}`);
    });

    it("status and allowlist run outside pi: plain lines, one JSON answer, usage on bad input", async () => {
      const status = await run(NODE, [BIN, "status"], baseEnv());
      assert.equal(status.code, 0, status.stderr);
      const lines = status.stdout.split("\n");
      assert.match(lines[0], /^broker: (not installed|version \S+, protocol \S+ \()/);
      assert.match(lines[1], /^allowlist: /);
      assert.match(lines[3], /^audit log: \//);
      const check = await run(
        NODE,
        [
          BIN,
          "allowlist",
          "check",
          "/usr/bin/pass  show <entry>",
          '["/usr/bin/pass","show","web"]',
        ],
        baseEnv(),
      );
      assert.equal(check.stdout, '{"ok":true,"line":"/usr/bin/pass show <entry>"}\n', check.stderr);
      const other = await run(
        NODE,
        [BIN, "allowlist", "check", "/usr/bin/pass ls", '["/usr/bin/pass","show","web"]'],
        baseEnv(),
      );
      assert.match(
        other.stdout,
        /^\{"ok":false,"message":"that entry does not match the command shown \(/,
      );
      for (const bad of [["check", "/usr/bin/pass"], ["suggest", "[]"], ["suggest", "{"], ["x"]]) {
        const r = await run(NODE, [BIN, "allowlist", ...bad], baseEnv());
        assert.equal(r.code, 2, bad.join(" "));
        assert.equal(r.stdout, "");
        assert.equal(
          r.stderr,
          "usage: pi-sudo-prompt allowlist suggest ARGV_JSON | allowlist check LINE ARGV_JSON\n",
        );
      }
    });

    it("install with pi only in node_modules: says so and names npx pi", async () => {
      await withTmp(async (dir) => {
        // A node on PATH that reports an old version, and no pi on PATH.
        await mkdir(join(dir, "bin"));
        await writeFile(join(dir, "bin", "node"), "#!/bin/sh\necho v20.20.2\n", { mode: 0o755 });
        const r = await run("sh", [`${ROOT}/bin/pi-sudo-prompt`, "install"], {
          ...baseEnv(),
          PATH: `${join(dir, "bin")}:/usr/bin:/bin`,
          HOME: dir,
          PI_CODING_AGENT_DIR: join(dir, "agent"),
        });
        const lines = r.stdout.split("\n");
        assert.ok(
          lines.includes(
            `  - pi is not on PATH; it is installed only in ${ROOT}/node_modules: ` +
              `start it with \`npx pi\` in ${ROOT}`,
          ),
          r.stdout,
        );
        assert.ok(
          lines.includes(
            "  - node on PATH is v20.20.2, pi needs Node >= 22.19.0: `npm install -g node@22` " +
              "(`npx pi` here uses the checkout's own Node)",
          ),
          r.stdout,
        );
        assert.ok(lines.includes(`  ✓ npx pi install ${ROOT}`), r.stdout);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        assert.equal(
          lines.at(-2),
          `pi-sudo-prompt: ready. Start \`npx pi\` in ${ROOT} and run a command that uses sudo.`,
        );
        // The checkout's own pi registered it, where `npx pi` will look.
        const settings = JSON.parse(await readFile(join(dir, "agent", "settings.json"), "utf8"));
        assert.equal(settings.packages.length, 1);
      });
    });
  });
});
