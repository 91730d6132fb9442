#!/bin/bash
# Identities on one account stay apart when a process of the account runs
# outside the sandbox (issue 34), through the real sshd:
#   - the gateway is the account's login shell: sshd executes it directly,
#     so a process of the account watching for new sessions (ptrace attach,
#     /proc/PID/environ) gets hold of none: not the session, not the token
#   - an account with identities whose login shell is another shell is
#     refused, with the reason in the audit and the fix in the log
#   - --profile on a gateway the agent starts itself never widens the
#     caller's profile; a profile's selectable_by says who it may be given to
#   - the -c of a login shell: the gateway's own words only
. "$(dirname "$0")/lib.sh"
ag_world_identities alice bob
ag_setgid_gateway

TOK_BOB="tok-bob-$$"
TOK_EVE="tok-eve-$$"
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
identities:
  - { name: alice, keys: ["$(ag_key alice)"], profile: low }
  - { name: bob, keys: ["$(ag_key bob)"], token_sha256: $(sha "$TOK_BOB"), profile: high }
  - { name: eve, token_sha256: $(sha "$TOK_EVE"), profile: low }
profiles:
  low:
    allow: [echo, cat, sh, sleep, python3, "$AG_DIR/agentgate"]
    paths: { read: ["/"], write: ["/tmp", "~"] }
  high:
    allow: [echo, id, cat]
    paths: { read: ["/"], write: ["/tmp", "~"] }
  deploy:
    allow: [echo, id]
    selectable_by: [eve]
POLICY
AG_SSHD_AUTHKEYS_FILE=none
AG_SSHD_EXTRA="AcceptEnv AGENTGATE_TOKEN
AuthorizedKeysCommand $AG_DIR/agentgate authorized-keys --config $AG_DIR/policy.yaml %u
AuthorizedKeysCommandUser root"
# Debian's sshd stack: pam_env reads the user's ~/.pam_environment, as
# root, before a bind line added at the end
AG_SSHD_PAM_EXTRA="session required pam_env.so user_readenv=1"
ag_start_sshd || exit 99
T="$AG_USER@127.0.0.1"

# ---- a watcher of the account's, outside any gateway -------------------------
# For every new process of the account whose parent is an sshd process (what
# sshd starts for a session), it tries what the review did in the login
# shell's window: read its environment and attach to it.  One line per
# process: "PID environ=ok|EACCES.. attach=ok|EPERM..".
cat > "$AG_DIR/watch.py" <<'PY'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH, PTRACE_DETACH = 16, 17
out, stop = sys.argv[1], sys.argv[2]
seen = set()
me = os.getuid()
with open(out, "a", buffering=1) as f:
    while not os.path.exists(stop):
        for d in os.listdir("/proc"):
            if not d.isdigit() or d in seen:
                continue
            try:
                st = os.stat("/proc/" + d)
                with open("/proc/%s/stat" % d) as s:
                    ppid = s.read().rsplit(")", 1)[1].split()[1]
                with open("/proc/%s/comm" % ppid) as c:
                    parent = c.read().strip()
            except OSError:
                continue
            if st.st_uid != me or not parent.startswith("sshd"):
                continue
            seen.add(d)
            try:
                with open("/proc/%s/environ" % d, "rb") as e:
                    e.read()
                env = "ok"
            except OSError as ex:
                env = errno.errorcode.get(ex.errno, str(ex.errno))
            pid = int(d)
            if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
                att = "ok"
                os.waitpid(pid, 0x40000000)  # __WALL
                libc.ptrace(PTRACE_DETACH, pid, None, None)
            else:
                att = errno.errorcode.get(ctypes.get_errno(), "?")
            f.write("%s environ=%s attach=%s\n" % (d, env, att))
PY
chmod 0644 "$AG_DIR/watch.py"
: > "$AG_DIR/watch.out"
chown "$AG_USER" "$AG_DIR/watch.out"
runuser -u "$AG_USER" -- python3 "$AG_DIR/watch.py" "$AG_DIR/watch.out" "$AG_DIR/watch.stop" &
WATCH=$!
AG_SERVER_PIDS+=("$WATCH")

# bob's sessions, by key and by token, each held open (stdin) until the
# watcher has had its go at it
seen_lines() { wc -l < "$AG_DIR/watch.out"; }
n_ok=0
for i in 1 2 3 4 5 6; do
	before=$(seen_lines)
	fifo=$AG_DIR/in.$i
	mkfifo "$fifo"
	if [ $((i % 2)) = 0 ]; then
		# the token sshd passes on sits in the environment it starts with
		AGENTGATE_TOKEN=$TOK_BOB ag_as bob -o SendEnv=AGENTGATE_TOKEN "$T" \
		    "cat; echo bob-$i; id -un" < "$fifo" > "$AG_DIR/out.$i" 2>&1 &
	else
		ag_as bob "$T" "cat; echo bob-$i; id -un" < "$fifo" > "$AG_DIR/out.$i" 2>&1 &
	fi
	client=$!
	exec 7>"$fifo"
	ag_wait_until 60 bash -c "[ \$(wc -l < '$AG_DIR/watch.out') -gt $before ]"
	exec 7>&-
	wait "$client"
	grep -q "^bob-$i\$" "$AG_DIR/out.$i" && grep -q "^$AG_USER\$" "$AG_DIR/out.$i" &&
	    n_ok=$((n_ok + 1))
done
touch "$AG_DIR/watch.stop"
wait "$WATCH"
lines=$(cat "$AG_DIR/watch.out")
ag_ok "watcher_saw_every_session" test "$(seen_lines)" -ge 6
ag_unlike "$lines" "environ=ok" "no_session_environment_readable_by_the_account" "$lines"
ag_unlike "$lines" "attach=ok" "no_session_attachable_by_the_account" "$lines"
ag_is "$n_ok" 6 "bobs_sessions_ran_bobs_commands_as_bob" "$(cat "$AG_DIR"/out.*)"
ag_is "$(ag_audit_query "sorted({x.get('identity') for x in r if x.get('event') == 'command' and 'bob-' in str(x.get('command', ''))})")" \
    "['bob']" "the_audit_gives_them_to_bob"

# ---- another login shell: identities are refused, and the admin told why -----
flock /run/agentgate-test.lock usermod -s /bin/bash "$AG_USER"
out=$(ag_as bob "$T" 'echo should-not-run' 2>&1); rc=$?
ag_unlike "$out" "should-not-run" "bash_login_shell_runs_nothing_for_an_identity" "$out"
ag_like "$out" "not set up for identities" "bash_login_shell_refusal_is_clear" "$out"
ag_is "$rc" 1 "bash_login_shell_exit_status" "$out"
out=$(ag_audit_query "[x.get('reason') for x in r if x.get('event') == 'auth_failure' and x.get('request') == 'login_shell'][-1:]")
ag_like "$out" "login shell is /bin/bash.*chsh -s $AG_DIR/agentgate" \
    "bash_login_shell_audited_with_the_fix" "$out"
out=$(AGENTGATE_TOKEN=$TOK_BOB ag_as bob -o SendEnv=AGENTGATE_TOKEN "$T" 'echo should-not-run' 2>&1)
ag_unlike "$out" "should-not-run" "bash_login_shell_refuses_a_token_too" "$out"
flock /run/agentgate-test.lock usermod -s "$AG_DIR/agentgate" "$AG_USER"
out=$(ag_as bob "$T" 'echo back' 2>&1)
ag_is "$out" "back" "gateway_login_shell_again_lets_bob_in"

# ---- --profile never widens -----------------------------------------------------
selfgw() {	# selfgw TOKEN ARGS...: a gateway the account starts itself
	local t=$1
	shift
	runuser -u "$AG_USER" -- env AGENTGATE_TOKEN="$t" "$AG_DIR/agentgate" \
	    --config "$AG_DIR/policy.yaml" "$@" 2>&1
}
out=$(selfgw "$TOK_EVE" --profile high -c 'id -un')
ag_unlike "$out" "^$AG_USER\$" "self_started_profile_high_refused_for_eve" "$out"
ag_like "$out" "selectable_by" "self_started_profile_refusal_names_selectable_by" "$out"
# the same from inside alice's own session (her profile runs the gateway)
out=$(ag_as alice "$T" "$AG_DIR/agentgate --config $AG_DIR/policy.yaml --profile high -c 'id -un'" 2>&1)
ag_unlike "$out" "^$AG_USER\$" "nested_profile_high_refused_for_alice" "$out"
# through a python3 exec, not the typed line
out=$(ag_as alice "$T" "python3 -c \"import os; os.execv('$AG_DIR/agentgate', ['agentgate', '--config', '$AG_DIR/policy.yaml', '--profile', 'high', '-c', 'id -un'])\"" 2>&1)
ag_unlike "$out" "^$AG_USER\$" "python_exec_profile_high_refused" "$out"
# the benign sides: a profile whose selectable_by names the caller, and
# naming one's own profile
out=$(selfgw "$TOK_EVE" --profile deploy -c 'id -un')
ag_is "$out" "$AG_USER" "selectable_by_lets_eve_choose_deploy"
out=$(selfgw "$TOK_BOB" --profile deploy -c 'id -un')
ag_like "$out" "selectable_by" "selectable_by_refuses_bob_deploy" "$out"
out=$(selfgw "$TOK_EVE" --profile low -c 'echo own')
ag_is "$out" "own" "naming_ones_own_profile_is_allowed"

# ---- a login shell's -c -------------------------------------------------------
out=$(selfgw "$TOK_EVE" -c "$AG_DIR/agentgate --config '$AG_DIR/policy.yaml'"); rc=$?
ag_is "$rc" 2 "own_invocation_with_quotes_is_a_usage_error" "$out"
ag_like "$out" "plain words" "own_invocation_error_says_why" "$out"
out=$(selfgw "$TOK_EVE" -c "$AG_DIR/agentgate --profile high"); rc=$?
ag_unlike "$out" "^$AG_USER\$" "own_invocation_profile_does_not_widen" "$out"
out=$(runuser -u "$AG_USER" -- env AGENTGATE_TOKEN="$TOK_EVE" SSH_ORIGINAL_COMMAND='echo via-original' \
    "$AG_DIR/agentgate" -c "$AG_DIR/agentgate --config $AG_DIR/policy.yaml" 2>&1)
ag_is "$out" "via-original" "own_invocation_runs_ssh_original_command"

# ---- ~/.pam_environment (read by pam_env, as root) steers no session ----------
# A home the account can write is a setup doctor fails; the gateway still
# holds: whatever the file names under SSH_* or AGENTGATE_*, sshd's stack
# records a refusal and no session runs anything it chose.
home=$(getent passwd "$AG_USER" | cut -d: -f6)
pamenv() {	# pamenv LINE: the file as the account writes it
	printf '%s\n' "$1" > "$home/.pam_environment"
	chown "$AG_USER" "$home/.pam_environment"
}
pamenv "SSH_AUTH_INFO_0 DEFAULT=\"publickey $(ag_key bob)\""
out=$(ag_as alice "$T" 'echo pamenv-$$; id -un' 2>&1)
ag_unlike "$out" "^$AG_USER\$" "pam_environment_naming_bobs_key_does_not_make_alice_bob" "$out"
ag_is "$(ag_audit_query "[x.get('identity') for x in r if 'pamenv-$$' in str(x.get('command', '')) and x.get('decision') == 'allow']")" \
    "[]" "pam_environment_forgery_runs_nothing_as_bob"
# the command of a session that sent none (bob's REPL)
pamenv "SSH_ORIGINAL_COMMAND DEFAULT=\"id > $AG_DIR/pwned\""
printf 'echo bob-typed\n' | ag_as bob "$T" > "$AG_DIR/repl.out" 2>&1
ag_ok "pam_environment_command_does_not_run_in_bobs_session" test ! -e "$AG_DIR/pwned"
ag_like "$(cat "$AG_DIR/repl.out")" "authentication failed" "bobs_session_is_refused_with_a_reason" \
    "$(cat "$AG_DIR/repl.out")"
ag_like "$(ag_audit_query "[x.get('reason') for x in r if x.get('event') == 'auth_failure'][-1]")" \
    "pam_environment sets SSH_\\* or AGENTGATE_\\*" "the_audit_says_why"
# another identity's token in place of the one the client sent
pamenv "AGENTGATE_TOKEN DEFAULT=$TOK_EVE"
out=$(AGENTGATE_TOKEN=$TOK_BOB ag_as bob -o SendEnv=AGENTGATE_TOKEN "$T" 'echo tok-swap; id -un' 2>&1)
ag_unlike "$out" "tok-swap" "pam_environment_token_swap_runs_nothing" "$out"
ag_is "$(ag_audit_query "[x.get('identity') for x in r if 'tok-swap' in str(x.get('command', ''))]")" \
    "[]" "pam_environment_token_swap_is_nobodys_session"
rm -f "$home/.pam_environment"
out=$(ag_as alice "$T" 'echo alice-again' 2>&1)
ag_is "$out" "alice-again" "without_the_file_alice_is_alice_again"

# ---- where the client is ------------------------------------------------------
client_of() { ag_audit_query "[x.get('client') for x in r if x.get('event') == 'command' and '$1' in str(x.get('command', ''))][-1]"; }
runuser -u "$AG_USER" -- env AGENTGATE_TOKEN="$TOK_EVE" SSH_CONNECTION='10.9.9.9 4444 127.0.0.1 22' \
    "$AG_DIR/agentgate" --config "$AG_DIR/policy.yaml" -c 'echo forged-conn' >/dev/null 2>&1
ag_is "$(client_of forged-conn)" "local" "self_started_gateway_client_is_local_not_ssh_connection"
ag_as bob "$T" 'echo real-conn' >/dev/null 2>&1
ag_like "$(client_of real-conn)" "^127\.[0-9.]+:[0-9]+$" "sshd_started_gateway_client_is_sshds"
# ---- doctor: identities sharing an account without the sandbox -------------------
out=$("$AG_DIR/agentgate" doctor --config "$AG_DIR/policy.yaml" --user "$AG_USER" 2>&1)
ag_like "$out" "WARN  account $AG_USER is shared by [0-9]+ callers \\(identities, and those without one\\) with the sandbox off" \
    "doctor_warns_of_a_shared_account_without_the_sandbox" "$out"

ag_done
