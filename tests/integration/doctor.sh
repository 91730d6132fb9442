#!/bin/bash
# doctor.sh - `agentgate doctor` against the real sshd's effective
# configuration (sshd -T): a deliberately weak setup reports each weakness
# and exits non-zero; the hardened drop-in from etc/ with a safe account,
# policy, PAM service and audit directory passes.
#
# Needs root: sshd -T reads host keys, and the test creates a throwaway
# account (removed at exit).  It builds its own world (no sshd is started)
# and takes from tests/integration/lib.sh the assertions and the closing
# "N passed, N failed" line (ag_done).
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
AGENTGATE=${AGENTGATE:-$top_builddir/src/agentgate}
SSHD=${SSHD:-/usr/sbin/sshd}

. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: sshd -T and a throwaway account need root"
	exit 77
fi
[ -x "$AGENTGATE" ] || { echo "missing $AGENTGATE"; exit 99; }
[ -x "$SSHD" ] || { echo "SKIP: no sshd at $SSHD"; exit 77; }
command -v useradd >/dev/null || { echo "SKIP: no useradd"; exit 77; }

U=agdoc$$
D=$(mktemp -d /run/agentgate-doctortest.XXXXXX) || exit 99
cleanup() {
	userdel "$U" >/dev/null 2>&1
	groupdel "g$U" >/dev/null 2>&1
	rm -f "/etc/pam.d/sshd-$U"
	# the doctor, as root, kept the world's policy as the last good one
	rm -f "$(ag_last_good "$D/etc/agentgate.yaml")" "$(ag_last_good "$D/etc/sftp.yaml")"
	rm -rf "$D"
}
trap cleanup EXIT
chmod 755 "$D"
# sshd -T refuses to run without its privilege-separation directory.
[ -d /run/sshd ] || mkdir -m 755 /run/sshd
# sshd's PAM service is named after the name sshd runs as: this world's
# sshd is a symlink whose service (what /etc/pam.d/sshd is on a real host)
# records each connection's key (pam_agentgate.so bind)
ln -s "$SSHD" "$D/sshd-$U"
SSHD=$D/sshd-$U
# (named by sshd_service=: bind refuses in any service but sshd's)
SSHD_PAM="account required pam_permit.so
session optional pam_agentgate.so bind sshd_service=sshd-$U"
echo "$SSHD_PAM" >"/etc/pam.d/sshd-$U"

useradd -M -d "$D/home" -s /bin/bash "$U" || exit 99
ssh-keygen -q -t ed25519 -N '' -f "$D/hostkey" </dev/null || exit 99

# --- a safe setup ------------------------------------------------------------
mkdir -m 755 "$D/home" "$D/home/.ssh" "$D/etc" "$D/etc/pam.d"
touch "$D/home/.bashrc" "$D/home/.profile" "$D/home/.ssh/authorized_keys"
chmod 644 "$D/home/.bashrc" "$D/home/.profile" "$D/home/.ssh/authorized_keys"
# the privilege separation make install sets up: the gateway set-group-ID
# to its group, which alone writes the audit directory
G=${AG_GROUP:-agentgate}
flock /run/agentgate-test.lock sh -c "getent group '$G' >/dev/null || groupadd --system '$G'" || exit 99
install -d -o root -g "$G" -m 2770 "$D/audit"
install -d -m 755 "$D/bin"
install -o root -g "$G" -m 2755 "$AGENTGATE" "$D/bin/agentgate"
# the gateway is the account's login shell (agentgate(8) SECURITY)
usermod -s "$D/bin/agentgate" "$U" || exit 99
cp "$top_srcdir/etc/pam.d/agentgate" "$D/etc/pam.d/agentgate-doctor"
chmod 644 "$D/etc/pam.d/agentgate-doctor"
cat >"$D/etc/agentgate.yaml" <<EOF
version: 1
gateway:
  pam_service: agentgate-doctor
  pam_confdir: $D/etc/pam.d
  audit:
    file: $D/audit/audit.jsonl
identities:
  - { name: bot, keys: ["$(cut -d' ' -f1-2 "$D/hostkey.pub")"], profile: readonly }
profiles:
  readonly: { allow: [ls] }
users:
  $U: readonly
EOF
# keys and token hashes: the gateway's group reads them, the agent cannot
chown root:"$G" "$D/etc/agentgate.yaml" && chmod 640 "$D/etc/agentgate.yaml"

# The drop-in as installed: @BINDIR@ is where the built agentgate is.
sed -e "s|@BINDIR@|$D/bin|g" -e "s|@SYSCONFDIR@|/etc|g" -e "s|@GROUP@|$G|g" \
	-e "s|^Match User agent\$|Match User $U|" \
	"$top_srcdir/etc/sshd_config.d/agentgate.conf" >"$D/dropin.conf"
printf 'HostKey %s\nInclude %s\n' "$D/hostkey" "$D/dropin.conf" >"$D/hardened.conf"

out=$("$AGENTGATE" doctor --user "$U" --config "$D/etc/agentgate.yaml" \
	--sshd "$SSHD" --sshd-config "$D/hardened.conf" 2>&1)
rc=$?
if [ $rc -eq 0 ] && ! grep -q '^FAIL' <<<"$out" && grep -q '^PASS  ForceCommand runs' <<<"$out" &&
	grep -q ' 0 failed$' <<<"$out"; then
	ag_pass hardened_dropin_passes
else
	ag_fail hardened_dropin_passes "exit $rc" "$out"
fi
missing=
for want in 'ForceCommand runs' 'Subsystem mcp and agentgate-json are set' 'forwarding is disabled' 'PermitUserRC no' 'UsePAM yes' \
	"/etc/pam.d/sshd-$U records which key each connection used" \
	'sshd takes the account.s keys from the policy' 'sshd reads no authorized_keys file' \
	'PermitUserEnvironment no' 'AcceptEnv admits no' "the account's login shell is the gateway" \
	'the agent cannot change its home' 'policy .* is safe' 'PAM service .* is present' \
	"policy .* is readable by group $G, not by the agent" \
	'every pam_agentgate.so option in .* is known' \
	"the bind line (/etc/pam.d/sshd-$U:2) is for sshd's PAM service sshd-$U" \
	"nothing before the bind line of /etc/pam.d/sshd-$U reads the user's ~/.pam_environment" \
	'no pam_agentgate.so line of .* has bind' \
	'a caller pam_agentgate.so refuses is refused by .* (auth)' \
	'a caller pam_agentgate.so refuses is refused by .* (account)' \
	"audit directory .* is root:$G, mode 2770" "$D/bin/agentgate is set-group-ID $G" \
	"$U is not in group $G" ".* can make the sandbox's user namespace"; do
	grep -q "^PASS  $want" <<<"$out" || missing="$missing [$want]"
done
# and, per profile, what the sandbox guarantees on this kernel
if [ -z "$missing" ] && [ "$(grep -c '^PASS' <<<"$out" | head -n1)" -eq \
    "$((25 + $(grep -c '^PASS  profile ' <<<"$out")))" ] &&
    grep -q '^PASS  profile .*: writes only beneath paths.write (Landlock)' <<<"$out"; then
	ag_pass every_check_reported
else
	ag_fail every_check_reported "missing:$missing" "$out"
fi

# without the agent protocols' Subsystem lines: a note for each, not a failure
grep -v '^Subsystem' "$D/dropin.conf" >"$D/nosub-dropin.conf"
printf 'HostKey %s\nInclude %s\n' "$D/hostkey" "$D/nosub-dropin.conf" >"$D/nosub.conf"
out=$("$AGENTGATE" doctor --user "$U" --config "$D/etc/agentgate.yaml" \
	--sshd "$SSHD" --sshd-config "$D/nosub.conf" 2>&1)
rc=$?
ag_is "$rc $(grep -c "^NOTE  no 'Subsystem \(mcp\|agentgate-json\)' line: sshd refuses" <<<"$out")" "0 2" \
    missing_subsystems_are_noted_not_failed "$out"

# --- the same host, one weakness at a time ------------------------------------
expect_fail() {	# NAME PATTERN ARGS...: doctor exits 1 and prints a FAIL line matching PATTERN
	local name=$1 pat=$2; shift 2
	out=$("$AGENTGATE" doctor --user "$U" --sshd "$SSHD" "$@" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -E "^FAIL  .*$pat" <<<"$out" | grep -q 'fix: '; then
		ag_pass "$name"
	else
		ag_fail "$name" "want exit 1 and FAIL /$pat/, got exit $rc" "$out"
	fi
}
weak() {	# FILE SSHD-LINES...: the hardened drop-in with lines added in front (first one wins)
	local f=$1; shift
	{
		echo "HostKey $D/hostkey"
		grep '^PermitUserEnvironment' "$D/dropin.conf"	# global-only
		echo "Match User $U"
		printf '\t%s\n' "$@"
		echo "Match all"
		sed -n '/^Match User/,$p' "$D/dropin.conf" | sed '1d'
	} >"$f"
}
base=(--config "$D/etc/agentgate.yaml")

{ echo "UsePAM no"; cat "$D/hardened.conf"; } >"$D/w1.conf"
expect_fail weak_usepam 'UsePAM is no' "${base[@]}" --sshd-config "$D/w1.conf"
mv "/etc/pam.d/sshd-$U" "$D/sshd.pam"
expect_fail weak_sshd_pam_no_bind "sshd-$U records which key.*session optional pam_agentgate.so bind" \
	"${base[@]}" --sshd-config "$D/hardened.conf"
mv "$D/sshd.pam" "/etc/pam.d/sshd-$U"
# the bind line of a service not called sshd, without sshd_service=: the
# module would refuse there
sed 's/ sshd_service=.*//' <<<"$SSHD_PAM" >"/etc/pam.d/sshd-$U"
expect_fail sshd_bind_for_another_service "bind line .* is for sshd's PAM service sshd-$U; fix: add sshd_service=sshd-$U" \
	"${base[@]}" --sshd-config "$D/hardened.conf"
# Debian 12's order with bind appended at the end: pam_env reads the user's
# ~/.pam_environment first
{ echo "account required pam_permit.so"
  echo "session required pam_env.so user_readenv=1 envfile=/etc/default/locale"
  echo "session optional pam_agentgate.so bind sshd_service=sshd-$U"; } >"/etc/pam.d/sshd-$U"
expect_fail sshd_user_env_before_bind "pam_env reads the user's ~/.pam_environment before bind.*fix: move the bind line \(/etc/pam.d/sshd-$U:3\) above '/etc/pam.d/sshd-$U:2: session required pam_env.so user_readenv=1" \
	"${base[@]}" --sshd-config "$D/hardened.conf"
# ... and after it, as setup puts it: passes
{ echo "account required pam_permit.so"
  echo "session optional pam_agentgate.so bind sshd_service=sshd-$U"
  echo "session required pam_env.so user_readenv=1 envfile=/etc/default/locale"; } >"/etc/pam.d/sshd-$U"
out=$("$AGENTGATE" doctor --user "$U" --sshd "$SSHD" "${base[@]}" --sshd-config "$D/hardened.conf" 2>&1)
ag_like "$?:$(grep -c '^FAIL' <<<"$out")" "^0:0$" sshd_user_env_after_bind_passes "$(grep '^FAIL' <<<"$out")"
echo "$SSHD_PAM" >"/etc/pam.d/sshd-$U"
weak "$D/w8.conf" "AuthorizedKeysFile .ssh/authorized_keys"
expect_fail weak_authorized_keys_file 'sshd reads no authorized_keys file.*outlives its identity' \
	"${base[@]}" --sshd-config "$D/w8.conf"
weak "$D/w9.conf" "AuthorizedKeysCommand none"
expect_fail weak_no_authorized_keys_command 'keys from the policy.*agentgate authorized-keys' \
	"${base[@]}" --sshd-config "$D/w9.conf"
weak "$D/w2.conf" "DisableForwarding no" "AllowTcpForwarding yes" "X11Forwarding yes"
expect_fail weak_forwarding 'forwarding is allowed.*AllowTcpForwarding.*X11Forwarding' \
	"${base[@]}" --sshd-config "$D/w2.conf"
weak "$D/w3.conf" "PermitUserRC yes"
expect_fail weak_permituserrc 'PermitUserRC is yes' "${base[@]}" --sshd-config "$D/w3.conf"
# PermitUserEnvironment is global-only in sshd; the first value wins.
printf 'HostKey %s\nPermitUserEnvironment yes\nInclude %s\n' "$D/hostkey" "$D/dropin.conf" >"$D/w4.conf"
expect_fail weak_permituserenvironment 'PermitUserEnvironment is yes' "${base[@]}" --sshd-config "$D/w4.conf"
weak "$D/w5.conf" "ForceCommand /bin/bash"
expect_fail weak_forcecommand_not_agentgate 'ForceCommand does not run agentgate' \
	"${base[@]}" --sshd-config "$D/w5.conf"
weak "$D/w6.conf" "AcceptEnv *"
expect_fail weak_acceptenv 'AcceptEnv lets the client set trusted variables.*SSH_CONNECTION' \
	"${base[@]}" --sshd-config "$D/w6.conf"
printf 'HostKey %s\n' "$D/hostkey" >"$D/w7.conf"
expect_fail weak_no_forcecommand 'ForceCommand is not set' "${base[@]}" --sshd-config "$D/w7.conf"

# A fully weak sshd config: every sshd-side weakness in one run.
printf 'HostKey %s\nPermitUserEnvironment yes\nMatch User %s\n\tPermitUserRC yes\n\tAllowAgentForwarding yes\n\tPermitTunnel yes\n' \
	"$D/hostkey" "$U" >"$D/weak.conf"
out=$("$AGENTGATE" doctor --user "$U" "${base[@]}" --sshd "$SSHD" --sshd-config "$D/weak.conf" 2>&1)
rc=$?
n=$(grep -c '^FAIL' <<<"$out")
if [ $rc -eq 1 ] && [ "$n" -ge 5 ]; then
	ag_pass weak_config_reports_each_weakness
else
	ag_fail weak_config_reports_each_weakness "exit $rc, $n FAIL lines" "$out"
fi

# --- the account -------------------------------------------------------------
chown "$U" "$D/home/.bashrc"
expect_fail agent_owns_bashrc 'can change files.*\.bashrc' "${base[@]}" --sshd-config "$D/hardened.conf"
chown root "$D/home/.bashrc"
chmod 666 "$D/home/.profile"
expect_fail world_writable_profile 'can change files.*\.profile' "${base[@]}" --sshd-config "$D/hardened.conf"
chmod 644 "$D/home/.profile"
chown "$U" "$D/home/.ssh"
expect_fail agent_owns_dot_ssh 'can change files.*\.ssh' "${base[@]}" --sshd-config "$D/hardened.conf"
chown root "$D/home/.ssh"
# A writable home lets the agent replace any dotfile, even root-owned ones.
chown "$U" "$D/home"
expect_fail agent_owns_home 'can change files.*home directory' "${base[@]}" --sshd-config "$D/hardened.conf"
chown root "$D/home"
# Group-writable, and the agent is in that group.
groupadd "g$U" && usermod -a -G "g$U" "$U" && chgrp "g$U" "$D/home/.bashrc" && chmod 664 "$D/home/.bashrc"
expect_fail group_writable_bashrc 'can change files.*\.bashrc' "${base[@]}" --sshd-config "$D/hardened.conf"
chgrp root "$D/home/.bashrc"; chmod 644 "$D/home/.bashrc"
usermod -s "$(command -v nologin || echo /usr/sbin/nologin)" "$U"
expect_fail nologin_shell "login shell is not the gateway" "${base[@]}" --sshd-config "$D/hardened.conf"
usermod -s /bin/bash "$U"
expect_fail bash_login_shell "login shell is not the gateway.*usermod -s $D/bin/agentgate" \
	"${base[@]}" --sshd-config "$D/hardened.conf"
usermod -s "$D/bin/agentgate" "$U"

# --- policy, PAM service, audit ------------------------------------------------
chmod 664 "$D/etc/agentgate.yaml"
expect_fail group_writable_policy 'policy file or a directory above it is unsafe' \
	"${base[@]}" --sshd-config "$D/hardened.conf"
chmod 640 "$D/etc/agentgate.yaml"
expect_fail missing_policy 'policy file is missing' --config "$D/etc/nope.yaml" \
	--sshd-config "$D/hardened.conf"
printf 'version: 1\nprofiles: {}\nbogus: 1\n' >"$D/etc/broken.yaml"; chmod 644 "$D/etc/broken.yaml"
expect_fail invalid_policy 'policy file does not load' --config "$D/etc/broken.yaml" \
	--sshd-config "$D/hardened.conf"
chmod 600 "$D/etc/agentgate.yaml"
expect_fail policy_unreadable_by_gateway "neither the agent nor the gateway's group can read it" \
	"${base[@]}" --sshd-config "$D/hardened.conf"
chmod 644 "$D/etc/agentgate.yaml"
expect_fail policy_secrets_readable_by_agent "agent cannot read the identities' keys.*chmod 0640" \
	"${base[@]}" --sshd-config "$D/hardened.conf"
chmod 640 "$D/etc/agentgate.yaml"
mv "$D/etc/pam.d/agentgate-doctor" "$D/etc/pam.d/x"
expect_fail missing_pam_service 'PAM service file is missing' "${base[@]}" --sshd-config "$D/hardened.conf"
mv "$D/etc/pam.d/x" "$D/etc/pam.d/agentgate-doctor"
cp "$D/etc/pam.d/agentgate-doctor" "$D/pam.saved"
sed -i 's/^auth     required   pam_agentgate.so$/& use_tokne/' "$D/etc/pam.d/agentgate-doctor"
expect_fail pam_option_typo "'use_tokne' is not an option of pam_agentgate.so" \
	"${base[@]}" --sshd-config "$D/hardened.conf"
cp "$D/pam.saved" "$D/etc/pam.d/agentgate-doctor"
chown "$U" "$D/etc/pam.d/agentgate-doctor"
expect_fail agent_owns_pam_service 'PAM service .* is present' "${base[@]}" --sshd-config "$D/hardened.conf"
chown root "$D/etc/pam.d/agentgate-doctor"
# The gateway's own stack, each way it lets a caller in that
# pam_agentgate.so refused (the shipped one passes: hardened_dropin_passes)
gw_stack() {	# NAME PATTERN SED-SCRIPT: the shipped stack edited so fails with PATTERN
	sed -e "$3" "$D/pam.saved" >"$D/etc/pam.d/agentgate-doctor"
	expect_fail "$1" "$2" "${base[@]}" --sshd-config "$D/hardened.conf"
	cp "$D/pam.saved" "$D/etc/pam.d/agentgate-doctor"
}
gw_stack gateway_stack_sufficient 'refused by .*agentgate-doctor \(auth\); fix: .*auth sufficient pam_agentgate.so: a refusal there does not fail the stack' \
	's/^auth     required   pam_agentgate.so$/auth sufficient pam_agentgate.so/'
gw_stack gateway_stack_optional 'refused by .*agentgate-doctor \(account\); fix: .*account optional pam_agentgate.so: a refusal there does not fail the stack' \
	's/^account  required   pam_agentgate.so$/account optional pam_agentgate.so/'
gw_stack gateway_stack_bracket_ignore 'refused by .*\(auth\); fix: .*\[success=ok default=ignore\] pam_agentgate.so: a refusal there does not fail' \
	's/^auth     required   pam_agentgate.so$/auth [success=ok default=ignore] pam_agentgate.so/'
gw_stack gateway_stack_permit_first 'refused by .*\(auth\); fix: .*auth sufficient pam_permit.so: runs before pam_agentgate.so and can end the stack with success' \
	's/^auth     required   pam_agentgate.so$/auth sufficient pam_permit.so\n&/'
gw_stack gateway_stack_no_account 'refused by .*\(account\); fix: no account line of .* runs pam_agentgate.so' \
	'/^account  required   pam_agentgate.so$/d'
gw_stack gateway_stack_bind 'no pam_agentgate.so line of .*agentgate-doctor has bind; fix: remove .bind. from line [0-9]+' \
	's/^auth     required   pam_agentgate.so$/& bind/'
chmod 2775 "$D/audit"
expect_fail audit_dir_open_to_others "audit directory .* is root:$G, mode 2770.*install -d -o root -g $G -m 2770" \
	"${base[@]}" --sshd-config "$D/hardened.conf"
chmod 2770 "$D/audit"
chown "$U" "$D/audit"
expect_fail audit_dir_owned_by_agent "audit directory .* is root:$G" "${base[@]}" --sshd-config "$D/hardened.conf"
chown root "$D/audit"
chmod 0755 "$D/bin/agentgate"
expect_fail gateway_not_setgid "$D/bin/agentgate is set-group-ID $G.*chmod 2755" "${base[@]}" \
	--sshd-config "$D/hardened.conf"
chmod 2755 "$D/bin/agentgate"
usermod -a -G "$G" "$U"
expect_fail agent_in_the_group "$U is not in group $G.*gpasswd -d" "${base[@]}" --sshd-config "$D/hardened.conf"
gpasswd -d "$U" "$G" >/dev/null

# Back to the safe state: passes again (each change above was undone).
out=$("$AGENTGATE" doctor --user "$U" "${base[@]}" --sshd "$SSHD" --sshd-config "$D/hardened.conf" 2>&1)
ag_is "$?" 0 restored_setup_passes "$out"
groupdel "g$U" >/dev/null 2>&1

# --- the audit files' owner --------------------------------------------------------
# The gateway runs as the account, set-group-ID: the first log and the chain
# state it creates are the account's; root should own them (a warning, the
# 2770 directory keeps the account out)
install -o "$U" -g "$G" -m 0660 /dev/null "$D/audit/audit.jsonl"
install -o "$U" -g "$G" -m 0660 /dev/null "$D/audit/.audit.jsonl.chain"
out=$("$AGENTGATE" doctor --user "$U" "${base[@]}" --sshd "$SSHD" --sshd-config "$D/hardened.conf" 2>&1)
ag_like "$?:$(grep '^WARN  .*audit' <<<"$out")" \
    "^0:WARN  $D/audit/audit.jsonl $D/audit/.audit.jsonl.chain are owned by $U \(uid [0-9]+\), not root: .*fix: chown root $D/audit/audit.jsonl $D/audit/.audit.jsonl.chain\$" \
    audit_files_of_the_account_are_a_warning "$out"
chown root "$D/audit/audit.jsonl" "$D/audit/.audit.jsonl.chain"
out=$("$AGENTGATE" doctor --user "$U" "${base[@]}" --sshd "$SSHD" --sshd-config "$D/hardened.conf" 2>&1)
ag_like "$out" "PASS  audit file $D/audit/audit.jsonl and its chain state are root's" \
    audit_files_of_root_pass "$out"
ag_unlike "$out" "WARN  .*audit" and_draw_no_warning "$out"

# --- a profile that allows sftp, and sshd without Subsystem sftp ----------------------
sed 's/^  readonly: { allow: \[ls\] }$/  readonly: { allow: [ls], file_transfer: { sftp: read } }/' \
    "$D/etc/agentgate.yaml" >"$D/etc/sftp.yaml"
chown root:"$G" "$D/etc/sftp.yaml" && chmod 640 "$D/etc/sftp.yaml"
out=$("$AGENTGATE" doctor --user "$U" --config "$D/etc/sftp.yaml" --sshd "$SSHD" \
    --sshd-config "$D/hardened.conf" 2>&1)
ag_like "$?:$(grep "Subsystem sftp" <<<"$out")" \
    "^0:NOTE  profile readonly allows sftp \(file_transfer.sftp: read\), but sshd has no 'Subsystem sftp' line.*add 'Subsystem sftp internal-sftp'" \
    missing_sftp_subsystem_is_noted "$out"
printf 'Subsystem sftp internal-sftp\n' | cat - "$D/hardened.conf" >"$D/sftp.conf"
out=$("$AGENTGATE" doctor --user "$U" --config "$D/etc/sftp.yaml" --sshd "$SSHD" \
    --sshd-config "$D/sftp.conf" 2>&1)
ag_like "$?:$(grep "Subsystem sftp" <<<"$out")" "^0:PASS  Subsystem sftp is set \(profile readonly allows sftp\)$" \
    sftp_subsystem_passes "$out"
out=$("$AGENTGATE" doctor --user "$U" "${base[@]}" --sshd "$SSHD" --sshd-config "$D/hardened.conf" 2>&1)
ag_unlike "$out" "sftp" a_profile_without_sftp_needs_no_subsystem "$out"

ag_done
