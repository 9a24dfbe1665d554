#!/bin/sh
# pi-secret-broker: root-owned launcher for the pi-sudo-prompt broker.
# Installed as /usr/local/libexec/pi-sudo-prompt/pi-secret-broker, run by
# `sudo -n` from pi-secret-run. It clears the environment and runs the
# root-owned broker on the root-owned deno with pinned flags; the only
# variable part is the session socket, checked here before it becomes part
# of a flag. Keep in step with broker/broker_permissions.ts.
set -eu
if [ "$#" -lt 2 ] || [ "$1" != "--socket" ]; then
  echo "pi-secret-broker: usage: pi-secret-broker --socket PATH ... (run pi-secret-run instead)" >&2
  exit 125
fi
sock=$2
case "$sock" in
  /*) ;;
  *) echo "pi-secret-broker: the socket path must be absolute" >&2; exit 125 ;;
esac
case "$sock" in
  *[!A-Za-z0-9._/@+-]* | *//* | *..*)
    echo "pi-secret-broker: unsafe characters in the socket path" >&2
    exit 125
    ;;
esac
root=/usr/local/libexec/pi-sudo-prompt
exec /usr/bin/env -i \
  DENO_DIR="$root/deno-cache" \
  NO_COLOR=1 \
  SUDO_UID="${SUDO_UID-}" \
  SUDO_GID="${SUDO_GID-}" \
  SUDO_USER="${SUDO_USER-}" \
  "$root/deno" run \
  --no-prompt \
  --no-remote \
  --no-npm \
  --no-config \
  --no-lock \
  --allow-read \
  "--allow-write=/run/pi-sudo-prompt,$sock" \
  "--allow-net=unix:$sock" \
  --allow-run=/usr/bin/setpriv \
  --allow-env=SUDO_UID,SUDO_GID,SUDO_USER \
  --allow-sys=uid \
  "$root/src/broker/broker.ts" \
  "$@"
