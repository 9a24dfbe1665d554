#!/bin/sh
# Sourced by tests/run.sh (the whole suite, as root) and tests/unit.sh (the
# part that needs no root): counting, the static checks, and the Deno and
# Node test runs, so both report the same way and end with the same line.
#
# The caller sets:
#   deno          absolute path of node_modules/.bin/deno
#   logs          a directory for the logs (writable by whoever runs the tests)
#   check_dir     the checkout the static checks run in (as the caller)
#   check_cache   DENO_DIR for the static checks
#   as_tester     a command that runs "$@" in the checkout as the test runner
#                 (tests/run.sh: as_user, the throwaway user; tests/unit.sh: you)

passed=0
failed=0
skipped=0
# The product speaks the language of LC_ALL, LC_MESSAGES or LANG (shared/i18n/);
# the suites read English (tests/pi/locale_test.ts asks for Portuguese itself).
export LANG=C.UTF-8
unset LC_ALL LC_MESSAGES
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
    if (cd "$check_dir" && NO_COLOR=1 DENO_DIR="$check_cache" "$deno" task -q $check) >"$logs/static.log" 2>&1; then
      echo "ok   deno $check"; count 1 0
    else
      echo "FAIL deno $check"; tail -n 30 "$logs/static.log"; count 0 1
    fi
  done

  if (cd "$check_dir" && NO_COLOR=1 DENO_DIR="$check_cache" "$deno" publish --dry-run --allow-dirty) >"$logs/static.log" 2>&1; then
    echo "ok   deno publish --dry-run"; count 1 0
  else
    echo "FAIL deno publish --dry-run"; tail -n 30 "$logs/static.log"; count 0 1
  fi
}

# --- test files under deno test: deno_tests NAME PATH... --------------------
# NAME names the log ($logs/deno-NAME.log). node:test files run as they are:
# each describe is a Deno test and each it a step, so steps are counted when
# there are any; ignored (skipped) steps are counted as skipped. The whole run
# has a deadline (deno test has no per-test default): past it, it fails.
#
# The V8 flags defer the test process's full collections (docs/design.md §9):
# every `deno test` isolate holds Deno's own 80 MB bench array (ext:cli
# 40_bench.js, `new Array(10_000_000)`), which each Mark-Compact scans; beside
# two CPU-bound jobs one held the loop's thread for up to 84 ms, which the
# heartbeat books as the loop's own where it ran on a CPU. With them the
# integration suites ran without one (114 MB at most); young garbage is still
# collected.
DENO_TEST_V8_FLAGS=--initial-old-space-size=512,--heap-growing-percent=300
deno_tests() {
  name=$1
  shift
  log="$logs/deno-$name.log"
  set +e
  $as_tester env NO_COLOR=1 timeout -k 10 1500 node_modules/.bin/deno test -A --no-check \
    --v8-flags="$DENO_TEST_V8_FLAGS" "$@" >"$log" 2>&1
  deno_rc=$?
  set -e
  summary=$(grep -E '^(ok|FAILED) \| ' "$log" | tail -n 1)
  tail -n 3 "$log"
  if [ -n "$summary" ]; then
    p=$(echo "$summary" | sed -nE 's/.*\| ([0-9]+) passed( \(([0-9]+) steps?\))?.*/\1 \3/p')
    f=$(echo "$summary" | sed -nE 's/.*\| ([0-9]+) failed( \(([0-9]+) steps?\))?.*/\1 \3/p')
    i=$(echo "$summary" | sed -nE 's/.*\| ([0-9]+) ignored( \(([0-9]+) steps?\))?.*/\1 \3/p')
    # shellcheck disable=SC2086 # split "N M" into $1 $2
    set -- $p; pn=${2:-$1}
    # shellcheck disable=SC2086
    set -- $f; fn=${2:-$1}
    # shellcheck disable=SC2086
    set -- $i; ig=${2:-${1:-0}}
    skipped=$((skipped + ig))
    if [ "$fn" != 0 ]; then
      # Deno's own list of failures, with their errors.
      sed -n '/^ ERRORS /,$p' "$log" | grep -v '^\s*at ' | head -n 200
    fi
    count "$pn" "$fn"
    [ "$deno_rc" = 0 ] || [ "$fn" != 0 ] || count 0 1
  else
    grep -v '^\s*[0-9]*: ' "$log" | tail -n 30
    [ "$deno_rc" != 124 ] || echo "deno test $name: past its deadline (1500 s)"
    count 0 1
  fi
}

# --- unit tests under Deno (the shared modules are runtime-neutral) ---------
deno_unit() { deno_tests unit tests/unit/; }

# --- test files under Node 22: node_tests FILE... ---------------------------
node_tests() {
  # PI_TEST_NAME=REGEX (development, with PI_TEST_ONLY): only the tests whose name matches.
  set -- ${PI_TEST_NAME:+"--test-name-pattern=$PI_TEST_NAME"} "$@"
  set +e
  $as_tester node_modules/.bin/node --test --test-concurrency=1 --test-timeout=180000 \
    --test-reporter=spec "$@" >"$logs/node.log" 2>&1
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
}

# --- the last line: "N passed, N failed" (", N skipped" when any) -----------
# Sets rc: 0 when nothing failed, else 1.
summary_line() {
  if [ "$failed" = 0 ]; then rc=0; else rc=1; fi
  if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
  else
    echo "$passed passed, $failed failed"
  fi
}
