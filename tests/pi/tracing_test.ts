/**
 * Issue 18, attack 1, from a bash tool call of real pi (tmux, the scripted
 * model, real sudo as the throwaway user): the tool call starts
 * `/usr/bin/sudo -A -k id -u`, waits until sudo's askpass helper runs and the
 * modal is open, and attaches a tracer to the helper (strace, or a
 * PTRACE_SEIZE tracer stopping at every system call). The human then types
 * the password (docs/security-tests.md, rows T1–T4; docs/adr/0008).
 *
 * - As shipped: the password never reaches the tracer's log; pi refuses to
 *   answer a traced helper (`helper_traced`, with a notice), sudo gets nothing.
 * - Without the tracer checks (a mutated copy: no tracer check at the
 *   handover, a helper in tracing stop counts as running): pi writes the password into
 *   sudo's pipe itself, so the helper never holds it: the log still has no
 *   password, and sudo succeeds.
 * - Without the tracer check and with the old path (the helper writes the
 *   password): the log holds it. This proves the test sees a leak when there
 *   is one.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { startPi } from "./pi_runner.ts";
import { testPassword } from "../helpers/test_env.ts";
import { defaultAuditPath } from "../../extension/audit/entry.ts";
import {
  ATTACK_SCRIPTS,
  EXTENSION,
  mutatedExtension,
  type Mutation,
  TITLE,
  toolResults,
  waitFor,
} from "./attack_scripts/pi_checks.ts";

const PASSWORD = testPassword();

/** The tracer check right before the handover, turned off. */
const NO_TRACER_CHECK: Mutation = {
  file: "extension/channel/handover.ts",
  from: "const tracer = await tracerOf(helper.pid);",
  to: "const tracer = 0;",
};
/**
 * A helper in tracing stop ("t") counts as running. With the tracer check off,
 * this is the other place that sees the tracer: strace stops the helper at
 * each of its system calls (keepalives wake it), and a liveness check or the
 * re-check at submit that reads its state in such a moment withdraws the
 * request as gone, which this variant must not depend on.
 */
const TRACING_STOP_ALIVE: Mutation = {
  file: "kernel/peer_verification.ts",
  from: 'stat.state !== "Z" && !isStopped(stat);',
  to: 'stat.state !== "Z" && stat.state !== "T";',
};
/** pi cannot take the pipe: the helper writes the password (the path before ADR 0008). */
const HELPER_WRITES: Mutation = {
  file: "kernel/sudo_pipe.ts",
  from:
    "  const c = libc();\n  if (!c) return { ok: false, reason: PIPE_HANDOVER_ERRORS.PIDFD_GETFD_UNSUPPORTED };",
  to: "  return { ok: false, reason: PIPE_HANDOVER_ERRORS.PIDFD_GETFD_NOT_PERMITTED };",
};

/** Runs the attack with `tracer` against `extension`; returns the tool result and the trace log. */
async function traceAttack(
  tracer: "strace" | "seize",
  mutations: readonly Mutation[],
): Promise<{ result: string; trace: string; audit: string; screen: string }> {
  const work = await mkdtemp(join(tmpdir(), "pi-trace-"));
  const copy = await mkdtemp(join(tmpdir(), "pi-trace-ext-"));
  try {
    const extension = mutations.length === 0 ? EXTENSION : await mutatedExtension(copy, mutations);
    const pi = await startPi({
      script: [
        { bash: `sh '${ATTACK_SCRIPTS}/trace_helper.sh' '${work}' ${tracer}`, timeout: 120 },
        { text: "FLOW-DONE" },
      ],
      extensions: [extension],
    });
    try {
      await pi.tmux.sendText("go");
      await pi.tmux.sendKeys("Enter");
      const modal = await pi.tmux.waitFor(TITLE, 30_000);
      assert.match(modal, /Command: \/usr\/bin\/sudo -A -k id -u/);
      await writeFile(join(work, "modal-seen"), "");
      await waitFor(
        "the tracer attached",
        () => stat(join(work, "attached")).then(() => true, () => undefined),
        30_000,
      );
      // Typed into the modal. On a loaded machine pi may already have withdrawn
      // it, for the tracer (the helper seen in tracing stop): the keys are then
      // dropped, and the outcome below is the same.
      await pi.tmux.sendText(PASSWORD);
      await pi.tmux.waitUntil(
        (t) => t.includes("•".repeat([...PASSWORD].length)) || !t.includes(TITLE),
        "the password masked, or the modal withdrawn",
        { timeoutMs: 10_000 },
      );
      assert.ok(!(await pi.tmux.capture()).includes(PASSWORD), "typed text shown in clear");
      await pi.tmux.sendKeys("Enter");
      const result = await waitFor("the tool result", async () => {
        const r = toolResults(await pi.readSessions());
        return r.length >= 1 ? r[0] : undefined;
      }, 60_000);
      // A refusal's notice is drawn a moment after the result is recorded.
      const screen = await pi.tmux.waitUntil(
        (t) => /is traced by process/.test(t.replace(/\s+/g, " ")),
        "the tracer notice",
        { timeoutMs: 5_000, history: true },
      ).catch(() => pi.tmux.capture({ history: true }));
      const trace = await readFile(join(work, "trace.log"), "latin1").catch(() => "");
      const audit = await readFile(defaultAuditPath(pi.launch.env), "utf8").catch(() => "");
      assert.ok(!result.includes(PASSWORD), "password in the tool result");
      assert.ok(!screen.includes(PASSWORD), "password on screen");
      return { result, trace, audit, screen };
    } finally {
      await pi.close();
    }
  } finally {
    await rm(work, { recursive: true, force: true });
    await rm(copy, { recursive: true, force: true });
  }
}

/** True when the trace log holds the password, as text (strace) or hex (the seize tracer). */
function traceHolds(trace: string): boolean {
  return trace.includes(PASSWORD) || trace.includes(Buffer.from(PASSWORD).toString("hex"));
}

describe("tracing sudo's askpass helper gets nothing (real pi, real sudo)", () => {
  for (const tracer of ["strace", "seize"] as const) {
    it(`${tracer} attached while the modal is open: no password in its log, pi refuses the traced helper`, async () => {
      const { result, trace, audit, screen } = await traceAttack(tracer, []);
      assert.match(result, /trace: attached/, result);
      assert.ok(/write\(|attached/.test(trace), `the tracer ran:\n${trace.slice(0, 500)}`);
      assert.ok(!traceHolds(trace), "the tracer captured the password");
      assert.match(result, /^sudo exit: 1$/m, result);
      assert.match(result, /no password was provided/, result);
      assert.match(audit, /"reason":"helper_traced"/, "a named refusal in the audit log");
      assert.match(
        screen.replace(/\s+/g, " "),
        /askpass helper is traced by process \d+; run the command again without a tracer/,
        "a notice names the tracer",
      );
    });
  }

  it("without the tracer check, pi still writes into sudo's pipe itself: no password in strace's log, sudo succeeds", async () => {
    const { result, trace, audit } = await traceAttack("strace", [
      NO_TRACER_CHECK,
      TRACING_STOP_ALIVE,
    ]);
    assert.match(result, /trace: attached/, result);
    assert.ok(!traceHolds(trace), "the tracer captured the password");
    assert.match(result, /^sudo exit: 0$/m, result);
    assert.match(result, /^sudo out: 0$/m, result);
    assert.match(audit, /"reason":"pi_wrote_pipe"/, "the audit log says pi wrote the pipe");
  });

  it("mutation check: with the old path (the helper writes) and no tracer check, strace's log holds the password", async () => {
    const { result, trace } = await traceAttack("strace", [
      NO_TRACER_CHECK,
      TRACING_STOP_ALIVE,
      HELPER_WRITES,
    ]);
    assert.match(result, /^sudo exit: 0$/m, result);
    assert.ok(traceHolds(trace), "the old path leaks to a tracer: the test must see it");
  });
});
