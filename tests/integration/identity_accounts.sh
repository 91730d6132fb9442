#!/bin/bash
# An identity logs in only as the accounts its `accounts:` name (issue 35).
# Through the real sshd, two accounts on one gateway:
#   - alice (accounts: [acct1]) gets into acct1; her key is not among
#     acct2's authorized keys, so sshd refuses it there
#   - a token identity for acct1 is refused on acct2 by PAM, with
#     reason_class wrong_account in the audit
#   - bob, without accounts:, gets into both (what older policies meant),
#     and `check` warns about him
#   - carol (accounts: ["%acct2's group"]) gets into acct2 only
#   - an edit that moves alice off acct1 ends her live session there
. "$(dirname "$0")/lib.sh"
ag_world_identities alice bob carol
ag_setgid_gateway
U1=$AG_USER
U2=agu$$
flock /run/agentgate-test.lock useradd -m -d "/home/$U2" -s "$AG_DIR/agentgate" "$U2" || exit 99
flock /run/agentgate-test.lock usermod -p '*' "$U2" || exit 99
trap 'pkill -KILL -u "$U2" 2>/dev/null; ag_wait_until 30 ag_userdel "$U2"; ag_cleanup' EXIT
# token logins come in with the accounts' shared key, an identity of none
cp "$AG_DIR/client.pub" "$AG_DIR/keys/$U2"
chmod 0644 "$AG_DIR/keys/$U2"
TOKEN=acct-token-$$
TOKEN_SHA=$(printf '%s' "$TOKEN" | sha256sum | cut -d' ' -f1)

policy() {	# policy ALICE-ACCOUNTS
	ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
identities:
  - { name: alice, keys: ["$(ag_key alice)"], profile: dev, accounts: $1 }
  - { name: bob, keys: ["$(ag_key bob)"], profile: dev }
  - { name: carol, keys: ["$(ag_key carol)"], profile: dev, accounts: ["%$U2"] }
  - { name: tok, token_sha256: $TOKEN_SHA, profile: dev, accounts: [$U1] }
profiles:
  dev:
    allow: [echo, id, sleep]
    paths: { read: ["/"], write: ["/tmp"] }
POLICY
}
policy "[$U1]"
AG_SSHD_EXTRA="AllowUsers $U2
AcceptEnv AGENTGATE_TOKEN
AuthorizedKeysCommand $AG_DIR/agentgate authorized-keys --config $AG_DIR/policy.yaml %u
AuthorizedKeysCommandUser root"
ag_start_sshd || exit 99

# ---- authorized-keys lists each account's identities only ---------------------------
k1=$("$AG_DIR/agentgate" authorized-keys --config "$AG_DIR/policy.yaml" "$U1" 2>&1)
k2=$("$AG_DIR/agentgate" authorized-keys --config "$AG_DIR/policy.yaml" "$U2" 2>&1)
ag_like "$k1" "agentgate:alice" "authorized_keys_of_acct1_lists_alice" "$k1"
ag_unlike "$k1" "agentgate:carol" "authorized_keys_of_acct1_leaves_out_carol" "$k1"
ag_unlike "$k2" "agentgate:alice" "authorized_keys_of_acct2_leaves_out_alice" "$k2"
ag_like "$k2" "agentgate:carol" "authorized_keys_of_acct2_lists_carol_by_group" "$k2"
ag_like "$k1$k2" "agentgate:bob.*agentgate:bob" "identity_without_accounts_listed_for_both" "$k1$k2"

# ---- the doors, through sshd ---------------------------------------------------------
out=$(ag_as alice "$U1@127.0.0.1" 'echo alice-in-1' 2>&1)
ag_like "$out" "alice-in-1" "alice_logs_in_to_her_account" "$out"
out=$(ag_as alice "$U2@127.0.0.1" 'echo alice-in-2' 2>&1); rc=$?
ag_unlike "$out" "alice-in-2" "alice_refused_on_another_account" "$out"
ag_like "$rc:$out" "^255:.*Permission denied" "sshd_refuses_alice_key_there" "$out"
for u in "$U1" "$U2"; do
	out=$(ag_as bob "$u@127.0.0.1" "echo bob-in-$u" 2>&1)
	ag_like "$out" "bob-in-$u" "bob_without_accounts_gets_into_$([ "$u" = "$U1" ] && echo acct1 || echo acct2)" "$out"
done
out=$(ag_as carol "$U2@127.0.0.1" 'echo carol-in-2' 2>&1)
ag_like "$out" "carol-in-2" "carol_gets_in_by_group" "$out"
out=$(ag_as carol "$U1@127.0.0.1" 'echo carol-in-1' 2>&1)
ag_unlike "$out" "carol-in-1" "carol_refused_outside_her_group" "$out"
out=$(AGENTGATE_TOKEN=$TOKEN ag_as client -o SendEnv=AGENTGATE_TOKEN "$U1@127.0.0.1" 'echo tok-in-1' 2>&1)
ag_like "$out" "tok-in-1" "token_identity_logs_in_to_its_account" "$out"
out=$(AGENTGATE_TOKEN=$TOKEN ag_as client -o SendEnv=AGENTGATE_TOKEN "$U2@127.0.0.1" 'echo tok-in-2' 2>&1); rc=$?
ag_unlike "$out" "tok-in-2" "token_identity_refused_on_another_account" "$out"
ag_ok "refusal_audited_as_wrong_account" ag_audit_query \
    "any(x['event'] == 'auth_failure' and x.get('reason_class') == 'wrong_account' and x.get('identity') == 'tok' and x.get('user') == '$U2' for x in r)"

# ---- check warns about the identity that opens every account --------------------------
out=$("$AG_DIR/agentgate" check --config "$AG_DIR/policy.yaml" 2>&1)
ag_like "$out" "warning: identity 'bob' has no accounts:" "check_warns_identity_without_accounts" "$out"
ag_unlike "$out" "identity 'alice' has no accounts" "check_quiet_about_identities_with_accounts" "$out"

# ---- an edit moves alice off acct1: her live session there ends ----------------------
rm -f "$AG_DIR/a.in"
mkfifo "$AG_DIR/a.in"
(ag_as alice "$U1@127.0.0.1" < "$AG_DIR/a.in" > "$AG_DIR/a.out" 2>&1; echo "rc=$?" >> "$AG_DIR/a.out") &
exec 7>"$AG_DIR/a.in"
echo "echo alice-ready" >&7
ag_wait_until 60 grep -q alice-ready "$AG_DIR/a.out"
cat > "$AG_DIR/move-alice" <<ED
#!/bin/sh
sed -i '/name: alice,/s/accounts: \[$U1\]/accounts: [$U2]/' "\$1"
ED
chmod +x "$AG_DIR/move-alice"
out=$(EDITOR="$AG_DIR/move-alice" VISUAL= "$AG_DIR/agentgate" edit --config "$AG_DIR/policy.yaml" </dev/null 2>&1)
ag_like "$out" "\(alice@$U1, pid [0-9]+\) ended: identity alice may no longer log in as account $U1" \
    "edit_ends_the_session_on_the_account_taken_away" "$out"
ag_wait_until 60 grep -q '^rc=' "$AG_DIR/a.out"
exec 7>&-
ag_is "$(grep '^rc=' "$AG_DIR/a.out")" "rc=253" "moved_session_exits_253" "$(cat "$AG_DIR/a.out")"
ag_done
