#!/usr/bin/env python3
"""A second tracer for the tracing attack (docs/security-tests.md, row T2).

strace is one tool; this is the mechanism itself, in the fewest lines: it
attaches to <pid> with PTRACE_SEIZE, interrupts it, then stops it at every
system call (PTRACE_SYSCALL with TRACESYSGOOD) and, at each entry to write(2),
copies the buffer out of the tracee's memory (it is the tracer, so
/proc/<pid>/mem opens) and appends it, as hex, to <log>. It ends when the
tracee exits or after <seconds>.

usage: seize_tracer.py <pid> <log> <seconds>     (x86_64 only)
"""
import ctypes
import os
import platform
import signal
import sys
import time

PTRACE_SYSCALL = 24
PTRACE_GETREGS = 12
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_O_TRACESYSGOOD = 1
SYS_WRITE = 1


class Regs(ctypes.Structure):
    # struct user_regs_struct (x86_64), in the kernel's order.
    _fields_ = [(name, ctypes.c_ulonglong) for name in (
        "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax "
        "rip cs eflags rsp ss fs_base gs_base ds es fs gs").split()]


def main() -> int:
    if platform.machine() != "x86_64":
        print("seize_tracer: x86_64 only", file=sys.stderr)
        return 2
    pid, log, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    libc.ptrace.restype = ctypes.c_long
    if libc.ptrace(PTRACE_SEIZE, pid, None, ctypes.c_void_p(PTRACE_O_TRACESYSGOOD)) != 0:
        print(f"seize_tracer: PTRACE_SEIZE failed: {os.strerror(ctypes.get_errno())}",
              file=sys.stderr)
        return 1
    libc.ptrace(PTRACE_INTERRUPT, pid, None, None)
    deadline = time.monotonic() + seconds
    in_call = False
    with open(log, "a") as out:
        out.write(f"attached {pid}\n")
        out.flush()
        while time.monotonic() < deadline:
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:
                break
            if os.WIFEXITED(status) or os.WIFSIGNALED(status):
                break
            sig = 0
            if os.WIFSTOPPED(status):
                stop = os.WSTOPSIG(status)
                if stop == (signal.SIGTRAP | 0x80):
                    regs = Regs()
                    libc.ptrace(PTRACE_GETREGS, pid, None, ctypes.byref(regs))
                    in_call = not in_call
                    if in_call and regs.orig_rax == SYS_WRITE and 0 < regs.rdx <= 4096:
                        try:
                            with open(f"/proc/{pid}/mem", "rb") as mem:
                                mem.seek(regs.rsi)
                                data = mem.read(regs.rdx)
                            out.write(f"write({regs.rdi}) {data.hex()}\n")
                            out.flush()
                        except OSError as e:
                            out.write(f"write({regs.rdi}) unreadable: {e}\n")
                elif stop not in (signal.SIGTRAP, signal.SIGSTOP) and (status >> 16) == 0:
                    sig = stop  # a real signal for the tracee: deliver it
            libc.ptrace(PTRACE_SYSCALL, pid, None, ctypes.c_void_p(sig))
    return 0


if __name__ == "__main__":
    sys.exit(main())
