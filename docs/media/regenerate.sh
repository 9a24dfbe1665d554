#!/bin/sh
# Regenerates the README's pictures of the sudo modal from the real thing:
# `deno task demo` (real pi, the scripted faux model, this extension) run by a
# throwaway regular user with a sudo password, so that real sudo asks and the
# real modal opens. pi runs in tmux; the modal is drawn on the tmux client's own
# terminal (ADR 0009), so that client runs in a pane of a second tmux server,
# the "terminal", whose screen is captured with `capture-pane -e -p` once the
# modal shows and eight characters are typed, then drawn by
# tests/pi/render_capture.py.
#
#   sh docs/media/regenerate.sh                 # both pictures (deno task media)
#   sh docs/media/regenerate.sh C.UTF-8         # docs/media/sudo-modal.png
#   sh docs/media/regenerate.sh pt_BR.UTF-8     # docs/media/sudo-modal.pt_BR.png
#
# As root (it creates the user with tests/test_user.sh, as the test suite does,
# and removes it, its sudoers rule, its tmux servers and every temp file on
# every exit). Needs tmux, Debian's python3-pil and fonts-symbola, and the
# locale of each language (locale -a).
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
me=docs/media/regenerate.sh
cols=104
rows=30
typed=hunter42 # what is "typed" into the field: eight characters, shown masked

fail() {
  echo "$me: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || fail "run it as root: it creates a throwaway user, since sudo asks only a regular user for a password"
[ $# -gt 0 ] || set -- C.UTF-8 pt_BR.UTF-8
for lang in "$@"; do
  case "$lang" in
    C.UTF-8 | pt_BR.UTF-8) ;;
    *) fail "unknown language '$lang': C.UTF-8 or pt_BR.UTF-8" ;;
  esac
  want=$(echo "$lang" | tr '[:upper:]' '[:lower:]' | sed 's/utf-8$/utf8/')
  locale -a 2>/dev/null | tr '[:upper:]' '[:lower:]' | grep -qx "$want" ||
    fail "locale $lang is not installed, so sudo would not speak it: sed -i 's/^# *$lang/$lang/' /etc/locale.gen && locale-gen"
done
for cmd in tmux flock; do
  command -v "$cmd" >/dev/null 2>&1 || fail "'$cmd' missing (apt-get install -y tmux util-linux)"
done
# Debian's python3, where python3-pil installs Pillow (not a pyenv's on PATH).
python=/usr/bin/python3
[ -x "$python" ] || fail "$python missing (apt-get install -y python3 python3-pil fonts-symbola)"
"$python" "$repo/tests/pi/render_capture.py" --check || exit 1
for tool in deno node; do
  [ -x "$repo/node_modules/.bin/$tool" ] || fail "node_modules/.bin/$tool missing: run 'npm ci' first"
done

# The test suite installs the real broker for a while (tests/run.sh): with it,
# the modal is hardened mode's, not a new user's. Take the suite's lock.
exec 9>/tmp/pi-sudo-prompt-tests.lock
if ! flock -n 9; then
  echo "$me: the test suite is running; waiting for it to end (at most 30 minutes)" >&2
  flock -w 1800 9 || fail "the test suite still holds /tmp/pi-sudo-prompt-tests.lock after 30 minutes"
fi
for p in /usr/local/libexec/pi-sudo-prompt /etc/sudoers.d/zz-pi-sudo-prompt; do
  [ ! -e "$p" ] || fail "a root broker is installed ($p): a new user has none, so the picture would not be theirs; remove it first (sh broker/install.sh --uninstall)"
done

# shellcheck source=tests/test_user.sh
. "$repo/tests/test_user.sh"
media="" # the user's directory for tmux sockets and captures, under $work
png=""   # a picture being written, before it replaces the old one

cleanup() {
  status=$?
  trap - EXIT INT TERM
  if [ -n "$media" ] && [ -n "${user:-}" ]; then
    for server in "$media"/*.sock; do
      [ -S "$server" ] || continue
      as_user tmux -S "$server" kill-server >/dev/null 2>&1 || true
    done
  fi
  test_user_cleanup # kills the user's processes, removes it, its sudoers rule and $work
  [ -z "$png" ] || rm -f "$png"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

test_user_setup "$repo" || fail "could not create the throwaway user (see above)"
media="$work/media"
mkdir -m 0700 "$media"
chown "$user" "$media"
printf '%s\n' "set -g status off" "set -g escape-time 0" >"$work/term.conf"
# pi's tmux as pi asks a tmux user to set it (without extended-keys pi warns
# that modified Enter keys may not work).
printf '%s\n' "set -g status off" "set -g extended-keys on" \
  "set -g default-terminal tmux-256color" >"$work/pi.conf"

# Polls the terminal's screen until it matches the extended regex $1, for at
# most $2 seconds; $3 names what is awaited in the error.
wait_screen() {
  end=$(($(date +%s) + $2))
  while :; do
    screen=$(as_user tmux -S "$term" capture-pane -p -t pisp-media-term 2>/dev/null) || screen=""
    if printf '%s\n' "$screen" | LC_ALL=C.UTF-8 grep -qE "$1"; then return 0; fi
    # The modal is up in the other language: waiting longer changes nothing.
    shown=$(printf '%s\n' "$screen" | LC_ALL=C.UTF-8 grep -oE "│ +(Password|Senha): " | head -n 1 |
      sed 's/^│ *//') || shown=""
    [ -z "$shown" ] || [ "$shown" = "$field" ] ||
      fail "under LANG=$lang the modal's field reads '$shown', not '$field': this checkout's modal is not translated"
    if [ "$(date +%s)" -ge "$end" ]; then
      echo "$me: $3 did not appear within $2 s under LANG=$lang; the last screen:" >&2
      printf '%s\n' "$screen" | sed 's/^/  | /' >&2
      exit 1
    fi
    sleep 0.2
  done
}

for lang in "$@"; do
  case "$lang" in
    C.UTF-8) field="Password: " out=sudo-modal.png ;;
    pt_BR.UTF-8) field="Senha: " out=sudo-modal.pt_BR.png ;;
  esac
  tag=$(echo "$lang" | tr -dc 'A-Za-z')
  term="$media/term-$tag.sock"
  # The terminal: a pane whose pty is the tmux client's terminal, as a window
  # of a terminal emulator would be. In it the user starts tmux with
  # `deno task demo`, so a client is attached before pi asks.
  # (9>&-: the tmux servers do not keep the suite's lock.)
  as_user env LANG="$lang" TERM=xterm-256color \
    tmux -S "$term" -f "$work/term.conf" new-session -d -s pisp-media-term \
    -x "$cols" -y "$rows" -- \
    env -u TMUX -u TMUX_PANE \
    tmux -S "$media/pi-$tag.sock" -f "$work/pi.conf" new-session -s pisp-media \
    node_modules/.bin/deno task demo 9>&-
  # The box's password field, empty, then with the eight masked characters.
  wait_screen "│ +$field *│" 90 "the modal's empty '$field' field"
  as_user tmux -S "$term" send-keys -t pisp-media-term -l -- "$typed"
  wait_screen "│ +$field••••••••( |│)" 10 "eight masked characters in '$field'"
  # shellcheck disable=SC2016 # expanded by the user's sh
  as_user sh -c 'tmux -S "$1" capture-pane -e -p -t pisp-media-term >"$2"' sh \
    "$term" "$media/capture.ansi"
  png=$(mktemp "$repo/docs/media/.$out.XXXXXX")
  "$python" "$repo/tests/pi/render_capture.py" "$media/capture.ansi" "$png" || exit 1
  chmod 0644 "$png"
  mv "$png" "$repo/docs/media/$out"
  png=""
  echo "$me: wrote docs/media/$out (LANG=$lang)"
  as_user tmux -S "$media/pi-$tag.sock" kill-server >/dev/null 2>&1 || true
  as_user tmux -S "$term" kill-server >/dev/null 2>&1 || true
done
