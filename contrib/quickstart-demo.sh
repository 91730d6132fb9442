#!/usr/bin/env bash
# quickstart-demo.sh - the real thing in one command (needs root):
#   install what is missing (contrib/deps.sh), build agentgate, start the
#   real OpenSSH sshd on 127.0.0.1:2222 with agentgate as the ForceCommand
#   of a demo account "agent" and the example policy (etc/agentgate.yaml,
#   with only its log paths moved into the demo directory), run a short
#   scripted agent session, and leave sshd running.
#
#   bash contrib/quickstart-demo.sh          # set up and run the demo
#   bash contrib/quickstart-demo.sh stop     # stop sshd, remove the demo files
#
# Environment: AGENTGATE_BUILD (build directory, default <repo>/build),
# DEMO_PORT (default 2222), DEMO_PROFILE (the profile the account "agent"
# gets: readonly as in the example policy, or developer to build and test
# in ~agent/work).  The demo account stays (userdel agent && rm -rf /home/agent:
# its home is root's, which userdel -r refuses).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
DEMO=/run/agentgate-demo
PORT=${DEMO_PORT:-2222}
BUILD=${AGENTGATE_BUILD:-$repo/build}
PROFILE=${DEMO_PROFILE:-readonly}
case $PROFILE in
readonly|developer) ;;
*) echo "DEMO_PROFILE must be readonly or developer" >&2; exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
	exec sudo -E bash "$0" "$@"
fi

stop() {
	if [ -f "$DEMO/sshd.pid" ]; then
		pid=$(cat "$DEMO/sshd.pid")
		# only the sshd we started: check it is running our config
		if tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-f $DEMO/sshd_config"; then
			kill "$pid"
			echo "agentgate demo: sshd (pid $pid) stopped"
		fi
	fi
	# sshd's PAM service for the demo's sshd (lib.sh, ag_sshd_pam)
	rm -f /etc/pam.d/sshd-agentgate-demo
	# the link to the demo's policy at the build's default path
	if [ -f "$DEMO/policy.link" ]; then
		link=$(cat "$DEMO/policy.link")
		[ "$(readlink "$link")" = "$DEMO/agentgate.yaml" ] && rm -f "$link"
	fi
	rm -rf -- "$DEMO"
}

if [ "${1:-}" = stop ]; then
	stop
	exit 0
fi

echo "== installing missing packages (contrib/deps.sh)"
bash "$repo/contrib/deps.sh"

echo "== building in $BUILD"
if [ ! -x "$repo/configure" ]; then
	# libtoolize and automake narrate every file they copy: shown only if it fails
	if ! out=$(cd "$repo" && autoreconf -fi 2>&1); then
		printf '%s\n' "$out" >&2
		exit 1
	fi
fi
mkdir -p "$BUILD"
if [ ! -f "$BUILD/Makefile" ]; then
	(cd "$BUILD" && "$repo/configure" -q)
fi
make -s -C "$BUILD" -j"$(nproc)" >/dev/null
AGENTGATE=$BUILD/src/agentgate
PAM_MODULE=$BUILD/pam/.libs/pam_agentgate.so
[ -x "$AGENTGATE" ] || { echo "build did not produce $AGENTGATE" >&2; exit 1; }
[ -f "$PAM_MODULE" ] || { echo "build did not produce $PAM_MODULE" >&2; exit 1; }
AG_POLICY=$DEMO/agentgate.yaml

# the test helper has the pieces: account, keys, work dir, sshd
# shellcheck source=../tests/integration/lib.sh
. "$repo/tests/integration/lib.sh"
set +eu

stop >/dev/null 2>&1 || true
touch /run/agentgate-test.lock
AG_USER_NAME=agent
ag_create_user || { echo "cannot create the demo account 'agent'" >&2; exit 1; }
ag_make_world "$DEMO" || { echo "cannot set up $DEMO" >&2; exit 1; }

# the example policy, with only its log locations moved into the demo dir,
# its PAM service (pam_agentgate.so, callers without a registered key fall
# through to users:) in the demo dir rather than /etc/pam.d, and the demo's
# client key as an identity with the demo's profile
client_key=$(cut -d' ' -f1-2 "$DEMO/client.pub")
sed -e "s|/var/log/agentgate/audit.jsonl|$DEMO/log/audit.jsonl|" \
    -e "s|/var/log/agentgate/recordings|$DEMO/log/recordings|" \
    -e "s|^  agent: readonly|  agent: $PROFILE|" \
    -e "/^gateway:[[:space:]]*\$/a\\  pam_confdir: $DEMO/pam.d" \
    -e "/^identities:/a\\  - { name: demo, keys: [\"$client_key\"], profile: $PROFILE }" \
    "$repo/etc/agentgate.yaml" > "$DEMO/agentgate.yaml"
# the privilege separation `make install` sets up (agentgate(8), SECURITY):
# the gateway set-group-ID to its group, which alone writes the audit log
# and the recordings (ssh -t) and reads the policy (it holds the
# identities' keys); the account can do none of it.  The system user of the
# same name asks the policy for the account's keys (AuthorizedKeysCommand).
group=$(sed -n 's/^#define AG_GROUP "\(.*\)"$/\1/p' "$BUILD/agconfig.h")
getent group "$group" >/dev/null || groupadd --system "$group" || exit 1
getent passwd "$group" >/dev/null || useradd --system --no-create-home \
    --home-dir /nonexistent --shell /usr/sbin/nologin -g "$group" "$group" || exit 1
# The policy is read with the gateway's group only at the build's default
# path (a file named by --config is read as its caller, who could name any
# file): the demo links its policy there unless something else is there.
default=$("$AGENTGATE" --help | sed -n 's/.*policy file (default \(.*\)).*/\1/p' | head -1)
if [ -n "$default" ] && { [ ! -e "$default" ] || [ "$(readlink "$default")" = "$DEMO/agentgate.yaml" ]; }; then
	mkdir -p "$(dirname "$default")"
	ln -sfn "$DEMO/agentgate.yaml" "$default"
	echo "$default" > "$DEMO/policy.link"
	chown root:"$group" "$DEMO/agentgate.yaml" && chmod 0640 "$DEMO/agentgate.yaml"
	config_arg=
else
	echo "== $default exists: the demo names its policy with --config, which the agent must be able to read" >&2
	config_arg="--config $DEMO/agentgate.yaml"
fi
chown root:"$group" "$DEMO/agentgate" && chmod 2755 "$DEMO/agentgate"
install -d -o root -g "$group" -m 2770 "$DEMO/log" "$DEMO/log/recordings"
chown root:"$group" "$DEMO/log" && chmod 2770 "$DEMO/log"
# each identity's /tmp, kept between its sessions (`make > /tmp/log`, then
# `cat /tmp/log`), and the toolchains' caches beneath it: as make install
# and the Debian package make it (it stays, as theirs does)
statedir=$(sed -n 's/^#define AG_STATEDIR "\(.*\)"$/\1/p' "$BUILD/agconfig.h")
if [ -n "$statedir" ] && [ ! -e "$statedir/tmp" ]; then
	install -d -o root -g root -m 0755 "$statedir"
	install -d -o root -g "$group" -m 1770 "$statedir/tmp"
fi
# what sshd and bash read before the gateway runs (the home, its dotfiles)
# is root's; the developer tier works in ~/work, the account's
home=$(getent passwd "$AG_USER" | cut -d: -f6)
chown root:root "$home" && chmod 0755 "$home"
find "$home" -mindepth 1 -maxdepth 1 ! -name work -exec chown -h root:root {} + || exit 1
find "$home" -mindepth 1 -maxdepth 1 ! -name work ! -type l -exec chmod go-w {} + || exit 1
install -d -o "$AG_USER" -g "$(id -g "$AG_USER")" -m 0755 "$home/work"
"$AGENTGATE" check --config "$DEMO/agentgate.yaml" >/dev/null || exit 1

# sshd as the drop-in sets it up: the policy is its only source of keys
AG_SSHD_AUTHKEYS_FILE=none
AG_SSHD_EXTRA="AuthorizedKeysCommand $DEMO/agentgate authorized-keys${config_arg:+ $config_arg} %u
AuthorizedKeysCommandUser $group"
AG_PORT=$PORT
AG_SSHD_DETACH=1
AG_FORCE_COMMAND="$DEMO/agentgate${config_arg:+ $config_arg}"
if ! ag_start_sshd; then
	echo "could not start sshd on 127.0.0.1:$PORT (in use? set DEMO_PORT)" >&2
	exit 1
fi
echo "$AG_SSHD_PID" > "$DEMO/sshd.pid"
ag_ssh_argv
echo "== sshd is listening on 127.0.0.1:$PORT; ForceCommand: $AG_FORCE_COMMAND"

session_args=("$AG_AUDIT")
if [ "$PROFILE" = developer ]; then
	session_args=(--developer "$AG_AUDIT")
	# the scripted session's project starts from an empty directory at
	# every run (a second git init would meet the kernel's hold on
	# .git/config); the rest of ~/work is the user's
	rm -rf -- "$home/work/hello"
fi
bash "$repo/contrib/demo/agent-session.sh" "${session_args[@]}" "${AG_SSH[@]}"

if [ "$PROFILE" = developer ]; then
	other="Read-only tier instead:  bash contrib/quickstart-demo.sh stop; DEMO_PROFILE=readonly bash contrib/quickstart-demo.sh"
else
	other="Developer tier instead:  bash contrib/quickstart-demo.sh stop; DEMO_PROFILE=developer bash contrib/quickstart-demo.sh"
fi
cat <<EOF

agentgate demo is running; the account 'agent' has profile '$PROFILE'.
Try it:   ssh -i $DEMO/client -p $PORT -o IdentitiesOnly=yes -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no agent@127.0.0.1
          (add a command to run just that one; -t for a terminal)
$other
Check it: $DEMO/agentgate doctor --user agent --sshd $AG_SSHD_BIN --sshd-config $DEMO/sshd_config
Stop it:  bash contrib/quickstart-demo.sh stop
EOF
