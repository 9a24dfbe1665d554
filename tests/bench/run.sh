#!/bin/sh
# `deno task bench`: runs tests/bench/bench.ts against real sudo and writes
# the table to docs/benchmarks.md. `deno task bench --quick`: a few iterations,
# ratios checked against regression limits, no table written (npm test runs it).
#
# sudo only asks a non-root user for a password, so, like tests/run.sh, this
# runs as root: it creates a throwaway user with a random password and a
# sudoers rule (tests/test_user.sh), runs the bench AS THAT USER, copies the
# table out of the user's log directory, and removes the user afterwards.
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
node="$repo/node_modules/.bin/node"
deno="$repo/node_modules/.bin/deno"

if [ "$(id -u)" != 0 ]; then
  echo "tests/bench/run.sh: must run as root: it creates a throwaway sudo user so that real sudo asks for a password." >&2
  exit 1
fi
for tool in "$node" "$deno"; do
  [ -x "$tool" ] || { echo "tests/bench/run.sh: $tool missing: run 'npm ci' first" >&2; exit 1; }
done
. "$repo/tests/test_user.sh"
cleanup() {
  status=$?
  test_user_cleanup
  exit "$status"
}
trap cleanup EXIT INT TERM
test_user_setup "$repo" || exit 1

quick=no
for arg in "$@"; do
  case "$arg" in
    --quick) quick=yes ;;
    *) echo "tests/bench/run.sh: unknown argument '$arg' (only --quick)" >&2; exit 2 ;;
  esac
done

set +e
as_user node_modules/.bin/node --expose-gc tests/bench/bench.ts "$@"
rc=$?
set -e
if [ "$rc" != 0 ]; then
  echo "tests/bench/run.sh: the bench failed (exit $rc)" >&2
  exit "$rc"
fi
[ "$quick" = no ] || exit 0
if [ ! -s "$logs/benchmarks.md" ]; then
  echo "tests/bench/run.sh: the bench wrote no table" >&2
  exit 1
fi
# The canary must not have reached the table.
if grep -qF -f "$work/secret/password" "$logs/benchmarks.md"; then
  echo "tests/bench/run.sh: the test password appears in the table; not copied" >&2
  exit 1
fi
mkdir -p "$repo/docs"
cp "$logs/benchmarks.md" "$repo/docs/benchmarks.md"
# Keep `deno fmt --check` (part of npm test) green: align the tables.
(cd "$repo" && DENO_DIR="$work/deno-root-cache" "$deno" fmt -q docs/benchmarks.md)
echo "wrote $repo/docs/benchmarks.md"
