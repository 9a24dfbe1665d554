#!/bin/sh
# allowlist-append: appends ONE entry to /etc/pi-sudo-prompt/allowlist.
# Installed root-owned as /usr/local/libexec/pi-sudo-prompt/allowlist-append
# and run through sudo by `/sudo-prompt allow` after the human confirmed the
# line in pi. It never follows a symlink, never creates a missing allowlist,
# and keeps the file's comments, owner and mode (it only appends).
set -eu
ALLOWLIST=/etc/pi-sudo-prompt/allowlist
die() {
  echo "allowlist-append: $*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || die "must run as root"
[ "$#" = 1 ] || die "usage: allowlist-append 'ENTRY'"
line=$1
case "$line" in
  /*) ;;
  *) die "an entry starts with the program's absolute path" ;;
esac
# One printable line only.
if printf '%s' "$line" | LC_ALL=C grep -q '[[:cntrl:]]'; then die "control characters in the entry"; fi
[ -L "$ALLOWLIST" ] && die "$ALLOWLIST is a symlink: refusing"
[ -f "$ALLOWLIST" ] || die "$ALLOWLIST is missing: install the broker first"
[ "$(stat -c %u "$ALLOWLIST")" = 0 ] || die "$ALLOWLIST is not owned by root: refusing"
case "$(stat -c %a "$ALLOWLIST")" in
  *[2367]? | *[2367]) die "$ALLOWLIST is writable by group or others: refusing" ;;
esac
if grep -qxF -- "$line" "$ALLOWLIST"; then
  echo "allowlist-append: already present: $line"
  exit 0
fi
if [ -s "$ALLOWLIST" ] && [ -n "$(tail -c 1 "$ALLOWLIST")" ]; then printf '\n' >>"$ALLOWLIST"; fi
printf '%s\n' "$line" >>"$ALLOWLIST"
echo "allowlist-append: added: $line"
