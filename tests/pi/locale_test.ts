/**
 * pi speaks the human's language (issue 36, part 3): real pi in tmux under
 * `LANG=pt_BR.UTF-8`, the agent's real sudo as the throwaway test user. The
 * modal, the terminal's title, the notices and the `/sudo-prompt` commands
 * (the doctor and the stored status, which run in processes of their own)
 * are in Brazilian Portuguese, and the password field reads `Senha`; what the
 * agent hears and the audit log stay English, whatever the user reads.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import process from "node:process";
import type { FauxStep } from "./faux_provider.ts";
import { type PiSession, startPi } from "./pi_runner.ts";
import { withPiInBash } from "./shell_pi.ts";
import { testPassword } from "../helpers/test_env.ts";
import { defaultAuditPath } from "../../extension/audit/entry.ts";
import {
  assertNoLeak,
  EXTENSION,
  submitCommand,
  toolResults,
  typeMasked,
  waitFor,
} from "./attack_scripts/pi_checks.ts";

const PASSWORD = testPassword();
const LOCALE = "pt_BR.UTF-8";
const TITLE = "🔐 Autenticação sudo necessária";
const CALL = "pi: o sudo pede sua senha";
const ASK = "Ask the user before you run sudo again.";

/** The screen as one line: the modal's borders and every run of blanks become one space. */
function flat(screen: string): string {
  return screen.replace(/[│╭╮╰╯─]/g, " ").replace(/\s+/g, " ");
}

/** Runs `run` against a pi that speaks Portuguese; closes it after. */
async function withPortuguesePi(
  script: FauxStep[],
  run: (pi: PiSession) => Promise<void>,
  args: string[] = [],
): Promise<void> {
  const pi = await startPi({ script, extensions: [EXTENSION], args, locale: LOCALE, rows: 60 });
  try {
    await run(pi);
  } finally {
    await pi.close();
  }
}

/** pi's pane title, as tmux knows it. */
async function paneTitle(pi: PiSession): Promise<string> {
  const out = await pi.tmux.tmux("display-message", "-p", "-t", pi.tmux.target, "#{pane_title}");
  return out.stdout.trim();
}

/** Waits until the session JSONL holds `n` tool results and returns them. */
function waitForResults(pi: PiSession, n: number): Promise<string[]> {
  return waitFor(`${n} tool result(s) in the session file`, async () => {
    const results = toolResults(await pi.readSessions());
    return results.length >= n ? results : undefined;
  }, 30_000);
}

describe("pi speaks Brazilian Portuguese under LANG=pt_BR.UTF-8 (real pi, real sudo)", () => {
  it("the refusal notice, the sudo modal (Senha), a wrong password, the title, the doctor and the status are in Portuguese; the agent and the audit log read English", async () => {
    await withPortuguesePi(
      [
        // Per sudo, a sudo without -k is refused (would_cache_credentials): a notice, no modal.
        { bash: "/usr/bin/sudo -A true; echo rc=$?" },
        { bash: "sudo id -u" },
        { text: "FLOW-DONE" },
      ],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        const screen = flat(await pi.tmux.waitFor(TITLE, 30_000));
        assert.match(screen, /Comando: \/usr\/bin\/sudo -A -k \/usr\/bin\/id -u/);
        assert.match(screen, /Aprova: só este sudo\./);
        assert.match(screen, /o sudo pergunta: «/);
        assert.match(screen, / Senha: /, "the password field reads Senha");
        assert.ok(!screen.includes("Password:"), "no English label");
        assert.match(screen, /Tab: recusar com uma resposta ao agente/);
        assert.match(
          screen,
          /Enter para enviar, Escape para cancelar · cancela sozinho em [12]:\d\d/,
        );
        assert.match(screen, /Sua senha está segura e não ficará visível para o modelo de IA\./);
        assert.equal(
          await waitFor("the title calls the user", async () => {
            const title = await paneTitle(pi);
            return title === CALL ? title : undefined;
          }, 10_000),
          CALL,
        );
        await typeMasked(pi, "wrong-password-1");
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor("Senha incorreta, tente de novo (2/3)", 15_000);
        await typeMasked(pi, PASSWORD);
        await pi.tmux.sendKeys("Enter");
        await pi.tmux.waitFor("FLOW-DONE", 30_000);
        const [refused, answered] = await waitForResults(pi, 2);
        // sudo's own "try again" line (its language) comes first.
        assert.equal(answered.trim().split("\n").at(-1), "0", "the password ran it as root");
        // What the agent hears stays English.
        assert.match(refused, /rc=1/);
        assert.ok(
          refused.trimEnd().endsWith(
            "pi-sudo-prompt: pi refused the sudo password request (would_cache_credentials). " +
              ASK,
          ),
          refused,
        );
        // The notice: what happened, what to do, and where the details are.
        const notices = flat(await pi.tmux.capture({ history: true }));
        assert.match(
          notices,
          /pi-sudo-prompt: pedido de senha recusado: o acesso root duraria mais que este comando \(would_cache_credentials\): use `sudo` simples \(o pi acrescenta -k\)/,
        );
        assert.match(notices, /detalhes: \/sudo-prompt doctor would_cache_credentials/);
        // The audit log is machine-read: reason names, no Portuguese.
        const audit = await readFile(defaultAuditPath(pi.launch.env), "utf8");
        assert.match(audit, /"reason":"would_cache_credentials"/);
        assert.ok(!/recusad|senha|pedido/.test(audit), audit);
        await assertNoLeak(pi, PASSWORD);

        // The doctor runs in a process of its own, with pi's environment.
        await pi.tmux.sendText("/sudo-prompt doctor would_cache_credentials");
        await submitCommand(pi, "doctor would_cache_credentials");
        const explained = flat(await pi.tmux.waitFor(/o que fazer: +use `sudo` simples/, 15_000));
        assert.match(explained, /o que houve: o sudo não tinha -k/);
        assert.match(explained, /Enter ou Escape para fechar/);
        await pi.tmux.sendKeys("Escape");
        await pi.tmux.waitForGone("o que fazer:", 5_000);

        // The status: pi's lines and the stored ones, the audit heading the same in both.
        await pi.tmux.sendText("/sudo-prompt status");
        await submitCommand(pi, "status");
        const status = flat(await pi.tmux.waitFor(/log de auditoria: /, 15_000));
        assert.match(status, /versão \S+, protocolo \d+/);
        assert.match(status, /fila: 0 pedido\(s\) pendente\(s\)/);
        assert.match(status, /log de auditoria: \S+audit\.jsonl (sem )?cópia no log do sistema/);
        await pi.tmux.sendKeys("Escape");
      },
      ["--sudo-strict"],
    );
  });

  it("Tab, a reply in Portuguese, Escape: the labels are Portuguese, the agent's line English with the user's own words", async () => {
    await withPortuguesePi(
      // No -k: the password would approve the whole call (one approval per call).
      [{ bash: "sudo id -u; echo rc=$?" }, { text: "FLOW-DONE" }],
      async (pi) => {
        await pi.tmux.sendText("go");
        await pi.tmux.sendKeys("Enter");
        const screen = flat(await pi.tmux.waitFor(TITLE, 30_000));
        assert.match(screen, /Comando do shell: sudo id -u; echo rc=\$\?/);
        assert.match(screen, /Aprova: tudo o que o comando do shell acima executar até terminar/);
        await pi.tmux.sendKeys("Tab");
        await pi.tmux.sendText("sem root hoje, use o venv");
        const replying = flat(
          await pi.tmux.waitFor("Resposta ao agente: sem root hoje, use o venv", 10_000),
        );
        assert.match(replying, / Senha: (?!•)/, "not one character reached the password field");
        assert.match(replying, /Enter ou Escape: recusar e enviar a resposta · Tab: voltar/);
        await pi.tmux.sendKeys("Escape");
        await pi.tmux.waitFor("FLOW-DONE", 20_000);
        const [result] = await waitForResults(pi, 1);
        assert.match(result, /rc=1/);
        assert.ok(
          result.trimEnd().endsWith(
            "pi-sudo-prompt: the user declined the sudo password request, and replied " +
              `(the user's own words): «sem root hoje, use o venv». ${ASK}`,
          ),
          result,
        );
      },
    );
  });

  it("pi killed while the modal shows: the terminal guardian's line is in Portuguese too", async () => {
    await withPiInBash(async ({ tmux, pi }) => {
      await tmux.sendText("go");
      await tmux.sendKeys("Enter");
      await tmux.waitFor(TITLE, 30_000);
      process.kill(pi, "SIGKILL");
      const screen = flat(await tmux.waitFor("Não digite a senha aqui", 15_000));
      assert.match(screen, /o pi parou enquanto pedia uma senha: o pedido foi negado/);
      assert.ok(!screen.includes("Do not type"), "no English left");
    }, { script: [{ bash: "sudo -k id -u" }, { text: "FLOW-DONE" }], locale: LOCALE });
  });
});
