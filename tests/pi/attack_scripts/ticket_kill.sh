#!/bin/sh
# Issue 34 (ADR 0009 §4), as the agent's bash tool call: a shell left behind
# gets a ticket (its `sudo true` is approved in the modal), then the call
# starves pi before it ends: `prlimit --nproc` leaves pi no process to start,
# so every `sudo -K` of pi fails (EAGAIN), for certain, however loaded the
# machine. The leftover runs `sudo -n id -u` (into WORK/late) once pi has
# recorded in its audit log that the credentials were not removed: after all
# of pi's attempts at the call's end.
#   ticket_kill.sh WORK
D=$1
PI=$PPID # pi runs the tool's command directly
audit="${XDG_STATE_HOME:-$HOME/.local/state}/pi-sudo-prompt/audit.jsonl"
setsid sh -c 'echo $$ > "$1/leftover.pid"; sudo true && : > "$1/approved"; i=0
  while ! grep -q "\"not_removed\"" "$2" 2>/dev/null && [ $i -lt 400 ]; do
    sleep 0.1; i=$((i + 1))
  done
  sudo -n id -u > "$1/late" 2>&1' leftover "$D" "$audit" </dev/null >/dev/null 2>&1 &
i=0; while [ ! -e "$D/approved" ] && [ "$i" -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
# The soft limit only (the user's own to set): pi's forks and clones now fail.
prlimit --pid "$PI" --nproc=1:
echo approved
