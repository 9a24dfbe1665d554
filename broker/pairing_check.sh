#!/bin/sh
# pi-sudo-prompt pairing check (ADR 0005), run as root through the broker's
# NOPASSWD rule:
#   sudo -n /usr/local/libexec/pi-sudo-prompt/pi-secret-broker \
#     --verify-pairing HELPER_PID SUDO_PID PIPE_INODE
# Installed root-owned as /usr/local/libexec/pi-sudo-prompt/pairing-check;
# pi-secret-broker validates the arguments (decimal numbers only) and execs
# this script with a clean environment (PATH and SUDO_UID only).
#
# It answers one question the user's uid cannot: is the helper's stdout pipe
# (pipe:[PIPE_INODE] on its fd 1) open for reading in the helper's parent
# sudo, and held by no other process at all? Only root can read sudo's
# /proc/<pid>/fd. It prints one line and exits:
#   0  "pi-pairing: paired"
#   1  "pi-pairing: not-paired <why>"   (why: one word, see below; walk_failed
#      when the walk over the descriptor tables did not finish)
#   125 "pi-pairing: usage ..."          (bad arguments or caller)
# It reads /proc only; it changes nothing.
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

say() { printf 'pi-pairing: %s\n' "$*"; }
no() { say "not-paired $1"; exit 1; }

[ "$#" -eq 3 ] || { say "usage: pairing-check HELPER_PID SUDO_PID PIPE_INODE"; exit 125; }
for n in "$@"; do
  case "$n" in
    "" | *[!0-9]*) say "usage: arguments must be decimal numbers"; exit 125 ;;
  esac
  [ "${#n}" -le 19 ] || { say "usage: number too long"; exit 125; }
done
caller=${SUDO_UID-}
case "$caller" in
  "" | *[!0-9]*) say "usage: no SUDO_UID (run through sudo)"; exit 125 ;;
esac
helper=$1
sudo_pid=$2
ino=$3

# field PID NAME: sets $v to a field of /proc/<pid>/status ("Uid", "PPid"),
# its values separated by single spaces; empty when the process is gone. The
# shell reads the file itself: this check starts no program but grep and find.
field() {
  v=""
  while read -r key a b c d; do
    [ "$key" = "$2:" ] || continue
    v="$a${b:+ $b}${c:+ $c}${d:+ $d}"
    break
  done 2>/dev/null <"/proc/$1/status"
}

# The caller may only ask about its own helper and its own sudo front end.
field "$helper" Uid
[ "$v" = "$caller $caller $caller $caller" ] || no helper_not_callers
field "$helper" PPid
[ "$v" = "$sudo_pid" ] || no parent_mismatch
field "$sudo_pid" Uid
[ "$v" = "$caller 0 0 0" ] || no sudo_not_setuid_front_end

# Every descriptor that holds the pipe: in every task of the caller's
# processes (sudo's too: its real uid is the caller's), and in the leader's
# table of every other process (proc-tables.sh says why).
. /usr/local/libexec/pi-sudo-prompt/proc-tables.sh # fd_tables
ulimit -s unlimited 2>/dev/null || ulimit -s 65536 2>/dev/null
fd_tables "$caller" leaders
reads_in_sudo=no
helper_stdout=no
# find: 0, or 1 when a process vanished during the walk (benign); anything
# else (it could not run, the list was too long, it was cut short) may have
# missed a holder, so the answer is no.
# shellcheck disable=SC2086 # the globs expand here, to the tables' directories
holders=$(find $dirs -maxdepth 1 -lname "pipe:\[$ino\]" 2>/dev/null)
[ "$?" -le 1 ] || no walk_failed
for link in $holders; do
  pid=${link#/proc/}
  pid=${pid%%/*}
  case "$pid" in
    "$helper")
      # The helper's stdout is that pipe (its main thread's fd 1).
      [ "$link" = "/proc/$helper/task/$helper/fd/1" ] && helper_stdout=yes
      ;;
    "$sudo_pid")
      # The descriptor must be open for reading: O_ACCMODE of fdinfo's flags
      # (octal) is its last digit & 3, so a last digit of 0 or 4 is O_RDONLY.
      tid=${link#/proc/*/task/}
      tid=${tid%%/*}
      fd=${link##*/}
      flags=""
      while read -r key val; do
        [ "$key" = "flags:" ] || continue
        flags=$val
        break
      done 2>/dev/null <"/proc/$pid/task/$tid/fdinfo/$fd"
      case "$flags" in
        *[04]) reads_in_sudo=yes ;;
        *) no sudo_holds_it_not_for_reading ;;
      esac
      ;;
    *) no held_elsewhere ;;
  esac
done
[ "$helper_stdout" = yes ] || no stdout_not_that_pipe
[ "$reads_in_sudo" = yes ] || no sudo_does_not_read_it
# Still the same processes after the scan (a pid reused meanwhile fails here).
field "$helper" PPid
[ "$v" = "$sudo_pid" ] || no parent_mismatch
say paired
exit 0
