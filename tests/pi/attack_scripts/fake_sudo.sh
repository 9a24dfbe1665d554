#!/bin/sh
# Attack for tests/pi/agent_attacks_test.ts, run by the agent inside a bash
# tool call of real pi: a fake `sudo` (a copy of /bin/sh, so its comm is
# "sudo", owned by the user, not setuid) that runs the session's askpass.
#
# 1. direct: the fake sudo is first on PATH and runs "$SUDO_ASKPASS" itself;
#    the helper's stdout is then the tool's own pipe, not sudo's.
# 2. middle: real /usr/bin/sudo -A runs an askpass of the agent's choosing,
#    which starts the real launcher under the fake sudo. The helper's stdout
#    IS sudo's root-owned pipe (inherited), so only the session server's
#    kernel checks stand in the way: its parent is not a setuid-root sudo.
set -u
dir=$(mktemp -d)
cp /bin/sh "$dir/sudo"
chmod 700 "$dir/sudo"

echo "== direct: fake sudo first on PATH runs \$SUDO_ASKPASS"
PATH="$dir:$PATH" sh -c 'exec sudo -c "\"\$SUDO_ASKPASS\" \"[sudo] password for $(id -un): \""' >"$dir/direct.out" 2>&1
echo "fake-sudo-direct rc=$? stdout+stderr:"
cat "$dir/direct.out"

echo "== middle: real sudo -> agent askpass -> fake sudo -> real launcher"
cat >"$dir/middle" <<MIDDLE
#!/bin/sh
"$dir/sudo" -c '"\$0" "\$1"; exit \$?' "$SUDO_ASKPASS" "\$1"
exit \$?
MIDDLE
chmod 700 "$dir/middle"
SUDO_ASKPASS="$dir/middle" /usr/bin/sudo -A -k /bin/echo attack-sudo-ran
echo "fake-sudo-middle rc=$?"
rm -rf "$dir"
