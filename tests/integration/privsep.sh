#!/bin/bash
# privsep.sh - the gateway installed set-group-ID to its group, as
# `make install` does, under the real sshd: the group writes the audit log
# and recordings and reads secrets; the agent's uid cannot, whether it tries
# from outside (runuser), from a command with the sandbox off (python3,
# sh), by running the gateway itself with hostile arguments and
# environment, or through /proc of a process that holds the group.
#
# The group ($AG_GROUP, default agentgate) is created if missing and left
# in place: it is the one `make install` makes, and other tests may use it.
. "$(dirname "$0")/lib.sh"
ag_setup

# the layout make install makes (etc/Makefile.am, src/Makefile.am)
ag_setgid_gateway
GID=$(getent group "$G" | cut -d: -f3)
UGID=$(id -g "$AG_USER")
install -d -o root -g "$G" -m 2770 "$AG_DIR/log/recordings"
printf 'sk-test-SECRET-%s\n' "$$" > "$AG_DIR/secret.key"
chown root:"$G" "$AG_DIR/secret.key"
chmod 0640 "$AG_DIR/secret.key"

policy() {	# policy SANDBOX
	sed "s|@SANDBOX@|$1|" <<'EOF' | ag_write_policy "$AG_DIR/policy.yaml"
version: 1
gateway:
  runner: /bin/bash
  sandbox: "@SANDBOX@"
  audit:
    file: @AUDIT@
    required: true
  recordings: @DIR@/log/recordings
users:
  @USER@: test
profiles:
  test:
    allow: [echo, cat, grep, id, sleep, sh, python3, "true", truncate, mv, rm, chmod]
    paths: { read: ["/"], write: ["/tmp", "~"] }
    limits: { timeout: 300 }
    unknown: deny
EOF
}
policy off

# ---- the gateway works, and writes through its group -------------------------
ag_run a "echo hello"
ag_is "$a_out/$a_rc" "hello/0" setgid_gateway_runs_commands "$a_err"
ag_is "$(stat -c '%G %a' "$AG_AUDIT")" "$G 660" audit_file_is_the_groups_0660
ag_ok audit_chain_verifies "$AGENTGATE" audit verify "$AG_AUDIT"

# ---- nothing of the agent's runs with the group --------------------------------
ag_run g "grep ^Gid: /proc/self/status; id -G"
gids=$(printf '%s\n' "$g_out" | sed -n 1p | awk '{print $2, $3, $4, $5}')
ag_is "$gids" "$UGID $UGID $UGID $UGID" command_real_effective_saved_fs_gid_are_the_users "$g_out"
ag_unlike " $(printf '%s\n' "$g_out" | sed -n 2p) " " $GID " command_supplementary_groups_lack_it "$g_out"

# ---- from outside the gateway: the agent's uid, as itself ----------------------
tamper() {	# NAME SHELL-CODE: as the agent, the code must fail
	if runuser -u "$AG_USER" -- bash -c "$2" >/dev/null 2>&1; then
		ag_fail "$1" "succeeded: $2"
	else
		ag_pass "$1"
	fi
}
before=$(sha256sum < "$AG_AUDIT")
tamper runuser_cannot_append "echo forged >> '$AG_AUDIT'"
tamper runuser_cannot_truncate "truncate -s 0 '$AG_AUDIT'"
tamper runuser_cannot_rename "mv '$AG_AUDIT' '$AG_AUDIT.x'"
tamper runuser_cannot_delete "rm -f '$AG_AUDIT' && ! test -e '$AG_AUDIT'"
tamper runuser_cannot_chmod "chmod 666 '$AG_AUDIT'"
tamper runuser_cannot_list_the_directory "ls '$AG_DIR/log/'"
tamper runuser_cannot_read_the_secret "cat '$AG_DIR/secret.key'"
tamper runuser_cannot_write_the_spool "echo x > '$AG_DIR/log/spool-$(id -u "$AG_USER").jsonl'"
ag_is "$(sha256sum < "$AG_AUDIT")" "$before" audit_unchanged_after_runuser_attempts

# ---- from a command, the sandbox off: python3 and sh ----------------------------
ag_run p "python3 -c '
import os, sys
f, k = sys.argv[1], sys.argv[2]
for what, fn in [(\"append\", lambda: open(f, \"a\").write(\"x\")),
                 (\"truncate\", lambda: os.truncate(f, 0)),
                 (\"rename\", lambda: os.rename(f, f + \".x\")),
                 (\"unlink\", lambda: os.unlink(f)),
                 (\"chmod\", lambda: os.chmod(f, 0o666)),
                 (\"secret\", lambda: open(k).read())]:
    try:
        fn(); print(what, \"DONE\")
    except OSError as e:
        print(what, \"refused\", e.errno)
' '$AG_AUDIT' '$AG_DIR/secret.key'"
ag_is "$(grep -c ' refused ' <<<"$p_out")/$(grep -c DONE <<<"$p_out")" "6/0" \
    python3_in_a_command_cannot_touch_audit_or_secret "$p_out" "$p_err"
ag_run s "sh -c 'echo forged >> $AG_AUDIT || exit 3; cat $AG_DIR/secret.key'"
ag_unlike "$s_out" "SECRET" sh_in_a_command_cannot_read_the_secret "$s_out"
ag_ok audit_chain_still_verifies "$AGENTGATE" audit verify "$AG_AUDIT"

# ---- the gateway itself, run by the agent with hostile input ------------------
gw() {	# as the agent, outside sshd
	runuser -u "$AG_USER" -- "$AG_DIR/agentgate" "$@" 2>&1
}
out=$(gw --config "$AG_DIR/secret.key" -c true)
ag_unlike "$out" "SECRET" config_named_by_the_caller_is_read_as_the_caller "$out"
ag_like "$out" "policy unavailable" config_unreadable_by_caller_is_refused "$out"
out=$(runuser -u "$AG_USER" -- env SSH_USER_AUTH="$AG_DIR/secret.key" \
    "$AG_DIR/agentgate" --config "$AG_DIR/policy.yaml" -c true 2>&1)
ag_unlike "$out" "SECRET" ssh_user_auth_is_never_read "$out"
ag_unlike "$out" "publickey|sshd recorded" ssh_user_auth_names_no_key "$out"
out=$(gw --config "$AG_DIR/policy.yaml" --test-landlock-abi 1 -c true)
ag_like "$out" "is for root" weaker_sandbox_option_is_roots "$out"
for sub in "check --config $AG_DIR/secret.key" "explain --config $AG_DIR/secret.key -- true" \
    "audit verify $AG_AUDIT"; do
	# shellcheck disable=SC2086
	out=$(gw $sub)
	ag_unlike "$out" "SECRET|\"seq\"" "subcommand_${sub%% *}_runs_without_the_group" "$out"
done
cp "$AG_DIR/agentgate" "$AG_DIR/agentgate-suid"
chown nobody "$AG_DIR/agentgate-suid"
chmod 4755 "$AG_DIR/agentgate-suid"
out=$(runuser -u "$AG_USER" -- "$AG_DIR/agentgate-suid" --version 2>&1)
ag_like "$out" "set-user-ID" set_user_id_install_refuses_to_run "$out"
rm -f "$AG_DIR/agentgate-suid"

# ---- a live session: what holds the group cannot be reached -------------------
sleeping() { pgrep -u "$AG_USER" -x sleep >/dev/null; }
not_sleeping() { ! sleeping; }
# a process of the account's whose gids include the group, and is the gateway
gateway_holds() {
	local pid
	for pid in $(pgrep -u "$AG_USER" -x agentgate); do
		awk '/^Gid:/ {print " "$2" "$3" "$4" "$5" "}' "/proc/$pid/status" 2>/dev/null |
		    grep -q " $GID " && return 0
	done
	return 1
}
live_session() {	# live_session NAME SSH-ARGV...: while the account's `sleep` runs
	local name=$1 holders= reachable= pid g sp sshpid
	shift
	"$@" "sleep 1000" >/dev/null 2>&1 &
	sshpid=$!
	ag_wait_until 120 sleeping
	ag_wait_until 120 gateway_holds
	for pid in $(pgrep -u "$AG_USER"); do
		g=$(awk '/^Gid:/ {print " "$2" "$3" "$4" "$5" "}' "/proc/$pid/status" 2>/dev/null)
		case $g in *" $GID "*) ;; *) continue;; esac
		holders="$holders $pid($(cat "/proc/$pid/comm" 2>/dev/null))"
		# not dumpable: /proc/PID is root's, its fds and memory closed to the uid
		if runuser -u "$AG_USER" -- ls "/proc/$pid/fd" >/dev/null 2>&1 ||
		    runuser -u "$AG_USER" -- cat "/proc/$pid/environ" >/dev/null 2>&1; then
			reachable="$reachable $pid"
		fi
	done
	ag_like "$holders" "agentgate" "${name}_session_gateway_holds_the_group" "$holders" \
	    "$(ps -u "$AG_USER" -o pid,ppid,egid,comm 2>&1)"
	ag_is "$reachable" "" "${name}_no_holder_of_the_group_is_reachable_through_proc" "$holders"
	sp=$(pgrep -u "$AG_USER" -x sleep | head -n1)
	ag_unlike "$(awk '/^Gid:/ {print " "$2" "$3" "$4" "$5" "}' "/proc/$sp/status")" " $GID " \
	    "${name}_running_command_lacks_the_group"
	kill "$sshpid" 2>/dev/null
	wait "$sshpid" 2>/dev/null
	pkill -KILL -u "$AG_USER" -x sleep
	ag_wait_until 60 not_sleeping
}
live_session sshd "${AG_SSH[@]}"

# ---- an agent protocol session: the pump that owns the channel lacks the group --
mkfifo -m 0600 "$AG_DIR/json.in"
"${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" agentgate-json < "$AG_DIR/json.in" \
    > "$AG_DIR/json.out" 2>&1 &
jpid=$!
exec 7>"$AG_DIR/json.in"
printf '%s\n' '{"id": 1, "command": "sleep 1000"}' >&7
ag_wait_until 120 sleeping
pump=
for pid in $(pgrep -u "$AG_USER" -x agentgate); do
	pp=$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null)
	[ "$(cat "/proc/$pp/comm" 2>/dev/null)" = agentgate ] && pump=$pid
done
ag_like "$pump" '^[0-9]+$' json_session_has_a_pump "$(ps -u "$AG_USER" -o pid,ppid,egid,comm 2>&1)"
ag_unlike "$(awk '/^Gid:/ {print " "$2" "$3" "$4" "$5" "}' "/proc/$pump/status" 2>/dev/null)" " $GID " \
    json_pump_lacks_the_group
ag_ok json_pump_unreachable_through_proc sh -c "! runuser -u '$AG_USER' -- ls '/proc/$pump/fd' >/dev/null 2>&1"
pkill -KILL -u "$AG_USER" -x sleep
printf '%s\n' '{"id": 2, "command": "id -G"}' >&7
exec 7>&-
wait "$jpid"
ag_unlike " $(sed -n 2p "$AG_DIR/json.out" | "$AG_PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["stdout"].strip())') " \
    " $GID " json_command_lacks_the_group "$(cat "$AG_DIR/json.out")"
ag_ok json_session_audited_through_the_group ag_audit_query \
    "any(x['event'] == 'command' and x.get('mode') == 'json' and x['command'] == 'id -G' for x in r)"

# ---- a PTY session's recording --------------------------------------------------
ag_ssh -tt "echo recorded-$$" </dev/null >/dev/null 2>&1
rec=$(grep -l "recorded-$$" "$AG_DIR"/log/recordings/*.cast 2>/dev/null | head -n1)
ag_like "$rec" "\.cast$" pty_session_was_recorded
tamper runuser_cannot_touch_a_recording "echo x >> '$rec' || rm -f '$rec'"
ag_ok recording_intact grep -q "recorded-$$" "$rec"

# ---- the sandbox on: the namespace maps the caller's gid, not the group's -------
if [ -f "$AG_DIR/agsandbox.so" ]; then
	policy required
	ag_run n "id -g; id -G"
	ag_is "$(sed -n 1p <<<"$n_out")/$n_rc" "$UGID/0" sandboxed_command_has_the_callers_gid \
	    "$n_out" "$n_err"
	ag_unlike " $(sed -n 2p <<<"$n_out") " " $GID " sandboxed_command_lacks_the_group "$n_out"
	policy off
fi

# ---- a layout the agent could reach is refused, and doctor says how to fix it ---
chmod 2775 "$AG_DIR/log"
ag_run l "echo should-not-run"
ag_is "$l_out" "" audit_dir_open_to_others_refuses_commands "$l_err"
ag_like "$l_err" "open to others" audit_dir_open_to_others_says_why "$l_err"
out=$("$AGENTGATE" doctor --user "$AG_USER" --config "$AG_DIR/policy.yaml" \
    --sshd "$SSHD" --sshd-config "$AG_DIR/sshd_config" 2>&1)
ag_like "$out" "FAIL  expected: audit directory $AG_DIR/log is root:$G, mode 2770; fix: install -d -o root -g $G -m 2770" \
    doctor_names_the_open_audit_directory "$out"
ag_like "$out" "PASS  $AG_DIR/agentgate is set-group-ID $G, owned by root" \
    doctor_passes_the_setgid_binary "$out"
ag_like "$out" "PASS  recordings directory .* is root:$G" doctor_passes_the_recordings_dir "$out"
chmod 2770 "$AG_DIR/log"
chmod 0755 "$AG_DIR/agentgate"
out=$("$AGENTGATE" doctor --user "$AG_USER" --config "$AG_DIR/policy.yaml" \
    --sshd "$SSHD" --sshd-config "$AG_DIR/sshd_config" 2>&1)
ag_like "$out" "FAIL  expected: $AG_DIR/agentgate is set-group-ID $G.*fix: chown root:$G $AG_DIR/agentgate; chmod 2755" \
    doctor_names_a_gateway_without_the_bit "$out"
chmod 2755 "$AG_DIR/agentgate"
ag_run a "echo again"
ag_is "$a_out" again restored_layout_runs_commands "$a_err"

# ---- serve: its session processes keep the group, their commands do not -------
install -d -m 0755 "$AG_DIR/spam"
printf 'auth required pam_permit.so\naccount required pam_permit.so\nsession required pam_permit.so\n' \
    > "$AG_DIR/spam/agentgate"
chmod 0644 "$AG_DIR/spam/agentgate"
ag_write_policy "$AG_DIR/serve.yaml" <<'EOF'
version: 1
gateway:
  runner: /bin/bash
  sandbox: "off"
  pam_confdir: @DIR@/spam
  server: { host_keys: [@DIR@/hostkey], allow_users: [@USER@] }
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: test
profiles:
  test:
    allow: [echo, grep, sleep, "true"]
    paths: { read: ["/"], write: ["/tmp", "~"] }
    limits: { timeout: 300 }
EOF
if ag_start_serve "$AG_DIR/serve.yaml"; then
	out=$("${SRV_SSH[@]}" "grep ^Gid: /proc/self/status" 2>&1)
	ag_is "$(awk '{print $2, $3, $4, $5}' <<<"$out")" "$UGID $UGID $UGID $UGID" \
	    serve_command_gids_are_the_users "$out"
	live_session serve "${SRV_SSH[@]}"
	ag_like "$(tail -n 3 "$AG_AUDIT")" '"mode":"server"' serve_session_audited_through_the_group
	kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null
else
	ag_fail serve_started "$(cat "$AG_DIR/serve.log")"
fi

# ---- serve as its systemd unit runs it: NoNewPrivileges ignores the
# set-group-ID bit, so serve is root without the group.  It and the
# ForceCommand gateways still share one audit log, whoever made it.
mv "$AG_AUDIT" "$AG_AUDIT.before-nnp"
AG_SERVE_PREFIX="setpriv --no-new-privs"
if ag_start_serve "$AG_DIR/serve.yaml"; then
	out=$("${SRV_SSH[@]}" "echo nnp-serve" 2>&1)
	ag_is "$out" nnp-serve serve_without_the_bit_runs "$(tail -n 5 "$AG_DIR/serve.log")"
	ag_is "$(stat -c '%G %a' "$AG_AUDIT" 2>&1)" "$G 660" serve_made_the_log_the_groups
	ag_run f "echo forcecommand-after-serve"
	ag_is "$f_out" forcecommand-after-serve forcecommand_appends_to_the_log_serve_made "$f_err"
	out=$("${SRV_SSH[@]}" "echo nnp-serve-2" 2>&1)
	ag_is "$out" nnp-serve-2 serve_appends_after_a_gateway "$(tail -n 5 "$AG_DIR/serve.log")"
	ag_is "$(grep -c '"command":"echo \(forcecommand-after-serve\|nnp-serve-2\)"' "$AG_AUDIT")" 4 \
	    both_kinds_in_one_log
	kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null
else
	ag_fail serve_nnp_started "$(cat "$AG_DIR/serve.log")"
fi
AG_SERVE_PREFIX=
ag_ok audit_chain_verifies_at_the_end "$AGENTGATE" audit verify "$AG_AUDIT"

ag_done
