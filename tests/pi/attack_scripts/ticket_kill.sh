#!/bin/sh
# Issue 34 (ADR 0009 §4), as the agent's bash tool call: a shell left behind
# gets a ticket (its `sudo true` is approved in the modal), a detached
# watcher kills every `sudo -K` it sees, and the leftover runs `sudo -n id -u`
# 4 s after the call ended (into WORK/late).
#   ticket_kill.sh WORK
D=$1
setsid python3 -c '
import os, signal, time
end = time.monotonic() + 40
seen = set()
while time.monotonic() < end:
    for name in os.listdir("/proc"):
        if not name.isdigit() or name in seen:
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 2 and argv[0].endswith(b"sudo") and argv[1] == b"-K":
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
            seen.add(name)
' </dev/null >/dev/null 2>&1 &
setsid sh -c 'echo $$ > "$1/leftover.pid"; sudo true && : > "$1/approved"; sleep 4;
  sudo -n id -u > "$1/late" 2>&1' leftover "$D" </dev/null >/dev/null 2>&1 &
while [ ! -e "$D/approved" ]; do sleep 0.1; done
echo approved
