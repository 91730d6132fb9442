#!/bin/bash
# End to end through the real sshd with ExposeAuthInfo: the gateway runs its
# PAM service, pam_agentgate.so tells agents apart by the key sshd accepted
# (or a token sent with AcceptEnv), and each gets its own profile on the
# same Unix account.  Expired identities and a missing PAM service are
# refused, and the token never reaches a command or the audit log.
. "$(dirname "$0")/lib.sh"
AG_SSHD_EXTRA="AcceptEnv AGENTGATE_TOKEN"
ag_setup

TOKEN=correct-horse-battery-staple-$$
TOKEN_SHA=$(printf '%s' "$TOKEN" | sha256sum | cut -d' ' -f1)
for k in alice bob old tok; do
	ssh-keygen -q -t ed25519 -N '' -f "$AG_DIR/$k" -C "$k@test"
	cat "$AG_DIR/$k.pub" >> "$AG_DIR/keys/$AG_USER"
done

ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
identities:
  - { name: alice, keys: ["$(ag_key alice)"], profile: builder }
  - { name: bob, keys: ["$(ag_key bob)"], profile: viewer }
  - { name: old, keys: ["$(ag_key old)"], profile: builder, expires: 2020-01-01 }
  - { name: tokenbot, token_sha256: $TOKEN_SHA, profile: builder }
users:
  @USER@: viewer
profiles:
  builder:
    allow: [echo, ls, env, id, { command: git, subcommands: [status, init] }]
    paths: { read: ["/"], write: ["/tmp", "~"] }
  viewer:
    allow: [echo, ls]
    paths: { read: ["/"], write: ["/tmp"] }
POLICY

as() { ag_as "$1" "$AG_USER@127.0.0.1" "${@:2}"; }	# as KEY CMD...

repo=/tmp/agt-pam-$$
out=$(as alice "git init -q $repo && git -C $repo status --short && echo ran" 2>&1)
ag_like "$out" "ran" "key_identity_alice_gets_builder_profile"
out=$(as bob "git -C $repo status" 2>&1); rc=$?
ag_is "$rc" 126 "key_identity_bob_on_same_account_is_refused_git"
ag_like "$out" "not allowed in profile 'viewer'" "bob_reason_names_viewer_profile"
rm -rf "$repo"

ag_ok "audit_names_identity_and_profile" ag_audit_query \
    'any(x.get("identity") == "alice" and x.get("profile") == "builder" for x in r) and any(x.get("identity") == "bob" and x.get("profile") == "viewer" for x in r)'

out=$(as old 'echo should-not-run' 2>&1); rc=$?
ag_is "$rc" 1 "expired_identity_refused_with_status_1"
ag_unlike "$out" "should-not-run" "expired_identity_runs_nothing"
ag_like "$out" "^agentgate: " "expired_identity_gets_one_line_reason"
ag_ok "expired_identity_audited_as_auth_failure" ag_audit_query \
    'any(x["event"] == "auth_failure" and x.get("decision") == "deny" for x in r)'
# an incident review needs who was refused and with which key
fp() { ssh-keygen -lf "$AG_DIR/$1.pub" | cut -d' ' -f2; }
ag_ok "refused_login_names_identity_and_key" ag_audit_query \
    "any(x['event'] == 'auth_failure' and x.get('identity') == 'old' and x.get('key') == '$(fp old)' for x in r)"
ag_ok "every_record_of_alice_has_her_key_and_the_host" ag_audit_query \
    "all(x.get('key') == '$(fp alice)' and x.get('host') == '$(hostname)' for x in r if x.get('identity') == 'alice') and any(x.get('identity') == 'alice' for x in r)"
ag_ok "allowed_command_names_the_rules_that_allowed_it" ag_audit_query \
    "any(x.get('identity') == 'alice' and x.get('rule') == 'profiles.builder.allow[4],profiles.builder.allow[0]' for x in r)"

# The session's own key matches no identity: the users: map applies.
out=$("${AG_SSH[@]}" 'ls -d /' 2>&1)
ag_is "$out" "/" "unidentified_key_falls_back_to_users_map"

out=$(AGENTGATE_TOKEN=$TOKEN as tok -o SendEnv=AGENTGATE_TOKEN 'id -un; env' 2>&1); rc=$?
ag_is "$rc" 0 "token_identity_over_acceptenv_runs_builder_command"
ag_like "$out" "^$AG_USER" "token_identity_same_account"
ag_unlike "$out" "AGENTGATE_TOKEN|$TOKEN" "token_not_in_command_environment"
ag_ok "token_identity_recorded" ag_audit_query \
    'any(x.get("identity") == "tokenbot" for x in r)'
ag_ok "token_never_in_audit_log" bash -c "! grep -q -- '$TOKEN' '$AG_AUDIT'"

out=$(AGENTGATE_TOKEN=wrong-$TOKEN as tok -o SendEnv=AGENTGATE_TOKEN 'echo should-not-run' 2>&1); rc=$?
ag_is "$rc" 1 "wrong_token_refused"
ag_unlike "$out" "should-not-run" "wrong_token_runs_nothing"

# Fail closed: no PAM service file, no session.
mv "$AG_DIR/pam.d/agentgate" "$AG_DIR/pam.d/agentgate.off"
out=$(as alice 'echo should-not-run' 2>&1); rc=$?
ag_is "$rc" 1 "missing_pam_service_refuses_session"
ag_unlike "$out" "should-not-run" "missing_pam_service_runs_nothing"
mv "$AG_DIR/pam.d/agentgate.off" "$AG_DIR/pam.d/agentgate"

ag_done
