#!/bin/sh
# pi-sudo-prompt broker installer. Run as root:
#   sudo sh /path/to/pi-sudo-prompt/broker/install.sh            # for the calling user
#   sh broker/install.sh --user NAME                              # as root, for NAME
#   sudo sh broker/install.sh --uninstall [--user NAME]
#
# Installs, all root-owned, under /usr/local/libexec/pi-sudo-prompt/: a copy
# of the pinned deno binary, the broker sources (and the askpass helper for
# hardened mode), the launchers, a VERSION file and a deno cache. Adds
# /etc/sudoers.d/zz-pi-sudo-prompt (NOPASSWD for the broker launcher only, for
# the named user), validated with `visudo -c` before it is put in place. sudo
# applies the LAST matching rule, so the name sorts after the usual files; an
# older install's /etc/sudoers.d/pi-sudo-prompt is merged into it and removed.
# Creates /etc/pi-sudo-prompt/allowlist (empty, with commented examples) if it
# does not exist; an existing allowlist is never touched. Re-running upgrades.
set -eu
# Before any program runs: sudo may keep the caller's PATH (no secure_path).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

ROOT=/usr/local/libexec/pi-sudo-prompt
SUDOERS=/etc/sudoers.d/zz-pi-sudo-prompt
LEGACY_SUDOERS=/etc/sudoers.d/pi-sudo-prompt
ALLOWLIST_DIR=/etc/pi-sudo-prompt
ALLOWLIST=$ALLOWLIST_DIR/allowlist
PROOF_DIR=/run/pi-sudo-prompt

say() { printf 'pi-sudo-prompt install: %s\n' "$*"; }
die() {
  printf 'pi-sudo-prompt install: %s\n' "$*" >&2
  exit 1
}

user=${SUDO_USER-}
action=install
while [ "$#" -gt 0 ]; do
  case "$1" in
    --user) [ "$#" -ge 2 ] || die "--user needs a name"; user=$2; shift 2 ;;
    --uninstall) action=uninstall; shift ;;
    *) die "unknown argument: $1 (usage: install.sh [--user NAME] [--uninstall])" ;;
  esac
done

[ "$(id -u)" = 0 ] || die "must run as root (sudo sh $0)"
[ "$(uname -s)" = Linux ] || die "only Linux is supported"
case "$user" in
  "" | root) die "name the user who runs pi: --user NAME (or run it with sudo as that user)" ;;
  *[!A-Za-z0-9._-]*) die "bad user name: $user" ;;
esac
id -u "$user" >/dev/null 2>&1 || die "no such user: $user"
rule="$user ALL=(root) NOPASSWD: $ROOT/pi-secret-broker"

# --- sudoers: change only our file, and only after visudo accepts it -------
write_sudoers() { # $1: new content ("" removes the file)
  if [ -z "$1" ]; then
    rm -f "$SUDOERS"
    return 0
  fi
  tmp=$(mktemp /etc/sudoers.d/.pi-sudo-prompt.XXXXXX)
  printf '%s\n' "$1" >"$tmp"
  chmod 0440 "$tmp"
  if ! visudo -cf "$tmp" >/dev/null; then
    rm -f "$tmp"
    die "visudo rejected the new rule; nothing changed"
  fi
  mv -f "$tmp" "$SUDOERS"
}
other_rules=""
for f in "$SUDOERS" "$LEGACY_SUDOERS"; do
  if [ -f "$f" ]; then
    other_rules=$(printf '%s\n%s' "$other_rules" "$(grep -vxF "$rule" "$f" | grep -v '^#' || true)" |
      sed '/^$/d' | awk '!seen[$0]++')
  fi
done

if [ "$action" = uninstall ]; then
  if [ -n "$other_rules" ]; then
    write_sudoers "# pi-sudo-prompt: the secret broker, without a password (broker/install.sh)
$other_rules"
    rm -f "$LEGACY_SUDOERS"
    say "removed the sudoers rule for $user (other users keep theirs and the broker)"
  else
    write_sudoers ""
    rm -f "$LEGACY_SUDOERS"
    rm -rf "$ROOT" "$PROOF_DIR"
    say "removed $ROOT, $SUDOERS and $PROOF_DIR"
  fi
  say "kept $ALLOWLIST (delete it by hand if you want)"
  visudo -c >/dev/null || die "visudo -c fails after uninstall: check /etc/sudoers.d"
  exit 0
fi

# --- the directories above the broker: only root may change them -----------
# sudo runs $ROOT/pi-secret-broker as root without a password: whoever can
# rename or replace any directory above it gets root. Checked before anything
# is written, so an unsafe machine gets no sudoers rule at all.
d=$(dirname "$ROOT")
while :; do
  if [ -e "$d" ]; then
    [ -d "$d" ] && [ ! -L "$d" ] || die "$d is not a plain directory: refusing to install the broker below it"
    set -- $(stat -c '%u %a' "$d")
    [ "$1" = 0 ] || die "$d is owned by uid $1, not root: whoever owns it could replace the broker that sudo runs as root; fix: chown root:root $d (then re-run)"
    case "$2" in
      *[2367][0-7] | *[0-7][2367]) die "$d is writable by group or others (mode $2): they could replace the broker that sudo runs as root; fix: chmod go-w $d (then re-run)" ;;
    esac
  fi
  [ "$d" = / ] && break
  d=$(dirname "$d")
done

# --- find the package and its pinned deno binary ---------------------------
pkg=$(cd "$(dirname "$0")/.." && pwd -P)
[ -f "$pkg/broker/broker.ts" ] || die "cannot find the package next to $0"
case "$(uname -m)" in
  x86_64) plat=linux-x64-glibc ;;
  aarch64) plat=linux-arm64-glibc ;;
  *) die "unsupported architecture $(uname -m)" ;;
esac
# Only the package's own node_modules (an npm install puts @deno beside the
# package instead, in the node_modules that holds it); never a directory
# further up, which another user could have planted (/tmp/node_modules).
deno=""
for c in "$pkg/node_modules/@deno/$plat/deno" "$(dirname "$pkg")/@deno/$plat/deno"; do
  case "$c" in
    */node_modules/@deno/*) ;;
    *) continue ;;
  esac
  if [ -z "$deno" ] && [ -f "$c" ] && [ ! -L "$c" ] && [ -x "$c" ]; then deno=$c; fi
done
[ -n "$deno" ] || die "the deno binary (@deno/$plat) is not installed in the package's node_modules: run npm ci"

# --- stage everything, then swap it in --------------------------------------
install -d -m 0755 -o root -g root "$(dirname "$ROOT")"
stage=$(mktemp -d "$ROOT.new.XXXXXX")
trap 'rm -rf "$stage"' EXIT
install -d -m 0755 -o root -g root "$stage/src/askpass" "$stage/src/broker" "$stage/src/shared" \
  "$stage/deno-cache"
install -m 0755 -o root -g root "$deno" "$stage/deno"
# The list is written once, in broker/root_files.ts (the session server reads it too).
sources=$(sed -n '/^export const ROOT_SOURCE_FILES = \[$/,/^\] as const;$/s/^  "\([a-z_/]*\.ts\)",$/\1/p' \
  "$pkg/broker/root_files.ts")
[ -n "$sources" ] || die "cannot read the list of sources in $pkg/broker/root_files.ts"
# Regular files only: a symlinked "source" (to /etc/shadow, say) would be
# published world-readable.
regular() { [ -f "$1" ] && [ ! -L "$1" ] || die "$1 is not a regular file: refusing to copy it"; }
regular "$deno"
for f in $sources; do
  regular "$pkg/$f"
  install -d -m 0755 -o root -g root "$(dirname "$stage/src/$f")"
  install -m 0644 -o root -g root "$pkg/$f" "$stage/src/$f"
done
for f in pi-secret-broker.sh pairing_check.sh terminal_check.sh check_server.sh allowlist-append.sh \
  root-deno.sh proc-tables.sh; do
  regular "$pkg/broker/$f"
done
install -m 0755 -o root -g root "$pkg/broker/pi-secret-broker.sh" "$stage/pi-secret-broker"
install -m 0755 -o root -g root "$pkg/broker/pairing_check.sh" "$stage/pairing-check"
install -m 0755 -o root -g root "$pkg/broker/terminal_check.sh" "$stage/terminal-check"
install -m 0755 -o root -g root "$pkg/broker/check_server.sh" "$stage/check-server"
install -m 0755 -o root -g root "$pkg/broker/allowlist-append.sh" "$stage/allowlist-append"
# Sourced by pi-secret-broker and allowlist-append, never run: not executable.
install -m 0644 -o root -g root "$pkg/broker/root-deno.sh" "$stage/root-deno.sh"
# Sourced by pairing-check and terminal-check.
install -m 0644 -o root -g root "$pkg/broker/proc-tables.sh" "$stage/proc-tables.sh"
version=$(sed -n 's/^export const PACKAGE_VERSION = "\(.*\)";$/\1/p' "$pkg/askpass/version.ts")
protocol=$(sed -n 's/^export const PROTOCOL_VERSION = \([0-9]*\);$/\1/p' "$pkg/askpass/protocol.ts")
[ -n "$version" ] && [ -n "$protocol" ] || die "cannot read the package and protocol versions"
printf 'version=%s\nprotocol=%s\n' "$version" "$protocol" >"$stage/VERSION"
chmod 0644 "$stage/VERSION"
chmod 0755 "$stage"
chown root:root "$stage"

how=installed
[ -d "$ROOT" ] && how=upgraded
rm -rf "$ROOT.old"
[ -d "$ROOT" ] && mv "$ROOT" "$ROOT.old"
mv "$stage" "$ROOT"
trap - EXIT
rm -rf "$ROOT.old"
# Warm the root-owned cache so the broker starts fast; not fatal.
DENO_DIR="$ROOT/deno-cache" "$ROOT/deno" cache --no-config --no-lock --no-remote --no-npm \
  "$ROOT/src/broker/broker.ts" "$ROOT/src/askpass/helper.ts" "$ROOT/src/broker/allowlist_append.ts" \
  "$ROOT/src/extension/keyboard/terminal_guardian.ts" \
  "$ROOT/src/extension/keyboard/lock_keeper.ts" >/dev/null 2>&1 ||
  say "note: could not pre-compile the broker (it will compile on first use)"
# `deno cache` transpiles but leaves V8's code cache empty; one run of the
# helper with no argument (it exits 1 at its first check) fills it, so the
# first sudo of a hardened session is as fast as the rest
# (extension/channel/deno_warmup.ts does the same for a session's own cache).
warm=0
DENO_DIR="$ROOT/deno-cache" NO_COLOR=1 "$ROOT/deno" run --no-prompt --no-remote --no-npm \
  --no-config --no-lock "$ROOT/src/askpass/helper.ts" </dev/null >/dev/null 2>&1 || warm=$?
[ "$warm" = 1 ] || say "note: could not warm the helper's cache (its first run will be slower)"
# The same for the terminal guardian that hardened sessions run (ADR 0008).
warm=0
DENO_DIR="$ROOT/deno-cache" NO_COLOR=1 "$ROOT/deno" run --no-prompt --no-remote --no-npm \
  --no-config --no-lock "$ROOT/src/extension/keyboard/terminal_guardian.ts" \
  </dev/null >/dev/null 2>&1 || warm=$?
[ "$warm" = 1 ] || say "note: could not warm the guardian's cache (its first run will be slower)"
# And for the lock keeper, which runs in a tmux client's lock (ADR 0009).
warm=0
DENO_DIR="$ROOT/deno-cache" NO_COLOR=1 "$ROOT/deno" run --no-prompt --no-remote --no-npm \
  --no-config --no-lock "$ROOT/src/extension/keyboard/lock_keeper.ts" \
  </dev/null >/dev/null 2>&1 || warm=$?
[ "$warm" = 2 ] || say "note: could not warm the lock keeper's cache (its first run will be slower)"
say "$how $ROOT (version $version, protocol $protocol)"

# --- sudoers rule -------------------------------------------------------------
write_sudoers "# pi-sudo-prompt: the secret broker, without a password (broker/install.sh)
$(printf '%s\n%s' "$other_rules" "$rule" | sed '/^$/d')"
rm -f "$LEGACY_SUDOERS" # merged into $SUDOERS above
say "sudoers: $SUDOERS lets $user run $ROOT/pi-secret-broker as root without a password"
visudo -c >/dev/null || die "visudo -c fails: check /etc/sudoers.d"

# --- allowlist: created once, never overwritten ------------------------------
install -d -m 0755 -o root -g root "$ALLOWLIST_DIR"
if [ -e "$ALLOWLIST" ] || [ -L "$ALLOWLIST" ]; then
  say "kept the existing $ALLOWLIST"
else
  tmp=$(mktemp "$ALLOWLIST_DIR/.allowlist.XXXXXX")
  cat >"$tmp" <<'ALLOWLIST_EOF'
# pi-sudo-prompt allowlist: commands that may receive a secret WITHOUT the red
# "this command may show the agent what you type" warning. Edit with sudoedit.
#
# One entry per line: the real absolute path of the program, then the exact
# argument shape. A marker such as <db> or <entry> matches exactly one
# non-empty argument that does not start with "-". No globs, no shell
# expansion, no optional arguments; extra arguments never match.
#
# Examples (remove the leading "# " to enable):
# /usr/bin/keepassxc-cli show -q -t <db> <entry>
# /usr/bin/keepassxc-cli show -q -a Password <db> <entry>
ALLOWLIST_EOF
  chmod 0644 "$tmp"
  chown root:root "$tmp"
  mv "$tmp" "$ALLOWLIST"
  say "created $ALLOWLIST (empty, with commented examples)"
fi
say "done. In pi, run: pi-secret-run --label \"what it is\" -- PROGRAM ARGS..."
