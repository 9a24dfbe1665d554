# Used by tests/integration/kernel/refusal_reasons_test.ts: connects to the session
# socket ($PI_ASKPASS_SOCKET) as the calling user, so SO_PEERCRED records this
# process with the user's ids, hands the connection to a forked child, and
# then execs argv[1:] (a setuid program, e.g. sudo), so that the process
# SO_PEERCRED names now runs with other ids. The child sends the frame the
# test writes to $ATTACK_DIR/frame once it is ready, and saves whatever comes
# back in $ATTACK_DIR/reply. The pids go to $ATTACK_DIR/pid (the connector,
# which becomes argv[1]) and $ATTACK_DIR/child. Every wait has a deadline.
import os
import socket
import sys
import time

work = os.environ["ATTACK_DIR"]


def publish(name, text):
    with open(os.path.join(work, name + ".tmp"), "w") as f:
        f.write(text)
    os.rename(os.path.join(work, name + ".tmp"), os.path.join(work, name))


s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # O_CLOEXEC: not kept across exec
s.connect(os.environ["PI_ASKPASS_SOCKET"])

if os.fork() == 0:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    publish("child", str(os.getpid()))
    deadline = time.time() + 20
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

s.close()
publish("pid", str(os.getpid()))
os.execv(sys.argv[1], sys.argv[1:])
