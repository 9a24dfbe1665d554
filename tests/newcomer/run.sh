#!/bin/sh
# The newcomer's walk: the README on a clean copy, as a fresh user, the way a
# new user meets it (issue 12). Run as root; tests/run.sh runs it too.
#
#  1. "Get pi": the README's commands, word for word, as root, into a
#     private npm prefix (so this machine's own Node and pi are untouched).
#  2. A clean copy (a git clone of the checkout) in a fresh user's home, in a
#     folder named pi-sudo-prompt; the README's set-up command, word for word,
#     as that user. The test command: CI's .ci/run must run it word for word
#     (CI is what runs it: running the whole suite inside itself would double
#     its time), and as a non-root user it must say how to run it.
#  3. pi (from step 1) lists the extension by its name in its start-up screen.
#  4. The packed tarball: npm pack, npm install into a clean prefix, pi
#     install of that directory; pi lists it by name and loads it.
#  5. From the installed package: pi-sudo-prompt doctor, audit verify and
#     uninstall, after which pi has no package left.
#
# The commands are extracted from README.md, so this fails when they change.
# Prints "ok"/"FAIL" lines and ends with "N passed, N failed".
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
# Every step has a deadline (an npm install that hangs fails instead).
STEP_DEADLINE=600
passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() {
  echo "FAIL $1"
  [ -z "${2:-}" ] || printf '%s\n' "$2" | tail -n 25 | sed 's/^/     /'
  failed=$((failed + 1))
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}

if [ "$(id -u)" != 0 ]; then
  echo "tests/newcomer/run.sh: needs root: it creates a fresh user (sudo npm run test:newcomer)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

# --- the README's commands ---------------------------------------------------
# The lines of the first ```sh block after the heading "$1".
readme_block() {
  awk -v heading="$1" '
    $0 == heading { found = 1; next }
    found && /^```sh$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }
  ' "$repo/README.md"
}
get_pi=$(readme_block "## Get pi")
setup=$(readme_block "## Set up (fresh Debian machine)")
setup_install=$(printf '%s\n' "$setup" | sed -n 1p)
setup_test=$(printf '%s\n' "$setup" | sed -n 2p)
# Each command without its trailing comment, to compare with .ci/run.
bare() { printf '%s\n' "$1" | sed -E 's/[[:space:]]+#.*$//'; }
if [ -n "$get_pi" ] && [ "$(printf '%s\n' "$setup" | wc -l)" = 2 ]; then
  ok "README: a Get pi block and the two set-up commands"
else
  fail "README: a Get pi block and exactly two set-up commands" "$get_pi
$setup"
  finish
  exit 1
fi

user="pinewc$$"
work=$(mktemp -d /tmp/pi-sudo-prompt-newcomer.XXXXXX)
chmod 0755 "$work"
home="/home/$user"
cleanup() {
  status=$?
  tmux -L "newcomer-$user" kill-server 2>/dev/null || true
  pkill -KILL -u "$user" 2>/dev/null || true
  sleep 0.2
  # pi killed by tmux leaves its session directory under /tmp (no XDG_RUNTIME_DIR).
  find /tmp -maxdepth 1 -user "$user" -exec rm -rf {} + 2>/dev/null || true
  userdel -r "$user" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT INT TERM
useradd -m -s /bin/bash "$user"

# --- the machine's npm settings, for every step that reaches the registry -----
# npm reads its CA, registry and proxy from root's npmrc and from the global
# npmrc under npm's prefix; a fresh user has neither, and a step with its own
# --prefix reads another global npmrc. So they are read here once, as root,
# and every npm step below runs through registry_env, which passes them on
# (tests/unit/package/registry_steps_test.ts checks that none bypasses it).
# Asked of npm as the machine runs it: under `deno task` or `npm test`, PATH
# starts with node_modules/.bin, whose Node 22 would make npm look for its
# global npmrc under node_modules instead.
machine_path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v '/node_modules/\.bin$' | paste -sd: -)
npm_settings=""
for key in registry cafile proxy https-proxy noproxy strict-ssl; do
  value=$(PATH="$machine_path" npm config get "$key" 2>/dev/null || true)
  case "$value" in "" | null | undefined) continue ;; esac
  case "$value" in *[[:space:]]*)
    fail "npm setting $key has white space: cannot pass it on" "$value"
    continue ;;
  esac
  if [ "$key" = cafile ]; then
    # The fresh user may not be able to read root's copy.
    cp "$value" "$work/npm-ca.pem" && chmod 0644 "$work/npm-ca.pem" && value="$work/npm-ca.pem"
  fi
  npm_settings="$npm_settings npm_config_$(printf '%s' "$key" | tr - _)=$value"
done
npm_settings="$npm_settings npm_config_prefer_offline=true" # CI's npm ci just filled the cache
# registry_env CMD…: CMD with the machine's npm settings (as_newcomer passes
# the same words through its env -i).
registry_env() {
  # shellcheck disable=SC2086 # NAME=value words without white space (checked above)
  env $npm_settings "$@"
}

# --- 1. Get pi, as root, into a private prefix --------------------------------
prefix="$work/prefix"
mkdir -p "$prefix"
log="$work/get-pi.log"
# prefer-offline: what CI's own npm ci just fetched (pi itself) comes from npm's cache.
if printf '%s\n' "$get_pi" | (cd "$work" && NPM_CONFIG_PREFIX="$prefix" PATH="$prefix/bin:$PATH" \
  registry_env timeout -k 10 "$STEP_DEADLINE" sh -eu) >"$log" 2>&1; then
  ok "Get pi: the README's commands ran ($(printf '%s\n' "$get_pi" | wc -l) lines)"
else
  fail "Get pi: the README's commands" "$(cat "$log")"
fi
chmod -R a+rX "$prefix"
node_version=$("$prefix/bin/node" --version 2>&1 || true)
pi_version=$(PATH="$prefix/bin:$PATH" "$prefix/bin/pi" --version 2>&1 || true)
major=$(printf '%s' "$node_version" | sed -nE 's/^v([0-9]+)\.([0-9]+)\..*/\1/p')
minor=$(printf '%s' "$node_version" | sed -nE 's/^v([0-9]+)\.([0-9]+)\..*/\2/p')
if [ -n "$major" ] && { [ "$major" -gt 22 ] || { [ "$major" = 22 ] && [ "$minor" -ge 19 ]; }; } &&
  PATH="$prefix/bin:$PATH" "$prefix/bin/pi" --version >/dev/null 2>&1; then
  ok "Get pi: Node $node_version (>= 22.19) and pi $pi_version on PATH"
else
  fail "Get pi: Node >= 22.19 and pi" "node: $node_version
pi: $pi_version"
fi

# The user's PATH: the Node and pi from "Get pi" first, as after a global install.
# Every command of the user runs through here, so every npm step of theirs
# gets the machine's npm settings (registry_env's words).
as_newcomer() { # $1: directory, then the command
  dir=$1
  shift
  timeout -k 10 "$STEP_DEADLINE" runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" SHELL=/bin/bash \
    PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 TERM=xterm-256color \
    npm_config_cache="$home/.npm" $npm_settings \
    sh -c 'cd "$1" && shift && exec "$@"' sh "$dir" "$@"
}

# --- 2. a clean copy and the README's set-up command --------------------------
copy="$home/pi-sudo-prompt"
if [ -d "$repo/.git" ]; then
  git clone -q "$repo" "$copy"
else
  mkdir "$copy"
  (cd "$repo" && tar -c --exclude=./node_modules --exclude=./.tmp --exclude=./dist .) | tar -x -C "$copy"
fi
# The user's npm cache starts as a copy of root's, so the walk does not
# download again what CI's own npm ci has just downloaded.
[ ! -d /root/.npm/_cacache ] || { mkdir -p "$home/.npm" && cp -a /root/.npm/_cacache "$home/.npm/"; }
chown -R "$user:" "$home"

log="$work/setup.log"
if as_newcomer "$copy" sh -c "$setup_install" >"$log" 2>&1; then
  ok "set-up: '$(bare "$setup_install")' exits 0 as a fresh user"
else
  fail "set-up: '$(bare "$setup_install")'" "$(cat "$log")"
fi
if grep -qxF "  ✓ pi install $copy" "$log" &&
  grep -qxF 'pi-sudo-prompt: ready. Start `pi` and run a command that uses sudo.' "$log"; then
  ok "set-up: registered the copy with pi from Get pi, and says it is ready"
else
  fail "set-up: registered the copy with pi and said ready" "$(cat "$log")"
fi
ci_last=$(grep -v '^[[:space:]]*\(#\|$\)' "$repo/.ci/run" | tail -n 1)
if [ "$ci_last" = "$(bare "$setup_test")" ]; then
  ok "the README's test command is what CI runs: '$ci_last'"
else
  fail "the README's test command is what CI runs" "README: $(bare "$setup_test")
.ci/run: $ci_last"
fi
log="$work/test-as-user.log"
as_newcomer "$copy" sh -c "$setup_test" >"$log" 2>&1 && rc=0 || rc=$?
if [ "$rc" != 0 ] && grep -qF "Run it as root: sudo npm test (CI does)." "$log" &&
  grep -qF "without root, npm run test:unit (or deno task test:unit) runs everything" "$log" &&
  [ "$(tail -n 1 "$log")" = "0 passed, 1 failed" ]; then
  ok "the test command as a non-root user says how to run it"
else
  fail "the test command as a non-root user says how to run it (exit $rc)" "$(cat "$log")"
fi

# --- 3. pi lists the extension by its name -------------------------------------
# Starts pi in tmux as the user; prints the screen once "[Extensions]" and the
# line after it are drawn, or the last screen after 40 s.
pi_screen() { # $1: directory
  sock="newcomer-$user"
  tmux_as() { runuser -u "$user" -- tmux -L "$sock" "$@"; }
  tmux_as -f /dev/null new-session -d -x 120 -y 40 -c "$1" \
    "env PATH=$prefix/bin:/usr/local/bin:/usr/bin:/bin HOME=$home pi"
  i=0
  screen=""
  while [ "$i" -lt 400 ]; do
    screen=$(tmux_as capture-pane -p 2>/dev/null || true)
    if printf '%s\n' "$screen" | grep -A1 -F '[Extensions]' | sed -n 2p | grep -q '[a-z]'; then
      sleep 1 # the session starts a moment later: show its notices too
      screen=$(tmux_as capture-pane -p 2>/dev/null || true)
      break
    fi
    sleep 0.1
    i=$((i + 1))
  done
  tmux_as kill-server 2>/dev/null || true
  printf '%s\n' "$screen"
}
# The extension's line: "[Extensions]" is followed by the loaded names.
listed_name() { printf '%s\n' "$1" | grep -A1 -F '[Extensions]' | sed -n 2p | sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//'; }
screen=$(pi_screen "$home")
if [ "$(listed_name "$screen")" = "pi-sudo-prompt" ] &&
  ! printf '%s\n' "$screen" | grep -qE 'pi-sudo-prompt: disabled|Failed to load'; then
  ok "pi lists the checkout's extension as pi-sudo-prompt and loads it"
else
  fail "pi lists the checkout's extension as pi-sudo-prompt and loads it" "$screen"
fi

# --- 4. the packed tarball, installed into a clean prefix ----------------------
log="$work/pack.log"
tarball=""
if as_newcomer "$copy" npm pack --silent >"$log" 2>&1; then
  tarball="$copy/$(tail -n 1 "$log")"
fi
if [ -n "$tarball" ] && [ -f "$tarball" ]; then
  ok "npm pack: $(basename "$tarball")"
else
  fail "npm pack" "$(cat "$log")"
fi
installed="$home/prefix/lib/node_modules/pi-sudo-prompt"
log="$work/npm-install.log"
if as_newcomer "$home" npm install -g --prefix "$home/prefix" --no-audit --no-fund "$tarball" >"$log" 2>&1 &&
  [ -x "$home/prefix/bin/pi-sudo-prompt" ] && [ ! -e "$installed/node_modules/@earendil-works" ]; then
  ok "npm install of the tarball into a clean prefix: the pi-sudo-prompt command, no second pi"
else
  fail "npm install of the tarball into a clean prefix" "$(cat "$log"; ls "$installed/node_modules" 2>&1)"
fi
log="$work/pi-install.log"
as_newcomer "$home" sh -c "pi remove '$copy' && pi install '$installed'" >"$log" 2>&1 && rc=0 || rc=$?
listed=$(as_newcomer "$home" pi list 2>&1 || true)
if [ "$rc" = 0 ] && [ "$listed" = "User packages:
  ../../prefix/lib/node_modules/pi-sudo-prompt
    $installed" ]; then
  ok "pi remove <checkout>, pi install <installed package>: pi list shows only the package"
else
  fail "pi remove <checkout>, pi install <installed package>" "$(cat "$log"; echo "$listed")"
fi
screen=$(pi_screen "$home")
if [ "$(listed_name "$screen")" = "pi-sudo-prompt" ] &&
  ! printf '%s\n' "$screen" | grep -qE 'pi-sudo-prompt: disabled|Failed to load'; then
  ok "pi lists the installed package's extension as pi-sudo-prompt and loads it"
else
  fail "pi lists the installed package's extension as pi-sudo-prompt and loads it" "$screen"
fi

# --- 5. the installed package's own commands ------------------------------------
bin="$home/prefix/bin/pi-sudo-prompt"
log="$work/doctor.log"
as_newcomer "$home" "$bin" doctor >"$log" 2>&1 && rc=0 || rc=$?
if [ "$rc" = 0 ] && grep -qx 'pi-sudo-prompt 0\.[0-9.]* doctor' "$log" &&
  grep -qE '^[0-9]+ checks: [0-9]+ ok, [0-9]+ warnings, 0 failed' "$log" &&
  tr -s ' \n' ' ' <"$log" | grep -qF "npm pack $installed && sudo npm install -g"; then
  ok "pi-sudo-prompt doctor: no failed check; the hardened fix packs this copy"
else
  fail "pi-sudo-prompt doctor (exit $rc)" "$(cat "$log")"
fi
log="$work/audit.log"
as_newcomer "$home" "$bin" audit verify >"$log" 2>&1 && rc=0 || rc=$?
if [ "$rc" = 0 ] && grep -qE '^audit: (ok|no audit log yet)' "$log"; then
  ok "pi-sudo-prompt audit verify: $(head -c 60 "$log")…"
else
  fail "pi-sudo-prompt audit verify (exit $rc)" "$(cat "$log")"
fi
log="$work/uninstall.log"
as_newcomer "$home" "$bin" uninstall >"$log" 2>&1 && rc=0 || rc=$?
if [ "$rc" = 0 ] && grep -qxF "  ✓ pi remove $installed" "$log" &&
  grep -qxF "  - the package files stay: npm uninstall -g --prefix $home/prefix pi-sudo-prompt" "$log" &&
  [ "$(as_newcomer "$home" pi list 2>&1)" = "No packages installed." ]; then
  ok "pi-sudo-prompt uninstall: pi remove done, pi list is empty, the npm line printed"
else
  fail "pi-sudo-prompt uninstall (exit $rc)" "$(cat "$log"; as_newcomer "$home" pi list 2>&1)"
fi

finish
