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
# skipped: without root it refuses to run instead of pretending.
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
node="$repo/node_modules/.bin/node"
deno="$repo/node_modules/.bin/deno"

if [ "$(id -u)" != 0 ]; then
  echo "tests/run.sh: must run as root: it creates a throwaway sudo user for the real-sudo tests (CI runs it as root)." >&2
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
cleanup() {
  status=$?
  broker_state_restore
  test_user_cleanup
  exit "$status"
}
trap cleanup EXIT INT TERM
if ! test_user_setup "$repo"; then
  echo "0 passed, 1 failed"
  exit 1
fi

passed=0
failed=0
skipped=0
count() { passed=$((passed + $1)); failed=$((failed + $2)); }
# Skipped and todo tests are reported as such, never as passed.
count_skipped() {
  for kind in skipped todo; do
    n=$(sed -nE "s/^ℹ $kind ([0-9]+)$/\1/p" "$1" | tail -n 1)
    skipped=$((skipped + ${n:-0}))
  done
}

# --- static checks (each counts as one test) --------------------------------
static_checks() {
for check in "fmt --check" "lint" "check"; do
  # shellcheck disable=SC2086 # word splitting of the subcommand is intended
  if (cd "$work/repo" && NO_COLOR=1 DENO_DIR="$work/deno-root-cache" "$deno" task -q $check) >"$logs/static.log" 2>&1; then
    echo "ok   deno $check"; count 1 0
  else
    echo "FAIL deno $check"; tail -n 30 "$logs/static.log"; count 0 1
  fi
done

if (cd "$work/repo" && NO_COLOR=1 DENO_DIR="$work/deno-root-cache" "$deno" publish --dry-run --allow-dirty) >"$logs/static.log" 2>&1; then
  echo "ok   deno publish --dry-run"; count 1 0
else
  echo "FAIL deno publish --dry-run"; tail -n 30 "$logs/static.log"; count 0 1
fi
}
[ -n "$only" ] || static_checks

# --- root phase: install the real broker for the user suites ---------------
broker_state_save
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

# --- unit tests under Deno (the shared modules are runtime-neutral) ---------
deno_unit() {
set +e
as_user env NO_COLOR=1 node_modules/.bin/deno test -A --no-check tests/unit/ >"$logs/deno-unit.log" 2>&1
deno_rc=$?
set -e
summary=$(grep -E '^(ok|FAILED) \| ' "$logs/deno-unit.log" | tail -n 1)
tail -n 3 "$logs/deno-unit.log"
if [ -n "$summary" ]; then
  p=$(echo "$summary" | sed -nE 's/.*\| ([0-9]+) passed( \(([0-9]+) steps\))?.*/\1 \3/p')
  f=$(echo "$summary" | sed -nE 's/.*\| ([0-9]+) failed( \(([0-9]+) steps\))?.*/\1 \3/p')
  # node:test "it" blocks are Deno steps: count steps when present.
  set -- $p; pn=${2:-$1}
  set -- $f; fn=${2:-$1}
  count "$pn" "$fn"
  [ "$deno_rc" = 0 ] || [ "$fn" != 0 ] || count 0 1
else
  grep -v '^\s*[0-9]*: ' "$logs/deno-unit.log" | tail -n 30
  count 0 1
fi
}
[ -n "$only" ] || deno_unit

# --- unit + integration + real pi suites under Node 22 ----------------------
set +e
# shellcheck disable=SC2086 # $only is a list of paths
as_user node_modules/.bin/node --test --test-concurrency=1 --test-timeout=180000 --test-reporter=spec \
  ${only:-tests/unit/*_test.ts tests/integration/*_test.ts tests/pi/*_test.ts} >"$logs/node.log" 2>&1
node_rc=$?
set -e
count_skipped "$logs/node.log"
grep -E '^[^ℹ]*# (known weakness|TODO)' "$logs/node.log" | sed 's/^/todo: /' | head -n 5 || true
sed -n '/^ℹ tests/,$p' "$logs/node.log" | head -n 8
p=$(sed -nE 's/^ℹ pass ([0-9]+)$/\1/p' "$logs/node.log" | tail -n 1)
f=$(sed -nE 's/^ℹ fail ([0-9]+)$/\1/p' "$logs/node.log" | tail -n 1)
c=$(sed -nE 's/^ℹ cancelled ([0-9]+)$/\1/p' "$logs/node.log" | tail -n 1)
if [ -n "$f" ] && [ "$f" != 0 ]; then
  # The runner's own list of failures, with their errors.
  sed -n '/^✖ failing tests:/,$p' "$logs/node.log" | head -n 200
fi
if [ -n "$p" ] && [ -n "$f" ]; then
  count "$p" "$((f + ${c:-0}))"
  [ "$node_rc" = 0 ] || [ "$f" != 0 ] || [ "${c:-0}" != 0 ] || count 0 1
else
  tail -n 40 "$logs/node.log"
  count 0 1
fi

# --- the canary must not have leaked into any log ---------------------------
if grep -rqF -f "$work/secret/password" "$logs" 2>/dev/null; then
  echo "FAIL the test password appears in a test log"; count 0 1
else
  echo "ok   no test log contains the password"; count 1 0
fi

if [ "$failed" = 0 ]; then rc=0; else rc=1; fi
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
exit "$rc"
