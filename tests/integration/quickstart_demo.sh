#!/bin/bash
# README's first command, as a new user meets it: the demo starts, and the
# `Try it` line it prints works from a terminal (tmux) with no token
# prompt: an allowed command runs, a refused one says why, the session is
# recorded; the `Check it` line (agentgate doctor on the demo's own sshd)
# finds nothing to fix; `stop` takes everything away again.
. "$(dirname "$0")/lib.sh"
ag_own_mount_ns "$@"
command -v tmux >/dev/null || { echo "tmux not installed" >&2; exit 99; }
# the demo builds and runs a plain build: the plain pass runs this
if ldd "$AGENTGATE" 2>/dev/null | grep -q libasan; then
	echo "SKIP: the demo runs a plain build; the plain pass runs it"
	exit 77
fi
DEMO=/run/agentgate-demo
if [ -e "$DEMO" ]; then
	echo "SKIP: a demo is running on this host ($DEMO); not touching it"
	exit 77
fi
# the demo links its policy at the build's default path: here, in this
# test's own mount namespace, not the host's (a demo someone runs keeps
# its link); it uses the system user agentgate, which the package test
# may remove
ag_private_sysconf "$("$AGENTGATE" --help | sed -n 's/.*policy file (default \(.*\)).*/\1/p' | head -1)"
exec 7>/run/agentgate-debian-package.lock
flock 7

AG_DIR=$(mktemp -d /var/lib/agentgate-test.XXXXXX) || exit 99
TMUX_SOCK=$AG_DIR/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
demo_cleanup() {
	tm kill-server >/dev/null 2>&1
	bash "$top_srcdir/contrib/quickstart-demo.sh" stop >/dev/null 2>&1
	rm -rf -- "$AG_DIR"
}
trap demo_cleanup EXIT
trap 'exit 1' INT TERM HUP

PORT=$(ag_free_port)
out=$(AGENTGATE_BUILD=$top_builddir DEMO_PORT=$PORT bash "$top_srcdir/contrib/quickstart-demo.sh" 2>&1)
rc=$?
ag_is "$rc" 0 "the demo runs" "$(printf '%s\n' "$out" | tail -n 15)"
ag_unlike "$out" 'policy unavailable|cannot start|recordings directory' "its scripted session has no setup error" \
    "$(printf '%s\n' "$out" | grep -E 'policy unavailable|cannot start|recordings directory' | head -3)"
TRY=$(printf '%s\n' "$out" | sed -n 's/^Try it: *//p')
CHECK=$(printf '%s\n' "$out" | sed -n 's/^Check it: *//p')
ag_like "$TRY" "^ssh .* agent@127\.0\.0\.1$" "it prints the Try it line"

# the Try it line, from a terminal, as the user would paste it (with -t)
printf 'set-option -g remain-on-exit on\n' > "$AG_DIR/tmux.conf"
tm -f "$AG_DIR/tmux.conf" new-session -d -s try -x 100 -y 30 "$TRY -t"
screen() { tm capture-pane -p -J -t try -S -200 2>/dev/null; }
pane_matches() { screen | grep -Eq -- "$1"; }
wait_for() { ag_wait_until 60 pane_matches "$1"; }
pane_dead() { [ "$(tm display-message -p -t try '#{pane_dead}' 2>/dev/null)" = 1 ]; }
ag_ok "Try it gives a prompt" wait_for '^agent@[^ ]*:~\$ ?$'
ag_unlike "$(screen)" '[Tt]oken|denied|recordings directory' "without a token prompt or an error" "$(screen)"
tm send-keys -t try 'ls /etc/ssh' Enter
ag_ok "an allowed command runs" wait_for 'sshd_config'
tm send-keys -t try 'rm -rf /tmp/x' Enter
ag_ok "a refused one says why" wait_for "^agentgate: denied: 'rm' is not allowed"
tm send-keys -t try 'exit' Enter
ag_ok "the session ends" ag_wait_until 60 pane_dead
ag_like "$(grep -l 'rm -rf /tmp/x' "$DEMO"/log/recordings/*.cast 2>/dev/null)" '\.cast$' \
    "the terminal session was recorded, the refusal with it"

# the admin's next step: doctor on the demo's own sshd
ag_like "$CHECK" 'doctor' "it prints the Check it line"
doc=$(eval "$CHECK" 2>&1)
ag_like "$doc" ' 0 failed$' "agentgate doctor finds nothing to fix" "$doc"
home=$(getent passwd agent | cut -d: -f6)
ag_is "$(stat -c '%U' "$home" "$home/.bashrc" "$home/work" | tr '\n' ' ')" "root root agent " \
    "the home and its dotfiles are root's, ~/work the account's"

bash "$top_srcdir/contrib/quickstart-demo.sh" stop >/dev/null 2>&1
ag_ok "stop removes the demo" test ! -e "$DEMO"
ag_ok "and the link to its policy" sh -c "! ls -l /usr/local/etc/agentgate/agentgate.yaml 2>/dev/null | grep -q agentgate-demo"
ag_ok "and its sshd is gone" sh -c "! (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null"

# the developer tier's demo, twice as a user trying it again would: its
# project starts from nothing each time, and every step does what it says
for run in first second; do
	out=$(AGENTGATE_BUILD=$top_builddir DEMO_PORT=$PORT DEMO_PROFILE=developer \
	    bash "$top_srcdir/contrib/quickstart-demo.sh" 2>&1)
	ag_is "$?" 0 "the developer demo runs ($run time)" "$(printf '%s\n' "$out" | tail -n 15)"
	ag_like "$(printf '%s\n' "$out" | grep -cx 'initialised\|all tests passed')" '^2$' \
	    "its project is initialised, built and tested ($run time)" \
	    "$(printf '%s\n' "$out" | sed -n '/== 1/,/== 2/p')"
	ag_unlike "$out" '(^|\n)(error|fatal):' "no step fails ($run time)" \
	    "$(printf '%s\n' "$out" | grep -E '^(error|fatal):')"
	ag_like "$out" "'git push' is denied" "and the push is refused ($run time)"
done
bash "$top_srcdir/contrib/quickstart-demo.sh" stop >/dev/null 2>&1
ag_done
