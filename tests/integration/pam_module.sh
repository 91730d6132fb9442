#!/bin/bash
# pam_module.sh - pam_agentgate.so through the real Linux-PAM library.
#
# Two clients drive the built module (named by absolute path in a test PAM
# service directory):
#   pam_client  the gateway's own front half (src/auth/pamauth.c) with
#               pam_start_confdir; prints the identity and profile the
#               module left in the PAM environment
#   pamtester   under pam_wrapper (PAM_WRAPPER_SERVICE_DIR); the token is
#               typed into the PAM conversation on stdin
# As root, everything runs as the unprivileged user nobody (the module runs
# as the agent user inside the gateway).  It builds its own world (no sshd,
# no account) and takes from tests/integration/lib.sh the assertions,
# ag_wait_until and the closing "N passed, N failed" line (ag_done).
set -u

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
PAM_MODULE=${PAM_MODULE:-$top_builddir/pam/.libs/pam_agentgate.so}
CLIENT=$top_builddir/tests/pam_client

. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

if [ "$(id -u)" != 0 ]; then
	# The loader trusts a config only below root-owned directories (or ones
	# owned by the owner of the running program, which pamtester is not).
	echo "SKIP: needs root to build a root-owned config directory (runs the module as nobody)"
	exit 77
fi
for f in "$PAM_MODULE" "$CLIENT"; do
	[ -e "$f" ] || { echo "missing $f (run make check)"; exit 99; }
done
PAMTESTER=$(command -v pamtester || true)
PWRAP=$(for d in /usr/lib/*/ /usr/lib64/ /usr/lib/; do [ -e "$d/libpam_wrapper.so" ] && echo "$d/libpam_wrapper.so" && break; done)
command -v ssh-keygen >/dev/null || { echo "SKIP: no ssh-keygen"; exit 77; }

D=$(mktemp -d /run/agentgate-pamtest.XXXXXX) || exit 99
trap 'tmux -S "$D/tmux.sock" kill-server 2>/dev/null; rm -rf "$D"' EXIT
chmod 755 "$D"
mkdir -m 755 "$D/pam.d" "$D/keys"
# what Linux-PAM falls back to in a confdir, as /etc/pam.d/other does
printf '%s\n' 'auth required pam_deny.so' 'account required pam_deny.so' >"$D/pam.d/other"

for k in k1 k2 k3 k4 k5; do
	ssh-keygen -q -t ed25519 -N '' -C "$k@test" -f "$D/keys/$k" </dev/null || exit 99
done
ssh-keygen -q -t ed25519 -N '' -f "$D/keys/ca" </dev/null || exit 99
ssh-keygen -q -s "$D/keys/ca" -I k1cert -n agent "$D/keys/k1.pub" || exit 99
pub() { cat "$D/keys/$1.pub"; }
# a token made the way an admin makes one: salted scrypt in the policy
NEW=$("${AGENTGATE:-$top_builddir/src/agentgate}" token new salted) || exit 99
STOK=$(sed -n 2p <<<"$NEW" | tr -d ' ')
SHASH=$(sed -n 's/^  token_hash: "\(.*\)"$/\1/p' <<<"$NEW")
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }

write_config() {	# FILE SERVICE
	cat >"$1" <<EOF
version: 1
gateway:
  pam_service: $2
  pam_confdir: $D/pam.d
profiles:
  readonly: { allow: [ls] }
  developer: { allow: [ls, git] }
identities:
  - name: ci-bot
    keys: ["$(pub k1)"]
    profile: readonly
  - name: coder
    token_sha256: $(h secret-token)
    profile: developer
  - name: old
    keys: ["$(pub k2)"]
    token_sha256: $(h old-token)
    profile: readonly
    expires: 2020-01-31
  - name: local4
    keys: ["$(pub k3)"]
    token_sha256: $(h net-token)
    profile: readonly
    from: ["127.0.0.0/8", "192.0.2.0/24"]
  - name: net6
    keys: ["$(pub k4)"]
    profile: developer
    from: ["2001:db8::/32"]
  - name: salted
    token_hash: "$SHASH"
    profile: developer
  - name: off
    token_sha256: $(h off-token)
    profile: developer
    disabled: true
EOF
	chmod 644 "$1"
}

service() {	# NAME OPTIONS... : auth/account/session all through the module
	local name=$1; shift
	{
		echo "auth     required $PAM_MODULE $*"
		echo "account  required $PAM_MODULE $*"
		echo "session  required $PAM_MODULE $*"
	} >"$D/pam.d/$name"
}

C=$D/agentgate.yaml
write_config "$C" agentgate-test
service agentgate-test "config=$C"
# The same stack for pam_client configs that point elsewhere.
write_config "$D/missing-svc.yaml" no-such-service
write_config "$D/gw-missingcfg.yaml" missingcfg
service missingcfg "config=$D/does-not-exist.yaml"
write_config "$D/gw-unreadable.yaml" unreadable
cp "$C" "$D/secret.yaml" && chmod 600 "$D/secret.yaml"
service unreadable "config=$D/secret.yaml"
write_config "$D/gw-unsafe.yaml" unsafe
mkdir -m 755 "$D/unsafe" && cp "$C" "$D/unsafe/agentgate.yaml" && chmod 664 "$D/unsafe/agentgate.yaml"
service unsafe "config=$D/unsafe/agentgate.yaml"
write_config "$D/gw-typo.yaml" typo
service typo "config=$C" use_tokne
# allow_unidentified: no credential leaves the decision to the rest of the stack.
write_config "$D/gw-fallback.yaml" fallback
cat >"$D/pam.d/fallback" <<EOF
auth     required $PAM_MODULE config=$C allow_unidentified
auth     required pam_permit.so
account  required $PAM_MODULE config=$C allow_unidentified
account  required pam_permit.so
session  required $PAM_MODULE config=$C
# a later module trying to change the profile after the identity was decided
session  required pam_env.so readenv=0 conffile=$D/spoof.conf
EOF
echo "AGENTGATE_PROFILE DEFAULT=developer" >"$D/spoof.conf"
write_config "$D/gw-fallback.yaml" fallback
chmod 644 "$D"/pam.d/* "$D"/spoof.conf

info() { printf 'publickey %s\n' "$(pub "$1" | cut -d' ' -f1,2)" >"$D/info.$1"; chmod 644 "$D/info.$1"; echo "$D/info.$1"; }
certinfo() { printf 'publickey %s\n' "$(cut -d' ' -f1,2 "$D/keys/k1-cert.pub")" >"$D/info.cert"; chmod 644 "$D/info.cert"; echo "$D/info.cert"; }

# The module runs as the agent user inside the gateway: do the same.
as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

out=
# timeout: a session without a terminal must never wait for input (the
# bound only fires if it does; no answer depends on it).
client() { out=$(timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups -- "$CLIENT" "$@" 2>&1); }
expect_ok() {	# NAME IDENTITY PROFILE ARGS...
	local name=$1 id=$2 prof=$3; shift 3
	if client "$@" && grep -qx "identity=$id" <<<"$out" && grep -qx "profile=$prof" <<<"$out"; then
		ag_pass "$name"
	else
		ag_fail "$name" "want identity=$id profile=$prof" "$out"
	fi
}
expect_denied() {	# NAME STAGE PATTERN ARGS...  (PATTERN: grep -E on the output)
	local name=$1 stage=$2 pat=$3; shift 3
	if ! client "$@" && grep -q "^denied stage=$stage " <<<"$out" && grep -Eq "$pat" <<<"$out"; then
		ag_pass "$name"
	else
		ag_fail "$name" "want denied at $stage matching /$pat/" "$out"
	fi
}

# --- identity by key -------------------------------------------------------
expect_ok key_identity_sets_profile ci-bot readonly --config "$C" --user agent \
	--rhost 127.0.0.1 --auth-info "$(info k1)"
expect_ok certificate_matches_certified_key ci-bot readonly --config "$C" --user agent \
	--auth-info "$(certinfo)"
expect_ok other_key_other_profile net6 developer --config "$C" --user agent \
	--rhost 2001:db8::7 --auth-info "$(info k4)"
expect_denied unknown_key_refused authenticate 'Authentication failure' \
	--config "$C" --user agent --auth-info "$(info k5)"

# --- identity by token -------------------------------------------------------
expect_ok token_identity coder developer --config "$C" --user agent --token secret-token
if client --config "$C" --user agent --token secret-token --env &&
	! grep -q 'AGENTGATE_TOKEN=\|secret-token' <<<"$out" &&
	grep -qx 'env AGENTGATE_TOKEN_USED=current' <<<"$out" &&
	grep -qx 'env AGENTGATE_PROFILE=developer' <<<"$out"; then
	ag_pass token_not_left_in_pam_environment
else
	ag_fail token_not_left_in_pam_environment "$out"
fi
expect_denied wrong_token_refused authenticate 'Authentication failure' \
	--config "$C" --user agent --token secret-tokeN
ag_like "$STOK" '^agt_salted_[0-9a-f]{64}$' new_token_names_its_identity_and_256_bits
expect_ok salted_token_identity salted developer --config "$C" --user agent --token "$STOK"
expect_denied salted_token_one_digit_off authenticate 'Authentication failure' \
	--config "$C" --user agent --token "${STOK%?}$([ "${STOK: -1}" = 0 ] && echo 1 || echo 0)"
expect_denied salted_secret_under_another_name authenticate 'Authentication failure' \
	--config "$C" --user agent --token "agt_coder_${STOK#agt_salted_}"
ag_ok policy_keeps_no_token bash -c "! grep -q '${STOK#agt_salted_}' '$C'"
expect_denied token_prefix_refused authenticate 'Authentication failure' \
	--config "$C" --user agent --token secret-toke
# A wrong token is refused even when the key would have matched nothing and
# the stack lets unidentified callers through.
expect_denied wrong_token_refused_even_with_fallback authenticate 'Authentication failure' \
	--config "$D/gw-fallback.yaml" --user agent --token nope

# --- account checks ------------------------------------------------------------
expect_denied expired_key_refused account 'User account has expired' \
	--config "$C" --user agent --auth-info "$(info k2)"
ag_like "$out" 'message=access denied: This agent identity has expired' expired_reason_reaches_client
expect_denied expired_token_refused account 'expired' --config "$C" --user agent --token old-token
expect_denied disabled_identity_refused account 'disabled' --config "$C" --user agent --token off-token
expect_ok inside_cidr_v4 local4 readonly --config "$C" --user agent --rhost 127.0.0.1 \
	--auth-info "$(info k3)"
expect_ok inside_second_cidr local4 readonly --config "$C" --user agent --rhost 192.0.2.200 \
	--auth-info "$(info k3)"
expect_denied outside_cidr_v4 account 'may not connect from this address' \
	--config "$C" --user agent --rhost 10.1.1.1 --auth-info "$(info k3)"
expect_denied v4_identity_from_v6_address account 'Permission denied' \
	--config "$C" --user agent --rhost 2001:db8::1 --auth-info "$(info k3)"
expect_denied no_rhost_with_from account 'Permission denied' \
	--config "$C" --user agent --auth-info "$(info k3)"
expect_ok inside_cidr_v6 net6 developer --config "$C" --user agent --rhost 2001:db8:1::1 \
	--auth-info "$(info k4)"
expect_denied outside_cidr_v6 account 'Permission denied' \
	--config "$C" --user agent --rhost 2001:db9::1 --auth-info "$(info k4)"
expect_ok v4_mapped_v6_address local4 readonly --config "$C" --user agent \
	--rhost ::ffff:127.0.0.1 --auth-info "$(info k3)"

# --- malformed input, broken setup: fail closed ----------------------------
printf 'publickey ssh-ed25519 AAAA!!!!\npublickey %s\n' "$(pub k1 | cut -d' ' -f1,2)" >"$D/info.bad"
chmod 644 "$D/info.bad"
expect_denied malformed_auth_info_refused authenticate 'Authentication failure' \
	--config "$C" --user agent --auth-info "$D/info.bad"
printf 'publickey %s extra\n' "$(pub k1 | cut -d' ' -f1,2)" >"$D/info.extra"
chmod 644 "$D/info.extra"
expect_denied auth_info_extra_field_refused authenticate 'Authentication failure' \
	--config "$C" --user agent --auth-info "$D/info.extra"
expect_denied missing_config_refused authenticate 'cannot retrieve authentication info' \
	--config "$D/gw-missingcfg.yaml" --user agent --token secret-token
expect_denied unreadable_config_refused authenticate 'cannot retrieve authentication info' \
	--config "$D/gw-unreadable.yaml" --user agent --token secret-token
expect_denied group_writable_config_refused authenticate 'cannot retrieve authentication info' \
	--config "$D/gw-unsafe.yaml" --user agent --token secret-token
expect_denied unknown_option_refused authenticate 'Error in service module' \
	--config "$D/gw-typo.yaml" --user agent --token secret-token
expect_denied missing_service_file_refused service 'service file missing' \
	--config "$D/missing-svc.yaml" --user agent --token secret-token
expect_denied no_credentials_refused authenticate 'Authentication failure' \
	--config "$C" --user agent

# --- bind belongs in sshd's own stack -----------------------------------------------
# In the gateway's service it made auth and account ignore the caller: with
# pam_permit after it, a caller with no credential came in.  The module
# refuses it in any service but sshd's (or the one sshd_service= names), and
# says so in syslog.
write_config "$D/gw-bind.yaml" bindhere
cat >"$D/pam.d/bindhere" <<EOF
auth     required $PAM_MODULE config=$C bind
auth     required pam_permit.so
account  required $PAM_MODULE config=$C bind
account  required pam_permit.so
session  required $PAM_MODULE config=$C
EOF
chmod 644 "$D/pam.d/bindhere"
expect_denied bind_in_gateway_stack_refused authenticate 'Error in service module' \
	--config "$D/gw-bind.yaml" --user agent --log-stderr
ag_like "$out" "pam_agentgate\(bindhere:auth\): refusing: 'bind' belongs in sshd's own PAM stack \(service sshd; sshd_service=NAME names another\), not in service bindhere" \
    bind_refusal_says_why_in_syslog "$out"
sed -i 's/ bind$/ bind sshd_service=sshd-elsewhere/' "$D/pam.d/bindhere"
expect_denied bind_for_another_sshd_service_refused authenticate 'Error in service module' \
	--config "$D/gw-bind.yaml" --user agent --log-stderr
ag_like "$out" "\(service sshd-elsewhere; .*not in service bindhere" bind_refusal_names_the_option_service "$out"

# --- allow_unidentified ---------------------------------------------------------
expect_ok unidentified_falls_through_with_no_identity "" "" \
	--config "$D/gw-fallback.yaml" --user agent
# pam_env in the session stack sets AGENTGATE_PROFILE=developer; the gateway
# keeps what auth/account decided.
expect_ok later_module_cannot_change_profile ci-bot readonly \
	--config "$D/gw-fallback.yaml" --user agent --auth-info "$(info k1)"

# --- account without auth (sshd's stack after publickey): identified by key
write_config "$D/gw-acctonly.yaml" acctonly
cat >"$D/pam.d/acctonly" <<EOF
auth     required pam_permit.so
account  required $PAM_MODULE config=$C
session  required $PAM_MODULE config=$C
EOF
chmod 644 "$D/pam.d/acctonly"
expect_ok account_only_identifies_by_key local4 readonly --config "$D/gw-acctonly.yaml" \
	--user agent --rhost 192.0.2.1 --auth-info "$(info k3)"
expect_denied account_only_checks_from account 'may not connect' --config "$D/gw-acctonly.yaml" \
	--user agent --rhost 198.51.100.1 --auth-info "$(info k3)"
expect_denied account_only_without_identity account 'User not known' \
	--config "$D/gw-acctonly.yaml" --user agent --token secret-token

# --- a session with a terminal: the prompt comes up on it, echo off ------------
if command -v tmux >/dev/null; then
	# the pane stays (dead) once the client has ended, to be read
	printf 'set-option -g remain-on-exit on\n' > "$D/tmux.conf"
	TM="tmux -f $D/tmux.conf -S $D/tmux.sock"
	touch "$D/tty.out" && chown 65534 "$D/tty.out"
	$TM new-session -d -x 80 -y 10 "setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		$CLIENT --config $C --user agent --interactive >$D/tty.out 2>&1"
	prompted() { $TM capture-pane -p -S - | grep -q 'Agent token:'; }
	ag_wait_until 30 prompted
	$TM send-keys 'secret-token' Enter
	ag_wait_until 30 grep -q 'identity=' "$D/tty.out"
	pane=$($TM capture-pane -p -S -)
	$TM kill-server 2>/dev/null
	if grep -q 'Agent token:' <<<"$pane" && grep -qx 'identity=coder' "$D/tty.out"; then
		ag_pass tty_prompt_identifies
	else
		ag_fail tty_prompt_identifies "pane: $pane" "out: $(cat "$D/tty.out")"
	fi
	if ! grep -q 'secret-token' <<<"$pane"; then
		ag_pass tty_prompt_does_not_echo_token
	else
		ag_fail tty_prompt_does_not_echo_token "$pane"
	fi
else
	echo "# tmux missing: terminal prompt not tested"
fi

# --- the same module under pamtester + pam_wrapper (token on the conversation)
if [ -n "$PAMTESTER" ] && [ -n "$PWRAP" ]; then
	preload=$PWRAP
	# A sanitizer build of the module needs its runtime loaded first.
	san=$(ldd "$PAM_MODULE" | awk '/lib(a|ub)san/ {print $3}' | tr '\n' ' ')
	[ -n "$san" ] && preload="$san$PWRAP"
	pt() {	# INPUT ARGS...
		local input=$1; shift
		printf '%s\n' "$input" | as_user env LD_PRELOAD="$preload" PAM_WRAPPER=1 \
			PAM_WRAPPER_SERVICE_DIR="$D/pam.d" ASAN_OPTIONS=detect_leaks=0 \
			"$PAMTESTER" "$@" >"$D/pt.out" 2>&1
	}
	if pt secret-token agentgate-test agent authenticate acct_mgmt open_session close_session; then
		ag_pass pamtester_token_by_conversation
	else
		ag_fail pamtester_token_by_conversation "$(cat "$D/pt.out")"
	fi
	if ! pt wrong agentgate-test agent authenticate; then
		ag_pass pamtester_wrong_token
	else
		ag_fail pamtester_wrong_token "$(cat "$D/pt.out")"
	fi
	if ! pt "" agentgate-test agent authenticate; then
		ag_pass pamtester_empty_token
	else
		ag_fail pamtester_empty_token "$(cat "$D/pt.out")"
	fi
	if pt net-token -I rhost=192.0.2.9 agentgate-test agent authenticate acct_mgmt; then
		ag_pass pamtester_token_inside_cidr
	else
		ag_fail pamtester_token_inside_cidr "$(cat "$D/pt.out")"
	fi
	if ! pt net-token -I rhost=198.51.100.1 agentgate-test agent authenticate acct_mgmt &&
		grep -q 'may not connect from this address' "$D/pt.out"; then
		ag_pass pamtester_token_outside_cidr
	else
		ag_fail pamtester_token_outside_cidr "$(cat "$D/pt.out")"
	fi
	if ! pt net-token -I rhost=localhost agentgate-test agent authenticate acct_mgmt; then
		ag_pass pamtester_hostname_rhost_refused
	else
		ag_fail pamtester_hostname_rhost_refused "$(cat "$D/pt.out")"
	fi
	if ! pt old-token agentgate-test agent authenticate acct_mgmt &&
		grep -qi 'expired' "$D/pt.out"; then
		ag_pass pamtester_expired
	else
		ag_fail pamtester_expired "$(cat "$D/pt.out")"
	fi
	# PAM_AUTHTOK from a module stacked above (pam_wrapper's pam_set_items
	# copies it from the environment variable of the same name).
	SETITEMS=$(dirname "$PWRAP")/pam_wrapper/pam_set_items.so
	if [ -e "$SETITEMS" ]; then
		for opt in try_first_pass use_first_pass; do
			printf 'auth required %s\nauth required %s config=%s %s\n' \
				"$SETITEMS" "$PAM_MODULE" "$C" "$opt" >"$D/pam.d/$opt"
			chmod 644 "$D/pam.d/$opt"
		done
		ptauth() { local t=$1; shift; PAM_AUTHTOK=$t pt "$@"; }
		pt() {	# INPUT ARGS... (PAM_AUTHTOK passed through when set)
			local input=$1; shift
			printf '%s\n' "$input" | as_user env LD_PRELOAD="$preload" PAM_WRAPPER=1 \
				PAM_WRAPPER_SERVICE_DIR="$D/pam.d" ASAN_OPTIONS=detect_leaks=0 \
				${PAM_AUTHTOK:+PAM_AUTHTOK="$PAM_AUTHTOK"} \
				"$PAMTESTER" "$@" >"$D/pt.out" 2>&1
		}
		if ptauth secret-token "" try_first_pass agent authenticate &&
			! grep -q 'Agent token' "$D/pt.out"; then
			ag_pass try_first_pass_uses_authtok_without_prompt
		else
			ag_fail try_first_pass_uses_authtok_without_prompt "$(cat "$D/pt.out")"
		fi
		if ptauth not-a-token secret-token try_first_pass agent authenticate; then
			ag_pass try_first_pass_falls_back_to_prompt
		else
			ag_fail try_first_pass_falls_back_to_prompt "$(cat "$D/pt.out")"
		fi
		if ptauth secret-token "" use_first_pass agent authenticate; then
			ag_pass use_first_pass_uses_authtok
		else
			ag_fail use_first_pass_uses_authtok "$(cat "$D/pt.out")"
		fi
		if ! ptauth not-a-token secret-token use_first_pass agent authenticate; then
			ag_pass use_first_pass_never_prompts
		else
			ag_fail use_first_pass_never_prompts "$(cat "$D/pt.out")"
		fi
		unset -f ptauth
	fi
	# use_first_pass: nothing stacked before it set PAM_AUTHTOK, so no prompt, no match.
	service firstpass "config=$C use_first_pass"
	chmod 644 "$D/pam.d/firstpass"
	if ! pt secret-token firstpass agent authenticate; then
		ag_pass use_first_pass_does_not_prompt
	else
		ag_fail use_first_pass_does_not_prompt "$(cat "$D/pt.out")"
	fi
else
	echo "# pamtester or pam_wrapper missing: pamtester cases not run"
fi

# --- the module exports only the PAM entry points --------------------------
syms=$(nm -D --defined-only "$PAM_MODULE" | awk '{print $3}' | grep -v '^pam_sm_' || true)
ag_is "$syms" "" exports_only_pam_sm

ag_done
