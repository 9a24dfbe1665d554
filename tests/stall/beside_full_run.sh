#!/bin/sh
# The stall tests on a loaded machine (issue 23): the real-sudo suites that
# watch pi's event loop with a heartbeat (and need no installed broker) run
# ROUNDS times in a row, as a throwaway user of their own, while a whole
# second run of the suite (tests/run.sh) works beside them on the same
# cores. A stall past a suite's limit fails it, as in CI.
#
#   sh tests/stall/beside_full_run.sh [ROUNDS]     # as root; default 3 rounds
#
# Ends with "N passed, N failed" for the rounds; the full run's own summary
# line is printed before it. The two broker suites are left out: the full
# run installs and removes the broker during its root phase.
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
deno="$repo/node_modules/.bin/deno"
rounds=${1:-3}
case "$rounds" in '' | *[!0-9]*) echo "usage: $0 [ROUNDS]" >&2; exit 2 ;; esac
if [ "$(id -u)" != 0 ]; then
  echo "tests/stall/beside_full_run.sh: must run as root (it creates a throwaway sudo user)" >&2
  exit 1
fi
[ -x "$deno" ] || { echo "tests/stall/beside_full_run.sh: run 'npm ci' first" >&2; exit 1; }

. "$repo/tests/test_user.sh"
. "$repo/tests/suite_lib.sh"
full_log=$(mktemp /tmp/pi-sudo-prompt-beside.XXXXXX)
full_pid=
cleanup() {
  status=$?
  [ -z "$full_pid" ] || kill "$full_pid" 2>/dev/null || true
  test_user_cleanup
  rm -f "$full_log"
  exit "$status"
}
trap cleanup EXIT INT TERM
test_user_setup "$repo" || exit 1
as_tester=as_user

# The second run: the whole suite, as CI runs it (it takes the suite's lock).
# Its logs are kept, so that a failure under this load can be read afterwards.
full_logs=${PI_TEST_KEEP_LOGS:-$(mktemp -d /tmp/pi-sudo-prompt-beside-logs.XXXXXX)}
PI_TEST_KEEP_LOGS=$full_logs sh "$repo/tests/run.sh" >"$full_log" 2>&1 &
full_pid=$!
# Past its set-up, into the phases that load both cores.
sleep 45

suites="tests/integration/channel/real_sudo_test.ts tests/integration/pairing/pipe_swap_test.ts
tests/integration/kernel/attacks_test.ts tests/integration/audit/audit_log_test.ts
tests/integration/channel/deno_warmup_test.ts"
# The cases that need an installed broker for this user are reported skipped.
PI_TEST_WITHOUT_BROKER=1
export PI_TEST_WITHOUT_BROKER
round=1
while [ "$round" -le "$rounds" ]; do
  state=ended
  kill -0 "$full_pid" 2>/dev/null && state=running
  echo "round $round of $rounds (the full run beside: $state); load $(cut -d' ' -f1-3 /proc/loadavg)"
  # shellcheck disable=SC2086 # the list is split into files on purpose
  deno_tests "stall-$round" $suites
  round=$((round + 1))
done

wait "$full_pid" || true
full_pid=
echo "the full run beside: $(tail -n 1 "$full_log")"
# Its failures, if any (a load the full run did not expect, or a defect).
grep -E '^(FAIL|not ok)|^\s*✖|=> |^error: ' "$full_log" | head -n 40 || true
if tail -n 1 "$full_log" | grep -q ', 0 failed$'; then
  [ -n "${PI_TEST_KEEP_LOGS:-}" ] || rm -rf "$full_logs"
else
  echo "the full run's logs: $full_logs"
fi
[ "$skipped" = 0 ] || echo "$skipped skipped (the cases that need this user's broker)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
