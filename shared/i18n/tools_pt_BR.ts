/**
 * Português do Brasil for the tools: `tools_en.ts`'s keys and parameters.
 * @module
 */
import type { ToolMessages } from "./tools_en.ts";

/** The Brazilian Portuguese table of the tools. */
export const toolsPtBR: ToolMessages = {
  // --- O que cada recusa viu.
  whyFfiUnavailable: "o pi não conseguiu carregar o koffi, então não pode perguntar ao kernel " +
    "quem se conectou",
  whyPeerCredentialsFailed: "o kernel não disse qual processo se conectou (SO_PEERCRED falhou)",
  whyClaimedPidMismatch: "o processo que se conectou não é o que ele diz ser",
  whyPeerUidMismatch: "o processo que se conectou roda como outro usuário",
  whyPeerGone: "o processo que pediu terminou antes de poder ser verificado",
  whyPeerIdsMismatch: "os ids real, efetivo, salvo e de sistema de arquivos de quem pediu não " +
    "são todos seus",
  whyPeerExeMismatch: "quem pediu não é o auxiliar Deno deste pi",
  whyPeerCmdlineMismatch: "quem pediu roda o auxiliar com argumentos diferentes dos que o pi " +
    "definiu",
  whyPeerEnvironMismatch: "o ambiente de quem pediu não traz as configurações desta sessão",
  whyPeerStdoutNotSudoPipe: "a saída de quem pediu não é um pipe lido pelo sudo, então a senha " +
    "iria para outro lugar",
  whyParentNotSudo: "o processo pai de quem pediu não é o sudo do sistema",
  whyParentNotSetuidRoot: "o processo pai de quem pediu não roda como root, então não é um sudo " +
    "de verdade",
  whyNotFromThisSession: "o sudo não veio de um comando que este pi iniciou",
  whyPeerConnectionInherited: "a conexão foi aberta por um processo e passada para outro",
  whyPeerDoesNotHoldConnection: "o processo que reivindica a conexão não a detém",
  whyPeerHoldsConnectionTwice: "quem pediu detém a própria conexão duas vezes, como faria um " +
    "intermediário",
  whyConnectionOwnerUnknown: "o pi não conseguiu descobrir qual processo detém a conexão",
  whyPeerStopped: "o auxiliar ou o sudo dele foi parado (SIGSTOP) enquanto pedia",
  whyHelperTraced: "um depurador (ptrace) está conectado ao auxiliar e poderia ler a senha",
  whyPeerChanged: "quem pediu virou outro programa entre a verificação e a resposta",
  whyBrokerNotRoot: "um pedido de segredo não veio do broker root",
  whyBrokerCmdlineMismatch: "o pedido de segredo veio de um processo root que não é o broker " +
    "instalado",
  whyBrokerProofInvalid: "o arquivo de prova do broker em /run/pi-sudo-prompt não corresponde " +
    "ao pedido dele",
  whyFrameTooLarge: "o pedido era maior do que qualquer pedido real",
  whyTrailingBytes: "o pedido trazia bytes depois do seu fim",
  whyMalformedFrame: "o pedido não era um quadro válido",
  whyMalformedHeader: "o cabeçalho do pedido não era válido",
  whyUnsupportedVersion: "o auxiliar fala outra versão do protocolo que não a deste pi",
  whyUnexpectedType: "o pedido era de um tipo que o pi não responde",
  whyBadField: "um campo do pedido estava ausente ou era inválido",
  whyPromptTooLong: "o texto do prompt do sudo era mais longo do que o modal mostra",
  whyPasswordTooLong: "a senha digitada era mais longa do que o sudo aceita",
  whyPasswordHasLineBreak: "a senha digitada continha uma quebra de linha, que o sudo cortaria",
  whyIdMismatch: "uma resposta citou outro pedido que não o que foi feito",
  whyTooManyConnections: "chegaram mais pedidos de uma vez do que o pi enfileira",
  whyRequestTimeout: "quem pediu se conectou, mas não enviou nenhum pedido a tempo",
  whyReplayedRequest: "um pedido foi enviado duas vezes com o mesmo id",
  whyPeerClosed: "quem pediu desligou antes de o pi responder",
  whyInternalError: "algo inesperado falhou ao tratar o pedido, então o pi o recusou",
  whyWouldCacheCredentials: "o sudo não tinha -k, então o acesso root duraria mais que este " +
    "comando",
  whyTerminalShared: "outro processo está com o terminal do pi aberto e poderia ler o que você " +
    "digita",
  whyTerminalScanIncomplete: "o pi não conseguiu listar quem detém o terminal dele dentro do " +
    "prazo",
  whyTerminalUnguarded: "o terminal do pi não estava exclusivo, ou nenhum guardião o detinha " +
    "para fechá-lo de novo se o pi for morto, então o pi não pediu",
  whyStdoutPipeUnknown: "a saída do auxiliar askpass não é um pipe que o pi consiga ler",
  whyStdoutPipeShared: "dois auxiliares askpass escrevem no pipe de um mesmo sudo: um comando " +
    "pode estar desviando sua senha",
  whyStdoutPipeHeldElsewhere: "outro processo detém o pipe deste sudo: um comando pode estar " +
    "desviando sua senha",
  whyOtherSudoWithoutHelper: "outro sudo seu espera sem terminal e sem askpass, como faz um " +
    "sudo desviado",
  whyOtherSudoForeignAskpass: "outro sudo seu espera por um askpass que não é desta sessão: um " +
    "comando pode estar desviando sua senha",
  whyOtherSudoHelperNotQueued: "outro sudo espera por um auxiliar que esta sessão não " +
    "verificou (outro pi?)",
  whyPairingScanFailed: "não foi possível percorrer o /proc dentro do prazo",
  whyRootPairingRefused: "o root constatou que o pipe do auxiliar não é lido pelo sudo " +
    "mostrado: um comando está desviando sua senha",
  whyRootPairingUnavailable: "a verificação de pareamento do root " +
    "(`sudo -n pi-secret-broker --verify-pairing`) não rodou",
  whyRiskySudo: "o sudo deixa o ambiente escolher o que o root executa (-s, -E, VAR=valor) ou " +
    "executa um programa que você poderia ter escrito, e você escolheu recusar esses sudos " +
    "(--sudo-refuse-risky)",
  whyPidfdGetfdNotPermitted: "o kernel negou ao pi uma cópia do pipe do sudo (Yama 2 ou 3), " +
    "então o auxiliar escreve a senha",
  whyPidfdGetfdUnsupported: "o kernel não tem pidfd_getfd (anterior ao 5.6), então o auxiliar " +
    "escreve a senha",
  whyHelperGone: "o auxiliar terminou antes de o pi poder entregar a senha",
  whyHelperPipeChanged: "a saída do auxiliar não é mais o pipe que o pi verificou",
  whyPipeWriteFailed: "o pipe do sudo não recebeu a senha inteira em uma só escrita",
  whyCancelled: "você apertou Escape, ou o pedido foi retirado",
  whyTimeout: "ninguém respondeu ao modal dentro do prazo",
  whyVerificationFailed: "uma verificação de quem pediu falhou; o aviso ou o log de auditoria " +
    "diz qual",
  whyProcessGone: "o sudo, o auxiliar dele ou o broker terminou, ou foi parado, enquanto o " +
    "modal esperava",
  whyQueueFull: "havia mais pedidos esperando do que o pi enfileira",
  whyAttemptsExhausted: "a senha foi digitada errada vezes demais para este pedido",
  whySessionClosed: "a sessão do pi terminou enquanto o pedido esperava",
  whyNoInteractiveUi: "o pi roda sem a TUI interativa (modo print, JSON ou RPC), então nenhum " +
    "modal pode aparecer",
  whyPiStopped: "o pi foi parado (Ctrl+Z, SIGTSTP ou SIGSTOP) enquanto o pedido esperava",

  // --- Os relatórios de /sudo-prompt status e allowlist.
  allowlistUnsafe: (path, why) =>
    `${path} foi recusado (${why}): instale o broker primeiro (/sudo-prompt install-broker)`,
  allowlistNoEntry: (reason) => `este comando não pode ser uma entrada da allowlist (${reason})`,
  allowlistNoMatch: (reason) => `essa entrada não corresponde ao comando mostrado (${reason})`,
  statusBrokerMissing: "broker: não instalado (/sudo-prompt install-broker)",
  statusBroker: (version, protocol) => `broker: versão ${version}, protocolo ${protocol} (confere)`,
  statusBrokerDiffers: (version, protocol) =>
    `broker: versão ${version}, protocolo ${protocol} (DIFERENTE: reinstale-o)`,
  statusAllowlist: (entries) => `allowlist: ${entries} entrada${entries === 1 ? "" : "s"}`,
  statusAllowlistRefused: (why) => `allowlist: ${why} (conta como vazia)`,

  // --- The doctor.
  doctorUsage:
    "uso: pi-sudo-prompt doctor [--json] [--width N] [--explain REASON] [--inside-pi JSON]",
  doctorWidth: "--width aceita de 10 a 999 colunas",
  doctorInsidePi: "--inside-pi: não é o JSON que /sudo-prompt doctor escreve",
  doctorNoSuchReason: (name, known) => `nenhuma recusa se chama "${name}"; conhecidas: ${known}`,
  explainMeans: (means) => `  o que houve: ${means}`,
  explainTodo: (todo) => `  o que fazer: ${todo}`,
  explainGroup: (title, group) => `  em resumo:   ${title} (${group})`,
  explainMore: "  mais: docs/troubleshooting.md; `pi-sudo-prompt doctor` verifica toda a cadeia",
  doctorFix: "correção: ",
  doctorSummary: (checks, ok, warn, fail, info) =>
    `${checks} verificações: ${ok} ok, ${warn} avisos, ${fail} falharam, ${info} informativas`,
  doctorExpired: (ms) => `não terminou em ${ms} ms`,
  doctorExpiredFix: "execute o doctor de novo; se persistir, a etapa indicada acima trava " +
    "nesta máquina",
  doctorError: (error) => `erro inesperado: ${error}`,
  doctorErrorFix: "execute o doctor de novo; relate o erro se ele persistir",
  ownMissing: (path) => `${path}: ausente`,
  ownSymlink: (path) => `${path} é um link simbólico`,
  ownNotRegular: (path) => `${path} não é um arquivo comum`,
  ownNotDirectory: (path) => `${path} não é um diretório`,
  ownUnresolved: (path) => `${path} não pode ser resolvido`,
  ownUnexamined: (path) => `${path} não pode ser examinado`,
  ownForeignSymlink: (path, uid, you) => `${path} é um link simbólico do uid ${uid}${you}`,
  ownWritableByGroup: (path, mode) => `${path} pode ser alterado pelo grupo (modo ${mode})`,
  ownWritableByOthers: (path, mode) => `${path} pode ser alterado por outros (modo ${mode})`,
  ownOwnedBy: (path, uid, you) => `${path} pertence ao uid ${uid}${you}, não ao root`,
  platformTitle: "Linux e /proc",
  platformNotLinux: (platform) =>
    `a plataforma é ${platform}: o pi-sudo-prompt precisa de Linux (/proc, SO_PEERCRED)`,
  platformNotLinuxFix: "use o pi no Linux; em outros sistemas o sudo continua falhando sem " +
    "terminal",
  platformArch: (arch) =>
    `a arquitetura ${arch} não é suportada (SO_PEERCRED é diferente): os pedidos são recusados`,
  platformArchFix: "use x86_64, arm64 ou riscv64",
  platformNoProc: (path) => `${path} não pode ser lido: o /proc não está montado aqui`,
  platformNoProcFix: "monte o procfs (mount -t proc proc /proc); sem ele todo pedido é recusado",
  platformOk: (release, arch, proc) => `Linux ${release} ${arch}, ${proc} montado`,
  sudoOnlyDoas: (doas) =>
    `só o doas foi encontrado (${doas}): sem suporte, o OpenDoas não tem askpass e só lê de ` +
    "um terminal, então os comandos do agente não chegam ao modal",
  sudoInstallOrRs: (since) => `instale o sudo (apt-get install sudo) ou o sudo-rs ≥ ${since}`,
  sudoNotFound: (paths) => `sudo não encontrado (procurado em ${paths})`,
  sudoInstall: "instale o sudo (apt-get install sudo)",
  sudoNoAnswer: "`sudo -V` não respondeu a tempo",
  sudoCannotRun: (error) => `não foi possível executar: ${error}`,
  sudoReinstall: "reinstale o sudo",
  sudoNotSetuid: (sudo) => `${sudo} não é setuid root`,
  sudoNotSetuidFix: (sudo) => `reinstale o sudo, ou: chown root:root ${sudo} && chmod 4755 ${sudo}`,
  sudoDoasUnused: (doas) => `; o doas em ${doas} não é usado (o OpenDoas não tem askpass)`,
  sudoOld: (line) =>
    `${line}: anterior ao 1.9, não testado (o askpass funciona, as mensagens podem mudar)`,
  sudoOldFix: "atualize o sudo para o 1.9 ou posterior",
  sudoRsOld: (line, since) =>
    `${line}: sem -A/askpass antes do sudo-rs ${since} (sudo-rs #1249), então o sudo não ` +
    "pode pedir pelo modal",
  sudoRsOldFix: (since) =>
    `atualize o sudo-rs para o ${since} ou posterior, ou instale o sudo original ` +
    "(p. ex. apt-get install sudo-ws no Ubuntu)",
  sudoRsOk: (line, since) =>
    `${line} (askpass desde o ${since}; o prompt dele diz [sudo: authenticate] Password:)`,
  sudoUnrecognised: (line) => `saída de \`sudo -V\` não reconhecida: ${line}`,
  sudoNoOutput: "nenhuma saída de `sudo -V`",
  sudoUseSupported: (since) => `use o sudo 1.9+ ou o sudo-rs ≥ ${since}`,
  xdgNotSet: "não está definida",
  xdgNotAbsolute: (dir) => `${dir} não é um caminho absoluto`,
  xdgMissing: (dir) => `${dir} não existe`,
  xdgSymlink: (dir) => `${dir} é um link simbólico`,
  xdgNotDirectory: (dir) => `${dir} não é um diretório`,
  xdgNotYours: (dir, uid) => `${dir} pertence ao uid ${uid}, não a você`,
  xdgOpen: (dir, mode) => `${dir} tem modo ${mode}: o grupo ou outros têm acesso`,
  xdgMode: (mode) => `modo ${mode}`,
  xdgUnsafeBase: (base) =>
    `a base do diretório da sessão ${base} tem caracteres que o lançador recusa ` +
    "(espaço, vírgula, aspas): a extensão não vai iniciar",
  xdgUnsafeBaseFix: "defina XDG_RUNTIME_DIR com um caminho simples como /run/user/$(id -u)",
  xdgTooLong: (path, max) =>
    `${path} é mais longo do que um caminho de socket Unix pode ser (${max} bytes)`,
  xdgTooLongFix: "defina XDG_RUNTIME_DIR com um caminho mais curto como /run/user/$(id -u)",
  xdgFallback: (problem) =>
    `XDG_RUNTIME_DIR ${problem}: usando um diretório mkdtemp privado em /tmp`,
  xdgFallbackFix: "entre pelo systemd-logind (pam_systemd) para que /run/user/$(id -u) " +
    "exista, ou exporte XDG_RUNTIME_DIR apontando para um diretório seu com modo 0700",
  xdgOk: (dir, mode) => `${dir}: um diretório privado seu (${mode})`,
  ffiTitle: "FFI peer creds",
  ffiNoKoffi: "o FFI do koffi não carrega aqui: todo pedido de senha é recusado (falha fechada)",
  ffiNoKoffiFix: "execute npm ci no pacote (o koffi traz binários prontos para x64, arm64, " +
    "riscv64)",
  ffiNoFd: "nenhum descritor de arquivo por trás de um socket do Node: pedidos recusados",
  ffiNoFdFix: "use o Node que vem com o pi (≥ 22); os pedidos falham fechados",
  ffiPeercredFailed: (reason) => `SO_PEERCRED falhou (${reason}): todo pedido é recusado`,
  ffiReport: "relate este kernel/arquitetura; os pedidos falham fechados",
  ffiWrongPeer: (pid, uid, ourPid, ourUid) =>
    `SO_PEERCRED retornou pid ${pid} uid ${uid}, esperado pid ${ourPid} uid ${ourUid}`,
  ffiPidfdYes: "SO_PEERPIDFD sim",
  ffiPidfdNo: "SO_PEERPIDFD não (kernel < 6.5)",
  ffiNoSockDiag: (why) =>
    `NETLINK_SOCK_DIAG não identificou o socket do par${why}: todo pedido é recusado ` +
    "(falha fechada)",
  ffiNoSockDiagFix: "use um kernel com CONFIG_UNIX_DIAG (o recurso por trás do ss -x)",
  ffiOk: (pidfd) =>
    "o koffi carrega; a ida e volta do SO_PEERCRED deu nosso pid e uid; o SOCK_DIAG " +
    `identificou o socket do par; ${pidfd}`,
  ffiTimedOut: (what, ms) => `${what}: tempo esgotado após ${ms} ms`,
  ptraceRisk: "qualquer processo seu (inclusive os do agente) pode rastrear seu emulador de " +
    "terminal ou o servidor tmux para ler as teclas, e um comando pi-secret-run para ler o " +
    "segredo dele (o próprio pi é não-dumpable, e o auxiliar askpass do sudo nunca tem a senha)",
  ptraceMissing: (risk) => `kernel.yama.ptrace_scope ausente (sem o LSM Yama): ${risk}`,
  ptraceMissingFix: "inicie um kernel com Yama (CONFIG_SECURITY_YAMA; lsm=…,yama) e defina " +
    "sysctl kernel.yama.ptrace_scope=1 (persista em /etc/sysctl.d/); ou instale o broker " +
    "(/sudo-prompt install-broker), para que o root libere os processos que escondem seus " +
    "arquivos abertos",
  ptraceZero: (risk) => `kernel.yama.ptrace_scope=0: ${risk}`,
  ptraceZeroFix: "sudo sysctl kernel.yama.ptrace_scope=1 (persista em /etc/sysctl.d/); ou " +
    "instale o broker (/sudo-prompt install-broker), para que o root, e não uma pergunta no " +
    "modal, libere os processos que escondem seus arquivos abertos",
  ptraceOne: "kernel.yama.ptrace_scope=1: só ancestrais podem rastrear; o shell do agente " +
    "ainda é ancestral de um comando pi-secret-run que ele inicia (2 fecha isso também, mas " +
    "desativa os depuradores)",
  ptraceRootOnly: (value) => `kernel.yama.ptrace_scope=${value}: só o root pode se conectar`,
  ptraceUnknown: (value) => `kernel.yama.ptrace_scope tem um valor desconhecido: ${value}`,
  tiocstiMissing: "dev.tty.legacy_tiocsti ausente (kernel < 6.2): TIOCSTI é sempre permitido; " +
    "a ferramenta bash do pi executa comandos numa nova sessão, sem o terminal do pi",
  tiocstiOn: "dev.tty.legacy_tiocsti=1: um processo que compartilha o terminal do pi pode " +
    "digitar no modal (a ferramenta bash do pi se desvincula, mas outros programas que você " +
    "iniciar talvez não)",
  tiocstiOnFix: "sudo sysctl dev.tty.legacy_tiocsti=0 (persista em /etc/sysctl.d/)",
  tiocstiOff: "dev.tty.legacy_tiocsti=0: ninguém digita em ttys alheios",
  tiocstiUnknown: (value) => `dev.tty.legacy_tiocsti tem um valor desconhecido: ${value}`,
  denoTitle: "auxiliar deno",
  denoNotFound: "binário deno não encontrado (a dependência npm `deno`): a extensão não pode " +
    "iniciar",
  denoNotFoundFix: "npm ci no pacote, com allow-scripts=deno no .npmrc",
  denoNotExecutable: (deno) => `${deno} não é executável`,
  denoNpmCi: "npm ci no pacote",
  denoVersionFailed: (deno, failure) => `\`${deno} --version\` ${failure}`,
  denoDamagedFix: "npm ci no pacote (o binário pode estar danificado ou ser de outra " +
    "plataforma)",
  denoUnknownVersion: "versão desconhecida",
  denoHelperMissing: (helper) => `o auxiliar ${helper} está faltando`,
  denoReinstall: "reinstale o pacote",
  denoUnsafePath: (path) =>
    `${path} tem caracteres que o lançador recusa (espaço, vírgula, aspas, …): a extensão ` +
    "não vai iniciar",
  denoUnsafePathFix: "instale o pacote (e o node_modules) num caminho simples",
  denoPins: (version) => ` (o package.json fixa ${version})`,
  denoOk: (version, note, deno) =>
    `deno ${version}${note} em ${deno}; o auxiliar roda com as flags fixadas e recusa uma ` +
    "variável que carrega código",
  denoGetPinned: "npm ci no pacote para obter o deno fixado",
  denoNoRefusal: (failure, wrote) =>
    "o auxiliar com as flags fixadas não recusou uma variável que carrega código " +
    `(NODE_OPTIONS): ele ${failure}${wrote}`,
  denoWroteStdout: " e escreveu na saída padrão",
  denoNoRefusalFix: "npm ci no pacote; compare docs/permissions.md com esta versão do deno",
  denoCouldNotStart: (error) => `não pôde iniciar (${error})`,
  denoKilledAtDeadline: "não terminou dentro do prazo e foi morto",
  denoExited: (code) => `saiu com ${code}`,
  denoKilledBy: (signal) => `foi morto por ${signal}`,
  brokerInstallHint: (installer) => `/sudo-prompt install-broker no pi, ou: sudo sh ${installer}`,
  brokerNotInstalled: "broker root não instalado (só é necessário para o pi-secret-run)",
  brokerUnreadable: (file, code) => `${file} ilegível (${code})`,
  brokerReinstall: (hint) => `reinstale: ${hint}`,
  brokerReinstallBroker: (hint) => `reinstale o broker: ${hint}`,
  brokerNoProtocol: (file) => `${file} não tem linha protocol=: instalação quebrada`,
  brokerShown: (version, protocol) => `broker ${version}, protocolo ${protocol}`,
  brokerOtherProtocol: (shown, protocol) =>
    `${shown}; esta extensão fala o protocolo ${protocol}: o pi-secret-run é recusado até o ` +
    "broker ser reinstalado",
  brokerNoLauncher: (shown, launcher) =>
    `${shown}, mas ${launcher} está faltando: instalação incompleta`,
  brokerNotRootOwned: (shown, problem) =>
    `${shown}, mas ${problem}: não é uma instalação do root, e quem puder alterá-la pode ` +
    "executar qualquer coisa como root pela regra sudo do broker",
  brokerNotRootOwnedFix: (hint, installer) =>
    "faça com que todo diretório acima dele seja do root e não possa ser alterado pelo grupo " +
    `nem por outros (chown root:root DIR; chmod go-w DIR) e reinstale: ${hint}; ou remova o ` +
    `broker agora: sudo sh ${installer} --uninstall`,
  brokerExtension: (version) => ` (extensão ${version})`,
  brokerStale: (shown, file) =>
    `${shown}, mas a cópia do root de ${file} difere da deste pacote (atualizado depois ` +
    "que o broker foi instalado): o broker e o modo reforçado rodam o código antigo",
  brokerOk: (shown, extension) => `${shown}${extension}: instalado, o protocolo confere`,
  brokerRuleFix: (sudoersFile) =>
    `um arquivo em /etc/sudoers.d que vem depois de ${sudoersFile} na ordem (ou uma regra ` +
    "em /etc/sudoers depois do @includedir dele) lhe dá uma regra com senha; `sudo -l` as " +
    "lista em ordem (a última que corresponde vence): mova essa regra para antes da do " +
    "broker, ou execute o instalador do broker de novo depois de renomear esse arquivo para " +
    "que ele venha primeiro",
  brokerAsksPassword: (shown) =>
    `${shown}, mas o sudo pede senha para o broker: uma regra posterior do sudoers se ` +
    "sobrepõe à regra NOPASSWD dele (ou a regra cita outro usuário), então o pi-secret-run falha",
  brokerAsksPasswordFix: (fix) =>
    `${fix}; se a regra cita outro usuário, execute o instalador de novo com --user e o seu ` +
    "nome de usuário",
  brokerUnreached: (shown, launcher, said) =>
    `${shown}, mas \`sudo -n ${launcher}\` não chegou ao broker: ${said}`,
  brokerUnreachedFix: (fix) => `execute o instalador do broker de novo para este usuário; ${fix}`,
  allowlistOk: (path, entries) =>
    `${path}: do root, não pode ser alterado por outros, ${entries} ` +
    (entries === 1 ? "entrada" : "entradas"),
  allowlistAbsent: (path) => `${path} ausente: todo comando pi-secret-run mostra o aviso vermelho`,
  allowlistAbsentFix: "o instalador do broker o cria (do root, com exemplos comentados)",
  allowlistUnsafeDetail: (why) => `inseguro: ${why}; a allowlist conta como vazia`,
  allowlistSymlink: (path) => `${path} é um link simbólico (nunca seguido)`,
  allowlistSymlinkFix: (path) =>
    "troque o link simbólico por um arquivo comum do root: sudo cp --remove-destination " +
    `"$(readlink -f ${path})" ${path}`,
  allowlistNotRegularFix: (path) =>
    `faça de ${path} um arquivo comum do root (execute o instalador do broker de novo)`,
  allowlistWritable: (path) => `${path} pode ser alterado pelo grupo ou por outros`,
  allowlistMode: (mode) => ` (modo ${mode})`,
  allowlistParent: (dir) =>
    `o diretório ${dir} dele não é um diretório real do root fechado a escritas do grupo e ` +
    "de outros",
  allowlistParentFacts: (uid, mode, symlink) => ` (uid ${uid}, modo ${mode}${symlink})`,
  allowlistParentSymlink: ", link simbólico",
  allowlistParentFix: (dir, path) =>
    `sudo chown root:root ${dir} && sudo chmod go-w ${dir} (todo diretório acima de ` +
    `${path} deve ser do root e não poder ser alterado pelo grupo nem por outros)`,
  allowlistMalformed: (line, syntax) =>
    `a linha ${line} está malformada (${syntax}); uma linha ruim anula o arquivo`,
  allowlistMalformedFix: (line, path) => `corrija a linha ${line} de ${path} (sudoedit ${path})`,
  allowlistSyntax: "sintaxe",
  hardenedTitle: "modo reforçado",
  hardenedNotCovered: "Fora do alcance do modo reforçado: o próprio pi, o node e toda outra " +
    "extensão ou pacote que o pi carrega (~/.pi/agent/extensions, os pacotes nas " +
    "configurações do pi) rodam dentro do processo do pi e veem as teclas do modal: um código " +
    "que consiga reescrever esses arquivos consegue ler sua senha",
  hardenedRoot: "rodando como root: o sudo nunca pede senha, o modo reforçado não se aplica",
  hardenedOk: (notCovered) =>
    "reforçado: a extensão, o auxiliar, o binário deno e o cache do Deno são do root; o " +
    `agente não pode reescrevê-los. ${notCovered}`,
  hardenedItem: (label, problem) => `${label} (${problem})`,
  hardenedItemMore: (label, problem, more) => `${label} (${problem}, +${more} outros)`,
  hardenedCopyUnused: (path) =>
    ` (existe uma cópia do auxiliar do root (${path}), mas não é a que está em uso)`,
  hardenedInstallRootOwned: (fix) => `instale como root: ${fix}`,
  hardenedTurnOn:
    "ative o modo reforçado para que a extensão rode o auxiliar, o deno e o cache do root",
  hardenedWithBroker:
    "o auxiliar e o cache do root vêm com /sudo-prompt install-broker (modo reforçado)",
  hardenedNot: (copyNote, listed, notCovered) =>
    `não reforçado${copyNote}: o agente poderia modificar ${listed}. ${notCovered}`,
  hardenedExtension: "a extensão",
  hardenedHelper: "o auxiliar askpass",
  hardenedDeno: "o binário deno",
  hardenedKoffi: "o koffi (carregado no pi)",
  hardenedCache: "o cache do Deno do auxiliar",
  hardenedSessionCache: "um deno-cache por sessão no seu diretório de sessão",
  hardenedCheckChanges: (root) =>
    `confira que ${root} só tem alterações feitas por você (git status) e então: `,
  syslogTitle: "log do sistema",
  syslogOk: (path) =>
    `${path} recebe os registros de auditoria (journalctl -t pi-sudo-prompt), onde o sudo ` +
    "também registra e o agente não pode alterá-los",
  syslogNone: "ele não existe",
  syslogNotSocket: "não é um socket",
  syslogNoFfi: "o FFI do koffi não carrega",
  syslogRefused: "nada aceita conexões nele",
  syslogMissing: (path, why, reason) =>
    `sem cópia do log de auditoria no log do sistema: ${path}: ${why} (${reason}); o ` +
    "arquivo de auditoria sozinho é seu, então o agente poderia reescrevê-lo",
  syslogMissingFix: "rode um daemon de syslog (systemd-journald ou rsyslog) que atenda em " +
    "/dev/log",
  terminalTitle: "tty exclusivo",
  dumpableTitle: "pi não-dumpable",
  piOutside: "fora do pi: execute /sudo-prompt doctor dentro do pi para verificar o processo " +
    "do próprio pi",
  piNoTerminal: "a entrada padrão do pi não é um terminal: nada para tornar exclusivo",
  piNotExclusive: (tty, problems) =>
    `${tty} não é exclusivo: qualquer processo seu pode abri-lo e ler o que você digita ` +
    `(${problems})`,
  piClearedSince: "resolvido desde então",
  piNotExclusiveFix: "reinicie o pi; se persistir, execute este doctor e relate o problema que " +
    "ele lista",
  piNoGuardian: (tty) =>
    `${tty} é exclusivo, mas nenhum guardião roda: se o pi for morto, o terminal continua ` +
    "exclusivo e o sudo nele falha com o terminal ocupado",
  piNoGuardianFix: (release) => `depois de uma morte assim, execute ${release} nesse terminal`,
  piExclusive: (tty, guardian) =>
    `${tty} é exclusivo (nenhum outro processo pode abri-lo); o guardião pid ${guardian} o ` +
    "libera se o pi morrer",
  piNonDumpable: "o pi é não-dumpable: nenhum processo seu pode rastreá-lo ou ler a memória dele",
  piDumpableByChoice: (variable) =>
    `${variable}=1: o pi é dumpable, então qualquer processo seu pode ler a memória dele e ` +
    "copiar o terminal dele",
  piDumpableByChoiceFix: (variable) =>
    `remova ${variable} (serve só para depuração) e reinicie o pi`,
  piDumpable: "o pi é dumpable: qualquer processo seu pode ler a memória dele e copiar o " +
    "terminal dele",
  piDumpableFix: "verifique se o FFI funciona (veja a verificação de FFI) e reinicie o pi",
  multiplexerTitle: "multiplexador",
  multiplexerScreen: "dentro do GNU screen: as teclas digitadas no modal passam pelo screen, " +
    "cujos atalhos qualquer processo seu pode alterar para gravá-las",
  multiplexerScreenFix: "rode o pi fora do screen, ou dentro do tmux (onde o pi toma seu " +
    "terminal do tmux)",
  multiplexerNone: "fora do tmux",
  multiplexerTmux: "dentro do tmux: a caixa de senha é desenhada no próprio terminal do seu " +
    "cliente tmux enquanto o tmux está bloqueado, então nenhum atalho, alias, hook ou popup do " +
    "tmux vê as teclas. Fora do alcance: um cliente em modo de controle (a integração tmux do " +
    "iTerm2) não recebe caixa nenhuma, e um tmux externo em volta do seu cliente (tmux " +
    "aninhado) ainda vê as teclas",
  displayTitle: "teclado X11",
  displayX11: (display) =>
    `display X11 ${display}: qualquer cliente X seu (o agente pode iniciar um) pode ler cada ` +
    "tecla que você digita, inclusive as do modal; nada num programa de terminal pode impedir",
  displayX11Fix: "use uma sessão Wayland ou um console de texto para o pi, ou remova DISPLAY " +
    "do ambiente do pi se nenhum programa X precisar dele",
  displayOk: "nenhum display X11 no ambiente do pi",

  // --- The command-line reports.
  cliProblems: (count) => `pi-sudo-prompt: ${count} problema(s) acima.`,
  cliStepFailed: (command, code) => `${command} falhou (código de saída ${code})`,
  installSettingUp: (root) => `pi-sudo-prompt: configurando ${root}`,
  installDeno: (deno, version) => `  ✓ binário deno: ${deno} (${version})`,
  installNoDeno: "binário deno não encontrado: execute `npm ci` (com allow-scripts=deno no " +
    ".npmrc)",
  installPeerCredentials: "  ✓ o kernel informa quem se conecta (SO_PEERCRED via koffi)",
  installNoFfi: "FFI do koffi indisponível: todo pedido de senha do sudo seria recusado " +
    "(falha fechada)",
  installSudo: (sudo) => `  ✓ sudo: ${sudo}`,
  installNoSudo: "o sudo não está instalado (apt-get install sudo)",
  installOldNode: (version, min) =>
    `o node no PATH é ${version}, o pi precisa de Node >= ${min}: ` + "`npm install -g node@22`",
  installLocalPi: (nodeModules, root) =>
    `  - o pi não está no PATH; ele só está instalado em ${nodeModules}: inicie-o com ` +
    `\`npx pi\` em ${root}`,
  installOldNodeLocal: (oldNode) =>
    `  - ${oldNode} (\`npx pi\` aqui usa o Node do próprio checkout)`,
  installNoPi: "  - o pi não está no PATH: instale-o com " +
    "`npm install -g @earendil-works/pi-coding-agent` e depois execute:",
  installStartPi: "Inicie o `pi`",
  installStartNpx: (root) => `Inicie o \`npx pi\` em ${root}`,
  installGetPi: "Instale o pi (veja acima), inicie-o",
  installReady: (start) => `pi-sudo-prompt: pronto. ${start} e execute um comando que use sudo.`,
  uninstallStart: (root) => `pi-sudo-prompt: desinstalando ${root}`,
  uninstallNoBroker: "  - o broker root não está instalado",
  uninstallBrokerAsRoot: (command) => `  - broker root instalado: remova-o com  ${command}`,
  uninstallBrokerNoTerminal: (command) =>
    `broker root instalado: remova-o num terminal com  ${command}`,
  uninstallRemovingBroker: (command) => `  - removendo o broker root: ${command}`,
  uninstallBrokerRemoved: "  ✓ broker root removido",
  uninstallBrokerFailed: (command, code) =>
    `${command} falhou (código de saída ${code}): execute-o você mesmo`,
  uninstallNoEntry: "  - o pi não tem nenhuma entrada nas configurações para esta cópia",
  uninstallNoPi: (command) => `pi não encontrado: execute  ${command}`,
  uninstallKeptAudit: (path) =>
    `  - o log de auditoria ${path} foi mantido (é o seu registro; apague-o à mão se quiser)`,
  uninstallFilesStay: (command) => `  - os arquivos do pacote continuam: ${command}`,
  uninstallFilesStayIn: (command, dir) =>
    `  - os arquivos do pacote continuam: ${command} em ${dir}`,
  uninstallFilesYours: (root) => `  - cabe a você apagar os arquivos de ${root}`,
  uninstallDone: "pi-sudo-prompt: desinstalado.",
  auditUsage: "uso: pi-sudo-prompt audit verify [path] | pi-sudo-prompt audit tail [n] [path]",
  auditNoLog: (path) =>
    `audit: ainda não há log de auditoria (procurado em ${path}); o pi o cria quando uma ` +
    "sessão interativa começa com esta extensão",
  auditOk: (lines, sessions, files) =>
    `audit: ok: ${lines} linha(s) de ${sessions} sessão(ões) em ${files} arquivo(s); ` +
    "as últimas linhas de uma sessão não são verificadas: compare com o log do sistema " +
    "(journalctl -t pi-sudo-prompt)",
  auditBroken: (reason, where, detail) => `${reason} em ${where}: ${detail}`,
  auditFileLine: (file, line) => `${file} linha ${line}`,
  auditTailUnreadable: (reason, path) =>
    `${reason}: ${path}: ausente, é um link simbólico, não é um arquivo comum ou não pode ser lido`,
  auditError: (message) => `erro: ${message}`,
  verifyUnreadable: "ausente, não é um arquivo ou não pode ser lido",
  verifyNoNewline: "sem quebra de linha no fim",
  verifyNotJson: "não é um objeto JSON",
  verifyBadFields: "campos ausentes ou inválidos",
  verifySessionStarts: (sid) =>
    `a sessão "${sid}" começa aqui: as linhas antes dela foram removidas`,
  verifyLineChanged: "essa linha foi alterada",
  verifyLinesLost: "linhas perdidas ou movidas",
  verifyPrevNotHash: (where, why) => `prev não é o hash da ${where}: ${why}`,
  verifyBadSeq: (seq, expected) => `seq ${seq}, não ${expected}`,
  verifyLine: (n) => `linha ${n}`,
  verifyLineOf: (n, file) => `linha ${n} de ${file}`,
};
