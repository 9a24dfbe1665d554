#!/bin/sh
# The whole test suite: static checks, unit tests under Deno and Node, and the
# real-sudo / real-pi suites.
#
# sudo only asks a non-root user for a password, so this script (run as root,
# as CI does) creates a throwaway user with a random password and a sudoers
# rule, gives it a read-only copy of the checkout, runs every suite AS THAT
# USER, and removes the user, its sudoers rule and the copy afterwards. The
# password reaches the tests through a 0600 file, never argv or environment.
#
# It ends with one line: "N passed, N failed". Nothing that needs sudo is
# skipped: without root it refuses to run instead of pretending, and names
# the part that needs no root, tests/unit.sh (deno task test:unit).
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
node="$repo/node_modules/.bin/node"
deno="$repo/node_modules/.bin/deno"

if [ "$(id -u)" != 0 ]; then
  echo "tests/run.sh: the whole suite needs root: it creates a throwaway user with a sudo password for the real-sudo tests. Run it as root: sudo npm test (CI does)." >&2
  echo "tests/run.sh: without root, npm run test:unit (or deno task test:unit) runs everything that does not need it: the static checks and the unit tests under Deno and Node." >&2
  echo "0 passed, 1 failed"
  exit 1
fi
for tool in "$node" "$deno"; do
  [ -x "$tool" ] || { echo "tests/run.sh: $tool missing: run 'npm ci' first" >&2; echo "0 passed, 1 failed"; exit 1; }
done
# One run at a time on a machine: the root phase installs the real broker and
# moves any existing broker state aside, which a second run would disturb.
if [ -z "${PI_TEST_LOCKED:-}" ] && command -v flock >/dev/null 2>&1; then
  PI_TEST_LOCKED=1 exec flock /tmp/pi-sudo-prompt-tests.lock sh "$0" "$@"
fi
# PI_TEST_ONLY="tests/pi/a_test.ts …" (development): run only these Node
# test files after the root phase; no static checks, no Deno unit tests.
only=${PI_TEST_ONLY:-}
. "$repo/tests/test_user.sh"
. "$repo/tests/suite_lib.sh"
cleanup() {
  status=$?
  # PI_TEST_KEEP_LOGS=DIR (development): keep the suites' logs there.
  [ -z "${PI_TEST_KEEP_LOGS:-}" ] || cp -r "$logs" "$PI_TEST_KEEP_LOGS" 2>/dev/null || true
  for fs in full one-page; do umount "$work/fs-$fs" 2>/dev/null || true; done
  broker_state_restore
  test_user_cleanup
  exit "$status"
}
trap cleanup EXIT INT TERM
if ! test_user_setup "$repo"; then
  echo "0 passed, 1 failed"
  exit 1
fi

# Two tiny filesystems for the session's full-disk tests
# (tests/integration/channel/session_lifecycle_test.ts): one full, one with a single
# free page. Root-owned filler; world-writable like /tmp.
for fs in full one-page; do
  mkdir "$work/fs-$fs"
  if mount -t tmpfs -o size=16k,mode=1777 tmpfs "$work/fs-$fs" 2>/dev/null; then
    pages=4; [ "$fs" = full ] || pages=3
    dd if=/dev/zero of="$work/fs-$fs/filler" bs=4k count="$pages" 2>/dev/null || true
    if [ "$fs" = full ]; then export PI_SUDO_PROMPT_TEST_FULL_FS="$work/fs-$fs"
    else export PI_SUDO_PROMPT_TEST_ONE_PAGE_FS="$work/fs-$fs"; fi
  else
    echo "note: cannot mount a tmpfs here: the full-disk tests are skipped" >&2
  fi
done

# For tests/suite_lib.sh: static checks as root on the copy, tests as the user.
check_dir="$work/repo"
check_cache="$work/deno-root-cache"
as_tester=as_user

[ -n "$only" ] || static_checks

# --- root phase: install the real broker for the user suites ---------------
broker_state_save

# --- the bench's quick mode: a regression that doubles a figure fails -------
# Ratios from the same run only (tests/bench/bench.ts --quick), never absolute
# times; it retries a row that failed for load before it gives up. It runs
# here, with any broker moved aside and before the root phase installs one,
# so that it measures what `deno task bench` measures: no root checks.
bench_quick() {
set +e
as_user node_modules/.bin/node --expose-gc tests/bench/bench.ts --quick >"$logs/bench-quick.log" 2>&1
bench_rc=$?
set -e
if [ "$bench_rc" = 0 ]; then
  echo "ok   deno task bench --quick"; count 1 0
else
  echo "FAIL deno task bench --quick"; grep -v ExperimentalWarning "$logs/bench-quick.log" | tail -n 25; count 0 1
fi
}
[ -n "$only" ] || bench_quick

# --- the newcomer's walk: the README on a clean copy, as a fresh user --------
# Here, like the bench, while any broker is moved aside and before the root
# phase installs one: a newcomer's machine has none.
newcomer() {
  set +e
  sh "$repo/tests/newcomer/run.sh" >"$logs/newcomer.log" 2>&1
  set -e
  grep -E '^(ok|FAIL) ' "$logs/newcomer.log" | sed 's/^ok   /ok   newcomer: /; s/^FAIL /FAIL newcomer: /'
  grep -E '^     ' "$logs/newcomer.log" | head -n 40 || true
  summary=$(tail -n 1 "$logs/newcomer.log")
  p=$(echo "$summary" | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1/p')
  f=$(echo "$summary" | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\2/p')
  if [ -n "$p" ] && [ -n "$f" ]; then count "$p" "$f"; else tail -n 20 "$logs/newcomer.log"; count 0 1; fi
}
[ -n "$only" ] || newcomer

# --- daily use, before the broker is installed (issue 20): the user-level
# checks name what they cannot see and the sudo works; the same file runs
# again with the node suites below, where root decides.
# The same for tmux's lock (ADR 0009): a hidden process is named there, and
# refused once root checks.
case " $only " in
  "  " | *" tests/pi/daily_use_test.ts "*) node_tests tests/pi/daily_use_test.ts ;;
esac
case " $only " in
  "  " | *" tests/pi/tmux_lock_test.ts "*) node_tests tests/pi/tmux_lock_test.ts ;;
esac

set +e
(cd "$work/repo" && PI_SUDO_PROMPT_TEST_USER="$user" node_modules/.bin/node --test \
  --test-concurrency=1 --test-timeout=180000 --test-reporter=spec tests/root/*_test.ts) \
  >"$logs/root.log" 2>&1
root_rc=$?
set -e
count_skipped "$logs/root.log"
sed -n '/^ℹ tests/,/^ℹ fail/p' "$logs/root.log"
grep -E '^\s*✖' "$logs/root.log" | head -n 20 || true
p=$(sed -nE 's/^ℹ pass ([0-9]+)$/\1/p' "$logs/root.log" | tail -n 1)
f=$(sed -nE 's/^ℹ fail ([0-9]+)$/\1/p' "$logs/root.log" | tail -n 1)
if [ -n "$p" ] && [ -n "$f" ]; then
  count "$p" "$f"
  [ "$root_rc" = 0 ] || [ "$f" != 0 ] || count 0 1
else
  tail -n 40 "$logs/root.log"
  count 0 1
fi

[ -n "$only" ] || deno_unit

# --- the real-sudo integration suites under deno test -----------------------
# The session server runs in the test process, under Deno: the same modules
# pi loads in Node (koffi loads in Deno as a Node-API addon; -A includes
# --allow-ffi). The real-pi suites below run the server in pi's Node.
if [ -n "$only" ]; then
  integ="" rest=""
  for f in $only; do
    case "$f" in tests/integration/*) integ="$integ $f" ;; *) rest="$rest $f" ;; esac
  done
  # shellcheck disable=SC2086 # lists of paths
  [ -z "$integ" ] || deno_tests integration $integ
  # shellcheck disable=SC2086
  [ -z "$rest" ] || node_tests $rest
else
  deno_tests integration tests/integration/
  # --- unit + real pi suites under Node 22 ----------------------------------
  node_tests tests/unit/*/*_test.ts tests/pi/*_test.ts
fi



# --- the canary must not have leaked into any log ---------------------------
if grep -rqF -f "$work/secret/password" "$logs" 2>/dev/null; then
  echo "FAIL the test password appears in a test log"; count 0 1
else
  echo "ok   no test log contains the password"; count 1 0
fi

summary_line
exit "$rc"
