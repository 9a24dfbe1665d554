#!/bin/sh
# Test consumer for pi-secret-run, installed root-owned by tests/run.sh as
# /usr/local/libexec/pi-sudo-prompt-test/consumer (so it can be allowlisted).
#   consumer report NAME        read one line from stdin, print its length and sha256
#   consumer hold DIR           same, then write DIR/pid and wait (≤ 20 s) for DIR/release
# It never prints what it read (the tests compare hashes), and writes
# DIR/started when it starts, so a test can prove it never ran.
set -eu
mode=${1-}
arg=${2-}
[ -n "$arg" ] || { echo "usage: consumer report NAME | hold DIR" >&2; exit 2; }
if [ "$mode" = hold ]; then : >"$arg/started"; fi
IFS= read -r line || true
len=$(printf '%s' "$line" | wc -c)
sum=$(printf '%s' "$line" | sha256sum | cut -d' ' -f1)
line=""
echo "consumer: got $len bytes sha256=$sum"
if [ "$mode" = hold ]; then
  echo $$ >"$arg/pid.tmp"
  mv "$arg/pid.tmp" "$arg/pid"
  i=0
  while [ ! -e "$arg/release" ] && [ "$i" -lt 200 ]; do
    sleep 0.1
    i=$((i + 1))
  done
fi
exit 0
