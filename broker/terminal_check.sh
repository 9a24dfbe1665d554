#!/bin/sh
# pi-sudo-prompt terminal check (ADR 0007), run as root through the broker's
# NOPASSWD rule:
#   sudo -n /usr/local/libexec/pi-sudo-prompt/pi-secret-broker --terminal-holders N
# Installed root-owned as /usr/local/libexec/pi-sudo-prompt/terminal-check;
# pi-secret-broker validates N (decimal) and execs this script with a clean
# environment (SUDO_UID only).
#
# It answers what the user's uid cannot: which processes of the caller have
# /dev/pts/N open, including non-dumpable ones whose /proc/<pid>/fd only
# root can read. Every task's table is read (a thread can have its own). It
# prints one line and exits:
#   0   "pi-terminal: holders [PID...]"   (the caller's processes only)
#   1   "pi-terminal: error ..."          (the walk failed: the caller refuses)
#   125 "pi-terminal: usage ..."          (bad arguments or caller)
# It reads /proc only; it changes nothing, and it says nothing about other
# users' processes.
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

say() { printf 'pi-terminal: %s\n' "$*"; }

[ "$#" -eq 1 ] || { say "usage: terminal-check PTS_NUMBER"; exit 125; }
case "$1" in
  "" | *[!0-9]*) say "usage: the argument must be a decimal number"; exit 125 ;;
esac
[ "${#1}" -le 6 ] || { say "usage: number too long"; exit 125; }
caller=${SUDO_UID-}
case "$caller" in
  "" | *[!0-9]*) say "usage: no SUDO_UID (run through sudo)"; exit 125 ;;
esac
n=$1
[ -c "/dev/pts/$n" ] || { say "usage: no terminal /dev/pts/$n"; exit 125; }
# Its owner, and its major and minor (hexadecimal), in one stat.
set -- $(stat -c '%u %t %T' "/dev/pts/$n")
[ "$#" -eq 3 ] || { say "error: stat"; exit 1; }
# The caller may only ask about a terminal it owns.
[ "$1" = "$caller" ] || { say "usage: not the caller's terminal"; exit 125; }
# tty_nr (stat field 7) of a process whose controlling terminal it is, from
# the device's own major and minor (new_encode_dev).
major=$((0x$2))
minor=$((0x$3))
tty_nr=$(((minor & 255) | (major << 8) | ((minor & ~255) << 12)))
# The caller's limits pass through sudo: a small stack would make the list of
# fd directories too long for find's argv, a small fd limit would make find
# skip directories. Root may raise them; any failure below is an error.
ulimit -s unlimited 2>/dev/null || ulimit -s 65536 2>/dev/null
ulimit -n 4096 2>/dev/null
# Only the caller's processes are reported: only their tables are walked.
. /usr/local/libexec/pi-sudo-prompt/proc-tables.sh # fd_tables
fd_tables "$caller"
# One walk over those tables (every task's: a thread can have its own). Each
# descriptor is matched on the file itself (device and inode, -samefile
# through the link), not on the link's text: a descriptor opened through a
# bind mount of the pts, or in another mount namespace, names another path.
# "p PATH" for /dev/pts/N, "t PATH" for /dev/tty. find: 0, or 1 when a
# process vanished during the walk (benign); anything else (it could not
# run, or the list was too long) fails closed.
found=""
if [ -n "$dirs" ]; then
  # shellcheck disable=SC2086 # the globs expand here, to the tasks' fd dirs
  found=$(find -L $dirs -maxdepth 1 \( -samefile "/dev/pts/$n" -printf 'p%p\n' \) \
    -o \( -samefile /dev/tty -printf 't%p\n' \) 2>/dev/null)
  rc=$?
  [ "$rc" -le 1 ] || { say "error: find exited $rc"; exit 1; }
fi

holders=""
for link in $found; do
  pid=${link#?/proc/}
  pid=${pid%%/*}
  case "$link" in
    t*)
      # /dev/tty is the controlling terminal of whoever opened it; a process
      # that has since left its session (setsid: no controlling terminal
      # now) cannot be told apart, and counts as a holder.
      read -r stat 2>/dev/null <"/proc/$pid/stat" || continue
      set -- ${stat##*) }
      case "${5-}" in "$tty_nr" | 0) ;; *) continue ;; esac
      ;;
  esac
  case " $holders " in *" $pid "*) ;; *) holders="$holders $pid" ;; esac
done
say "holders${holders}"
exit 0
