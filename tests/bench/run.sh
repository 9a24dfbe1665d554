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
# One run at a time, shared with tests/run.sh: row r installs the real broker.
if [ -z "${PI_TEST_LOCKED:-}" ] && command -v flock >/dev/null 2>&1; then
  PI_TEST_LOCKED=1 exec flock /tmp/pi-sudo-prompt-tests.lock sh "$0" "$@"
fi
. "$repo/tests/test_user.sh"
cleanup() {
  status=$?
  broker_state_restore
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

# Row r (hardened mode's root checks) first, with the broker installed for
# this user; then the machine as it was (any broker of its own back), and
# every other row measured the way a user-level install runs.
if [ "$quick" = no ]; then
  broker_state_save
  if ! sh "$work/repo/broker/install.sh" --user "$user" >"$logs/install.log" 2>&1; then
    echo "tests/bench/run.sh: installing the broker for row r failed:" >&2
    tail -n 5 "$logs/install.log" >&2
    exit 1
  fi
  if ! as_user node_modules/.bin/node tests/bench/bench.ts --root-rows; then
    echo "tests/bench/run.sh: row r failed" >&2
    exit 1
  fi
  broker_state_restore
fi

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
