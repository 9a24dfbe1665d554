#!/bin/sh
# deno task test:unit (npm run test:unit): everything in the suite that needs
# no root, as whoever runs it: the static checks (fmt, lint, check, publish
# --dry-run) and the unit tests under Deno and under Node 22. The real-sudo,
# broker and real-pi suites need the throwaway sudo user of tests/run.sh
# (sudo npm test).
#
# Runs in this checkout, which it only reads; logs and the Deno and npm caches
# go to a temporary directory, removed at the end. Ends with "N passed, N failed".
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
deno="$repo/node_modules/.bin/deno"
for tool in "$repo/node_modules/.bin/node" "$deno"; do
  [ -x "$tool" ] || { echo "tests/unit.sh: $tool missing: run 'npm ci' in $repo first" >&2; echo "0 passed, 1 failed"; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pi-sudo-prompt-unit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
logs="$tmp/logs"
mkdir "$logs"

. "$repo/tests/suite_lib.sh"
check_dir="$repo"
check_cache="$tmp/deno-cache"
# Its own Deno and npm caches: a user without a home (nobody) can run it too.
in_checkout() { (cd "$repo" && DENO_DIR="$check_cache" npm_config_cache="$tmp/npm-cache" "$@"); }
as_tester=in_checkout

static_checks
deno_unit
node_tests tests/unit/*/*_test.ts
summary_line
exit "$rc"
