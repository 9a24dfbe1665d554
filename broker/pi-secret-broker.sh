#!/bin/sh
# pi-secret-broker: root-owned launcher for the pi-sudo-prompt broker.
# Installed as /usr/local/libexec/pi-sudo-prompt/pi-secret-broker, run by
# `sudo -n` from pi-secret-run. It clears the environment and runs the
# root-owned broker on the root-owned deno with pinned flags; the only
# variable part is the session socket, checked here before it becomes part
# of a flag. Keep in step with broker/broker_permissions.ts.
#
# sudo may keep the caller's PATH (no secure_path: Arch's default, custom
# sudoers, exempt_group), so PATH is set before any program runs, and
# programs are named by absolute path.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
#
# --verify-pairing HELPER_PID SUDO_PID PIPE_INODE (ADR 0005): root confirms
# that a sudo askpass helper's stdout pipe is read by its parent sudo alone.
# Decimal numbers only; runs the root-owned pairing-check with a clean
# environment. Exit codes: 0 paired, 1 not paired, 125 usage.
if [ "${1-}" = "--verify-pairing" ]; then
  if [ "$#" -ne 4 ]; then
    echo "pi-secret-broker: usage: --verify-pairing HELPER_PID SUDO_PID PIPE_INODE" >&2
    exit 125
  fi
  for n in "$2" "$3" "$4"; do
    case "$n" in
      "" | *[!0-9]*) echo "pi-secret-broker: --verify-pairing takes decimal numbers" >&2; exit 125 ;;
    esac
  done
  exec /usr/bin/env -i SUDO_UID="${SUDO_UID-}" \
    /bin/sh /usr/local/libexec/pi-sudo-prompt/pairing-check "$2" "$3" "$4"
fi
# --terminal-holders PTS_NUMBER (ADR 0007): root lists the caller's processes
# that have the caller's /dev/pts/N open, non-dumpable ones included. Decimal
# only; runs the root-owned terminal-check with a clean environment.
if [ "${1-}" = "--terminal-holders" ]; then
  if [ "$#" -ne 2 ]; then
    echo "pi-secret-broker: usage: --terminal-holders PTS_NUMBER" >&2
    exit 125
  fi
  case "$2" in
    "" | *[!0-9]*) echo "pi-secret-broker: --terminal-holders takes a decimal number" >&2; exit 125 ;;
  esac
  exec /usr/bin/env -i SUDO_UID="${SUDO_UID-}" \
    /bin/sh /usr/local/libexec/pi-sudo-prompt/terminal-check "$2"
fi
# --serve-checks (ADR 0005's check-server amendment): the two checks above,
# asked line by line over stdin and stdout by one pi process, for as long as
# it keeps stdin open: pi pays for sudo and this launcher once, not once per
# question. No arguments; runs the root-owned check-server with a clean
# environment.
if [ "${1-}" = "--serve-checks" ]; then
  if [ "$#" -ne 1 ]; then
    echo "pi-secret-broker: usage: --serve-checks" >&2
    exit 125
  fi
  exec /usr/bin/env -i SUDO_UID="${SUDO_UID-}" \
    /bin/sh /usr/local/libexec/pi-sudo-prompt/check-server
fi
set -eu
if [ "$#" -lt 2 ] || [ "$1" != "--socket" ]; then
  echo "pi-secret-broker: usage: pi-secret-broker --socket PATH ... (run pi-secret-run instead)" >&2
  exit 125
fi
sock=$2
# A pi session's socket is always <session dir>/askpass.sock: anything else
# (a directory such as /) would widen the broker's write grant below.
case "$sock" in
  /?*/askpass.sock) ;;
  *) echo "pi-secret-broker: the socket path must be a pi session's /…/askpass.sock" >&2; exit 125 ;;
esac
case "$sock" in
  *[!A-Za-z0-9._/@+-]* | *//* | *..*)
    echo "pi-secret-broker: unsafe characters in the socket path" >&2
    exit 125
    ;;
esac
# The one library the broker may load (SO_PEERCRED, getppid, /proc reads).
case "$(uname -m)" in
  aarch64) libc=/lib/aarch64-linux-gnu/libc.so.6 ;;
  *) libc=/lib/x86_64-linux-gnu/libc.so.6 ;;
esac
. /usr/local/libexec/pi-sudo-prompt/root-deno.sh # $root, exec_root_deno
exec_root_deno --sudo-ids \
  "--allow-write=/run/pi-sudo-prompt,$sock" \
  "--allow-net=unix:$sock" \
  --allow-run=/bin/sh,/usr/bin/setpriv \
  --allow-env=SUDO_UID,SUDO_GID \
  --allow-sys=uid \
  "--allow-ffi=$libc" \
  "$root/src/broker/broker.ts" \
  "$@"
