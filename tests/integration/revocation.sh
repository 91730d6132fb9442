#!/bin/bash
# Revocation reaches live sessions (issue 35): an identity the policy no
# longer admits loses the sessions it holds, and a locked one cannot log in.
#   - agentgate terminate --reason: the client is told the administrator
#     ended it, and why, and exits 253
#   - agentgate edit that disables an identity ends its sessions and says
#     which; an edit that leaves an identity alone leaves its session alone
#   - a policy written by config management (not edit) that drops an
#     identity or its key: the session ends at its next line, audited
#   - agentgate lock: live sessions end, new logins are refused (audited),
#     unlock lets it back
#   - a gateway whose program was removed ends its session at the next
#     line with a message instead of failing oddly; an upgrade does not
. "$(dirname "$0")/lib.sh"
ag_world_identities alice bob carol dave spare
ag_setgid_gateway
# identity names of this run: locks are the host's, other tests run beside
D=dave$$
E=eve$$@corp

policy() {	# policy [IDENTITY-LINES...]: the identities given, or all four
	local ids=("$@")
	[ ${#ids[@]} -gt 0 ] || ids=(
	    "{ name: alice, keys: [\"$(ag_key alice)\"], profile: dev }"
	    "{ name: bob, keys: [\"$(ag_key bob)\"], profile: dev }"
	    "{ name: carol, keys: [\"$(ag_key carol)\"], profile: dev }"
	    "{ name: $D, keys: [\"$(ag_key dave)\"], profile: dev }")
	{
		printf 'version: 1\ngateway:\n  sandbox: "off"\n'
		printf '  audit: { file: @AUDIT@, required: true }\nidentities:\n'
		printf '  - %s\n' "${ids[@]}"
		printf 'profiles:\n  dev:\n    allow: [echo, sleep, "true"]\n'
		printf '    paths: { read: ["/"], write: ["/tmp"] }\n'
	} | ag_write_policy "$AG_DIR/policy.yaml"
}
policy
# sshd takes the identities' keys from the policy
: > "$AG_DIR/no_keys"
AG_SSHD_AUTHKEYS_FILE=$AG_DIR/no_keys
AG_SSHD_EXTRA="AuthorizedKeysCommand $AG_DIR/agentgate authorized-keys --config $AG_DIR/policy.yaml %u
AuthorizedKeysCommandUser root"
ag_start_sshd || exit 99
T="$AG_USER@127.0.0.1"
LOCKS=$("$AG_DIR/agentgate" lock --help | sed -n 's/.*Locks are files in \(.*\)\.$/\1/p')
trap 'rm -f "$LOCKS/identity:$D" "$LOCKS/identity:$E" "$LOCKS/identity:-x$$" "$LOCKS/account:$AG_USER"; ag_cleanup' EXIT

# repl NAME KEY: a REPL session fed from a fifo (fd 7.. by caller), its output in NAME.out
repl_start() {
	local name=$1 key=$2
	rm -f "$AG_DIR/$name.in"
	mkfifo "$AG_DIR/$name.in"
	(ag_as "$key" "$T" < "$AG_DIR/$name.in" > "$AG_DIR/$name.out" 2>&1; \
	    echo "rc=$?" >> "$AG_DIR/$name.out") &
}

# ---- terminate --reason -----------------------------------------------------------
repl_start a alice
exec 7>"$AG_DIR/a.in"
echo "echo alice-ready" >&7
ag_wait_until 60 grep -q alice-ready "$AG_DIR/a.out"
sid=$("$AG_DIR/agentgate" sessions | awk -v u="$AG_USER" '$2 == "alice" && $3 == u {print $1}')
out=$("$AG_DIR/agentgate" terminate --config "$AG_DIR/policy.yaml" --wait 600 --reason "host maintenance at noon" "$sid" 2>&1)
ag_like "$out" "session $sid \(alice@$AG_USER, pid [0-9]+\) ended: host maintenance at noon" \
    "terminate_reports_the_reason" "$out"
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/a.out"
exec 7>&-
ag_ok "client_told_the_administrator_ended_it" grep -q \
    'agentgate: the administrator ended this session: host maintenance at noon' "$AG_DIR/a.out"
ag_is "$(grep '^rc=' "$AG_DIR/a.out")" "rc=253" "terminated_session_exits_253" "$(cat "$AG_DIR/a.out")"
ag_ok "terminate_reason_audited" ag_audit_query \
    "any(x['event'] == 'session_terminate' and x.get('identity') == 'alice' and 'host maintenance at noon' in x.get('reason', '') for x in r)"
ag_ok "terminated_session_end_status_253" ag_audit_query \
    "any(x['event'] == 'session_end' and x.get('identity') == 'alice' and x.get('exit') == 253 for x in r)"

# a terminal session ended at its prompt: the client sees why, and no
# "exit" as if the agent had typed it
rm -f "$AG_DIR/p.in"
mkfifo "$AG_DIR/p.in"
(ag_as alice -tt "$T" < "$AG_DIR/p.in" > "$AG_DIR/p.out" 2>&1; echo "rc=$?" >> "$AG_DIR/p.out") &
exec 7>"$AG_DIR/p.in"
echo "echo pty-ready" >&7
ag_wait_until 60 grep -q '^pty-ready' "$AG_DIR/p.out"
sid=$("$AG_DIR/agentgate" sessions | awk -v u="$AG_USER" '$2 == "alice" && $3 == u {print $1}')
"$AG_DIR/agentgate" terminate --config "$AG_DIR/policy.yaml" --wait 600 --reason "pty end" "$sid" >/dev/null 2>&1
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/p.out"
exec 7>&-
ag_ok "pty_client_told_the_administrator_ended_it" grep -q \
    'agentgate: the administrator ended this session: pty end' "$AG_DIR/p.out"
ag_unlike "$(tr -d '\r' < "$AG_DIR/p.out")" '(^|\$ )exit$' "pty_end_shows_no_typed_exit" "$(cat -v "$AG_DIR/p.out")"

# ---- sessions shows the key; terminate --user ends an account's sessions ----------
repl_start u alice
exec 7>"$AG_DIR/u.in"
echo "echo u-ready" >&7
ag_wait_until 60 grep -q u-ready "$AG_DIR/u.out"
fp=$(ssh-keygen -lf "$AG_DIR/alice.pub" | cut -d' ' -f2)
out=$("$AG_DIR/agentgate" sessions 2>&1)
fpre=$(printf '%s' "${fp:0:19}" | sed 's/[][+/.\\*?^$(){}|]/\\&/g')
ag_like "$out" "alice +$AG_USER +[^ ]+ +$fpre " "sessions_shows_the_key" "$out"
out=$("$AG_DIR/agentgate" terminate --config "$AG_DIR/policy.yaml" --wait 600 --user "$AG_USER" 2>&1); rc=$?
ag_like "$rc/$out" "^0/session [0-9a-f]{8} \(alice@$AG_USER, pid [0-9]+\) ended" "terminate_by_account" "$out"
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/u.out"
exec 7>&-

# ---- agentgate edit disables bob: bob's session ends, carol's goes on ----------------
repl_start b bob
exec 7>"$AG_DIR/b.in"
repl_start c carol
exec 8>"$AG_DIR/c.in"
echo "echo bob-ready" >&7
echo "echo carol-ready" >&8
ag_wait_until 60 grep -q bob-ready "$AG_DIR/b.out"
ag_wait_until 60 grep -q carol-ready "$AG_DIR/c.out"
cat > "$AG_DIR/disable-bob" <<'ED'
#!/bin/sh
sed -i 's/{ name: bob, \(.*\) }$/{ name: bob, \1, disabled: true }/' "$1"
ED
chmod +x "$AG_DIR/disable-bob"
# another policy of the host (another gateway's) with an identity of the same
# name: disabling bob there is no business of this policy's bob
install -m 0644 "$AG_DIR/policy.yaml" "$AG_DIR/other.yaml"
out=$(EDITOR="$AG_DIR/disable-bob" VISUAL= "$AG_DIR/agentgate" edit --config "$AG_DIR/other.yaml" </dev/null 2>&1)
ag_unlike "$out" "bob@$AG_USER" "edit_leaves_other_policies_sessions_alone" "$out"
echo "echo bob-after-other-edit" >&7
ag_wait_until 60 grep -q bob-after-other-edit "$AG_DIR/b.out"
ag_ok "session_of_another_policy_goes_on" grep -q bob-after-other-edit "$AG_DIR/b.out"
out=$(EDITOR="$AG_DIR/disable-bob" VISUAL= "$AG_DIR/agentgate" edit --config "$AG_DIR/policy.yaml" </dev/null 2>&1)
ag_like "$out" "session [0-9a-f]{8} \(bob@$AG_USER, pid [0-9]+\) ended: identity bob was disabled" \
    "edit_ends_the_sessions_it_revokes" "$out"
ag_unlike "$out" "carol@" "edit_leaves_other_identities_alone" "$out"
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/b.out"
exec 7>&-
ag_ok "revoked_client_told_why" grep -q \
    'agentgate: the administrator ended this session: identity bob was disabled' "$AG_DIR/b.out"
ag_is "$(grep '^rc=' "$AG_DIR/b.out")" "rc=253" "revoked_session_exits_253" "$(cat "$AG_DIR/b.out")"
out=$(ag_as bob "$T" 'echo bob-again' 2>&1)
ag_unlike "$out" "bob-again" "disabled_identity_cannot_log_in_again" "$out"
echo "echo carol-still-here" >&8
ag_wait_until 60 grep -q carol-still-here "$AG_DIR/c.out"
ag_pass "unrevoked_session_goes_on_after_the_edit"

# ---- config management drops carol's key (not through edit) ----------------------
policy "{ name: alice, keys: [\"$(ag_key alice)\"], profile: dev }" \
    "{ name: carol, keys: [\"$(ag_key spare)\"], profile: dev }" \
    "{ name: $D, keys: [\"$(ag_key dave)\"], profile: dev }"
echo "echo carol-after-rewrite" >&8
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/c.out"
exec 8>&-
ag_unlike "$(cat "$AG_DIR/c.out")" "carol-after-rewrite" "line_after_revocation_does_not_run" "$(cat "$AG_DIR/c.out")"
ag_ok "client_told_its_key_was_removed" grep -q \
    "agentgate: this session has been ended: the key this session logged in with (SHA256:.*) was removed from identity carol" "$AG_DIR/c.out"
ag_is "$(grep '^rc=' "$AG_DIR/c.out")" "rc=253" "config_management_revocation_exits_253" "$(cat "$AG_DIR/c.out")"
ag_ok "revocation_audited" ag_audit_query \
    "any(x['event'] == 'session_revoked' and x.get('identity') == 'carol' and 'was removed from identity carol' in x.get('reason', '') for x in r)"

# ---- a fragment that config management removes ------------------------------------
# (the identity lives in agentgate.d beside the policy)
policy "{ name: alice, keys: [\"$(ag_key alice)\"], profile: dev }"
install -d -m 0755 "$AG_DIR/agentgate.d"
printf 'identities:\n  - { name: %s, keys: ["%s"], profile: dev }\n' "$D" "$(ag_key dave)" \
    > "$AG_DIR/agentgate.d/50-dave.yaml"
chmod 0644 "$AG_DIR/agentgate.d/50-dave.yaml"
repl_start h dave
exec 7>"$AG_DIR/h.in"
echo "echo h-ready" >&7
ag_wait_until 60 grep -q h-ready "$AG_DIR/h.out"
rm "$AG_DIR/agentgate.d/50-dave.yaml"
echo "echo h-after" >&7
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/h.out"
exec 7>&-
ag_unlike "$(cat "$AG_DIR/h.out")" "h-after" "fragment_removed_ends_its_sessions" "$(cat "$AG_DIR/h.out")"
ag_ok "fragment_removal_told" grep -q "identity $D was removed from the policy" "$AG_DIR/h.out"
rmdir "$AG_DIR/agentgate.d"

# ---- lock and unlock ----------------------------------------------------------------
policy
repl_start d dave
exec 7>"$AG_DIR/d.in"
echo "echo dave-ready" >&7
ag_wait_until 60 grep -q dave-ready "$AG_DIR/d.out"
out=$("$AG_DIR/agentgate" lock --config "$AG_DIR/policy.yaml" --reason "incident 42" $D 2>&1); rc=$?
ag_like "$rc/$(tr '\n' ' ' <<<"$out")" "^0/identity $D locked: new sessions are refused session [0-9a-f]{8} \($D@$AG_USER, pid [0-9]+\) ended: identity $D is locked: incident 42" \
    "lock_ends_live_sessions" "$out"
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/d.out"
exec 7>&-
ag_ok "locked_client_told_why" grep -q "identity $D is locked: incident 42" "$AG_DIR/d.out"
out=$(ag_as dave "$T" 'echo dave-again' 2>&1); rc=$?
ag_like "$rc/$out" "^1/agentgate: refused: identity $D is locked: incident 42" \
    "locked_identity_refused_at_login" "$out"
ag_ok "locked_login_audited" ag_audit_query \
    "any(x['event'] == 'auth_failure' and x.get('identity') == '$D' and x.get('request') == 'locked' for x in r)"
out=$("$AG_DIR/agentgate" lock --list 2>&1)
ag_like "$out" "^identity +$D +incident 42$" "lock_list_shows_it" "$out"
out=$(ag_as alice "$T" 'echo alice-unlocked' 2>&1)
ag_is "$out" alice-unlocked "other_identities_unaffected_by_a_lock" "$out"
out=$(runuser -u "$AG_USER" -- "$AG_DIR/agentgate" unlock $D 2>&1); rc=$?
ag_is "$rc" 1 "unlock_is_roots" "$out"
out=$("$AG_DIR/agentgate" unlock $D 2>&1)
ag_is "$out" "identity $D unlocked" "unlock" "$out"
out=$(ag_as dave "$T" 'echo dave-back' 2>&1)
ag_is "$out" dave-back "unlocked_identity_logs_in" "$out"
# a lock racing a login: the session that got past the check ends at its next line
repl_start d2 dave
exec 7>"$AG_DIR/d2.in"
echo "echo dave2-ready" >&7
ag_wait_until 60 grep -q dave2-ready "$AG_DIR/d2.out"
printf 'racing login\n' > "$LOCKS/identity:$D"	# as config management or a lock made elsewhere
echo "echo dave2-after-lock" >&7
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/d2.out"
exec 7>&-
ag_unlike "$(cat "$AG_DIR/d2.out")" "dave2-after-lock" "lock_file_ends_session_at_next_line" "$(cat "$AG_DIR/d2.out")"
rm -f "$LOCKS/identity:$D"
# (a lock directory others could write locks everyone: unit/test_standing,
# since the directory is the host's and other tests run beside this one)
out=$("$AG_DIR/agentgate" lock '../etc' 2>&1); rc=$?
ag_like "$rc/$out" "^1/.*not an identity" "lock_name_cannot_walk" "$out"

# a lock on an account, and on an identity whose name has an '@' (any name the
# policy accepts can be locked)
out=$("$AG_DIR/agentgate" lock --config "$AG_DIR/policy.yaml" --reason "account closed" --user "$AG_USER" 2>&1)
ag_like "$out" "^account $AG_USER locked" "lock_an_account" "$out"
out=$(ag_as alice "$T" 'echo in' 2>&1); rc=$?
ag_like "$rc/$out" "^1/agentgate: refused: account $AG_USER is locked: account closed" \
    "locked_account_refuses_every_identity" "$out"
"$AG_DIR/agentgate" unlock --user "$AG_USER" >/dev/null
policy "{ name: alice, keys: [\"$(ag_key alice)\"], profile: dev }" \
    "{ name: $E, keys: [\"$(ag_key dave)\"], profile: dev }"
out=$("$AG_DIR/agentgate" lock --config "$AG_DIR/policy.yaml" $E 2>&1)
ag_like "$out" "^identity $E locked" "lock_an_identity_named_with_an_at" "$out"
out=$(ag_as dave "$T" 'echo eve-in' 2>&1); rc=$?
ag_like "$rc/$out" "^1/agentgate: refused: identity $E is locked" "identity_with_an_at_stays_locked" "$out"
"$AG_DIR/agentgate" unlock $E >/dev/null
# a name that starts with '-' is unlocked after `--`
out=$("$AG_DIR/agentgate" lock -- -x$$ 2>&1)
ag_like "$out" "^identity -x$$ locked" "lock_a_name_starting_with_a_dash" "$out"
out=$("$AG_DIR/agentgate" unlock -- -x$$ 2>&1)
ag_is "$out" "identity -x$$ unlocked" "unlock_after_dashdash" "$out"
policy

# ---- JSON Lines: a lock while requests wait -------------------------------------
# jsonl_start NAME: dave's JSON Lines session fed from fd 7, its output in
# NAME.out, after a first request has been answered
jsonl_start() {
	rm -f "$AG_DIR/$1.in"
	mkfifo "$AG_DIR/$1.in"
	(ag_as dave -s "$T" agentgate-json < "$AG_DIR/$1.in" > "$AG_DIR/$1.out" 2>&1; \
	    echo "rc=$?" >> "$AG_DIR/$1.out") &
	exec 7>"$AG_DIR/$1.in"
	echo "{\"id\": 1, \"command\": \"echo $1-ready\"}" >&7
	ag_wait_until 60 grep -q "$1-ready" "$AG_DIR/$1.out"
}
# the running call is reported as ended by the administrator, each waiting one
# is answered as not run, and explain is no longer answered after the lock
jsonl_start j
echo '{"id": 2, "command": "echo j-running; sleep 3600"}' >&7
echo '{"id": 3, "command": "echo j-queued"}' >&7
echo '{"id": 4, "explain": "echo x"}' >&7
ag_wait_until 60 test -n "$(ag_gateway_pids)"
ag_wait_until 60 sh -c "pgrep -u '$AG_USER' -x sleep >/dev/null"
"$AG_DIR/agentgate" lock --config "$AG_DIR/policy.yaml" --reason "jsonl" $D >/dev/null 2>&1
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/j.out"
exec 7>&-
jq2=$(grep '"id": *2\|"id":2' "$AG_DIR/j.out")
ag_like "$jq2" '"rule": *"revoked"' "jsonl_running_call_reported_as_revoked" "$(cat "$AG_DIR/j.out")"
ag_like "$jq2" "(this session has been|the administrator) ended.*identity $D is locked: jsonl" \
    "jsonl_running_call_says_why" "$jq2"
for id in 3 4; do
	ag_like "$(grep "\"id\": *$id[,}]" "$AG_DIR/j.out")" '"ran": *false' \
	    "jsonl_waiting_call_${id}_answered_not_run" "$(cat "$AG_DIR/j.out")"
done
ag_unlike "$(cat "$AG_DIR/j.out")" 'j-queued' "jsonl_waiting_call_did_not_run" "$(cat "$AG_DIR/j.out")"
"$AG_DIR/agentgate" unlock $D >/dev/null
# explain after a lock made while the session sat idle: refused, the session ends
jsonl_start k
printf 'idle explain\n' > "$LOCKS/identity:$D"
echo '{"id": 2, "explain": "echo x"}' >&7
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/k.out"
exec 7>&-
ag_like "$(grep '"id": *2' "$AG_DIR/k.out")" '"decision": *"deny".*"rule": *"revoked"' \
    "jsonl_explain_refused_after_a_lock" "$(cat "$AG_DIR/k.out")"
ag_is "$(grep '^rc=' "$AG_DIR/k.out")" "rc=253" "jsonl_session_ends_253_after_a_lock" "$(cat "$AG_DIR/k.out")"
rm -f "$LOCKS/identity:$D"

# ---- a command that is still running when the caller is revoked ----------------------
# a loop that runs commands itself never returns to the gateway's prompt:
# the runner looks at the caller's standing while it runs
ag_as dave "$T" 'echo loop-started; sleep 3600' > "$AG_DIR/f.out" 2>&1 &
client=$!
ag_wait_until 60 grep -q loop-started "$AG_DIR/f.out"
printf 'during a command\n' > "$LOCKS/identity:$D"
wait "$client"; rc=$?
rm -f "$LOCKS/identity:$D"
ag_is "$rc" 253 "running_command_ended_by_a_lock_file" "$(cat "$AG_DIR/f.out")"
ag_ok "running_command_client_told" grep -q "identity $D is locked: during a command" "$AG_DIR/f.out"
ag_ok "running_command_is_gone" sh -c "! pgrep -u '$AG_USER' -f 'sleep 3600'"
# and with a terminal (the PTY relay), by a policy that drops the identity
ag_as dave -tt "$T" 'echo pty-started; sleep 3601' > "$AG_DIR/g.out" 2>&1 </dev/null &
client=$!
ag_wait_until 60 grep -q pty-started "$AG_DIR/g.out"
policy "{ name: alice, keys: [\"$(ag_key alice)\"], profile: dev }"
wait "$client"; rc=$?
ag_is "$rc" 253 "running_pty_command_ended_by_a_revocation" "$(cat "$AG_DIR/g.out")"
ag_ok "running_pty_command_client_told" grep -q "identity $D was removed from the policy" "$AG_DIR/g.out"
policy

# ---- the gateway's program replaced (an upgrade), then removed ------------------------
repl_start e alice
exec 7>"$AG_DIR/e.in"
echo "echo e-ready" >&7
ag_wait_until 60 grep -q e-ready "$AG_DIR/e.out"
cp -p "$AG_DIR/agentgate" "$AG_DIR/agentgate.new"
mv -f "$AG_DIR/agentgate.new" "$AG_DIR/agentgate"	# as dpkg installs a new version
echo "echo e-after-upgrade" >&7
ag_wait_until 60 grep -q e-after-upgrade "$AG_DIR/e.out"
ag_pass "session_goes_on_after_an_upgrade"
mv "$AG_DIR/agentgate" "$AG_DIR/agentgate.removed"	# as the package's removal
echo "echo e-after-removal" >&7
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/e.out"
exec 7>&-
mv "$AG_DIR/agentgate.removed" "$AG_DIR/agentgate"
ag_unlike "$(cat "$AG_DIR/e.out")" "e-after-removal" "removed_gateway_runs_nothing_more" "$(cat "$AG_DIR/e.out")"
ag_ok "removed_gateway_says_so" grep -q 'the gateway was removed from this host' "$AG_DIR/e.out"
out=$(ag_as alice "$T" 'echo new-gateway' 2>&1)
ag_is "$out" new-gateway "new_sessions_use_the_new_gateway" "$out"
ag_done
