#!/bin/sh
# allowlist-append: appends ONE entry to /etc/pi-sudo-prompt/allowlist.
# Installed root-owned as /usr/local/libexec/pi-sudo-prompt/allowlist-append
# and run through sudo by `/sudo-prompt allow` after the human confirmed the
# line in pi. The checks live in the Deno module (broker/allowlist_append.ts),
# which validates the entry with the same parser the broker uses; this
# launcher only runs it on the root-owned deno with a clean environment.
set -eu
# Before any program runs: sudo may keep the caller's PATH (no secure_path).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
[ "$(/usr/bin/id -u)" = 0 ] || { echo "allowlist-append: must run as root" >&2; exit 1; }
# Deno drops a trailing lone CR from its arguments: refuse every control
# character here too (a case pattern sees the whole string, newlines included).
case "$*" in
  *[[:cntrl:]]*) echo "allowlist-append: control characters (a newline?) in the entry: refusing" >&2; exit 1 ;;
esac
. /usr/local/libexec/pi-sudo-prompt/root-deno.sh # $root, exec_root_deno
exec_root_deno \
  --allow-write=/etc/pi-sudo-prompt/allowlist \
  --allow-sys=uid \
  "$root/src/broker/allowlist_append.ts" \
  "$@"
