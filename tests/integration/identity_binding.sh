#!/bin/bash
# Which identity a session runs as comes from sshd, never from anything the
# agent can write.  Through the real sshd, two identities on one account:
#   - the attack a review found: a multiplexed connection holding key A
#     rewrites sshd's ExposeAuthInfo file to name key B, then opens a second
#     session; it must still be identity A (ExposeAuthInfo is on here so the
#     file exists to be rewritten)
#   - the gateway started by the agent itself, from a command or with
#     runuser, with a forged SSH_USER_AUTH, AGENTGATE_IDENTITY or a planted
#     record: never identity B; a forged SSH_CONNECTION satisfies no `from`
#   - the connection records: only root writes them
#   - the policy as sshd's AuthorizedKeysCommand: an identity added is let
#     in after one edit, a deleted one is refused at the next login, a key
#     of no identity is refused, and what sshd is given is restricted; an
#     identity written only in a fragment of agentgate.d logs in too
. "$(dirname "$0")/lib.sh"
# identities only: the account lets no unidentified caller in
ag_world_identities alice bob carol stranger

# policy IDENTITIES...: alice (low) and bob (high), plus any named
policy() {
	local extra=""
	for who in "$@"; do
		extra+="  - { name: $who, keys: [\"$(ag_key "$who")\"], profile: high }
"
	done
	ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
identities:
  - { name: alice, keys: ["$(ag_key alice)"], profile: low }
  - { name: bob, keys: ["$(ag_key bob)"], profile: high, from: ["127.0.0.0/8"] }
  - { name: dave, token_sha256: $(printf 'tok-dave-%s' "$$" | sha256sum | cut -d' ' -f1), profile: high, from: ["10.0.0.0/8"] }
$extra
profiles:
  low:
    allow: [echo, cat, ls, sh, env, printf, "$AG_DIR/agentgate"]
    paths: { read: ["/"], write: ["/tmp", "~"] }
  high:
    allow: [echo, id, cat, ls]
    paths: { read: ["/"], write: ["/tmp", "~"] }
POLICY
}
policy

AG_SSHD_AUTHKEYS_FILE=none
AG_SSHD_EXTRA="ExposeAuthInfo yes
AuthorizedKeysCommand $AG_DIR/agentgate authorized-keys --config $AG_DIR/policy.yaml %u
AuthorizedKeysCommandUser root"
ag_start_sshd || exit 99

T="$AG_USER@127.0.0.1"
# who_ran MARKER: the identity the audit gives the command that printed MARKER
who_ran() {
	ag_audit_query "[x.get('identity') for x in r if '$1' in str(x.get('command', ''))][-1:]"
}

ag_as alice "$T" 'echo m1' >/dev/null 2>&1
ag_is "$(who_ran m1)" "['alice']" "key_a_is_identity_alice"
out=$(ag_as bob "$T" 'id -un' 2>&1)
ag_is "$out" "$AG_USER" "key_b_is_identity_bob_with_profile_high"

# ---- the multiplexed-connection rewrite ---------------------------------------
ctl=$AG_DIR/mux
ag_as alice -o ControlMaster=yes -o ControlPath="$ctl" -o ControlPersist=yes -fN "$T"
ag_wait_until 30 ag_as alice -o ControlPath="$ctl" -O check "$T" 2>/dev/null
# every ExposeAuthInfo file the account can reach now names key B
out=$(ag_as alice -o ControlPath="$ctl" "$T" "sh -c 'for f in /tmp/sshauth.*; do \
    printf \"publickey %s\\n\" \"$(ag_key bob)\" > \"\$f\" && echo rewrote; done'" 2>&1)
ag_like "$out" "rewrote" "agent_rewrote_the_exposeauthinfo_file" "$out"
out=$(ag_as alice -o ControlPath="$ctl" "$T" 'echo m2; id' 2>&1); rc=$?
ag_is "$(who_ran m2)" "['alice']" "second_session_of_the_connection_is_still_alice" "$out"
ag_is "$rc" 126 "second_session_gets_alice_profile_not_bobs" "$out"
ag_is "$(ag_audit_query 'len({x["session"] for x in r if x.get("identity") == "bob"})')" 1 \
    "bob_has_only_his_own_session_in_the_audit"
ag_as alice -o ControlPath="$ctl" -O exit "$T" 2>/dev/null

# ---- the gateway started by the agent ------------------------------------------
printf 'publickey %s\n' "$(ag_key bob)" > "$AG_DIR/forged"
chmod 0644 "$AG_DIR/forged"
# from a command of alice's (the sandbox is off in this policy): the gateway's
# grandparent is then a process of the account, not sshd's monitor
out=$(ag_as alice "$T" "SSH_USER_AUTH=$AG_DIR/forged AGENTGATE_IDENTITY=bob AGENTGATE_PROFILE=high $AG_DIR/agentgate --config $AG_DIR/policy.yaml -c 'id; echo ran-as-\$AGENTGATE_IDENTITY'" 2>&1)
ag_unlike "$out" "ran-as-bob|uid=" "nested_gateway_with_forged_env_is_not_bob" "$out"
ag_like "$out" "agentgate: " "nested_gateway_refuses_with_a_reason" "$out"
out=$(runuser -u "$AG_USER" -- env SSH_USER_AUTH="$AG_DIR/forged" AGENTGATE_IDENTITY=bob \
    "$AG_DIR/agentgate" --config "$AG_DIR/policy.yaml" -c 'id' 2>&1)
ag_unlike "$out" "uid=" "runuser_gateway_with_forged_env_is_not_bob" "$out"

# a token limited to a network, and a gateway started with SSH_CONNECTION
# saying it comes from there: the address is sshd's, so there is none
out=$(runuser -u "$AG_USER" -- env SSH_CONNECTION="10.1.2.3 5555 127.0.0.1 22" \
    AGENTGATE_TOKEN="tok-dave-$$" "$AG_DIR/agentgate" --config "$AG_DIR/policy.yaml" \
    -c 'echo ran-as-dave' 2>&1)
ag_unlike "$out" "ran-as-dave" "forged_ssh_connection_does_not_satisfy_from" "$out"

# ---- the records --------------------------------------------------------------
ag_as alice -o ControlMaster=yes -o ControlPath="$ctl" -o ControlPersist=yes -fN "$T"
ag_wait_until 30 ag_as alice -o ControlPath="$ctl" -O check "$T" 2>/dev/null
rec=$(grep -l "^user $AG_USER\$" "$AG_RUNDIR"/sshd/* 2>/dev/null | head -1)
ag_ok "sshd_recorded_the_connection" test -n "$rec"
ag_ok "record_names_key_a" grep -qF "$(ag_key alice)" "${rec:-/nonexistent}"
ag_is "$(stat -c '%U %a' "${rec:-/nonexistent}" 2>&1)" "root 644" "record_is_roots"
ag_is "$(stat -c '%U %a' "$AG_RUNDIR/sshd" 2>&1)" "root 755" "record_dir_is_roots"
out=$(runuser -u "$AG_USER" -- sh -c "printf x >> '$rec' || echo refused; touch '$AG_RUNDIR/sshd/1' || echo refused" 2>&1)
ag_is "$(grep -c refused <<<"$out")" 2 "account_cannot_write_or_plant_records" "$out"
ag_as alice -o ControlPath="$ctl" -O exit "$T" 2>/dev/null
ag_wait_until 30 test ! -e "$rec"
ag_ok "record_removed_when_the_connection_ends" test ! -e "$rec"

# ---- the policy is where keys are added and revoked ---------------------------
out=$(ag_as stranger "$T" 'echo in' 2>&1); rc=$?
ag_is "$rc" 255 "key_of_no_identity_refused_by_sshd" "$out"
ag_unlike "$out" "^in" "key_of_no_identity_runs_nothing" "$out"
policy carol
out=$(ag_as carol "$T" 'echo m3' 2>&1)
ag_is "$out/$(who_ran m3)" "m3/['carol']" "identity_added_with_one_edit_logs_in"
policy
out=$(ag_as carol "$T" 'echo in' 2>&1); rc=$?
ag_is "$rc" 255 "identity_deleted_refused_at_next_login" "$out"
# config management's way: an identity in a fragment of agentgate.d, with a
# profile of the policy file, seen by sshd's AuthorizedKeysCommand too
mkdir -m 0755 "$AG_DIR/agentgate.d"
printf 'identities:\n  - { name: carol, keys: ["%s"], profile: high }\n' "$(ag_key carol)" \
    > "$AG_DIR/agentgate.d/50-carol.yaml"
chmod 0644 "$AG_DIR/agentgate.d/50-carol.yaml"
out=$("$AG_DIR/agentgate" check --config "$AG_DIR/policy.yaml" 2>&1)
ag_like "$out" "^OK: 2 profiles, 4 identities, 1 fragment$" "check_counts_the_fragment" "$out"
out=$(ag_as carol "$T" 'echo m4' 2>&1)
ag_is "$out/$(who_ran m4)" "m4/['carol']" "identity_of_a_fragment_logs_in_with_its_key" "$out"
rm "$AG_DIR/agentgate.d/50-carol.yaml"
out=$(ag_as carol "$T" 'echo in' 2>&1); rc=$?
ag_is "$rc" 255 "identity_of_a_removed_fragment_refused" "$out"
out=$("$AG_DIR/agentgate" authorized-keys --config "$AG_DIR/policy.yaml" "$AG_USER")
ag_like "$out" "^restrict,pty ssh-ed25519 [^ ]+ agentgate:alice" "authorized_keys_line_is_restricted" "$out"
ag_like "$out" "restrict,pty,from=\"127.0.0.0/8\" ssh-ed25519 [^ ]+ agentgate:bob" \
    "authorized_keys_line_carries_from" "$out"
ag_unlike "$out" "carol|stranger" "authorized_keys_has_only_the_policys_identities" "$out"
ag_done
