/**
 * Text of the shell programs a session writes (pure; the server writes them): the
 * askpass launcher, the private `sudo` wrapper first on `PATH`, and the `sudo()`
 * function prepended to tool commands. The wrapper's POSIX-sh option scanner is
 * kept in step with `sudo_args.ts` by the tests.
 *
 * @module
 */
import { SUDO_LONG_OPTIONS, SUDO_SHORT_WITH_VALUE } from "../../askpass/sudo_args.ts";
import type { CredentialCacheMode } from "./credential_policy.ts";

/** Quotes a string for POSIX sh (single quotes; embedded `'` closed and escaped). */
export function shQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * POSIX-sh `__pi_sudo_needs_askpass ARGS…` (dash, bash, zsh; `set -eu`), reading options
 * as `scanSudoOptions` does: status 0 when `-A` must be added, 1 when `-A`/`-S` (or a long
 * form, abbreviated too) is there. Sets `__pi_k=1` when `ignore_ticket` ends up set (`-k`
 * not undone by a later `-K`), `__pi_cmd` to the command's 1-based position (0: none), and
 * `__pi_nocmd=1` when `-s`/`-i`/`-e`/`-l`/`-v` make it no program run as given.
 */
export function sudoScannerFunction(): string {
  const longs = SUDO_LONG_OPTIONS.map(([name, arg]) => `${name}:${arg}`).join(" ");
  return [
    // Sets __pi_lo to "name:kind" for an exact or unambiguous long option.
    "__pi_sudo_long() {",
    "  __pi_lo=; __pi_n=0",
    `  for __pi_o in ${longs}; do`,
    '    if [ "${__pi_o%:*}" = "$1" ]; then __pi_lo=$__pi_o; return 0; fi',
    '    case "${__pi_o%:*}" in "$1"*) __pi_n=$((__pi_n + 1)); __pi_lo=$__pi_o ;; esac',
    "  done",
    '  [ "$__pi_n" = 1 ] || __pi_lo=',
    "}",
    "__pi_sudo_needs_askpass() {",
    "  local __a __r __c __s __t",
    "  __s=0; __pi_k=0; __pi_cmd=0; __pi_nocmd=0; __t=$#",
    '  while [ "$#" -gt 0 ]; do',
    "    __a=$1; shift",
    '    case "$__a" in',
    '      --) [ "$#" -gt 0 ] && __pi_cmd=$((__t - $# + 1)); break ;;',
    "      --*)",
    '        __r=${__a#--}; __pi_sudo_long "${__r%%=*}"',
    '        case "$__pi_lo" in',
    "          askpass:* | stdin:*) __s=1 ;;",
    "          shell:* | login:* | edit:* | list:* | validate:*) __pi_nocmd=1 ;;",
    '          reset-timestamp:*) case "$__a" in *=*) ;; *) __pi_k=1 ;; esac ;;',
    "          remove-timestamp:*) __pi_k=0 ;;",
    '          *:r) case "$__a" in *=*) ;; *) [ "$#" -gt 0 ] && shift ;; esac ;;',
    "        esac ;;",
    "      -?*)",
    "        __r=${__a#-}",
    '        while [ -n "$__r" ]; do',
    '          __c=${__r%"${__r#?}"}; __r=${__r#?}',
    '          case "$__c" in',
    "            A|S) __s=1 ;;",
    "            k) __pi_k=1 ;;",
    "            K) __pi_k=0 ;;",
    "            s|i|e|l|v) __pi_nocmd=1 ;;",
    `            [${SUDO_SHORT_WITH_VALUE}]) [ -z "$__r" ] && [ "$#" -gt 0 ] && shift; __r= ;;`,
    "            h)",
    '              if [ "$__a" = "-h" ] && [ "$#" -gt 0 ]; then',
    '                case "$1" in -*) ;; /* | =*) shift ;; *=*) ;; *) shift ;; esac',
    "              fi",
    "              __r= ;;",
    "          esac",
    "        done ;;",
    "      /* | =*) __pi_cmd=$((__t - $#)); break ;;",
    "      *=*) ;;",
    "      *) __pi_cmd=$((__t - $#)); break ;;",
    "    esac",
    "  done",
    '  [ "$__s" = 0 ]',
    "}",
  ].join("\n");
}

/**
 * The `sudo` wrapper for the session's private `PATH` directory: adds `-A` unless the
 * options name a password source and, with `cache` `"none"` (default), `-k` unless sudo
 * already ignores tickets, so a modal's password leaves no credential outliving the call
 * (docs/design.md §2 invariant 3, ADR 0006). With `"call"` the options pass unchanged.
 */
export function sudoWrapperScript(realSudo: string, cache: CredentialCacheMode = "none"): string {
  return [
    "#!/bin/sh",
    "# pi-sudo-prompt: routes sudo's password prompt to pi's modal (generated per session).",
    sudoScannerFunction(),
    'if __pi_sudo_needs_askpass "$@"; then __pi_add=-A; else __pi_add=; fi',
    ...resolveProgramLines(),
    // No -k for a bare `sudo`: `sudo -k` alone would silently invalidate, not print usage.
    ...(cache === "none"
      ? ['if [ "$#" -gt 0 ] && [ "$__pi_k" = 0 ]; then set -- -k "$@"; fi']
      : []),
    'if [ -n "$__pi_add" ]; then set -- -A "$@"; fi',
    `exec ${shQuote(realSudo)} "$@"`,
    "",
  ].join("\n");
}

/**
 * Wrapper lines: a bare command name is looked up in Debian's `secure_path` (all root's, in
 * order), and one found there goes to sudo as that absolute path, so the modal shows the file
 * root runs and a look-alike on a user-writable `PATH` never runs (sudo without `secure_path`,
 * Arch's default, would use the command's `PATH`).
 */
function resolveProgramLines(): string[] {
  return [
    'if [ "$__pi_cmd" -gt 0 ] && [ "$__pi_nocmd" = 0 ]; then',
    "  __pi_i=0",
    "  for __pi_a do",
    "    __pi_i=$((__pi_i + 1))",
    '    if [ "$__pi_i" = 1 ]; then set --; fi',
    '    if [ "$__pi_i" = "$__pi_cmd" ]; then',
    '      case "$__pi_a" in',
    "        */* | '') ;;",
    "        *) for __pi_d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do",
    '             if [ -f "$__pi_d/$__pi_a" ] && [ -x "$__pi_d/$__pi_a" ]; then',
    "               __pi_a=$__pi_d/$__pi_a; break",
    "             fi",
    "           done ;;",
    "      esac",
    "    fi",
    '    set -- "$@" "$__pi_a"',
    "  done",
    "fi",
  ];
}

/**
 * The one-line `sudo()` function prepended to each tool command: it calls the wrapper by
 * absolute path, so a script that resets `PATH` still reaches the modal. The option
 * scanning lives in the wrapper, keeping the per-call cost negligible.
 */
export function sudoShellPrelude(wrapperPath: string): string {
  return `sudo() { ${shQuote(wrapperPath)} "$@"; }`;
}

/**
 * The per-session launcher `pi-askpass`: checks its stdout, then `exec env -i VARS deno
 * run FLAGS helper.ts "$1"`, so only sudo's prompt passes through. The check uses `test`
 * builtins (no process): fd 1 must be a FIFO not ours that we may neither read nor write,
 * as sudo's root-made 0600 pipe is (a user cannot make a pipe owned by another); the
 * server checks owner 0 and mode 0600 from `/proc` before any prompt. `environment` is the
 * helper's complete environment (`NAME=value`), `argvPrefix` `[deno, "run", ...flags, helper]`.
 */
export function launcherScript(spec: {
  readonly envPath: string;
  readonly environment: readonly string[];
  readonly argvPrefix: readonly string[];
}): string {
  const words = [
    shQuote(spec.envPath),
    "-i",
    ...spec.environment.map(shQuote),
    ...spec.argvPrefix.map(shQuote),
    '"$1"',
  ];
  const out = "/proc/self/fd/1";
  return [
    "#!/bin/sh",
    "# pi-sudo-prompt askpass launcher (generated per session; do not edit).",
    `if [ ! -p ${out} ] || [ -O ${out} ] || [ -r ${out} ] || [ -w ${out} ]; then`,
    `  echo ${shQuote("pi-askpass: stdout is not sudo's private pipe; run only by sudo -A")} >&2`,
    "  exit 1",
    "fi",
    `exec ${words.join(" \\\n  ")}`,
    "",
  ].join("\n");
}

/**
 * The session's `pi-secret-run` (first on the tool's PATH): the Deno client with its pinned
 * flags and the session's cache, or the compiled binary (`argv` is then just its path).
 */
export function piSecretRunScript(denoDir: string, argv: readonly string[]): string {
  return [
    "#!/bin/sh",
    "# pi-sudo-prompt: pi-secret-run for this session (generated; do not edit).",
    `DENO_DIR=${shQuote(denoDir)} NO_COLOR=1 exec ${argv.map(shQuote).join(" ")} "$@"`,
    "",
  ].join("\n");
}
