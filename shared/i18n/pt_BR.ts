/**
 * Português do Brasil for pi's process: `en.ts`'s keys and parameters. Commands, paths, option
 * and reason names, and what sits between backquotes, stay as they are.
 * @module
 */
import type { Messages } from "./en.ts";

const RETRY =
  "execute o comando de novo; se continuar acontecendo, execute `pi-sudo-prompt doctor`";

/** The Brazilian Portuguese table. */
export const ptBR: Messages = {
  // --- Refusal advice.
  todoRetry: RETRY,
  todoNotOurs: "algo que não é o auxiliar deste pi pediu a senha: pare o que você não iniciou " +
    "e execute o comando de novo",
  todoNothing: "nada",
  // Os grupos de recusas.
  grpNotOurHelper: "quem pediu não é o auxiliar deste pi para um sudo que ele iniciou",
  grpBrokenRequest: "o pedido quebrou o protocolo do pi",
  grpCheckIncomplete: "uma verificação não terminou, então o pi não pediu",
  grpInterrupted: "a troca com o auxiliar foi interrompida",
  grpAskerGone: "o sudo ou o auxiliar dele sumiu",
  grpFfiUnavailable: "o pi não consegue perguntar ao kernel quem se conectou",
  grpNotFromThisSession: "o sudo não veio deste pi",
  grpPeerStopped: "o auxiliar ou o sudo dele foi pausado",
  grpHelperTraced: "há um depurador ligado ao auxiliar",
  grpBrokerUnverified: "o pedido de segredo não veio do broker root instalado",
  grpUnsupportedVersion: "o auxiliar e o pi são de versões diferentes",
  grpPasswordUnusable: "o sudo não aceitaria a senha digitada",
  grpTooManyRequests: "chegaram mais pedidos do que o pi enfileira",
  grpInternalError: "algo inesperado falhou",
  grpWouldCacheCredentials: "o acesso root duraria mais que este comando",
  grpTerminalShared: "outro processo pode ler o terminal do pi",
  grpTerminalUnguarded: "o terminal do pi não está protegido",
  grpPasswordRedirected: "um comando pode estar desviando sua senha",
  grpOtherSudoWaiting: "outro sudo espera e poderia pegar sua senha",
  grpOtherSudoHelperNotQueued: "outro sudo espera um auxiliar que este pi não verificou",
  grpRootPairingUnavailable: "a verificação de pareamento do root não rodou",
  grpRiskySudo: "este sudo deixa o ambiente escolher o que o root executa",
  grpHelperWrites: "o auxiliar escreve a senha, não o pi",
  grpCancelled: "recusado",
  grpTimeout: "ninguém respondeu a tempo",
  grpVerificationFailed: "uma verificação de quem pediu falhou",
  grpAttemptsExhausted: "a senha foi digitada errada vezes demais",
  grpSessionClosed: "a sessão do pi terminou",
  grpNoInteractiveUi: "o pi não tem tela interativa",
  grpPiStopped: "o pi foi pausado",
  todoFfiUnavailable: "reinstale o pacote (`pi install npm:pi-sudo-prompt`); a verificação de " +
    "FFI do doctor diz por quê",
  todoNotFromThisSession: "execute o sudo pela ferramenta bash do próprio pi ou por um comando " +
    "`!`, não de outro terminal",
  todoPeerStopped: "pare o que o pausou e depois execute o comando de novo",
  todoHelperTraced: "pare o rastreador que o aviso indica (`kill <pid>`) e execute o comando " +
    "de novo",
  todoBrokerUnverified: "execute o próprio `pi-secret-run`; se continuar acontecendo, execute " +
    "`/sudo-prompt install-broker` de novo",
  todoUnsupportedVersion: "reinicie o pi depois de uma atualização, para que o auxiliar e a " +
    "extensão tenham a mesma versão",
  todoPasswordUnusable: "digite sua senha de novo, sem quebra de linha",
  todoInternalError: "execute o comando de novo; se continuar acontecendo, relate o problema " +
    "com `pi-sudo-prompt doctor`",
  todoWouldCacheCredentials: "use `sudo` simples (o pi acrescenta -k) ou `sudo -k …`; " +
    "`/usr/bin/sudo` pelo caminho precisa de -k",
  todoTerminalShared: "pare o processo que o aviso indica (`kill <pid>`) e execute o comando " +
    "de novo",
  todoTerminalUnguarded: "espere um momento (o pi inicia um novo guardião) e execute o comando " +
    "de novo; `/sudo-prompt status` mostra o guardião",
  todoPasswordRedirected: "pare o comando (Escape, Ctrl+C) ou o processo que o aviso indica " +
    "e verifique o que ele executa",
  todoStopOtherSudo: "pare-o (`ps -C sudo -o pid,args` lista todos) e execute o comando de novo",
  todoOtherSudoHelperNotQueued: "responda àquele primeiro e depois execute o comando de novo",
  todoRootPairingUnavailable: "execute `/sudo-prompt install-broker` de novo, ou desinstale o " +
    "broker",
  todoRiskySudo: "execute o programa pelo caminho absoluto dele, de propriedade do root, sem " +
    "-s, -E nem VAR=valor; ou inicie o pi sem --sudo-refuse-risky para ver o aviso no modal e " +
    "decidir",
  todoHelperWrites: "nada: o auxiliar escreve a senha no lugar do pi",
  todoTimeout: "execute o comando de novo e responda ao modal",
  todoVerificationFailed: "consulte o motivo que o aviso indica com " +
    "`pi-sudo-prompt doctor --explain <reason>`",
  todoProcessGone: "nada, a não ser que não tenha sido você a pará-lo: nesse caso, execute o " +
    "comando de novo",
  todoTooManyRequests:
    "responda ou cancele os modais abertos e execute menos comandos sudo de uma vez",
  todoAttemptsExhausted: "execute o comando de novo; confira o Caps Lock e o layout do teclado",
  todoNoInteractiveUi: "execute o sudo pela TUI interativa do pi",
  todoPiStopped: "traga o pi de volta (`fg`) e execute o comando de novo; se não foi você, pare " +
    "o que pausou o pi",

  // --- Notices.
  refusedRequest: (reason) => `pedido de senha recusado (${reason})`,
  refusedRequestAs: (title, reason) => `pedido de senha recusado: ${title} (${reason})`,
  detailsHint: (reason) => `detalhes: /sudo-prompt doctor ${reason}`,
  noPasswordPrompt: (notice) => `pi-sudo-prompt: nenhum pedido de senha: ${notice}`,
  auditUnavailable: (reason) => `pi-sudo-prompt: log de auditoria indisponível (${reason})`,
  credentialsNotRemoved: (reason, killed) =>
    `pi-sudo-prompt: não foi possível remover as credenciais em cache do sudo (${reason}` +
    (killed > 0 ? `; ${killed} processo(s) que detinham um ticket foram mortos` : "") +
    "). Chamadas de ferramenta e comandos ! esperam até que `sudo -K` funcione: execute " +
    "`sudo -K` você mesmo e pare o que o estiver matando",
  disabled: (reason) => `pi-sudo-prompt: desativado (${reason})`,
  denoMissingFix: (command, root) =>
    `o binário deno fixado está faltando; correção: ${command} em ${root}, depois /reload. ` +
    "Até lá o sudo não vai pedir a senha",
  sudoWillNotPrompt: "o sudo não vai pedir a senha",
  helperTraced: (by) =>
    `a senha não foi enviada: o auxiliar askpass do sudo está sendo rastreado${by}; ` +
    "execute o comando de novo sem rastreador",
  byProcess: (pid) => ` pelo processo ${pid}`,
  tmuxWithoutTmuxVariable: "pi-sudo-prompt: o pi roda dentro do tmux, mas TMUX não está " +
    "definida, então ele não pode pedir no seu próprio terminal; inicie o pi com TMUX e " +
    "TMUX_PANE do tmux no ambiente",
  sudoCallTitle: "pi: o sudo pede sua senha",
  secretCallTitle: "pi: um comando pede um segredo",

  // --- The modals.
  sudoTitle: "🔐 Autenticação sudo necessária",
  sudoElsewhereTitle: "🔐 sudo: a caixa de senha está no seu terminal",
  sudoBlocked: "senha do sudo",
  passwordLabel: "Senha: ",
  passwordNote: "Sua senha está segura e não ficará visível para o modelo de IA.",
  commandLabel: "Comando: ",
  shellCommandLabel: "Comando do shell:",
  sudoAsksLabel: "o sudo pergunta: ",
  approvesCall: "Aprova: tudo o que o comando do shell acima executar até terminar; os sudos " +
    "seguintes dele não pedem a senha de novo.",
  approvesSudo: "Aprova: só este sudo.",
  incorrectPassword: (attempt, max) => `Senha incorreta, tente de novo (${attempt}/${max})`,
  notCheckedHead: "⚠ Não verificado: se você não reconhece algum destes, aperte Escape.",
  uncheckedStarted: (time) => `, iniciado às ${time}`,
  uncheckedParent: (parent) => `, pai ${parent}`,
  originAgent: "iniciado pelo agente: descende do pi (uma chamada de ferramenta ou um comando !)",
  originDuringCall: "iniciado enquanto uma chamada de ferramenta do pi rodava",
  stopIt: (pid) => `; para pará-lo: kill ${pid}`,
  callsItself: (command) => `diz chamar-se: ${command}`,
  andMore: (count) => `  … e mais ${count}`,
  rootCheckOffer: "O root pode verificá-los por você: /sudo-prompt install-broker",
  scrollHint: (first, last, total) => `↑/↓ para ler tudo: linhas ${first}–${last} de ${total}`,
  replyLabel: "Resposta ao agente: ",
  replyHint: "Tab: recusar com uma resposta ao agente (digitada às claras, nunca a senha)",
  keysDropped: "As teclas digitadas para o pedido que fechou são descartadas até o Enter ou " +
    "uma pausa.",
  keysReplying: (countdown) =>
    `Enter ou Escape: recusar e enviar a resposta · Tab: voltar · cancela sozinho em ${countdown}`,
  keysPassword: (countdown) =>
    `Enter para enviar, Escape para cancelar · cancela sozinho em ${countdown}`,
  moreWaiting: (count) => `mais ${count} esperando`,
  secretTitle: "🔑 Pedido de segredo",
  secretElsewhereTitle: "🔑 pi-secret-run: a caixa está no seu terminal",
  secretBlocked: "segredo para o pi-secret-run",
  secretLabel: "Segredo: ",
  secretNote: "O segredo vai para a entrada padrão deste comando e não ficará visível para o " +
    "modelo de IA.",
  inLabel: "Em: ",
  labelLabel: "Rótulo: ",
  unverified: "(não verificado)",
  traceableWarning: "⚠ Roda como você: o agente pode rastreá-lo e ler o segredo " +
    "(ptrace_scope 1 impede isso).",
  notAllowlistedWarning: "⚠ Fora da allowlist: este comando pode mostrar ao agente o que você " +
    "digita.",

  // --- What the modal says in red about a sudo.
  riskShell: "-s: o root executa o shell indicado por $SHELL no ambiente do comando, um " +
    "programa que esta janela não pode mostrar",
  riskPreserveEnv: "-E: o root mantém o ambiente do comando: variáveis como APT_CONFIG, " +
    "PYTHONPATH ou LD_LIBRARY_PATH podem mudar o que é executado",
  riskPreserveList: (names) =>
    `--preserve-env=${names}: o root mantém estas variáveis do ambiente do comando`,
  riskAssignment: (assignment) => `${assignment}: definida no ambiente do root`,
  programNotAbsolute: (program) =>
    `${program}: não é um caminho absoluto; o sudo o procura no secure_path dele, ou no PATH ` +
    "do comando quando nenhum está definido",
  programNotCheckedInTime: "não pôde ser verificado a tempo",
  programMissing: "não existe ou não pode ser lido",
  pathNotCheckable: (path) => `${path} não pode ser verificado`,
  theProgram: "o programa",
  notRootsProgram: (what) => `${what} não é do root: você, e o agente, poderiam tê-lo alterado`,
  writableByNonRoot: (what) => `${what} pode ser alterado por outros além do root`,

  // --- Only pi reads the keys.
  guardianNotRunning: "o guardião do terminal do pi não está rodando, então matar o pi poderia " +
    "deixar o terminal aberto a outros processos; o pi está iniciando um novo: tente de novo " +
    "em um momento",
  terminalNotExclusiveNow: "o terminal do pi não está exclusivo agora; tente de novo em um " +
    "momento",
  rootTerminalCheckFailed: (reason) =>
    `o root não conseguiu verificar quem está com este terminal aberto (${reason}); execute ` +
    "/sudo-prompt doctor",
  exitedSince: "já terminou",
  hidesOpenFiles: "esconde seus arquivos abertos: pode estar com este terminal",
  processNamed: (pid, command) => `o processo ${pid} (${command})`,
  aProcess: "um processo",
  terminalSharedNotice: (who, kill) =>
    `${who} está com este terminal aberto e poderia ler o que você digita. Pare-o${kill} e ` +
    "tente de novo",
  terminalNotCheckable: "não foi possível verificar quem mais está com este terminal aberto; " +
    "tente de novo",
  waitingSudo: "outro sudo seu está esperando: ele poderia receber esta senha",
  waitingSudoAtTerminal: "outro sudo seu está esperando num prompt de terminal: ele poderia " +
    "receber esta senha",
  waitingSetuid: "um programa setuid-root seu está esperando: ele poderia receber esta senha",
  waitingSetuidAtTerminal: "um programa setuid-root seu está esperando num prompt de " +
    "terminal: ele poderia receber esta senha",
  guardianUnavailable: "guardião do terminal indisponível (sem binário deno ou caminho da libc)",
  guardianDidNotStart: (error) => `o guardião do terminal não iniciou (${error})`,
  guardianNotHeld: (release) =>
    `o guardião do terminal não assumiu o terminal; se o pi for morto, execute ${release}`,
  guardianKeepsDying: (release) =>
    "o guardião do terminal continua morrendo: os pedidos do sudo esperam até que um novo " +
    `rode; se o pi for morto enquanto isso, execute ${release}`,
  guardFailed: (error) => `a proteção do terminal falhou: ${error}`,
  guardStillDumpable: "continua dumpable",
  guardNotNonDumpable: (reason) => `não foi possível tornar o pi não-dumpable (${reason})`,
  guardNoTerminal: "a entrada padrão não é um terminal: nada para tornar exclusivo",
  guardNotExclusive: (reason) => `não foi possível tornar o terminal exclusivo (${reason})`,
  stoppedWithModal: "pi-sudo-prompt: o pi foi parado enquanto pedia uma senha: o pedido foi " +
    "negado. Não digite a senha aqui.",
  modalGone: "pi-sudo-prompt: o pi parou enquanto pedia uma senha: o pedido foi negado. " +
    "Não digite a senha aqui. (Se o que você digitar não aparecer depois: stty sane)",
  boxInterrupted: "pi-sudo-prompt: a caixa de senha foi interrompida: o pedido foi cancelado. " +
    "Não digite a senha aqui.",
  nestedTmux: "⚠ Este terminal também está dentro de um tmux: esse tmux externo vê suas " +
    "teclas antes do pi.",
  droppingKeys: "Pedido fechado: as teclas digitadas para ele são descartadas até o Enter ou " +
    "uma pausa.",
  droppedKeys: "as teclas digitadas depois que o pedido fechou foram descartadas",
  piStopped: "o pi foi parado",
  tmuxClientEnded: "seu cliente tmux terminou",
  tmuxClientStopped: "seu cliente tmux foi parado",
  tmuxLockEnded: "o bloqueio do seu cliente tmux terminou",
  boxInterruptedBecause: (why) =>
    `a caixa de senha no seu terminal foi interrompida (${why}): o pedido foi cancelado`,
  tmuxTerminalNotTaken: (tty, reason) =>
    `o pi não conseguiu assumir o terminal ${tty} do seu cliente tmux (${reason})`,
  tmuxNotLocked: (reason) =>
    `o pi não conseguiu bloquear seu cliente tmux para pedir lá (${reason})`,
  panelAsksThere: "o pi pede sua senha no seu terminal: o tmux fica bloqueado enquanto isso.",
  panelTypeThere: "Digite-a na caixa de senha de lá. O que for digitado aqui nunca é senha.",
  panelNoBox: "Nenhuma caixa de senha na sua tela? Aperte Escape para cancelar, ou Enter para " +
    "tentar de novo.",
  panelClose: "Enter ou Escape para fechar",

  // --- The /sudo-prompt commands.
  commandDescription: (subcommands) => `pi-sudo-prompt: ${subcommands} [motivo]`,
  commandUsage: (subcommands) => `uso: /sudo-prompt ${subcommands}`,
  onlyInTui: "/sudo-prompt só roda na TUI interativa do pi",
  notActive: "o pi-sudo-prompt não está ativo",
  sudoWillAsk: (subcommand) => `${subcommand}: o sudo vai pedir sua senha no modal`,
  subcommandDone: (subcommand) => `/sudo-prompt ${subcommand}: concluído`,
  subcommandFailed: (subcommand) => `/sudo-prompt ${subcommand}: falhou`,
  timedOutLine: "(tempo esgotado)",
  statusFailed: (why) => `(pi-sudo-prompt status falhou: ${why})`,
  doctorNoAnswer: "doctor: sem resposta",
  sudoNotInstalled: "o sudo não está instalado",
  cannotRunSudo: (error) => `não foi possível executar o sudo: ${error}`,
  flagStrict: "pi-sudo-prompt: todo sudo pede a senha (aprovação por sudo; o sudo não guarda " +
    "nada em cache). O padrão é uma aprovação por chamada de ferramenta ou comando ! (também " +
    "PI_SUDO_PROMPT_STRICT=1)",
  flagRefuseRisky: "pi-sudo-prompt: recusa um sudo que deixa o ambiente escolher o que o root " +
    "executa (-s, -E, VAR=valor) ou que executa um programa que você poderia ter escrito, em " +
    "vez de avisar em vermelho (também PI_SUDO_PROMPT_REFUSE_RISKY=1)",
  flagQuiet: "pi-sudo-prompt: um modal não toca o sino, não muda o título do terminal e não " +
    "envia notificação na área de trabalho (também PI_SUDO_PROMPT_QUIET=1)",
  allowTimedOut: "tempo esgotado",
  allowCliFailed: (why) => `pi-sudo-prompt allowlist falhou (${why})`,
  allowNothingToAllow: "allow: ainda não houve nesta sessão nenhum pedido de segredo com o " +
    "aviso vermelho",
  allowError: (message) => `allow: ${message}`,
  allowEditorTitle: "Entrada da allowlist: caminho do programa e depois os argumentos exatos; " +
    "<nome> corresponde a um argumento que não começa com '-'",
  allowCancelled: "allow: cancelado; nada foi escrito",
  allowOneLine: "allow: escreva exatamente uma linha de entrada; nada foi escrito",
  allowShapeError: (message) => `allow: ${message}; nada foi escrito`,
  allowConfirmTitle: "Adicionar esta entrada à allowlist?",
  allowConfirmBody: (line) =>
    `${line}\n\nOs comandos correspondentes vão receber um segredo sem o aviso vermelho.`,
  allowNotConfirmed: "allow: não confirmado; nada foi escrito",
  allowAdded: (line) => `allow: adicionado ${line}`,
  allowFailed: (why) => `allow: falhou (${why})`,
  statusVersion: (version, protocol) => `versão ${version}, protocolo ${protocol}`,
  statusSessionDir: (dir) => `diretório da sessão: ${dir}`,
  statusLauncher: (path) => `lançador askpass: ${path}`,
  statusQueue: (pending) => `fila: ${pending} pedido(s) pendente(s)`,
  statusNoSession: "sessão: inativa (modo não interativo, ou falhou ao iniciar)",
  statusExclusive: (tty) => `${tty} exclusivo`,
  statusNotExclusive: (tty) => `${tty} NÃO exclusivo`,
  statusGuardian: (pid) => ` (guardião pid ${pid})`,
  statusRootGuardian: (pid) => ` (guardião pid ${pid}, do root)`,
  statusNoGuardian: " (sem guardião)",
  statusNoTerminal: "sem terminal",
  statusKeyboard: (tty) => `teclado: ${tty}; pi não-dumpable`,
  statusKeyboardDumpable: (tty) => `teclado: ${tty}; pi DUMPABLE`,
  statusAuditNotOpen: "  não aberto nesta sessão",
  statusSyslogCopy: (sent, dropped) =>
    `  cópia no log do sistema (journalctl -t pi-sudo-prompt): ${sent} enviadas, ` +
    `${dropped} descartadas`,
  statusNoSyslogCopy: (why) => `  sem cópia no log do sistema: ${why}`,
  statusAuditLog: "log de auditoria",

  you: " (você)",
};
