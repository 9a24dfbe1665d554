# pi-sudo-prompt: which descriptor tables root's checks walk (ADR 0005,
# ADR 0007). Sourced by pairing-check and terminal-check, never run; installed
# root-owned as /usr/local/libexec/pi-sudo-prompt/proc-tables.sh.
#
# fd_tables CALLER [leaders]: sets $dirs to the fd directories of every task
# of every process whose real uid is CALLER (a thread may have a table of its
# own: the agent can make one in any process it runs code in), and, with
# "leaders", the leader's table of every other process. A thread with a
# table of its own in another user's or root's process is that process's own
# doing, not the agent's; walking every thread of every process costs more
# than all the rest (init alone may hold thousands of descriptors across
# dozens of threads). Real uids come from every status file in one grep (-s:
# a process that exits meanwhile is skipped), non-dumpable processes
# included, whose /proc directories are root's.
fd_tables() {
  dirs=""
  pid=""
  # grep prints "/proc/PID/status:Uid:", then the four ids, split here on
  # the tabs between them; the word after a path is that process's real uid.
  for word in $(grep -s '^Uid:' /proc/[0-9]*/status); do
    case "$word" in
      /proc/*) pid=${word#/proc/}; pid=${pid%%/*}; continue ;;
    esac
    [ -n "$pid" ] || continue
    if [ "$word" = "$1" ]; then
      dirs="$dirs /proc/$pid/task/[0-9]*/fd"
    elif [ "${2-}" = leaders ]; then
      dirs="$dirs /proc/$pid/fd"
    fi
    pid=""
  done
}
