/**
 * English for the tools that run in their own process (doctor, status, allowlist, install,
 * uninstall, audit); pi's process never loads it. The other tools tables are typed after it.
 * @module
 */

/** The English table of the tools. */
export const toolsEn = {
  // --- What each named refusal saw (ops/doctor/reason_details.ts): its detail line.
  whyFfiUnavailable: "pi could not load koffi, so it cannot ask the kernel who connected",
  whyPeerCredentialsFailed: "the kernel did not say which process connected (SO_PEERCRED failed)",
  whyClaimedPidMismatch: "the process that connected is not the one it claims to be",
  whyPeerUidMismatch: "the process that connected runs as another user",
  whyPeerGone: "the process that asked exited before it could be checked",
  whyPeerIdsMismatch: "the asker's real, effective, saved and filesystem ids are not all yours",
  whyPeerExeMismatch: "the asker is not this pi's Deno helper",
  whyPeerCmdlineMismatch: "the asker runs the helper with other arguments than pi set",
  whyPeerEnvironMismatch: "the asker's environment does not carry this session's settings",
  whyPeerStdoutNotSudoPipe:
    "the asker's output is not a pipe read by sudo, so the password would go elsewhere",
  whyParentNotSudo: "the asker's parent is not the system's sudo",
  whyParentNotSetuidRoot: "the asker's parent is not running as root, so it is no real sudo",
  whyNotFromThisSession: "the sudo did not come from a command this pi started",
  whyPeerConnectionInherited: "the connection was opened by one process and handed to another",
  whyPeerDoesNotHoldConnection: "the process that claims the connection does not hold it",
  whyPeerHoldsConnectionTwice: "the asker holds its connection twice, as a relay would",
  whyConnectionOwnerUnknown: "pi could not find which process holds the connection",
  whyPeerStopped: "the helper or its sudo was stopped (SIGSTOP) while it asked",
  whyHelperTraced: "a debugger (ptrace) is attached to the helper and could read the password",
  whyPeerChanged: "the asker became another program between the check and the answer",
  whyBrokerNotRoot: "a secret request did not come from the root broker",
  whyBrokerCmdlineMismatch:
    "the secret request came from a root process that is not the installed broker",
  whyBrokerProofInvalid: "the broker's proof file in /run/pi-sudo-prompt did not match its request",
  whyFrameTooLarge: "the request was larger than any real request",
  whyTrailingBytes: "the request carried bytes after its end",
  whyMalformedFrame: "the request was not a valid frame",
  whyMalformedHeader: "the request's header was not valid",
  whyUnsupportedVersion: "the helper speaks another protocol version than this pi",
  whyUnexpectedType: "the request was of a type pi does not answer",
  whyBadField: "a field of the request was missing or invalid",
  whyPromptTooLong: "sudo's prompt text was longer than the modal shows",
  whyPasswordTooLong: "the typed password was longer than sudo accepts",
  whyPasswordHasLineBreak: "the typed password held a line break, which sudo would cut",
  whyIdMismatch: "an answer named another request than the one asked",
  whyTooManyConnections: "more requests came at once than pi queues",
  whyRequestTimeout: "the asker connected but sent no request in time",
  whyReplayedRequest: "a request was sent twice with the same id",
  whyPeerClosed: "the asker hung up before pi answered",
  whyInternalError: "something unexpected failed while handling the request, so pi refused it",
  whyWouldCacheCredentials: "the sudo had no -k, so root access would outlast this command",
  whyTerminalShared: "another process has pi's terminal open and could read what you type",
  whyTerminalScanIncomplete: "pi could not list who holds its terminal within its time limit",
  whyTerminalUnguarded: "pi's terminal was not exclusive, or no guardian held it to close it " +
    "again if pi is killed, so pi did not ask",
  whyStdoutPipeUnknown: "the askpass helper's output is not a pipe pi can read",
  whyStdoutPipeShared: "two askpass helpers write into one sudo's pipe: a command may be " +
    "redirecting your password",
  whyStdoutPipeHeldElsewhere:
    "another process holds this sudo's pipe: a command may be redirecting your password",
  whyOtherSudoWithoutHelper: "another sudo of yours waits with neither a terminal nor an " +
    "askpass, as a redirected one does",
  whyOtherSudoForeignAskpass: "another sudo of yours waits on an askpass that is not this " +
    "session's: a command may be redirecting your password",
  whyOtherSudoHelperNotQueued:
    "another sudo waits on a helper this session did not verify (another pi?)",
  whyPairingScanFailed: "/proc could not be scanned within its time limit",
  whyRootPairingRefused: "root found that the helper's pipe is not read by the sudo shown: a " +
    "command is redirecting your password",
  whyRootPairingUnavailable:
    "the root pairing check (`sudo -n pi-secret-broker --verify-pairing`) did not run",
  whyRiskySudo: "the sudo lets its environment choose what root runs (-s, -E, VAR=value) or " +
    "runs a program you could have written, and you chose to refuse such sudos " +
    "(--sudo-refuse-risky)",
  whyPidfdGetfdNotPermitted:
    "the kernel refused pi a copy of sudo's pipe (Yama 2 or 3), so the helper writes it",
  whyPidfdGetfdUnsupported:
    "the kernel has no pidfd_getfd (older than 5.6), so the helper writes the password",
  whyHelperGone: "the helper exited before pi could hand the password over",
  whyHelperPipeChanged: "the helper's output is no longer the pipe pi checked",
  whyPipeWriteFailed: "sudo's pipe did not take the whole password in one write",
  whyCancelled: "you pressed Escape, or the request was withdrawn",
  whyTimeout: "nobody answered the modal within its time limit",
  whyVerificationFailed: "a check of the asker failed; the notice or the audit log names which",
  whyProcessGone:
    "the sudo, its helper or the broker exited, or was stopped, while the modal waited",
  whyQueueFull: "more requests waited than pi queues",
  whyAttemptsExhausted: "the password was wrong too often for this request",
  whySessionClosed: "pi's session ended while the request waited",
  whyNoInteractiveUi:
    "pi runs without its interactive TUI (print, JSON or RPC mode), so no modal can show",
  whyPiStopped: "pi was stopped (Ctrl+Z, SIGTSTP or SIGSTOP) while the request waited",

  // --- The /sudo-prompt status and allowlist reports (ops/status_cli.ts, ops/allowlist_cli.ts).
  allowlistUnsafe: (path: string, why: string) =>
    `${path} is ${why}: install the broker first (/sudo-prompt install-broker)`,
  allowlistNoEntry: (reason: string) => `this command cannot be an allowlist entry (${reason})`,
  allowlistNoMatch: (reason: string) => `that entry does not match the command shown (${reason})`,
  statusBrokerMissing: "broker: not installed (/sudo-prompt install-broker)",
  statusBroker: (version: string, protocol: string) =>
    `broker: version ${version}, protocol ${protocol} (matches)`,
  statusBrokerDiffers: (version: string, protocol: string) =>
    `broker: version ${version}, protocol ${protocol} (DIFFERS: reinstall it)`,
  statusAllowlist: (entries: number) => `allowlist: ${entries} entr${entries === 1 ? "y" : "ies"}`,
  statusAllowlistRefused: (why: string) => `allowlist: ${why} (counts as empty)`,

  // --- The doctor (ops/doctor_cli.ts, ops/doctor/**).
  doctorUsage:
    "usage: pi-sudo-prompt doctor [--json] [--width N] [--explain REASON] [--inside-pi JSON]",
  doctorWidth: "--width takes 10 to 999 columns",
  doctorInsidePi: "--inside-pi: not the JSON /sudo-prompt doctor writes",
  doctorNoSuchReason: (name: string, known: string) =>
    `no refusal is named "${name}"; known: ${known}`,
  explainMeans: (means: string) => `  what happened: ${means}`,
  explainTodo: (todo: string) => `  what to do:    ${todo}`,
  explainGroup: (title: string, group: string) => `  in short:      ${title} (${group})`,
  explainMore: "  more: docs/troubleshooting.md; `pi-sudo-prompt doctor` checks the whole chain",
  doctorFix: "fix: ",
  doctorSummary: (checks: number, ok: number, warn: number, fail: number, info: number) =>
    `${checks} checks: ${ok} ok, ${warn} warnings, ${fail} failed, ${info} info`,
  doctorExpired: (ms: number) => `did not finish within ${ms} ms`,
  doctorExpiredFix:
    "run the doctor again; if it persists, the step named above hangs on this machine",
  doctorError: (error: string) => `unexpected error: ${error}`,
  doctorErrorFix: "run the doctor again; report the error if it persists",
  // ops/doctor/ownership.ts
  ownMissing: (path: string) => `${path}: missing`,
  ownSymlink: (path: string) => `${path} is a symlink`,
  ownNotRegular: (path: string) => `${path} is not a regular file`,
  ownNotDirectory: (path: string) => `${path} is not a directory`,
  ownUnresolved: (path: string) => `${path} cannot be resolved`,
  ownUnexamined: (path: string) => `${path} cannot be examined`,
  ownForeignSymlink: (path: string, uid: number, you: string) =>
    `${path} is a symlink owned by uid ${uid}${you}`,
  ownWritableByGroup: (path: string, mode: string) => `${path} is writable by group (mode ${mode})`,
  ownWritableByOthers: (path: string, mode: string) =>
    `${path} is writable by others (mode ${mode})`,
  ownOwnedBy: (path: string, uid: number, you: string) =>
    `${path} is owned by uid ${uid}${you}, not root`,
  // checks/platform.ts
  platformTitle: "Linux and /proc",
  platformNotLinux: (platform: string) =>
    `platform is ${platform}: pi-sudo-prompt needs Linux (/proc, SO_PEERCRED)`,
  platformNotLinuxFix: "use pi on Linux; on other systems sudo keeps failing without a terminal",
  platformArch: (arch: string) =>
    `architecture ${arch} is not supported (SO_PEERCRED differs): requests are refused`,
  platformArchFix: "use x86_64, arm64 or riscv64",
  platformNoProc: (path: string) => `${path} is not readable: /proc is not mounted here`,
  platformNoProcFix: "mount procfs (mount -t proc proc /proc); every request is refused without it",
  platformOk: (release: string, arch: string, proc: string) =>
    `Linux ${release} ${arch}, ${proc} mounted`,
  // checks/sudo.ts
  sudoOnlyDoas: (doas: string) =>
    `only doas found (${doas}): unsupported, OpenDoas has no askpass and reads from a ` +
    "terminal only, so the agent's commands cannot reach the modal",
  sudoInstallOrRs: (since: string) => `install sudo (apt-get install sudo) or sudo-rs ≥ ${since}`,
  sudoNotFound: (paths: string) => `sudo not found (looked at ${paths})`,
  sudoInstall: "install sudo (apt-get install sudo)",
  sudoNoAnswer: "`sudo -V` did not answer in time",
  sudoCannotRun: (error: string) => `cannot run: ${error}`,
  sudoReinstall: "reinstall sudo",
  sudoNotSetuid: (sudo: string) => `${sudo} is not setuid root`,
  sudoNotSetuidFix: (sudo: string) =>
    `reinstall sudo, or: chown root:root ${sudo} && chmod 4755 ${sudo}`,
  sudoDoasUnused: (doas: string) => `; doas at ${doas} is not used (OpenDoas has no askpass)`,
  sudoOld: (line: string) =>
    `${line}: older than 1.9, untested (askpass works, messages may differ)`,
  sudoOldFix: "upgrade sudo to 1.9 or later",
  sudoRsOld: (line: string, since: string) =>
    `${line}: no -A/askpass before sudo-rs ${since} ` +
    "(sudo-rs #1249), so sudo cannot ask through the modal",
  sudoRsOldFix: (since: string) =>
    `upgrade sudo-rs to ${since} or later, or install the original ` +
    "sudo (e.g. apt-get install sudo-ws on Ubuntu)",
  sudoRsOk: (line: string, since: string) =>
    `${line} (askpass since ${since}; its prompt reads ` +
    "[sudo: authenticate] Password:)",
  sudoUnrecognised: (line: string) => `unrecognised \`sudo -V\` output: ${line}`,
  sudoNoOutput: "no output from `sudo -V`",
  sudoUseSupported: (since: string) => `use sudo 1.9+ or sudo-rs ≥ ${since}`,
  // checks/xdg_runtime_dir.ts
  xdgNotSet: "not set",
  xdgNotAbsolute: (dir: string) => `${dir} is not an absolute path`,
  xdgMissing: (dir: string) => `${dir} does not exist`,
  xdgSymlink: (dir: string) => `${dir} is a symlink`,
  xdgNotDirectory: (dir: string) => `${dir} is not a directory`,
  xdgNotYours: (dir: string, uid: number) => `${dir} is owned by uid ${uid}, not by you`,
  xdgOpen: (dir: string, mode: string) => `${dir} has mode ${mode}: group or others have access`,
  xdgMode: (mode: string) => `mode ${mode}`,
  xdgUnsafeBase: (base: string) =>
    `session directory base ${base} has characters the launcher refuses ` +
    "(space, comma, quotes): the extension will not start",
  xdgUnsafeBaseFix: "set XDG_RUNTIME_DIR to a plain path such as /run/user/$(id -u)",
  xdgTooLong: (path: string, max: number) =>
    `${path} is longer than a Unix socket path may be (${max} bytes)`,
  xdgTooLongFix: "set XDG_RUNTIME_DIR to a shorter path such as /run/user/$(id -u)",
  xdgFallback: (problem: string) =>
    `XDG_RUNTIME_DIR ${problem}: falling back to a private mkdtemp directory under /tmp`,
  xdgFallbackFix: "log in through systemd-logind (pam_systemd) so /run/user/$(id -u) exists, " +
    "or export XDG_RUNTIME_DIR to a directory of yours with mode 0700",
  xdgOk: (dir: string, mode: string) => `${dir}: a private directory of yours (${mode})`,
  // checks/ffi.ts
  ffiTitle: "FFI peer creds",
  ffiNoKoffi: "koffi FFI does not load here: every password request is refused (fail closed)",
  ffiNoKoffiFix:
    "run npm ci in the package (koffi ships prebuilt binaries for x64, arm64, riscv64)",
  ffiNoFd: "no file descriptor behind a Node socket: requests refused",
  ffiNoFdFix: "use the Node that pi ships with (≥ 22); requests fail closed",
  ffiPeercredFailed: (reason: string) => `SO_PEERCRED failed (${reason}): every request is refused`,
  ffiReport: "report this kernel/architecture; requests fail closed",
  ffiWrongPeer: (pid: number, uid: number, ourPid: number, ourUid: number) =>
    `SO_PEERCRED returned pid ${pid} uid ${uid}, expected pid ${ourPid} uid ${ourUid}`,
  ffiPidfdYes: "SO_PEERPIDFD yes",
  ffiPidfdNo: "SO_PEERPIDFD no (kernel < 6.5)",
  ffiNoSockDiag: (why: string) =>
    `NETLINK_SOCK_DIAG did not name the peer socket${why}: every request is refused (fail closed)`,
  ffiNoSockDiagFix: "use a kernel with CONFIG_UNIX_DIAG (the feature behind ss -x)",
  ffiOk: (pidfd: string) =>
    "koffi loads; SO_PEERCRED round trip gave our pid and uid; SOCK_DIAG named the " +
    `peer socket; ${pidfd}`,
  ffiTimedOut: (what: string, ms: number) => `${what} timed out after ${ms} ms`,
  // checks/ptrace_scope.ts
  ptraceRisk: "any process of yours (the agent's included) can trace your terminal emulator or " +
    "tmux server to read keys, and a pi-secret-run command to read its secret (pi itself is " +
    "non-dumpable, and sudo's askpass helper never holds the password)",
  ptraceMissing: (risk: string) => `kernel.yama.ptrace_scope missing (no Yama LSM): ${risk}`,
  ptraceMissingFix: "boot a kernel with Yama (CONFIG_SECURITY_YAMA; lsm=…,yama) and set " +
    "sysctl kernel.yama.ptrace_scope=1 (persist it in /etc/sysctl.d/); or install the " +
    "broker (/sudo-prompt install-broker), so that root clears processes that hide their " +
    "open files",
  ptraceZero: (risk: string) => `kernel.yama.ptrace_scope=0: ${risk}`,
  ptraceZeroFix: "sudo sysctl kernel.yama.ptrace_scope=1 (persist it in /etc/sysctl.d/); or " +
    "install the broker (/sudo-prompt install-broker), so that root, not a question in the " +
    "modal, clears processes that hide their open files",
  ptraceOne: "kernel.yama.ptrace_scope=1: only ancestors can trace; the agent's shell is still " +
    "an ancestor of a pi-secret-run command it starts (2 closes that too, but disables " +
    "debuggers)",
  ptraceRootOnly: (value: string) => `kernel.yama.ptrace_scope=${value}: only root can attach`,
  ptraceUnknown: (value: string) => `kernel.yama.ptrace_scope has an unknown value: ${value}`,
  // checks/legacy_tiocsti.ts
  tiocstiMissing: "dev.tty.legacy_tiocsti missing (kernel < 6.2): TIOCSTI is always allowed; " +
    "pi's bash tool runs commands in a new session without pi's terminal",
  tiocstiOn: "dev.tty.legacy_tiocsti=1: a process that shares pi's terminal can type into the " +
    "modal (pi's bash tool detaches, but other programs you start may not)",
  tiocstiOnFix: "sudo sysctl dev.tty.legacy_tiocsti=0 (persist it in /etc/sysctl.d/)",
  tiocstiOff: "dev.tty.legacy_tiocsti=0: no typing into ttys",
  tiocstiUnknown: (value: string) => `dev.tty.legacy_tiocsti has an unknown value: ${value}`,
  // checks/deno_helper.ts
  denoTitle: "deno helper",
  denoNotFound: "deno binary not found (the npm dependency `deno`): the extension cannot start",
  denoNotFoundFix: "npm ci in the package, with allow-scripts=deno in .npmrc",
  denoNotExecutable: (deno: string) => `${deno} is not executable`,
  denoNpmCi: "npm ci in the package",
  denoVersionFailed: (deno: string, failure: string) => `\`${deno} --version\` ${failure}`,
  denoDamagedFix: "npm ci in the package (the binary may be damaged or for another platform)",
  denoUnknownVersion: "unknown version",
  denoHelperMissing: (helper: string) => `helper ${helper} is missing`,
  denoReinstall: "reinstall the package",
  denoUnsafePath: (path: string) =>
    `${path} has characters the launcher refuses (space, comma, quotes, …): the ` +
    "extension will not start",
  denoUnsafePathFix: "install the package (and node_modules) under a plain path",
  denoPins: (version: string) => ` (package.json pins ${version})`,
  denoOk: (version: string, note: string, deno: string) =>
    `deno ${version}${note} at ${deno}; the helper runs with the pinned flags and ` +
    "refuses a code-loading variable",
  denoGetPinned: "npm ci in the package to get the pinned deno",
  denoNoRefusal: (failure: string, wrote: string) =>
    "the helper under the pinned flags did not refuse a code-loading variable " +
    `(NODE_OPTIONS): it ${failure}${wrote}`,
  denoWroteStdout: " and wrote to stdout",
  denoNoRefusalFix: "npm ci in the package; check docs/permissions.md against this deno version",
  denoCouldNotStart: (error: string) => `could not start (${error})`,
  denoKilledAtDeadline: "did not finish before its deadline and was killed",
  denoExited: (code: number) => `exited ${code}`,
  denoKilledBy: (signal: string) => `was killed by ${signal}`,
  // checks/broker.ts
  brokerInstallHint: (installer: string) =>
    `/sudo-prompt install-broker in pi, or: sudo sh ${installer}`,
  brokerNotInstalled: "root broker not installed (only needed for pi-secret-run)",
  brokerUnreadable: (file: string, code: string) => `${file} unreadable (${code})`,
  brokerReinstall: (hint: string) => `reinstall: ${hint}`,
  brokerReinstallBroker: (hint: string) => `reinstall the broker: ${hint}`,
  brokerNoProtocol: (file: string) => `${file} has no protocol= line: broken install`,
  brokerShown: (version: string, protocol: string) => `broker ${version}, protocol ${protocol}`,
  brokerOtherProtocol: (shown: string, protocol: number) =>
    `${shown}; this extension speaks protocol ${protocol}: pi-secret-run is ` +
    "refused until the broker is reinstalled",
  brokerNoLauncher: (shown: string, launcher: string) =>
    `${shown} but ${launcher} is missing: incomplete install`,
  brokerNotRootOwned: (shown: string, problem: string) =>
    `${shown}, but ${problem}: not a root-owned install, and whoever can change ` +
    "it can run anything as root through the broker's sudo rule",
  brokerNotRootOwnedFix: (hint: string, installer: string) =>
    "make every directory above it root-owned and not writable by group or others " +
    `(chown root:root DIR; chmod go-w DIR), then reinstall: ${hint}; or remove ` +
    `the broker now: sudo sh ${installer} --uninstall`,
  brokerExtension: (version: string) => ` (extension ${version})`,
  brokerStale: (shown: string, file: string) =>
    `${shown}, but its root-owned copy of ${file} differs from this package's ` +
    "(updated since the broker was installed): the broker and hardened mode run the old code",
  brokerOk: (shown: string, extension: string) =>
    `${shown}${extension}: installed, protocol matches`,
  brokerRuleFix: (sudoersFile: string) =>
    `a file in /etc/sudoers.d that sorts after ${sudoersFile} (or a rule in ` +
    "/etc/sudoers after its @includedir) grants you a rule with a password; `sudo -l` lists " +
    "them in order (the last match wins): move that rule before the broker's, or re-run the " +
    "broker installer after renaming that file so it sorts first",
  brokerAsksPassword: (shown: string) =>
    `${shown}, but sudo asks for a password for the broker: a later sudoers rule ` +
    "overrides its NOPASSWD rule (or the rule names another user), so pi-secret-run fails",
  brokerAsksPasswordFix: (fix: string) =>
    `${fix}; if the rule names another user, re-run the installer with --user you`,
  brokerUnreached: (shown: string, launcher: string, said: string) =>
    `${shown}, but \`sudo -n ${launcher}\` did not reach the broker: ${said}`,
  brokerUnreachedFix: (fix: string) => `re-run the broker installer for this user; ${fix}`,
  // checks/allowlist.ts
  allowlistOk: (path: string, entries: number) =>
    `${path}: root-owned, not writable by others, ${entries} ` +
    (entries === 1 ? "entry" : "entries"),
  allowlistAbsent: (path: string) =>
    `${path} absent: every pi-secret-run command shows the red warning`,
  allowlistAbsentFix: "the broker installer creates it (root-owned, commented examples)",
  allowlistUnsafeDetail: (why: string) => `unsafe: ${why}; the allowlist counts as empty`,
  allowlistSymlink: (path: string) => `${path} is a symlink (never followed)`,
  allowlistSymlinkFix: (path: string) =>
    "replace the symlink with a regular root-owned file: sudo cp --remove-destination " +
    `"$(readlink -f ${path})" ${path}`,
  allowlistNotRegularFix: (path: string) =>
    `make ${path} a regular root-owned file (rerun the broker installer)`,
  allowlistWritable: (path: string) => `${path} is writable by group or others`,
  allowlistMode: (mode: string) => ` (mode ${mode})`,
  allowlistParent: (dir: string) =>
    `its directory ${dir} is not a root-owned real directory closed to group/other writes`,
  allowlistParentFacts: (uid: number, mode: string, symlink: string) =>
    ` (uid ${uid}, mode ${mode}${symlink})`,
  allowlistParentSymlink: ", symlink",
  allowlistParentFix: (dir: string, path: string) =>
    `sudo chown root:root ${dir} && sudo chmod go-w ${dir} (every directory above ` +
    `${path} must be root-owned and not writable by group/other)`,
  allowlistMalformed: (line: string, syntax: string) =>
    `line ${line} is malformed (${syntax}); one bad line voids the file`,
  allowlistMalformedFix: (line: string, path: string) =>
    `fix line ${line} of ${path} (sudoedit ${path})`,
  allowlistSyntax: "syntax",
  // checks/hardened.ts
  hardenedTitle: "hardened mode",
  hardenedNotCovered: "Not covered by hardened mode: pi itself, node, and every other " +
    "extension or package pi loads (~/.pi/agent/extensions, the packages in pi's settings) run " +
    "inside pi's process and see the modal's keys: code that can rewrite those files can read " +
    "your password",
  hardenedRoot: "running as root: sudo never asks for a password, hardened mode does not apply",
  hardenedOk: (notCovered: string) =>
    "hardened: the extension, helper, deno binary and Deno cache are root-owned; the " +
    `agent cannot rewrite them. ${notCovered}`,
  hardenedItem: (label: string, problem: string) => `${label} (${problem})`,
  hardenedItemMore: (label: string, problem: string, more: number) =>
    `${label} (${problem}, +${more} more)`,
  hardenedCopyUnused: (path: string) =>
    ` (a root-owned helper copy exists (${path}) but is not the one in use)`,
  hardenedInstallRootOwned: (fix: string) => `install root-owned: ${fix}`,
  hardenedTurnOn:
    "turn on hardened mode so the extension runs the root-owned helper, deno and cache",
  hardenedWithBroker:
    "the root-owned helper and cache come with /sudo-prompt install-broker (hardened mode)",
  hardenedNot: (copyNote: string, listed: string, notCovered: string) =>
    `not hardened${copyNote}: the agent could modify ${listed}. ${notCovered}`,
  hardenedExtension: "the extension",
  hardenedHelper: "the askpass helper",
  hardenedDeno: "the deno binary",
  hardenedKoffi: "koffi (loaded into pi)",
  hardenedCache: "the helper's Deno cache",
  hardenedSessionCache: "a per-session deno-cache in your session directory",
  hardenedCheckChanges: (root: string) =>
    `check that ${root} holds only changes you made (git status), then: `,
  // checks/syslog.ts
  syslogTitle: "system log",
  syslogOk: (path: string) =>
    `${path} takes the audit records (journalctl -t pi-sudo-prompt), ` +
    "where sudo logs too and the agent cannot change them",
  syslogNone: "there is none",
  syslogNotSocket: "it is not a socket",
  syslogNoFfi: "koffi FFI does not load",
  syslogRefused: "nothing accepts a connection on it",
  syslogMissing: (path: string, why: string, reason: string) =>
    `no system-log copy of the audit log: ${path}: ${why} (${reason}); ` +
    "the audit file alone is yours, so the agent could rewrite it",
  syslogMissingFix: "run a syslog daemon (systemd-journald or rsyslog) that serves /dev/log",
  // checks/pi_process.ts
  terminalTitle: "exclusive terminal",
  dumpableTitle: "pi non-dumpable",
  piOutside: "not inside pi: run /sudo-prompt doctor inside pi to check pi's own process",
  piNoTerminal: "pi's stdin is not a terminal: nothing to make exclusive",
  piNotExclusive: (tty: string, problems: string) =>
    `${tty} is not exclusive: any process of yours can open it and read what ` +
    `you type (${problems})`,
  piClearedSince: "cleared since",
  piNotExclusiveFix: "restart pi; if it persists, run this doctor and report the problem it lists",
  piNoGuardian: (tty: string) =>
    `${tty} is exclusive, but no guardian runs: if pi is killed, the terminal ` +
    "stays exclusive and sudo there fails with a busy terminal",
  piNoGuardianFix: (release: string) => `after such a kill run ${release} in that terminal`,
  piExclusive: (tty: string, guardian: number) =>
    `${tty} is exclusive (no other process can open it); guardian pid ` +
    `${guardian} releases it if pi dies`,
  piNonDumpable: "pi is non-dumpable: no process of yours can trace it or read its memory",
  piDumpableByChoice: (variable: string) =>
    `${variable}=1: pi is dumpable, so any process of yours can read its memory ` +
    "and copy its terminal",
  piDumpableByChoiceFix: (variable: string) =>
    `unset ${variable} (it is for debugging only) and restart pi`,
  piDumpable: "pi is dumpable: any process of yours can read its memory and copy its terminal",
  piDumpableFix: "check that FFI works (see the FFI check) and restart pi",
  // checks/multiplexer.ts
  multiplexerTitle: "terminal multiplexer",
  multiplexerScreen: "inside GNU screen: keys typed at the modal pass through screen, whose key " +
    "bindings any process of yours can change to record them",
  multiplexerScreenFix:
    "run pi outside screen, or inside tmux (where pi takes your terminal from tmux)",
  multiplexerNone: "not inside tmux",
  multiplexerTmux: "inside tmux: the password box is drawn on your tmux client's own terminal " +
    "while tmux is locked, so no tmux binding, alias, hook or popup sees the keys. Not covered: " +
    "a control-mode client (iTerm2's tmux integration) gets no box, and an outer tmux around " +
    "your client (nested tmux) still sees the keys",
  // checks/display.ts
  displayTitle: "X11 keyboard",
  displayX11: (display: string) =>
    `X11 display ${display}: any X client of yours (the agent can start one) can ` +
    "read every key you type, the modal's included; nothing in a terminal program can stop it",
  displayX11Fix: "use a Wayland session or a text console for pi, or unset DISPLAY in pi's " +
    "environment if no X program needs it",
  displayOk: "no X11 display in pi's environment",

  // --- The command-line reports (ops/cli_report.ts, shared by install and uninstall;
  // ops/install_cli.ts; ops/uninstall_cli.ts; ops/audit_cli.ts). bin/pi-sudo-prompt.mjs stays
  // English: it imports nothing of ours outside bin/ (docs/design.md §1).
  cliProblems: (count: number) => `pi-sudo-prompt: ${count} problem(s) above.`,
  cliStepFailed: (command: string, code: number) => `${command} failed (exit ${code})`,
  installSettingUp: (root: string) => `pi-sudo-prompt: setting up ${root}`,
  installDeno: (deno: string, version: string) => `  ✓ deno binary: ${deno} (${version})`,
  installNoDeno: "deno binary not found: run `npm ci` (with allow-scripts=deno in .npmrc)",
  installPeerCredentials: "  ✓ kernel peer credentials (SO_PEERCRED via koffi) available",
  installNoFfi: "koffi FFI unavailable: every sudo password request would be refused (fail closed)",
  installSudo: (sudo: string) => `  ✓ sudo: ${sudo}`,
  installNoSudo: "sudo not installed (apt-get install sudo)",
  installOldNode: (version: string, min: string) =>
    `node on PATH is ${version}, pi needs Node >= ${min}: ` + "`npm install -g node@22`",
  installLocalPi: (nodeModules: string, root: string) =>
    `  - pi is not on PATH; it is installed only in ${nodeModules}: start it with \`npx pi\` ` +
    `in ${root}`,
  installOldNodeLocal: (oldNode: string) =>
    `  - ${oldNode} (\`npx pi\` here uses the checkout's own Node)`,
  installNoPi:
    "  - pi not on PATH: get it with `npm install -g @earendil-works/pi-coding-agent`, then run:",
  installStartPi: "Start `pi`",
  installStartNpx: (root: string) => `Start \`npx pi\` in ${root}`,
  installGetPi: "Get pi (above), start it",
  installReady: (start: string) =>
    `pi-sudo-prompt: ready. ${start} and run a command that uses sudo.`,
  uninstallStart: (root: string) => `pi-sudo-prompt: uninstalling ${root}`,
  uninstallNoBroker: "  - root broker not installed",
  uninstallBrokerAsRoot: (command: string) =>
    `  - root broker installed: remove it with  ${command}`,
  uninstallBrokerNoTerminal: (command: string) =>
    `root broker installed: remove it in a terminal with  ${command}`,
  uninstallRemovingBroker: (command: string) => `  - removing the root broker: ${command}`,
  uninstallBrokerRemoved: "  ✓ root broker removed",
  uninstallBrokerFailed: (command: string, code: number) =>
    `${command} failed (exit ${code}): run it yourself`,
  uninstallNoEntry: "  - pi has no settings entry for this copy",
  uninstallNoPi: (command: string) => `pi not found: run  ${command}`,
  uninstallKeptAudit: (path: string) =>
    `  - kept the audit log ${path} (your record; delete it by hand if you want)`,
  uninstallFilesStay: (command: string) => `  - the package files stay: ${command}`,
  uninstallFilesStayIn: (command: string, dir: string) =>
    `  - the package files stay: ${command} in ${dir}`,
  uninstallFilesYours: (root: string) => `  - the files of ${root} are yours to delete`,
  uninstallDone: "pi-sudo-prompt: uninstalled.",
  auditUsage: "usage: pi-sudo-prompt audit verify [path] | pi-sudo-prompt audit tail [n] [path]",
  auditNoLog: (path: string) =>
    `audit: no audit log yet (looked for ${path}); pi creates it when an interactive session ` +
    "starts with this extension",
  auditOk: (lines: number, sessions: number, files: number) =>
    `audit: ok: ${lines} lines from ${sessions} session(s) in ${files} file(s); ` +
    "a session's last lines are not checked: compare with the system log " +
    "(journalctl -t pi-sudo-prompt)",
  auditBroken: (reason: string, where: string, detail: string) =>
    `${reason} at ${where}: ${detail}`,
  auditFileLine: (file: string, line: number) => `${file} line ${line}`,
  auditTailUnreadable: (reason: string, path: string) =>
    `${reason}: ${path}: missing, a symlink, not a regular file, or unreadable`,
  auditError: (message: string) => `error: ${message}`,
  // What `audit verify` found wrong (extension/audit/verify.ts).
  verifyUnreadable: "missing, not a file, or unreadable",
  verifyNoNewline: "no newline at the end",
  verifyNotJson: "not a JSON object",
  verifyBadFields: "missing or invalid fields",
  verifySessionStarts: (sid: string) =>
    `session "${sid}" starts here: lines before it were removed`,
  verifyLineChanged: "that line was changed",
  verifyLinesLost: "lines lost or moved",
  verifyPrevNotHash: (where: string, why: string) => `prev is not the hash of ${where}: ${why}`,
  verifyBadSeq: (seq: number, expected: number) => `seq ${seq}, not ${expected}`,
  verifyLine: (n: number) => `line ${n}`,
  verifyLineOf: (n: number, file: string) => `line ${n} of ${file}`,
};

/** Every tools table's shape: English's keys, each a string or a function of the same arity. */
export type ToolMessages = typeof toolsEn;
