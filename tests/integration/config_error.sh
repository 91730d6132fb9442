#!/bin/bash
# config_error.sh - a policy broken outside `agentgate edit` (config
# management, an editor writing the file in place), through the real sshd
# and the gateway installed set-group-ID:
#   - agentgate check, as root, keeps the policy as the last good one: a
#     root-owned copy with the policy's group and mode
#   - with the policy broken, a key identity (sshd's AuthorizedKeysCommand),
#     a key of the account (the ForceCommand gateway) and sshd's own PAM
#     stack (pam_agentgate.so account) are all refused, and each leaves a
#     config_error record in the audit file the last good policy names;
#     the hash chain still verifies
#   - the gateway's client is told in one line, without the detail
#   - doctor does not say the sandbox is off, but that it is unknown
#   - a copy that is not root's, or that others can write, is ignored:
#     syslog only
. "$(dirname "$0")/lib.sh"
ag_own_mount_ns "$@"
ag_world_identities alice plain
ag_setgid_gateway

POLICY=$AG_DIR/policy.yaml
ag_write_policy "$POLICY" <<EOF
version: 1
gateway:
  sandbox: best_effort
  audit: { file: @AUDIT@, required: true }
identities:
  - { name: alice, keys: ["$(ag_key alice)"], profile: dev }
users:
  @USER@: dev
profiles:
  dev:
    allow: [echo, "true"]
    paths: { read: ["/"], write: ["/tmp", "~"] }
EOF
chown root:"$G" "$POLICY"
chmod 0640 "$POLICY"
# keys of the account itself in a file (the ForceCommand path); alice's
# only in the policy (sshd asks the gateway)
cp "$AG_DIR/plain.pub" "$AG_DIR/plain_keys"
chmod 0644 "$AG_DIR/plain_keys"
AG_SSHD_AUTHKEYS_FILE=$AG_DIR/plain_keys
# as installed: the gateway, sshd's key lookup and the PAM modules all
# read the default policy (a policy named on the gateway's command line is
# read as the caller, who cannot read this one), here a link to the world's
AG_SSHD_EXTRA="AuthorizedKeysCommand $AG_DIR/agentgate authorized-keys %u
AuthorizedKeysCommandUser root"
AG_FORCE_COMMAND="$AG_DIR/agentgate"
# the host's view of that path, as the test's parent (outside the test's
# mount namespace, ag_own_mount_ns) sees it: a demo's link, an installed
# policy, or nothing
HOST=/proc/$PPID/root
host_view() { d=$("$AG_DIR/agentgate" --help | sed -n 's/.*policy file (default \(.*\)).*/\1/p' | head -1)
	printf '%s|%s|%s' "$(readlink "$HOST$d")" "$(stat -c %i "$HOST$d" 2>&1)" \
	    "$(ls "$HOST$AG_STATEDIR/last-good" 2>/dev/null | grep -c "$(ag_last_good "$d" | xargs basename)")"; }
host_before=$(host_view)
ag_default_policy_path
AG_POLICY=$DEFAULT ag_write_pam use_key use_token allow_unidentified
ag_start_sshd || exit 99

# (ag_cleanup removes it)
STATE=$(ag_last_good "$DEFAULT")
T="$AG_USER@127.0.0.1"
n_errors() { ag_audit_query "len([x for x in r if x.get('event') == 'config_error'])"; }

# ---- the last good policy ------------------------------------------------------
out=$("$AG_DIR/agentgate" check --config "$DEFAULT" 2>&1)
ag_like "$out" '^OK' "check_passes" "$out"
ag_is "$(stat -c '%U:%G %a' "$STATE" 2>&1)" "root:$G 640" \
    "check_keeps_a_root_owned_copy_with_the_policys_group_and_mode"
ag_ok "the_copy_is_the_policy_byte_for_byte" cmp -s "$POLICY" "$STATE"
# the host's default path and its last good copy are not the test's: a
# demo beside the suite keeps its policy, and tests need no lock on it
ag_is "$(host_view)" "$host_before" "the_hosts_default_policy_path_is_untouched" \
    "link: $(readlink "$HOST$DEFAULT")"
ag_unlike "$(readlink "$HOST$DEFAULT")" "$AG_DIR" "the_hosts_default_path_is_not_linked_to_the_world"

out=$(ag_as alice "$T" 'echo in' 2>&1)
ag_is "$out" in "key_identity_in_while_the_policy_loads" "$out"
out=$(ag_as plain "$T" 'echo in' 2>&1)
ag_is "$out" in "account_key_in_while_the_policy_loads" "$out"

# ---- broken in place, not through agentgate edit ------------------------------------
printf 'profilez: {}\n' >> "$POLICY"
out=$("$AG_DIR/agentgate" check --config "$DEFAULT" 2>&1)
ag_like "$out" 'profilez' "check_says_the_policy_is_broken" "$out"
ag_ok "a_broken_policy_leaves_the_copy_as_it_was" \
    sh -c "! grep -q profilez '$STATE'"

before=$(n_errors)
out=$(ag_as alice "$T" 'echo in' 2>&1)
rc=$?
ag_is "$rc" 255 "key_identity_refused" "$out"
ag_unlike "$out" '^in$' "key_identity_runs_nothing" "$out"
ag_is "$(ag_audit_query "[(x.get('request'), x.get('user'), x.get('decision'), x.get('config')) for x in r if x.get('event') == 'config_error'][-1:]")" \
    "[('authorized-keys', '$AG_USER', 'deny', '$DEFAULT')]" \
    "key_identity_refusal_is_a_config_error_record_in_the_audit_file"
ag_like "$(ag_audit_query "[x.get('reason') for x in r if x.get('event') == 'config_error'][-1]")" \
    "agentgate\.yaml:[0-9]+:[0-9]+: .*profilez" "the_record_says_where_the_policy_is_broken"

# as the package and the demo install it: sshd's AuthorizedKeysCommandUser
# is the system user $G, whose primary group is $G itself (not held through
# the set-group-ID bit): it still writes the record through the group
flock /run/agentgate-test.lock sh -c "getent passwd '$G' >/dev/null ||
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin -g '$G' '$G'" ||
    exit 99
if [ "$(id -g "$G")" = "$(getent group "$G" | cut -d: -f3)" ]; then
	before=$(n_errors)
	out=$(cd / && runuser -u "$G" -- "$AG_DIR/agentgate" authorized-keys "$AG_USER" 2>&1)
	ag_is "$(n_errors)" "$((before + 1))" \
	    "key_lookup_as_a_system_user_of_the_group_records_the_config_error" "$out"
else
	ag_pass "key_lookup_as_a_system_user_of_the_group_records_the_config_error # SKIP: $G's primary group is another"
fi

out=$(ag_as plain "$T" 'echo in' 2>&1)
rc=$?
ag_is "$rc" 1 "account_key_refused_by_the_gateway" "$out"
ag_is "$out" "agentgate: policy unavailable; the administrator has been told" \
    "the_client_is_told_in_one_line_without_the_detail"
ag_is "$(ag_audit_query "[(x.get('request'), x.get('user'), x.get('client') is not None, x.get('config')) for x in r if x.get('event') == 'config_error'][-1:]")" \
    "[(None, '$AG_USER', True, '$DEFAULT')]" \
    "gateway_refusal_is_a_config_error_record_in_the_audit_file"

# sshd's own stack loading the policy (account, after publickey): as root
sed -i "s|^account .*pam_permit.so|account required $AG_DIR/sshd-pam/pam_agentgate.so config=$DEFAULT allow_unidentified|" \
    "/etc/pam.d/$AG_SSHD_SERVICE"
out=$(ag_as plain "$T" 'echo in' 2>&1)
rc=$?
ag_is "$rc" 255 "sshd_pam_stack_refuses" "$out"
ag_is "$(ag_audit_query "[(x.get('request'), x.get('user'), x.get('client')) for x in r if x.get('event') == 'config_error'][-1:]")" \
    "[('pam', '$AG_USER', '$AG_SRC')]" \
    "sshd_pam_refusal_is_a_config_error_record_in_the_audit_file"
sed -i "s|^account required $AG_DIR/sshd-pam/pam_agentgate.so .*|account  required  pam_permit.so|" \
    "/etc/pam.d/$AG_SSHD_SERVICE"

out=$("$AG_DIR/agentgate" audit verify "$AG_AUDIT" 2>&1)
ag_is "$?" 0 "the_chain_verifies_with_the_config_error_records" "$out"

# the admin's audit tools, without FILE, read the file the last good
# policy names, after a warning naming the error
out=$("$AG_DIR/agentgate" audit verify --config "$DEFAULT" 2>&1)
ag_is "$?" 0 "audit_verify_of_a_broken_policy_reads_the_last_good_ones_file" "$out"
ag_like "$out" "^agentgate: audit verify: warning: the policy does not load \\(.*profilez.*\\); using the last policy that loaded$" \
    "audit_verify_warns_in_one_line_naming_the_error" "$out"
ag_like "$out" "^$AG_AUDIT: [0-9]+ records, the chain is intact" "audit_verify_verifies_that_file" "$out"
out=$("$AG_DIR/agentgate" audit show --config "$DEFAULT" --event config_error 2>/dev/null)
ag_is "$?" 0 "audit_show_of_a_broken_policy_reads_the_last_good_ones_file" "$out"
ag_is "$(printf '%s\n' "$out" | wc -l)" "$(n_errors)" "audit_show_shows_the_config_error_records" "$out"
err=$("$AG_DIR/agentgate" audit show --config "$DEFAULT" 2>&1 >/dev/null)
ag_is "$(printf '%s\n' "$err" | wc -l)" 1 "audit_show_warns_in_one_line" "$err"

out=$("$AG_DIR/agentgate" doctor --user "$AG_USER" --config "$DEFAULT" --sshd "$SSHD" \
    --sshd-config "$AG_DIR/sshd_config" 2>&1)
ag_unlike "$out" 'sandbox: off' "doctor_does_not_say_the_sandbox_is_off" "$out"
ag_like "$out" 'sandbox: unknown, the policy did not load' "doctor_says_the_sandbox_state_is_unknown" "$out"
ag_like "$out" "config_error records go to the last good policy's audit destinations: $AG_AUDIT" \
    "doctor_names_where_config_errors_go" "$out"

# ---- a copy that is not root's alone is not used ---------------------------------------
untrusted() {	# NAME: the copy as it is now is ignored
	local n
	n=$(n_errors)
	ag_as plain "$T" 'echo in' >/dev/null 2>&1
	ag_is "$(n_errors)" "$n" "$1"
}
chown "$AG_USER" "$STATE"
untrusted "a_copy_not_owned_by_root_is_ignored"
chown root "$STATE"
chmod 0662 "$STATE"
untrusted "a_copy_others_can_write_is_ignored"
chmod 0660 "$STATE"
untrusted "a_copy_its_group_can_write_is_ignored"
chmod 0640 "$STATE"
n=$(n_errors)
ag_as plain "$T" 'echo in' >/dev/null 2>&1
ag_is "$(n_errors)" "$((n + 1))" "the_copy_root_alone_can_write_is_used_again"

ag_done
