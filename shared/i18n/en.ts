/**
 * English: every string the human reads in pi's process, key → text or a small function of
 * strings and numbers; the other tables are typed after it. What machines read (what the agent
 * hears, the logs, reason names) stays English and is not here.
 * @module
 */

const RETRY = "run the command again; if it keeps happening, run `pi-sudo-prompt doctor`";

/** The English table. */
export const en = {
  // --- Refusal advice (extension/channel/refusal_advice.ts): what to do about a group of
  // refusals (one imperative sentence, lower case).
  todoRetry: RETRY,
  todoNotOurs: "something other than this pi's helper asked for the password: stop what you did " +
    "not start, and run the command again",
  todoNothing: "nothing",
  // The groups of refusals (extension/channel/refusal_advice.ts): what happened, in a few words.
  grpNotOurHelper: "the asker is not this pi's helper for a sudo it started",
  grpBrokenRequest: "the request broke pi's protocol",
  grpCheckIncomplete: "a check could not finish, so pi did not ask",
  grpInterrupted: "the exchange with the helper broke off",
  grpAskerGone: "the sudo or its helper went away",
  grpFfiUnavailable: "pi cannot ask the kernel who connected",
  grpNotFromThisSession: "the sudo did not come from this pi",
  grpPeerStopped: "the helper or its sudo was paused",
  grpHelperTraced: "a debugger is attached to the helper",
  grpBrokerUnverified: "the secret request did not come from the installed root broker",
  grpUnsupportedVersion: "the helper and pi are different versions",
  grpPasswordUnusable: "sudo could not take the typed password",
  grpTooManyRequests: "more requests came than pi queues",
  grpInternalError: "something unexpected failed",
  grpWouldCacheCredentials: "root access would outlast this command",
  grpTerminalShared: "another process can read pi's terminal",
  grpTerminalUnguarded: "pi's terminal is not guarded",
  grpPasswordRedirected: "a command may be redirecting your password",
  grpOtherSudoWaiting: "another sudo waits that could take your password",
  grpOtherSudoHelperNotQueued: "another sudo waits on a helper this pi did not check",
  grpRootPairingUnavailable: "root's pairing check did not run",
  grpRiskySudo: "this sudo lets its environment choose what root runs",
  grpHelperWrites: "the helper writes the password, not pi",
  grpCancelled: "declined",
  grpTimeout: "nobody answered in time",
  grpVerificationFailed: "a check of the asker failed",
  grpAttemptsExhausted: "the password was wrong too often",
  grpSessionClosed: "pi's session ended",
  grpNoInteractiveUi: "pi has no interactive screen",
  grpPiStopped: "pi was paused",
  todoFfiUnavailable:
    "reinstall the package (`pi install npm:pi-sudo-prompt`); doctor's FFI check says why",
  todoNotFromThisSession:
    "run sudo from pi's own bash tool or `!` command, not from another terminal",
  todoPeerStopped: "stop whatever paused it, then run the command again",
  todoHelperTraced: "stop the tracer the notice names (`kill <pid>`) and run the command again",
  todoBrokerUnverified:
    "run `pi-secret-run` itself; if it keeps happening, re-run `/sudo-prompt install-broker`",
  todoUnsupportedVersion:
    "restart pi after an update, so the helper and the extension are the same version",
  todoPasswordUnusable: "type your password again, without a line break",
  todoInternalError:
    "run the command again; if it keeps happening, report it with `pi-sudo-prompt doctor`",
  todoWouldCacheCredentials:
    "use plain `sudo` (pi adds -k) or `sudo -k …`; `/usr/bin/sudo` by path needs -k",
  todoTerminalShared: "stop the process the notice names (`kill <pid>`) and run the command again",
  todoTerminalUnguarded: "wait a moment (pi starts a new guardian) and run the command again; " +
    "`/sudo-prompt status` shows the guardian",
  todoPasswordRedirected:
    "stop the command (Escape, Ctrl+C) or the process the notice names, and check what it runs",
  todoStopOtherSudo: "stop it (`ps -C sudo -o pid,args` lists them), then run the command again",
  todoOtherSudoHelperNotQueued: "answer that one first, then run the command again",
  todoRootPairingUnavailable: "re-run `/sudo-prompt install-broker`, or uninstall the broker",
  todoRiskySudo: "run the program by its root-owned absolute path, without -s, -E or " +
    "VAR=value; or start pi without --sudo-refuse-risky to see the warning in the modal and " +
    "decide",
  todoHelperWrites: "nothing: the helper writes the password instead",
  todoTimeout: "run the command again and answer the modal",
  todoVerificationFailed:
    "look up the reason the notice names with `pi-sudo-prompt doctor --explain <reason>`",
  todoProcessGone: "nothing, unless you did not stop it: then run the command again",
  todoTooManyRequests: "answer or cancel the open modals, and run fewer sudo commands at once",
  todoAttemptsExhausted: "run the command again; check Caps Lock and your keyboard layout",
  todoNoInteractiveUi: "run sudo from pi's interactive TUI",
  todoPiStopped:
    "bring pi back (`fg`) and run the command again; stop what paused pi if it was not you",

  // --- Notices (extension/channel/*, extension/index.ts, extension/keyboard/*).
  refusedRequest: (reason: string) => `refused a password request (${reason})`,
  refusedRequestAs: (title: string, reason: string) =>
    `refused a password request: ${title} (${reason})`,
  detailsHint: (reason: string) => `details: /sudo-prompt doctor ${reason}`,
  noPasswordPrompt: (notice: string) => `pi-sudo-prompt: no password prompt: ${notice}`,
  auditUnavailable: (reason: string) => `pi-sudo-prompt: audit log unavailable (${reason})`,
  credentialsNotRemoved: (reason: string, killed: number) =>
    `pi-sudo-prompt: could not remove sudo's cached credentials (${reason}` +
    (killed > 0 ? `; ${killed} process(es) that held a ticket were killed` : "") +
    "). Tool calls and ! commands wait until `sudo -K` works: run `sudo -K` yourself, " +
    "and stop whatever kills it",
  disabled: (reason: string) => `pi-sudo-prompt: disabled (${reason})`,
  denoMissingFix: (command: string, root: string) =>
    `the pinned deno binary is missing; fix: ${command} in ${root}, then /reload. ` +
    "Until then sudo will not prompt",
  sudoWillNotPrompt: "sudo will not prompt",
  helperTraced: (by: string) =>
    `the password was not sent: sudo's askpass helper is traced${by}; ` +
    "run the command again without a tracer",
  byProcess: (pid: number) => ` by process ${pid}`,
  tmuxWithoutTmuxVariable: "pi-sudo-prompt: pi runs inside tmux but TMUX is not set, so it " +
    "cannot ask on your own terminal; start pi with tmux's TMUX and TMUX_PANE in its environment",
  sudoCallTitle: "pi: sudo asks for your password",
  secretCallTitle: "pi: a command asks for a secret",

  // --- The modals (extension/ui/).
  sudoTitle: "🔐 Sudo Authentication Required",
  sudoElsewhereTitle: "🔐 sudo: the password box is on your terminal",
  sudoBlocked: "sudo password",
  passwordLabel: "Password: ",
  passwordNote: "Your password is secure and will not be visible to the AI model.",
  commandLabel: "Command: ",
  shellCommandLabel: "Shell command:",
  sudoAsksLabel: "sudo asks: ",
  approvesCall: "Approves: everything the shell command above runs until it ends; its later " +
    "sudos do not ask again.",
  approvesSudo: "Approves: this one sudo.",
  incorrectPassword: (attempt: number, max: number) =>
    `Incorrect password, try again (${attempt}/${max})`,
  notCheckedHead: "⚠ Not checked: if you do not know one of these, press Escape.",
  uncheckedStarted: (time: string) => `, started ${time}`,
  uncheckedParent: (parent: string) => `, parent ${parent}`,
  originAgent: "started by the agent: it descends from pi (a tool call or a ! command)",
  originDuringCall: "started while a tool call of pi ran",
  stopIt: (pid: number) => `; stop it: kill ${pid}`,
  callsItself: (command: string) => `calls itself: ${command}`,
  andMore: (count: number) => `  … and ${count} more`,
  rootCheckOffer: "Root can check these for you: /sudo-prompt install-broker",
  scrollHint: (first: number, last: number, total: number) =>
    `↑/↓ to read it all: lines ${first}–${last} of ${total}`,
  replyLabel: "Reply to the agent: ",
  replyHint: "Tab: decline with a reply to the agent (typed in clear, never the password)",
  keysDropped: "Keys typed for the prompt that closed are dropped until Enter or a pause.",
  keysReplying: (countdown: string) =>
    `Enter or Escape: decline and send the reply · Tab: back · auto-cancel in ${countdown}`,
  keysPassword: (countdown: string) =>
    `Press Enter to submit, Escape to cancel · auto-cancel in ${countdown}`,
  moreWaiting: (count: number) => `${count} more waiting`,
  secretTitle: "🔑 Secret request",
  secretElsewhereTitle: "🔑 pi-secret-run: the box is on your terminal",
  secretBlocked: "secret for pi-secret-run",
  secretLabel: "Secret: ",
  secretNote: "The secret goes to this command's stdin and will not be visible to the AI model.",
  inLabel: "In: ",
  labelLabel: "Label: ",
  unverified: "(unverified)",
  traceableWarning:
    "⚠ Runs as you: the agent can trace it and read the secret (ptrace_scope 1 stops this).",
  notAllowlistedWarning: "⚠ Not on the allowlist: this command may show the agent what you type.",

  // --- What the modal says in red about a sudo (extension/channel/root_program.ts).
  riskShell: "-s: root runs the shell named by $SHELL in the command's environment, " +
    "a program this window cannot show",
  riskPreserveEnv: "-E: root keeps the command's environment: variables such as APT_CONFIG, " +
    "PYTHONPATH or LD_LIBRARY_PATH can change what runs",
  riskPreserveList: (names: string) =>
    `--preserve-env=${names}: root keeps these variables from the command's environment`,
  riskAssignment: (assignment: string) => `${assignment}: set in root's environment`,
  programNotAbsolute: (program: string) =>
    `${program}: not an absolute path; sudo looks it up on its secure_path, or on the ` +
    "command's PATH where none is set",
  programNotCheckedInTime: "could not be checked in time",
  programMissing: "does not exist or cannot be read",
  pathNotCheckable: (path: string) => `${path} cannot be checked`,
  theProgram: "the program",
  notRootsProgram: (what: string) =>
    `${what} is not root's: you, and the agent, could have changed it`,
  writableByNonRoot: (what: string) => `${what} is writable by others than root`,

  // --- Only pi reads the keys (extension/keyboard/, extension/pairing/).
  guardianNotRunning: "pi's terminal guardian is not running, so a kill of pi could leave the " +
    "terminal open to other processes; pi is starting a new one: try again in a moment",
  terminalNotExclusiveNow: "pi's terminal is not exclusive right now; try again in a moment",
  rootTerminalCheckFailed: (reason: string) =>
    `root could not check who has this terminal open (${reason}); run /sudo-prompt doctor`,
  exitedSince: "exited since",
  hidesOpenFiles: "hides its open files: it may hold this terminal",
  processNamed: (pid: number, command: string) => `process ${pid} (${command})`,
  aProcess: "a process",
  terminalSharedNotice: (who: string, kill: string) =>
    `${who} has this terminal open and could read what you type. Stop it${kill} and try again`,
  terminalNotCheckable: "could not check who else has this terminal open; try again",
  waitingSudo: "another sudo of yours waits: it could get this password",
  waitingSudoAtTerminal: "another sudo of yours waits at a terminal prompt: it could get this " +
    "password",
  waitingSetuid: "a setuid-root program of yours waits: it could get this password",
  waitingSetuidAtTerminal: "a setuid-root program of yours waits at a terminal prompt: it could " +
    "get this password",
  guardianUnavailable: "terminal guardian unavailable (no deno binary or libc path)",
  guardianDidNotStart: (error: string) => `terminal guardian did not start (${error})`,
  guardianNotHeld: (release: string) =>
    `terminal guardian did not take the terminal; if pi is killed, run ${release}`,
  guardianKeepsDying: (release: string) =>
    "terminal guardian keeps dying: sudo prompts wait until a new one runs; " +
    `if pi is killed meanwhile, run ${release}`,
  guardFailed: (error: string) => `terminal guard failed: ${error}`,
  guardStillDumpable: "still dumpable",
  guardNotNonDumpable: (reason: string) => `pi could not be made non-dumpable (${reason})`,
  guardNoTerminal: "stdin is not a terminal: nothing to make exclusive",
  guardNotExclusive: (reason: string) => `the terminal could not be made exclusive (${reason})`,
  stoppedWithModal: "pi-sudo-prompt: pi was stopped while it asked for a password: " +
    "the request is denied. Do not type the password here.",
  modalGone: "pi-sudo-prompt: pi stopped while it asked for a password: the request is denied. " +
    "Do not type the password here. (If what you type is not shown afterwards: stty sane)",
  boxInterrupted: "pi-sudo-prompt: the password box was interrupted: the request is cancelled. " +
    "Do not type the password here.",
  nestedTmux: "⚠ This terminal is itself inside tmux: that outer tmux sees your keys before pi.",
  droppingKeys: "Prompt closed: keys typed for it are dropped until Enter or a pause.",
  droppedKeys: "keys typed after the prompt closed were dropped",
  piStopped: "pi was stopped",
  tmuxClientEnded: "your tmux client ended",
  tmuxClientStopped: "your tmux client was stopped",
  tmuxLockEnded: "the lock of your tmux client ended",
  boxInterruptedBecause: (why: string) =>
    `the password box on your terminal was interrupted (${why}): the request is cancelled`,
  tmuxTerminalNotTaken: (tty: string, reason: string) =>
    `pi could not take your tmux client's terminal ${tty} (${reason})`,
  tmuxNotLocked: (reason: string) => `pi could not lock your tmux client to ask there (${reason})`,
  panelAsksThere: "pi asks for your password on your terminal: tmux is locked while it does.",
  panelTypeThere: "Type it in the password box there. Keys typed here are never a password.",
  panelNoBox: "No password box on your screen? Press Escape to cancel, or Enter to try again.",
  panelClose: "Enter or Escape to close",

  // --- The /sudo-prompt commands (extension/commands/, ops/status_cli.ts, ops/allowlist_cli.ts).
  commandDescription: (subcommands: string) => `pi-sudo-prompt: ${subcommands} [reason]`,
  commandUsage: (subcommands: string) => `usage: /sudo-prompt ${subcommands}`,
  onlyInTui: "/sudo-prompt runs only in pi's interactive TUI",
  notActive: "pi-sudo-prompt is not active",
  sudoWillAsk: (subcommand: string) =>
    `${subcommand}: sudo will ask for your password in the modal`,
  subcommandDone: (subcommand: string) => `/sudo-prompt ${subcommand}: done`,
  subcommandFailed: (subcommand: string) => `/sudo-prompt ${subcommand}: failed`,
  timedOutLine: "(timed out)",
  statusFailed: (why: string) => `(pi-sudo-prompt status failed: ${why})`,
  doctorNoAnswer: "doctor: no answer",
  sudoNotInstalled: "sudo is not installed",
  cannotRunSudo: (error: string) => `cannot run sudo: ${error}`,
  flagStrict: "pi-sudo-prompt: every sudo asks (per-sudo approval; sudo caches nothing). " +
    "The default is one approval per tool call or ! command (also PI_SUDO_PROMPT_STRICT=1)",
  flagRefuseRisky: "pi-sudo-prompt: refuse a sudo that lets its environment choose what root " +
    "runs (-s, -E, VAR=value) or runs a program you could have written, instead of warning " +
    "in red (also PI_SUDO_PROMPT_REFUSE_RISKY=1)",
  flagQuiet: "pi-sudo-prompt: a modal does not ring the bell, set the terminal title or send " +
    "a desktop notification (also PI_SUDO_PROMPT_QUIET=1)",
  allowTimedOut: "timed out",
  allowCliFailed: (why: string) => `pi-sudo-prompt allowlist failed (${why})`,
  allowNothingToAllow: "allow: no secret request with the red warning in this session yet",
  allowError: (message: string) => `allow: ${message}`,
  allowEditorTitle: "Allowlist entry: program path, then the exact arguments; <name> matches one " +
    "argument not starting with '-'",
  allowCancelled: "allow: cancelled; nothing written",
  allowOneLine: "allow: write exactly one entry line; nothing written",
  allowShapeError: (message: string) => `allow: ${message}; nothing written`,
  allowConfirmTitle: "Add this entry to the allowlist?",
  allowConfirmBody: (line: string) =>
    `${line}\n\nMatching commands will get a secret without the red warning.`,
  allowNotConfirmed: "allow: not confirmed; nothing written",
  allowAdded: (line: string) => `allow: added ${line}`,
  allowFailed: (why: string) => `allow: failed (${why})`,
  statusVersion: (version: string, protocol: number) => `version ${version}, protocol ${protocol}`,
  statusSessionDir: (dir: string) => `session directory: ${dir}`,
  statusLauncher: (path: string) => `askpass launcher: ${path}`,
  statusQueue: (pending: number) => `queue: ${pending} request(s) pending`,
  statusNoSession: "session: not active (not interactive, or it failed to start)",
  statusExclusive: (tty: string) => `${tty} exclusive`,
  statusNotExclusive: (tty: string) => `${tty} NOT exclusive`,
  statusGuardian: (pid: number) => ` (guardian pid ${pid})`,
  statusRootGuardian: (pid: number) => ` (guardian pid ${pid}, root-owned)`,
  statusNoGuardian: " (no guardian)",
  statusNoTerminal: "no terminal",
  statusKeyboard: (tty: string) => `keyboard: ${tty}; pi non-dumpable`,
  statusKeyboardDumpable: (tty: string) => `keyboard: ${tty}; pi DUMPABLE`,
  statusAuditNotOpen: "  not open in this session",
  statusSyslogCopy: (sent: number, dropped: number) =>
    `  copy in the system log (journalctl -t pi-sudo-prompt): ${sent} sent, ${dropped} dropped`,
  statusNoSyslogCopy: (why: string) => `  no copy in the system log: ${why}`,
  statusAuditLog: "audit log",

  you: " (you)",
};

/** Every table's shape: English's keys, each a string or a function of the same arity. */
export type Messages = typeof en;
