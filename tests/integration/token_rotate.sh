#!/bin/bash
# agentgate token rotate through the real sshd and PAM (issue 35):
#   - with an overlap window, the old and the new token both log in, and
#     the audit marks a login with the old one ("token": "previous")
#   - a session that logged in with the old token runs on during the
#     window and ends when it closes, told why
#   - after the window, and after a rotation with --overlap 0, the old
#     token is refused with reason_class expired_token in the audit; a
#     token of no identity with unknown_token; the client is told no more
#     than before
#   - the file edited is the one that holds the identity (an agentgate.d
#     fragment too), comments and other identities untouched, owner and
#     mode kept; --print and a symlinked policy change nothing
. "$(dirname "$0")/lib.sh"
ag_world_identities transport
# the live session registry (agentgate sessions, the rotation's sweep) is a
# set-group-ID gateway's
ag_setgid_gateway
B=bot$$
F=frag$$

hash_of() { sed -n 's/^  token_hash: "\(.*\)"$/\1/p'; }
token_of() { sed -n "s/^  \(agt_[^ ]*\)$/\1/p"; }
out=$("$AG_DIR/agentgate" token new "$B"); T1=$(printf '%s\n' "$out" | token_of); H1=$(printf '%s\n' "$out" | hash_of)
out=$("$AG_DIR/agentgate" token new other); HO=$(printf '%s\n' "$out" | hash_of)
out=$("$AG_DIR/agentgate" token new "$F"); TF1=$(printf '%s\n' "$out" | token_of); HF1=$(printf '%s\n' "$out" | hash_of)

ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
identities:
  # an old line kept for reference: token_hash: "$H1"
  - { name: other, token_hash: "$HO", profile: dev }
  - name: $B
    token_hash: "$H1"
    profile: dev
profiles:
  dev:
    allow: [echo, "true"]
    paths: { read: ["/"], write: ["/tmp"] }
POLICY
mkdir -p "$AG_DIR/agentgate.d"
ag_write_policy "$AG_DIR/agentgate.d/bots.yaml" <<POLICY
identities:
  - { name: $F, token_hash: "$HF1", profile: dev }
POLICY
cp "$AG_DIR/transport.pub" "$AG_DIR/transport_keys"
AG_SSHD_AUTHKEYS_FILE=$AG_DIR/transport_keys
AG_SSHD_EXTRA="AcceptEnv AGENTGATE_TOKEN"
ag_start_sshd || exit 99
T="$AG_USER@127.0.0.1"
tok() { AGENTGATE_TOKEN=$1 ag_as transport -o SendEnv=AGENTGATE_TOKEN "$T" "${@:2}"; }
flat() { printf '%s' "$1" | tr '\n' ' '; }	# one line, for ag_like
last_failure() {	# the reason_class and identity of the newest auth_failure
	ag_audit_query "[(x.get('reason_class'), x.get('identity')) for x in r if x['event'] == 'auth_failure'][-1]"
}

out=$(tok "$T1" 'echo in' 2>&1)
ag_is "$out" in "token_logs_in_before_rotation" "$out"

# a session on the token about to be rotated out, fed from a fifo
mkfifo "$AG_DIR/s.in"
(AGENTGATE_TOKEN=$T1 ag_as transport -o SendEnv=AGENTGATE_TOKEN "$T" < "$AG_DIR/s.in" \
    > "$AG_DIR/s.out" 2>&1; echo "rc=$?" >> "$AG_DIR/s.out") &
exec 7>"$AG_DIR/s.in"
echo "echo s-ready" >&7
ag_wait_until 60 grep -q s-ready "$AG_DIR/s.out"

# ---- rotate with an overlap -----------------------------------------------------
before_mode=$(stat -c '%U:%G %a' "$AG_DIR/policy.yaml")
out=$("$AG_DIR/agentgate" token rotate --config "$AG_DIR/policy.yaml" --overlap 1h "$B" 2>&1); rc=$?
ag_like "$(flat "$rc/$out")" "^0/.*installed: identity $B takes the new token, and the old one until" \
    "rotate_installs_with_an_overlap" "$out"
T2=$(printf '%s\n' "$out" | token_of)
ag_like "$T2" "^agt_${B}_[0-9a-f]{64}$" "rotate_prints_the_new_token"
ag_is "$(stat -c '%U:%G %a' "$AG_DIR/policy.yaml")" "$before_mode" "rotate_keeps_owner_and_mode"
ag_ok "rotate_leaves_the_comment_alone" grep -qF "  # an old line kept for reference: token_hash: \"$H1\"" "$AG_DIR/policy.yaml"
ag_ok "rotate_leaves_other_identities_alone" grep -qF "  - { name: other, token_hash: \"$HO\", profile: dev }" "$AG_DIR/policy.yaml"
ag_ok "rotate_keeps_the_old_hash_as_previous" grep -qE "^    previous_token: \{ hash: \"[^\"]+\", until: \"[0-9T:-]+Z\" \}$" "$AG_DIR/policy.yaml"
ag_ok "rotated_policy_checks" "$AG_DIR/agentgate" check -q --config "$AG_DIR/policy.yaml"

out=$(tok "$T1" 'echo old-in' 2>&1)
ag_is "$out" old-in "old_token_logs_in_during_the_window" "$out"
out=$(tok "$T2" 'echo new-in' 2>&1)
ag_is "$out" new-in "new_token_logs_in" "$out"
ag_ok "old_token_login_audited_as_previous" ag_audit_query \
    "any(x['event'] == 'session_start' and x.get('identity') == '$B' and x.get('token') == 'previous' for x in r)"
ag_ok "new_token_login_audited_as_current" ag_audit_query \
    "any(x['event'] == 'session_start' and x.get('identity') == '$B' and x.get('token') == 'current' for x in r)"
ag_ok "tokens_never_in_the_audit" bash -c "! grep -qE -- '$T1|$T2' '$AG_AUDIT'"

echo "echo s-still-here" >&7
ag_wait_until 60 grep -q s-still-here "$AG_DIR/s.out"
ag_unlike "$(cat "$AG_DIR/s.out")" "rc=" "session_on_the_old_token_runs_on_in_the_window"

# ---- the window closes: the old token's session ends, its logins are refused -----
until=$(date -u -d '+3 seconds' +%Y-%m-%dT%H:%M:%SZ)
sed -i "s/until: \"[0-9T:-]*Z\" }$/until: \"$until\" }/" "$AG_DIR/policy.yaml"
ag_ok "window_set_to_close" grep -q "until: \"$until\"" "$AG_DIR/policy.yaml"
# the session waits for its next line; it ends anyway, without one
ag_ok "idle_session_on_the_old_token_ends_when_the_window_closes" \
    ag_wait_until 60 grep -q '^rc=' "$AG_DIR/s.out"
exec 7>&-
ag_like "$(cat "$AG_DIR/s.out")" "previous token of identity $B, which this session logged in with, stopped working at $until" \
    "ended_session_told_why" "$(cat "$AG_DIR/s.out")"
ag_wait_until 30 sh -c "[ \$(date -u +%s) -ge \$(date -u -d '$until' +%s) ]"
out=$(tok "$T1" 'echo should-not-run' 2>&1); rc=$?
ag_is "$rc" 1 "old_token_refused_after_the_window" "$out"
ag_unlike "$out" "should-not-run|expired|previous" "client_told_no_more_than_before" "$out"
ag_is "$(last_failure)" "('expired_token', '$B')" "refusal_audited_as_expired_token"
out=$(tok "$T2" 'echo new-in' 2>&1)
ag_is "$out" new-in "new_token_still_logs_in" "$out"
ag_like "$("$AG_DIR/agentgate" check --config "$AG_DIR/policy.yaml" 2>&1)" \
    "warning: the previous_token of identity '$B' is past its until" "check_warns_of_a_past_until"

# ---- --overlap 0: the old token stops at once -----------------------------------
# and so does a session on it, idle at its prompt (a leaked token is why)
mkfifo "$AG_DIR/s2.in"
(AGENTGATE_TOKEN=$T2 ag_as transport -o SendEnv=AGENTGATE_TOKEN "$T" < "$AG_DIR/s2.in" \
    > "$AG_DIR/s2.out" 2>&1; echo "rc=$?" >> "$AG_DIR/s2.out") &
exec 8>"$AG_DIR/s2.in"
echo "echo s2-ready" >&8
ag_wait_until 60 grep -q s2-ready "$AG_DIR/s2.out"
out=$("$AG_DIR/agentgate" token rotate --config "$AG_DIR/policy.yaml" --overlap 0 "$B" 2>&1); rc=$?
ag_like "$(flat "$rc/$out")" "^0/.*the old one is refused from now on" "rotate_overlap_0" "$out"
ag_like "$(flat "$out")" "the sessions above were ended: they logged in with the old token" \
    "rotate_overlap_0_says_it_ended_the_old_tokens_sessions" "$out"
ag_ok "rotate_overlap_0_ends_the_idle_session_at_once" ag_wait_until 60 grep -q '^rc=' "$AG_DIR/s2.out"
exec 8>&-
T3=$(printf '%s\n' "$out" | token_of)
out=$(tok "$T2" 'echo should-not-run' 2>&1); rc=$?
ag_is "$rc" 1 "overlap_0_refuses_the_old_token" "$out"
ag_is "$(last_failure)" "('expired_token', '$B')" "overlap_0_refusal_audited"
out=$(tok "$T3" 'echo third-in' 2>&1)
ag_is "$out" third-in "overlap_0_new_token_logs_in" "$out"
out=$(tok "agt_${B}_$(printf '0%.0s' $(seq 64))" 'echo should-not-run' 2>&1); rc=$?
ag_is "$rc" 1 "unknown_token_refused" "$out"
ag_is "$(last_failure)" "('unknown_token', None)" "refusal_audited_as_unknown_token"

# ---- a fragment holds the identity -----------------------------------------------
main_sum=$(sha256sum < "$AG_DIR/policy.yaml")
out=$("$AG_DIR/agentgate" token rotate --config "$AG_DIR/policy.yaml" "$F" 2>&1); rc=$?
ag_like "$(flat "$rc/$out")" "^0/.*agentgate.d/bots.yaml installed" "rotate_edits_the_fragment_that_holds_the_identity" "$out"
ag_is "$(sha256sum < "$AG_DIR/policy.yaml")" "$main_sum" "main_file_untouched_by_a_fragment_rotation"
TF2=$(printf '%s\n' "$out" | token_of)
out=$(tok "$TF1" 'echo f-old' 2>&1; tok "$TF2" 'echo f-new' 2>&1)
ag_is "$out" "f-old
f-new" "fragment_identity_takes_both_tokens" "$out"

# ---- what must change nothing ------------------------------------------------------
sum=$(sha256sum < "$AG_DIR/policy.yaml")
out=$("$AG_DIR/agentgate" token rotate --config "$AG_DIR/policy.yaml" --print "$B" 2>&1); rc=$?
ag_like "$(flat "$rc/$out")" "^0/.*  token_hash: \".*  previous_token: \{ hash: " "print_prints_the_lines" "$out"
ag_is "$(sha256sum < "$AG_DIR/policy.yaml")" "$sum" "print_writes_nothing"
ln -s policy.yaml "$AG_DIR/link.yaml"
out=$("$AG_DIR/agentgate" token rotate --config "$AG_DIR/link.yaml" "$B" 2>&1); rc=$?
ag_like "$(flat "$rc/$out")" "^1/.*symbolic link.*  token_hash: " "symlinked_policy_refused_with_the_lines_to_paste" "$out"
ag_is "$(sha256sum < "$AG_DIR/policy.yaml")" "$sum" "symlinked_policy_unchanged"
out=$("$AG_DIR/agentgate" token rotate --config "$AG_DIR/policy.yaml" nobody$$ 2>&1); rc=$?
ag_like "$(flat "$rc/$out")" "^1/.*no identity 'nobody$$'" "unknown_identity_refused" "$out"
out=$(runuser -u "$AG_USER" -- "$AG_DIR/agentgate" token rotate --config "$AG_DIR/policy.yaml" "$B" 2>&1); rc=$?
ag_like "$(flat "$rc/$out")" "^1/.*run it as root" "rotate_writes_as_root_only" "$out"
ag_is "$(sha256sum < "$AG_DIR/policy.yaml")" "$sum" "policy_unchanged_by_refused_rotations"

ag_done
