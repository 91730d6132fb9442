#!/bin/bash
# setup.sh - `agentgate setup --user NAME` gives an account that is not
# called agent to agents, against this world's scratch paths only (sshd's
# drop-in directory, sshd's PAM service sshd-*, the shells list, the token
# agents' key file): the real /etc/ssh, /etc/pam.d/sshd and /etc/shells are
# never touched.
#   - an account that does not exist is refused, with the useradd line
#   - --dry-run says what it would do and writes nothing
#   - setup writes the drop-in (a file, not a link), adds the bind line,
#     makes the gateway the login shell, runs the doctor, which passes,
#     and with --reload makes the running sshd read it
#   - through that sshd, a key identity and a token identity (AcceptEnv
#     AGENTGATE_TOKEN, the shared key in the account's own key file) get in
#     through the gateway; the shared key without a token does not
#   - agentgate doctor on its own passes; a second setup changes nothing
. "$(dirname "$0")/lib.sh"
ag_own_mount_ns "$@"
ag_require_root
command -v useradd >/dev/null || { echo "SKIP: no useradd"; exit 77; }
# the account is not called agent: each name below is this account's
AG_USER_NAME=agset$$
ag_world_identities keybot shared
ag_setgid_gateway
# the gateway sshd runs reads the build's default policy (a --config on
# sshd's command line is read with the agent's rights)
ag_default_policy_path
setup_cleanup() {
	[ -n "${AG_SSHD_SERVICE:-}" ] && rm -f "/etc/pam.d/$AG_SSHD_SERVICE.before-agentgate"
	groupdel "g$AG_USER" >/dev/null 2>&1
	ag_cleanup
}
trap setup_cleanup EXIT
U=$AG_USER
GW=$AG_DIR/agentgate
# sshd's AuthorizedKeysCommandUser in the drop-in: the gateway's system
# user, which make install and the package create (left in place)
flock /run/agentgate-test.lock sh -c "getent passwd '$G' >/dev/null ||
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin -g '$G' '$G'" ||
    exit 99
# the account as README.Debian makes it: a home whose files the agent
# cannot change, a login shell that is not the gateway yet
home=$(getent passwd "$U" | cut -d: -f6)
chown -R root:root "$home" && chmod 0755 "$home"
usermod -s /bin/bash "$U" || exit 99

TOK="tok-$$-setup"
ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
identities:
  - { name: keybot, keys: ["$(ag_key keybot)"], profile: low }
  - { name: tokbot, token_sha256: $(printf '%s' "$TOK" | sha256sum | cut -d' ' -f1), profile: low }
profiles:
  low:
    allow: [echo, id]
POLICY
# the identities' keys and token hashes are for the gateway's group only
chown root:"$G" "$AG_DIR/policy.yaml" && chmod 0640 "$AG_DIR/policy.yaml"

# sshd's world: its PAM service sshd-* (named after the program, as
# /etc/pam.d/sshd is) without the bind line yet, a drop-in directory its
# configuration Includes, and a pid file to reload it by
ag_sshd_pam
printf '%s\n' "# agentgate test world $AG_DIR (removed when the test ends)" \
    'auth     required  pam_deny.so' 'account  required  pam_permit.so' \
    'session  required  pam_permit.so' > "/etc/pam.d/$AG_SSHD_SERVICE"
PAMF=/etc/pam.d/$AG_SSHD_SERVICE
mkdir -m 0755 "$AG_DIR/sshd_config.d" "$AG_DIR/tokkeys"
cp /etc/shells "$AG_DIR/shells"
# the key token agents share: the account's own key file (root's)
cp "$AG_DIR/shared.pub" "$AG_DIR/tokkeys/$U"
chmod 0644 "$AG_DIR/tokkeys/$U"
AG_PORT=$(ag_free_port)
cat > "$AG_DIR/sshd_config" <<EOF
Include $AG_DIR/sshd_config.d/*.conf
ListenAddress 127.0.0.1
Port $AG_PORT
HostKey $AG_DIR/hostkey
PidFile $AG_DIR/sshd.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers $U
LogLevel INFO
EOF
chmod 0644 "$AG_DIR/sshd_config"
mkdir -p /run/sshd && chmod 0755 /run/sshd

SETUP=("$GW" setup --user "$U" --sshd "$AG_SSHD_BIN" --sshd-config "$AG_DIR/sshd_config"
    --sshd-config-dir "$AG_DIR/sshd_config.d" --pam-file "$PAMF" --shells "$AG_DIR/shells"
    --token-keys "$AG_DIR/tokkeys/%u")
DROPIN=$AG_DIR/sshd_config.d/agentgate-$U.conf
state() {	# what setup may change, in one line
	echo "$(cat "$DROPIN" 2>/dev/null | cksum) $(cksum < "$PAMF") $(cksum < "$AG_DIR/shells")" \
	    "$(getent passwd "$U" | cut -d: -f7) $(ls -a "$AG_DIR/sshd_config.d" /etc/pam.d | grep -F "$AG_SSHD_SERVICE" | cksum)"
}

# ---- refusals and the dry run --------------------------------------------------
out=$("$GW" setup --user "nosuch$$" --sshd "$AG_SSHD_BIN" --sshd-config "$AG_DIR/sshd_config" \
    --sshd-config-dir "$AG_DIR/sshd_config.d" --pam-file "$PAMF" --shells "$AG_DIR/shells" 2>&1)
rc=$?
ag_like "$rc:$(tr '\n' ' ' <<<"$out")" "^1:.*no account 'nosuch$$'.*useradd --create-home --shell $GW nosuch$$" \
    missing_account_is_refused_with_the_useradd_line
ag_is "$(ls "$AG_DIR/sshd_config.d")" "" missing_account_writes_nothing
out=$("$GW" setup --group "nogroup$$" --sshd-config-dir "$AG_DIR/sshd_config.d" 2>&1)
ag_like "$?:$(tr '\n' ' ' <<<"$out")" "^1:.*no group 'nogroup$$'.*groupadd nogroup$$" missing_group_is_refused "$out"

before=$(state)
out=$("${SETUP[@]}" --dry-run 2>&1)
rc=$?
ag_like "$rc:$(tr '\n' ' ' <<<"$out")" "^0:.*would write it" dry_run_says_what_it_would_write "$out"
ag_like "$out" "\| Match User $U" dry_run_shows_the_match_line "$out"
ag_like "$out" "would add 'session optional pam_agentgate.so bind sshd_service=$AG_SSHD_SERVICE'" dry_run_names_the_bind_line "$out"
ag_like "$out" "$U's is /bin/bash: would make it $GW" dry_run_names_the_login_shell "$out"
ag_is "$(state)" "$before" dry_run_writes_nothing

# ---- setup, with sshd running ----------------------------------------------------
"$AG_SSHD_BIN" -D -e -f "$AG_DIR/sshd_config" 2>>"$AG_DIR/sshd.log" &
AG_SSHD_PID=$!
ag_wait_until 60 ag_listening "$AG_SSHD_PID" "$AG_PORT"
ag_up "$AG_SSHD_PID" "$AG_PORT" || { cat "$AG_DIR/sshd.log"; exit 99; }

out=$("${SETUP[@]}" --reload 2>&1)
rc=$?
ag_is "$rc" 0 setup_succeeds "$out"
ag_like "$out" "agentgate doctor: user $U" setup_runs_the_doctor "$out"
ag_like "$out" "[0-9]+ checks, 0 failed" the_doctor_passes "$(grep -E '^FAIL' <<<"$out")"
ag_ok drop_in_is_a_file_not_a_link test -f "$DROPIN" -a ! -L "$DROPIN"
ag_like "$(cat "$DROPIN")" "^Match User $U\$" drop_in_matches_the_account
ag_like "$(grep -E '^\s*(ForceCommand|AcceptEnv|AuthorizedKeysFile|AuthorizedKeysCommand) ' "$DROPIN" | tr '\n' ' ')" \
    "ForceCommand $GW .*AuthorizedKeysFile $AG_DIR/tokkeys/%u .*AuthorizedKeysCommand $GW authorized-keys %u .*AcceptEnv AGENTGATE_TOKEN" \
    drop_in_has_what_the_identities_need "$(cat "$DROPIN")"
ag_ok sshd_t_accepts_it "$AG_SSHD_BIN" -t -f "$AG_DIR/sshd_config"
ag_is "$(grep -c "^session optional pam_agentgate.so bind sshd_service=$AG_SSHD_SERVICE\$" "$PAMF")" 1 bind_line_added "$(cat "$PAMF")"
ag_ok pam_backup_kept cmp -s "$PAMF.before-agentgate" <(printf '%s\n' \
    "# agentgate test world $AG_DIR (removed when the test ends)" 'auth     required  pam_deny.so' \
    'account  required  pam_permit.so' 'session  required  pam_permit.so')
ag_is "$(getent passwd "$U" | cut -d: -f7)" "$GW" login_shell_is_the_gateway
ag_is "$(grep -cx "$GW" "$AG_DIR/shells")" 1 gateway_in_the_shells_list
ag_like "$out" "sent SIGHUP to sshd \(pid $AG_SSHD_PID" reload_signals_the_running_sshd "$out"

# sshd restarted itself (its log says so) with the drop-in
listening() { [ "$(grep -c 'Server listening on 127.0.0.1' "$AG_DIR/sshd.log")" -ge 2 ]; }
ag_ok sshd_restarted ag_wait_until 60 listening
ag_wait_until 60 ag_listening "$AG_SSHD_PID" "$AG_PORT"
# this world's pam_agentgate.so is not installed where PAM looks for a bare
# name: the line setup added names the world's copy
sed -i "s|^session optional pam_agentgate.so bind |session optional $AG_DIR/sshd-pam/pam_agentgate.so bind |" "$PAMF"

# ---- through sshd ---------------------------------------------------------------
T="$U@127.0.0.1"
out=$(ag_as keybot "$T" 'echo via-key; id -un' 2>&1)
ag_is "$out" "via-key
$U" key_identity_gets_in_through_the_gateway
ag_ok key_session_is_keybots ag_audit_query \
    "any(x.get('identity') == 'keybot' and x.get('command') == 'echo via-key; id -un' for x in r)"
out=$(AGENTGATE_TOKEN=$TOK ag_as shared -o SendEnv=AGENTGATE_TOKEN "$T" 'echo via-token; id -un' 2>&1)
ag_is "$out" "via-token
$U" token_identity_gets_in_through_the_gateway
ag_ok token_session_is_tokbots ag_audit_query \
    "any(x.get('identity') == 'tokbot' and x.get('command') == 'echo via-token; id -un' for x in r)"
out=$(ag_as shared "$T" 'echo no-token' 2>&1)
ag_unlike "$out" 'no-token' shared_key_without_a_token_is_refused "$out"

# ---- doctor on its own, and setup again -----------------------------------------
out=$("$GW" doctor --user "$U" --sshd "$AG_SSHD_BIN" --sshd-config "$AG_DIR/sshd_config" 2>&1)
rc=$?
ag_is "$rc" 0 doctor_passes "$(grep -E '^FAIL' <<<"$out")"
ag_like "$out" "PASS  the token agents' key file $AG_DIR/tokkeys/$U is root's" \
    doctor_passes_the_token_agents_key_file "$out"
ag_like "$out" "PASS  $AG_DIR/tokkeys/$U holds no identity's key" doctor_checks_it_holds_no_identity_key "$out"

before=$(state)
out=$("${SETUP[@]}" --reload 2>&1)
rc=$?
ag_is "$rc" 0 second_setup_succeeds "$out"
ag_like "$out" "nothing to change: account $U is set up already" second_setup_says_so "$out"
ag_like "$out" "drop-in is unchanged: no reload needed" second_setup_does_not_reload "$out"
ag_is "$(grep -Ec 'unchanged' <<<"$out")" 5 every_step_unchanged "$out"
ag_is "$(state)" "$before" second_setup_changes_nothing
ag_is "$(grep -c 'Server listening on 127.0.0.1' "$AG_DIR/sshd.log")" 2 sshd_not_restarted_again

# an identity's key in the token agents' key file outlives the identity
cat "$AG_DIR/keybot.pub" >> "$AG_DIR/tokkeys/$U"
out=$("$GW" doctor --user "$U" --sshd "$AG_SSHD_BIN" --sshd-config "$AG_DIR/sshd_config" 2>&1)
ag_like "$?:$(grep '^FAIL' <<<"$out")" "^1:FAIL  expected: $AG_DIR/tokkeys/$U holds no identity's key; fix: remove identity keybot's key" \
    doctor_fails_an_identity_key_in_the_key_file "$(grep '^FAIL' <<<"$out")"
cp "$AG_DIR/shared.pub" "$AG_DIR/tokkeys/$U"
chown "$U" "$AG_DIR/tokkeys/$U"
out=$("$GW" doctor --user "$U" --sshd "$AG_SSHD_BIN" --sshd-config "$AG_DIR/sshd_config" 2>&1)
ag_like "$?:$(grep '^FAIL' <<<"$out")" "^1:FAIL .*tokkeys/$U is root's.*chown root" doctor_fails_a_key_file_the_agent_owns "$(grep '^FAIL' <<<"$out")"
chown root "$AG_DIR/tokkeys/$U"

# a group of agent accounts: its own drop-in, Match Group (a dry run)
groupadd "g$U" && usermod -a -G "g$U" "$U" || exit 99
before=$(state)
out=$("$GW" setup --group "g$U" --sshd "$AG_SSHD_BIN" --sshd-config "$AG_DIR/sshd_config" \
    --sshd-config-dir "$AG_DIR/sshd_config.d" --pam-file "$PAMF" --shells "$AG_DIR/shells" \
    --token-keys "$AG_DIR/tokkeys/%u" --dry-run 2>&1)
ag_like "$?:$(tr '\n' ' ' <<<"$out")" "^0:.*agentgate-g$U.conf: would write it.*\| Match Group g$U .*$U's is $GW, unchanged" \
    group_setup_writes_match_group "$out"
# the account's own drop-in defines the subsystems already: sshd refuses a second
ag_unlike "$out" '\| Subsystem' group_drop_in_leaves_the_subsystems_to_the_first "$out"
ag_is "$(state)" "$before" group_dry_run_writes_nothing
groupdel "g$U"

# ---- no token identity may log in as the account ----------------------------------
# its drop-in lets no shared key in and takes no AGENTGATE_TOKEN; the hint
# to reload names this sshd's pid file, not the host's sshd (systemctl)
ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
identities:
  - { name: keybot, keys: ["$(ag_key keybot)"], profile: low }
  - { name: tokbot, token_sha256: $(printf '%s' "$TOK" | sha256sum | cut -d' ' -f1), profile: low,
      accounts: [other$$] }
profiles:
  low:
    allow: [echo, id]
POLICY
chown root:"$G" "$AG_DIR/policy.yaml" && chmod 0640 "$AG_DIR/policy.yaml"
out=$("${SETUP[@]}" 2>&1)
ag_is "$?" 0 setup_for_an_account_of_no_token_identity "$out"
ag_like "$(grep -E '^\s*(AcceptEnv|AuthorizedKeysFile) ' "$DROPIN" | tr '\n' ' ')" "^\s*AuthorizedKeysFile none \$" \
    no_key_file_and_no_acceptenv_without_a_token_identity "$(cat "$DROPIN")"
ag_like "$out" "NOTE  no identity with a token may log in as $U \(their accounts: do not name it\)" \
    setup_says_why "$out"
ag_unlike "$out" "token agents log in with a key" no_token_note "$out"
ag_like "$out" "the sshd of $AG_DIR/sshd_config reads the new drop-in when reloaded: kill -HUP \"\\\$\(cat $AG_DIR/sshd.pid\)\"" \
    reload_hint_names_the_pid_file "$out"
ag_unlike "$out" "systemctl" reload_hint_is_not_systemctl "$out"

# ---- Debian 12's sshd stack: bind above pam_env's user_readenv=1 --------------------
# pam_env reading ~/.pam_environment before bind could put a key the connection
# never used where bind reads sshd's: setup puts the line above it (and above
# the comment that goes with it), and moves a line an older setup appended.
# Only the file is judged here: no session runs through it.
debian_pam() {
	if grep -q '^session.*pam_env\.so.*user_readenv=1' /etc/pam.d/sshd; then
		grep -v 'pam_agentgate' /etc/pam.d/sshd
	else
		printf '%s\n' 'account    required     pam_nologin.so' \
		    'session    required     pam_loginuid.so' 'session    required     pam_env.so # [1]' \
		    '# In Debian 4.0 (etch), locale-related environment variables were moved to' \
		    '# /etc/default/locale, so read that as well.' \
		    'session    required     pam_env.so user_readenv=1 envfile=/etc/default/locale'
	fi
}
lineof() { grep -n "$1" "$PAMF" | head -n1 | cut -d: -f1; }
debian_pam >"$PAMF"
out=$("${SETUP[@]}" 2>&1)
ag_is "$?" 0 setup_on_debians_sshd_stack "$(grep -E '^FAIL|sshd PAM' <<<"$out")"
ag_like "$out" "added 'session optional pam_agentgate.so bind sshd_service=$AG_SSHD_SERVICE' above '$PAMF:[0-9]+: session required pam_env.so user_readenv=1" \
    setup_says_where_the_bind_line_went "$out"
bind_at=$(lineof 'pam_agentgate.so bind') env_at=$(lineof 'pam_env.so user_readenv=1')
ag_ok bind_line_above_user_readenv test "${bind_at:-0}" -gt 0 -a "${bind_at:-0}" -lt "${env_at:-0}"
ag_ok bind_line_above_the_pam_env_comment test "$(lineof 'In Debian 4.0')" -gt "${bind_at:-0}"
ag_like "$out" "PASS  nothing before the bind line of $PAMF reads the user's ~/.pam_environment" \
    doctor_passes_what_setup_wrote "$(grep '^FAIL' <<<"$out")"
{ debian_pam; printf '%s\n' '# agentgate: record which key each connection used, for the gateway' \
    '# (pam_agentgate(8), bind).  Optional: other accounts never depend on it.' \
    "session optional $AG_DIR/sshd-pam/pam_agentgate.so bind sshd_service=$AG_SSHD_SERVICE"; } >"$PAMF"
out=$("$GW" doctor --user "$U" --sshd "$AG_SSHD_BIN" --sshd-config "$AG_DIR/sshd_config" 2>&1)
ag_like "$?:$(grep '^FAIL' <<<"$out")" "^1:FAIL  pam_env reads the user's ~/.pam_environment before bind .*fix: move the bind line" \
    doctor_fails_bind_below_user_readenv "$(grep '^FAIL' <<<"$out")"
out=$("${SETUP[@]}" 2>&1)
ag_is "$?" 0 setup_moves_the_bind_line "$(grep -E '^FAIL|sshd PAM' <<<"$out")"
ag_like "$out" "moved 'session optional $AG_DIR/sshd-pam/pam_agentgate.so bind sshd_service=$AG_SSHD_SERVICE' above" \
    setup_says_it_moved_it "$out"
ag_is "$(grep -c 'pam_agentgate.so bind' "$PAMF") $(grep -c '^# agentgate: record which key' "$PAMF")" "1 1" \
    moved_line_and_its_comment_once "$(cat "$PAMF")"
ag_ok moved_line_above_user_readenv test "$(lineof 'pam_agentgate.so bind')" -lt "$(lineof 'pam_env.so user_readenv=1')"
out=$("${SETUP[@]}" 2>&1)
ag_like "$out" "has pam_agentgate.so bind, unchanged" setup_after_the_move_changes_nothing "$out"

ag_done
