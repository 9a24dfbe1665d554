#!/bin/sh
# The tracing attack (issue 18, attack 1), run from a bash tool call of real
# pi: start /usr/bin/sudo -A -k id -u (SUDO_ASKPASS is the session's
# launcher), wait until sudo's child runs the deno helper and the test has
# seen the modal (<work>/modal-seen), attach a tracer to it, and report
# what happened. Nothing here prints what the tracer captured: the test reads
# <work>/trace.log itself.
#
# usage: trace_helper.sh <work dir> <strace|seize>
set -u
work=$1
tracer=$2
/usr/bin/sudo -A -k id -u >"$work/sudo.out" 2>"$work/sudo.err" &
sudo_pid=$!
helper=""
i=0
while [ $i -lt 300 ]; do
  for c in $(ps -o pid= --ppid "$sudo_pid" 2>/dev/null); do
    case "$(readlink "/proc/$c/exe" 2>/dev/null)" in */deno) helper=$c ;; esac
  done
  [ -n "$helper" ] && break
  i=$((i + 1))
  sleep 0.05
done
if [ -z "$helper" ]; then
  echo "trace: no helper appeared"
  exit 1
fi
# The modal is open: the test says so once it has seen it (no fixed sleep).
i=0
while [ ! -e "$work/modal-seen" ] && [ $i -lt 1200 ]; do
  i=$((i + 1))
  sleep 0.05
done
case "$tracer" in
  strace) strace -f -p "$helper" -e trace=write -s 512 -o "$work/trace.log" 2>"$work/tracer.err" & ;;
  seize) python3 "$(dirname "$0")/seize_tracer.py" "$helper" "$work/trace.log" 150 2>"$work/tracer.err" & ;;
esac
tracer_pid=$!
# Until the tracer has stopped the helper at least once, it is not attached.
i=0
while [ $i -lt 200 ]; do
  [ "$(sed -n 's/^TracerPid:\t//p' "/proc/$helper/status" 2>/dev/null)" != 0 ] && break
  i=$((i + 1))
  sleep 0.05
done
echo "trace: attached $tracer to the helper (tracer $(sed -n 's/^TracerPid:\t//p' "/proc/$helper/status" 2>/dev/null))"
touch "$work/attached"
wait "$sudo_pid"
echo "sudo exit: $?"
echo "sudo out: $(cat "$work/sudo.out")"
sed 's/^/sudo err: /' "$work/sudo.err"
wait "$tracer_pid" 2>/dev/null
echo "trace: done"
