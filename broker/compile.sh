#!/bin/sh
# deno task compile: builds pi-secret-run as one binary (dist/pi-secret-run)
# with `deno compile`, which downloads Deno's runtime (denort) the first time.
# Where that download is impossible (an offline machine), it says so and
# exits 0: every pi session writes a launcher, <session>/bin/pi-secret-run,
# that runs the same client with the same pinned flags, and that is what the
# bash tool finds on PATH.
set -eu
cd "$(dirname "$0")/.."
deno=node_modules/deno/deno
[ -x "$deno" ] || { echo "compile: run npm ci first" >&2; exit 1; }
mkdir -p dist
log=$(mktemp)
if "$deno" compile --no-check --no-config --no-lock --no-prompt \
  --allow-read --allow-env=PATH,PI_ASKPASS_SOCKET,PI_ASKPASS_SECRET --allow-run=/usr/bin/sudo \
  -o dist/pi-secret-run broker/pi_secret_run.ts >"$log" 2>&1; then
  rm -f "$log"
  echo "compile: built dist/pi-secret-run"
  exit 0
fi
if grep -qiE 'denort|error sending request|dns error|download' "$log"; then
  echo "compile: deno compile could not download its runtime (denort) here: $(grep -m1 -iE 'error' "$log" | cut -c1-160)"
  echo "compile: nothing to do: each pi session writes the launcher <session dir>/bin/pi-secret-run (same client, same pinned flags) and puts it first on the bash tool's PATH."
  rm -f "$log"
  exit 0
fi
cat "$log" >&2
rm -f "$log"
exit 1
