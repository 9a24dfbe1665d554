#!/bin/sh
# pi-sudo-prompt root check server (ADR 0005's check-server amendment, ADR
# 0007), run as root once per pi process through the broker's NOPASSWD rule:
#   sudo -n /usr/local/libexec/pi-sudo-prompt/pi-secret-broker --serve-checks
# Installed root-owned as /usr/local/libexec/pi-sudo-prompt/check-server;
# pi-secret-broker execs it with a clean environment (SUDO_UID only).
#
# pi asks one question per line on stdin and reads one answer per line on
# stdout, in order:
#   "NONCE --terminal-holders N"        -> terminal-check N
#   "NONCE --verify-pairing H S INODE"  -> pairing-check H S INODE
# answer: "NONCE EXIT LINE", LINE being the check's one line; NONCE is 16
# lowercase hex digits pi chose at random, so that an answer is taken only
# for the question it answers. The checks are the same root-owned scripts a
# one-shot `sudo -n` runs; this loop only spares each question a sudo and a
# launcher. Anything else on stdin ends the server (exit 125) after a
# "0 125 pi-checks: usage ..." line (which pi, expecting a nonce, takes as a
# broken server); end of input (pi closed its end, or exited) ends it with 0.
# Besides this server and its sudo (root's, and setuid: non-dumpable), only
# pi holds the write end of stdin and the read end of stdout.
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
dir=/usr/local/libexec/pi-sudo-prompt

usage() { printf '0 125 pi-checks: usage: %s\n' "$1"; exit 125; }

caller=${SUDO_UID-}
case "$caller" in
  "" | *[!0-9]*) usage "no SUDO_UID (run through sudo)" ;;
esac
nl='
'
# dash reads a line whole before its length can be checked: a caller's
# endless line stops at this much memory, not at the machine's. The checks
# lift it again for their walks.
ulimit -S -v 65536
# Reaching that limit crashes dash, as root, in the caller's directory. sudo
# sets the command's core size to 0 by default, but `Defaults
# rlimit_core=default` undoes that and another sudo may not: then the kernel
# would write root's memory there as `core` (security test R21).
ulimit -c 0
set -f # the words below are split, never globbed
while IFS= read -r line; do
  [ "${#line}" -le 100 ] || usage "line too long"
  # shellcheck disable=SC2086 # split into words on purpose
  set -- $line
  [ "$#" -ge 2 ] || usage "NONCE --CHECK ARGS..."
  case "$1" in
    "" | *[!0-9a-f]*) usage "NONCE must be lowercase hex" ;;
  esac
  [ "${#1}" -eq 16 ] || usage "NONCE must be 16 digits"
  nonce=$1
  shift
  case "$1:$#" in
    --terminal-holders:2) check=terminal-check ;;
    --verify-pairing:4) check=pairing-check ;;
    *) usage "unknown check $1 with $(($# - 1)) arguments" ;;
  esac
  shift
  # The check validates its own arguments (decimal only) and prints one
  # line. It runs in a subshell of this one, which only has SUDO_UID in its
  # environment (the launcher's env -i): the same as a one-shot run, without
  # starting sh again. Its exit ends the subshell; its globs need set +f.
  out=$(ulimit -S -v unlimited; set +f; . "$dir/$check" 2>/dev/null)
  rc=$?
  printf '%s %s %s\n' "$nonce" "$rc" "${out%%"$nl"*}"
done
exit 0
