#!/bin/sh
# Sourced by tests/run.sh and tests/bench/run.sh (as root): a throwaway user
# with a random password and a sudoers rule, a read-only copy of the checkout
# it can use, and cleanup. Defines: $user, $work, $logs, as_user CMD...,
# test_user_cleanup. The password is only in "$work/secret/password" (0600,
# owned by the user): never in argv or the environment.

test_user_setup() {
  repo=$1
  for cmd in sudo visudo useradd userdel chpasswd runuser; do
    command -v "$cmd" >/dev/null 2>&1 || {
      echo "'$cmd' missing (apt-get install -y sudo passwd util-linux)" >&2
      return 1
    }
  done
  user="pisudot$$"
  # "00-" sorts before /etc/sudoers.d/zz-pi-sudo-prompt: sudo applies the LAST
  # matching rule, so the broker's NOPASSWD rule must come after this one.
  sudoers="/etc/sudoers.d/00-pi-sudo-prompt-test-$user"
  work=$(mktemp -d /tmp/pi-sudo-prompt-test.XXXXXX)
  logs="$work/logs"

  useradd -m -s /bin/bash "$user"
  password="Canary-$(head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 24)"
  printf '%s:%s\n' "$user" "$password" | chpasswd # printf is a builtin: in no argv
  mkdir -p /etc/sudoers.d
  (
    umask 077
    printf '%s ALL=(ALL:ALL) ALL\nDefaults:%s lecture=never\n' "$user" "$user" >"$sudoers.tmp"
  )
  chmod 0440 "$sudoers.tmp"
  visudo -cf "$sudoers.tmp" >/dev/null
  mv "$sudoers.tmp" "$sudoers"

  # CI's clone may sit in a folder the user cannot enter: give it a copy.
  chmod 0755 "$work"
  mkdir "$work/repo" "$logs"
  for entry in "$repo"/* "$repo"/.[!.]*; do
    [ -e "$entry" ] || continue
    case "$(basename "$entry")" in .git | .tmp) continue ;; esac
    # Hard links are instant and stay root-owned (read-only for the user);
    # copy when /tmp is another filesystem.
    cp -al "$entry" "$work/repo/" 2>/dev/null || cp -a "$entry" "$work/repo/"
  done
  mkdir -m 0700 "$work/secret"
  printf '%s' "$password" >"$work/secret/password"
  chmod 0600 "$work/secret/password"
  chown -R "$user" "$work/secret"
  chown "$user" "$logs"
  unset password
}

as_user() {
  runuser -u "$user" -- env -i \
    HOME="/home/$user" USER="$user" LOGNAME="$user" SHELL=/bin/bash \
    PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TERM=xterm-256color \
    PI_SUDO_PROMPT_TEST_PASSWORD_FILE="$work/secret/password" \
    PI_SUDO_PROMPT_TEST_LOG_DIR="$logs" \
    ${PI_SUDO_PROMPT_TEST_FULL_FS:+PI_SUDO_PROMPT_TEST_FULL_FS="$PI_SUDO_PROMPT_TEST_FULL_FS"} \
    ${PI_SUDO_PROMPT_TEST_ONE_PAGE_FS:+PI_SUDO_PROMPT_TEST_ONE_PAGE_FS="$PI_SUDO_PROMPT_TEST_ONE_PAGE_FS"} \
    ${PI_TEST_WITHOUT_BROKER:+PI_TEST_WITHOUT_BROKER="$PI_TEST_WITHOUT_BROKER"} \
    sh -c 'cd "$1" && shift && exec "$@"' sh "$work/repo" "$@"
}

test_user_cleanup() {
  [ -n "${user:-}" ] || return 0
  pkill -KILL -u "$user" 2>/dev/null || true
  sleep 0.2
  # Session directories of pis the suites killed (no XDG_RUNTIME_DIR: under /tmp).
  find /tmp -maxdepth 1 -user "$user" -name 'pi-sudo-prompt-*' -exec rm -rf {} + 2>/dev/null || true
  userdel -r "$user" >/dev/null 2>&1 || userdel "$user" >/dev/null 2>&1 || true
  rm -f "$sudoers" "$sudoers.tmp"
  visudo -c >/dev/null 2>&1 || echo "WARNING: visudo -c fails after cleanup" >&2
  rm -rf "$work"
}

# The broker suites install the real broker (root-owned files, a sudoers rule,
# /etc/pi-sudo-prompt). A machine that already has them gets them back
# afterwards, untouched.
TEST_CONSUMER_DIR=/usr/local/libexec/pi-sudo-prompt-test
BROKER_STATE="/usr/local/libexec/pi-sudo-prompt /etc/pi-sudo-prompt /etc/sudoers.d/pi-sudo-prompt /etc/sudoers.d/zz-pi-sudo-prompt /run/pi-sudo-prompt $TEST_CONSUMER_DIR"

broker_state_save() {
  mkdir -p "$work/saved"
  for p in $BROKER_STATE; do
    if [ -e "$p" ] || [ -L "$p" ]; then
      mkdir -p "$work/saved$(dirname "$p")"
      mv "$p" "$work/saved$p"
    fi
  done
  install -d -m 0755 -o root -g root "$TEST_CONSUMER_DIR"
  install -m 0755 -o root -g root "$work/repo/tests/root/consumer.sh" "$TEST_CONSUMER_DIR/consumer"
  # A setuid-root program that is not sudo and stays running, like Xorg's
  # wrapper (tests/pi/daily_use_test.ts): a copy of sleep.
  install -m 4755 -o root -g root "$(command -v sleep)" "$TEST_CONSUMER_DIR/Xorg.wrap"
}

broker_state_restore() {
  [ -n "${work:-}" ] && [ -d "$work/saved" ] || return 0
  for p in $BROKER_STATE; do rm -rf "$p"; done
  for p in $BROKER_STATE; do
    if [ -e "$work/saved$p" ] || [ -L "$work/saved$p" ]; then mv "$work/saved$p" "$p"; fi
  done
  # Once only: a second call (cleanup after an explicit restore) must not
  # remove what was just put back.
  rm -rf "$work/saved"
  visudo -c >/dev/null 2>&1 || echo "WARNING: visudo -c fails after restoring the broker state" >&2
}
