# Attack used by tests/integration/kernel/attacks_test.ts: an askpass of the agent's
# choosing, run by real sudo, that connects to the session socket FIRST, keeps
# the connection in a forked child, and then execs the real launcher, so that
# SO_PEERCRED of its connection names a process that now looks exactly like
# the real helper. The child then sends a request the test prepared and saves
# whatever comes back. ATTACK_CLOEXEC=1 keeps the socket out of the exec'd
# helper; otherwise the helper inherits it.
import os
import socket
import sys
import time

work = os.environ["ATTACK_DIR"]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.environ["PI_ASKPASS_SOCKET"])
os.set_inheritable(s.fileno(), os.environ.get("ATTACK_CLOEXEC") != "1")

if os.fork() == 0:
    # The child needs no stdout. Keeping a copy of sudo's pipe would get the
    # real request refused too (stdout_pipe_held_elsewhere, ADR 0005); this
    # attack is about the socket, so it lets the pipe go.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    deadline = time.time() + 15
    while not os.path.exists(os.path.join(work, "frame")):
        if time.time() > deadline:
            os._exit(1)
        time.sleep(0.02)
    with open(os.path.join(work, "frame"), "rb") as f:
        s.sendall(f.read())
    s.settimeout(15)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    with open(os.path.join(work, "reply.tmp"), "wb") as f:
        f.write(data)
    os.rename(os.path.join(work, "reply.tmp"), os.path.join(work, "reply"))
    os._exit(0)

with open(os.path.join(work, "pid.tmp"), "w") as f:
    f.write(str(os.getpid()))
os.rename(os.path.join(work, "pid.tmp"), os.path.join(work, "pid"))
launcher = os.environ["ATTACK_LAUNCHER"]
os.execv(launcher, [launcher, sys.argv[1]])
