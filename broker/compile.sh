#!/bin/sh
# deno task compile: builds pi-secret-run as one binary, dist/pi-secret-run
# (or DIR/pi-secret-run with `sh broker/compile.sh DIR`), with `deno compile`.
# deno compile needs Deno's runtime, denort: it downloads it once into its
# cache, or takes the file named by DENORT_BIN (denort of the pinned deno
# version) where the download is impossible. The binary must answer a smoke
# test (no arguments: the usage refusal, exit 125) before it replaces dist/.
#
# When dist/pi-secret-run is there (a regular executable file, not older than
# the client's sources), each pi session's bin/pi-secret-run runs it
# (extension/channel/pi_secret_run_binary.ts); otherwise the session runs the same
# client with `deno run` and the same pinned flags.
#
# Exit status: 0 built; 1 cannot start (npm ci not run, bad usage); 2 skipped:
# nothing was built, stderr says "compile: skipped: <cause>", and an output
# directory this run created is removed again. docs/compile.md has the details.
set -eu
[ $# -le 1 ] || { echo "usage: sh broker/compile.sh [output dir]" >&2; exit 1; }
out=${1:-}
case $out in "" | /*) ;; *) out="$(pwd)/$out" ;; esac
cd "$(dirname "$0")/.."
out=${out:-dist}
deno=node_modules/deno/deno
[ -x "$deno" ] || { echo "compile: $(pwd)/$deno missing: run npm ci in $(pwd) first" >&2; exit 1; }
SKIPPED=2
REFUSAL_EXIT=125 # BROKER_REFUSAL_EXIT: what pi-secret-run exits with on a usage error
created=no
[ -d "$out" ] || { mkdir -p "$out" && created=yes; }
log=$(mktemp)
new="$out/pi-secret-run.new"
trap 'rm -f "$log" "$new"' EXIT

# The one real cause in deno's error output: a failed download names the
# runtime's URL and the innermost error; otherwise the "Caused by:" chain
# without its generic and repeated entries, else the "error:" line.
esc=$(printf '\033')
cause_of() {
  sed "s/$esc\[[0-9;]*[A-Za-z]//g" "$1" | awk '
    /^error: / && err == "" { err = substr($0, 8) }
    /^Download / && url == "" { url = $2 }
    /^Caused by:/ { chain = 1; next }
    chain && /^ *[0-9]+: / { sub(/^ *[0-9]+: /, ""); entry[n++] = $0; next }
    chain && n > 0 { chain = 0 }
    END {
      if (url != "" && n > 0) {
        print "could not download Deno\047s runtime (denort) from " url ": " entry[n - 1]
        exit
      }
      text = ""
      for (i = 0; i < n; i++) {
        if (entry[i] == "Setting up base binary." || index(text, entry[i]) > 0) continue
        text = (text == "" ? entry[i] : text ": " entry[i])
      }
      if (text == "") text = err
      if (text == "") text = "deno compile failed without an error message"
      print text
    }'
}

skip() {
  echo "compile: skipped: $1" >&2
  version=$("$deno" --version | sed -n '1s/^deno \([^ ]*\).*/\1/p')
  echo "compile: pi-secret-run still works without it: each pi session runs the same client with deno run and the same pinned flags. Offline, fetch denort $version elsewhere and run: DENORT_BIN=/path/to/denort deno task compile" >&2
  rm -f "$log" "$new"
  [ "$created" = no ] || rmdir "$out" 2>/dev/null || true
  exit "$SKIPPED"
}

if ! NO_COLOR=1 "$deno" compile --no-check --no-config --no-lock --no-prompt \
  --allow-read --allow-env=PATH,PI_ASKPASS_SOCKET --allow-run=/usr/bin/sudo \
  -o "$new" broker/pi_secret_run.ts >"$log" 2>&1; then
  skip "$(cause_of "$log")"
fi
# A runtime that is not denort (DENORT_BIN=/bin/true, the deno CLI) still
# "builds": run the binary once and expect the client's usage refusal.
rc=0
env -i "$new" </dev/null >/dev/null 2>"$log" || rc=$?
if [ "$rc" != "$REFUSAL_EXIT" ] || ! grep -q '^pi-secret-run: usage:' "$log"; then
  said=$(sed "s/$esc\[[0-9;]*[A-Za-z]//g" "$log" | head -n 1 | cut -c1-120)
  skip "the built binary is not a working pi-secret-run (exit $rc, ${said:-no message}; expected $REFUSAL_EXIT and its usage line): DENORT_BIN must name Deno's runtime, denort, not deno"
fi
mv -f "$new" "$out/pi-secret-run"
echo "compile: built $out/pi-secret-run"
