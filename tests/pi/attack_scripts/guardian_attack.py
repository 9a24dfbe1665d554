#!/usr/bin/env python3
"""Issue 34 (ADR 0009 §3), from a bash tool call of real pi: kill pi's
terminal guardian four times, each time as soon as its successor runs (pi
respawns at most three a minute), while trying to open pi's terminal the
whole time.

  guardian_attack.py PI_PID WORK

Writes WORK/result: `opened: N` (how many opens of pi's terminal worked)
and `kills: N`.
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from terminal_attacks import guardian_of, tty_of  # noqa: E402


def main():
    pi, work = int(sys.argv[1]), sys.argv[2]
    tty = tty_of(pi)
    opened = kills = 0
    end = time.monotonic() + 20
    last = None
    while time.monotonic() < end and kills < 4:
        try:
            os.close(os.open(tty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK))
            opened += 1
        except OSError:
            pass
        g = guardian_of(pi)
        if g is not None and g != last:
            os.kill(g, signal.SIGKILL)
            last = g
            kills += 1
    # Keep trying for a while after the last kill: no respawn comes now.
    for _ in range(200):
        try:
            os.close(os.open(tty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK))
            opened += 1
        except OSError:
            pass
        time.sleep(0.005)
    with open(os.path.join(work, "result"), "w") as f:
        f.write(f"opened: {opened}\nkills: {kills}\n")


main()
