# root-deno.sh: sourced (`.`) by the root-owned launchers pi-secret-broker and
# allowlist-append, never run; installed root-owned beside them, so that the
# flags and environment their Deno entry points share are written once
# (docs/permissions.md). Defines $root, the install directory, and
# exec_root_deno.
root=/usr/local/libexec/pi-sudo-prompt

# exec_root_deno [--sudo-ids] FLAG... MODULE [ARG...]: replaces the shell with
# the root-owned deno running MODULE, in an environment of DENO_DIR and
# NO_COLOR only (with --sudo-ids, also the SUDO_UID and SUDO_GID sudo set), with
# the pinned flags, then the entry point's own FLAGs.
exec_root_deno() {
  sudo_ids=
  if [ "${1-}" = --sudo-ids ]; then
    sudo_ids=1
    shift
  fi
  exec /usr/bin/env -i \
    DENO_DIR="$root/deno-cache" \
    NO_COLOR=1 \
    ${sudo_ids:+"SUDO_UID=${SUDO_UID-}"} \
    ${sudo_ids:+"SUDO_GID=${SUDO_GID-}"} \
    "$root/deno" run \
    --no-prompt \
    --no-remote \
    --no-npm \
    --no-config \
    --no-lock \
    --allow-read \
    "$@"
}
