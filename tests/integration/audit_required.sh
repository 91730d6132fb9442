#!/bin/bash
# audit.required: true and a log that cannot be written: commands are not
# run and the user is told why.  With required: false they run.
. "$(dirname "$0")/lib.sh"
ag_setup

mkdir -p "$AG_DIR/rolog"	# root's, 0755: the account cannot create files here
chmod 0755 "$AG_DIR/rolog"
policy() {
	ag_write_policy "$AG_DIR/policy.yaml" <<EOF
version: 1
gateway:
  sandbox: "off"
  audit:
    file: $1
    required: $2${3:+
    min_free: $3}
users:
  @USER@: test
profiles:
  test:
    allow: [echo, touch, cat]
    paths: { read: ["/"], write: ["/tmp"] }
EOF
}

policy "$AG_DIR/rolog/audit.jsonl" true
rm -f /tmp/agentgate-required-$$
ag_run a "touch /tmp/agentgate-required-$$"
ag_is "$a_rc" 126 "required_unwritable_refuses_exec"
ag_like "$a_err" "^agentgate: .*audit log .*not run" "required_unwritable_message"
ag_ok "required_unwritable_command_did_not_run" test ! -e /tmp/agentgate-required-$$

out=$(printf 'echo one\necho two\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "" "required_unwritable_refuses_repl_commands"
ag_is "$(grep -c 'was not run' "$AG_DIR/e")" 2 "required_unwritable_each_command_told"
# leaving is never refused: a bare exit ends the session, with its status
out=$(printf 'echo one\nexit 3\necho two\n' | ag_ssh 2>"$AG_DIR/e"); rc=$?
ag_is "$rc" 3 "required_unwritable_bare_exit_still_ends" "$(cat "$AG_DIR/e")"
ag_is "$(grep -c 'was not run' "$AG_DIR/e")" 1 "required_unwritable_nothing_after_exit" "$(cat "$AG_DIR/e")"

# a group/world-writable directory is not trusted for the log either
mkdir -p "$AG_DIR/wlog"
chmod 0777 "$AG_DIR/wlog"
policy "$AG_DIR/wlog/audit.jsonl" true
ag_run b 'echo hi'
ag_is "$b_rc" 126 "required_world_writable_dir_refused"
ag_like "$b_err" "writable by others" "world_writable_dir_message"

# not required: the command runs
policy "$AG_DIR/rolog/audit.jsonl" false
ag_run c 'echo ran'
ag_is "$c_out" "ran" "not_required_runs"
ag_is "$c_rc" 0 "not_required_status"

# the audit file must not be a symlink someone planted
ln -s /tmp/agentgate-elsewhere-$$ "$AG_DIR/log/audit.jsonl"
policy "$AG_DIR/log/audit.jsonl" true
ag_run d 'echo hi'
ag_is "$d_rc" 126 "symlinked_audit_file_refused"
ag_ok "symlink_target_not_created" test ! -e /tmp/agentgate-elsewhere-$$

# a full disk (a small tmpfs): commands are refused with the reason, the
# records before stay whole and chained, the session ends cleanly
FULL=$AG_DIR/fulllog
mkdir -p "$FULL"
if mount -t tmpfs -o size=8k,mode=0755 tmpfs "$FULL" 2>/dev/null; then
	chown "$AG_USER" "$FULL"
	chmod 0755 "$FULL"
	# (min_free off: the disk itself runs out here)
	policy "$FULL/audit.jsonl" true 0
	ag_run f 'echo before-full'
	ag_is "$f_out" "before-full" "disk_full: runs while there is room"
	# each command adds records until the two pages are full (a few dozen
	# at most); the first command that cannot be recorded is refused
	i=0
	while [ $i -lt 200 ]; do
		i=$((i + 1))
		ag_run f "touch /tmp/agentgate-full-$$-$i"
		[ "$f_rc" -eq 0 ] || break
	done
	ag_is "$f_rc" 126 "disk_full: the command is refused"
	ag_like "$f_err" "audit log .*(No space left|short write).*not run" "disk_full: the reason is said"
	ag_ok "disk_full: the refused command did not run" test ! -e /tmp/agentgate-full-$$-$i
	ag_ok "disk_full: the records before are whole and chained" \
	    "$AGENTGATE" audit verify "$FULL/audit.jsonl"
	rm -f /tmp/agentgate-full-$$-*
	umount "$FULL"

	# audit.min_free: the log shares its file system with what the agent
	# may write (a write root, the persistent /tmp); filling it refuses
	# the next command early, with room left for the records that follow
	mount -t tmpfs -o size=4m,mode=0755 tmpfs "$FULL"
	mkdir "$FULL/log" "$FULL/work"
	chown "$AG_USER" "$FULL/log" "$FULL/work"
	ag_write_policy "$AG_DIR/policy.yaml" <<EOF
version: 1
gateway:
  sandbox: "off"
  audit:
    file: $FULL/log/audit.jsonl
    min_free: 1M
users:
  @USER@: test
profiles:
  test:
    allow: [echo, dd, rm]
    paths: { read: ["/"], write: ["$FULL/work"] }
EOF
	ag_run g 'echo room'
	ag_is "$g_out" room "min_free: runs while there is room"
	ag_run g "dd if=/dev/zero of=$FULL/work/fill bs=64k count=52 status=none"
	ag_is "$g_rc" 0 "min_free: the agent fills its write root" "$g_err"
	ag_run g 'echo after-fill'
	ag_is "$g_rc" 126 "min_free: the next command is refused"
	ag_like "$g_err" "audit log .*KiB left, less than audit.min_free \(1024 KiB\).*not run" \
	    "min_free: the reason names the key"
	ag_is "$g_out" "" "min_free: the refused command did not run"
	ag_is "$(grep -c '"event":"session_end"' "$FULL/log/audit.jsonl")" 3 \
	    "min_free: the refused session's end is still recorded"
	ag_ok "min_free: the chain holds" "$AGENTGATE" audit verify "$FULL/log/audit.jsonl"
	rm -f "$FULL/work/fill"
	ag_run g 'echo freed'
	ag_is "$g_out" freed "min_free: runs again once space is freed"
	# doctor says when what an agent may write shares the log's file system
	sed 's/^  sandbox: "off"$/  sandbox: best_effort/' "$AG_DIR/policy.yaml" |
	    ag_write_policy "$AG_DIR/shared-fs.yaml"
	r_out=$("$AGENTGATE" doctor --config "$AG_DIR/shared-fs.yaml" --user "$AG_USER" 2>&1)
	ag_like "$r_out" "WARN  profiles\.test\.paths\.write '$FULL/work' is on the file system of the audit log $FULL/log/audit\.jsonl" \
	    "min_free: doctor warns of a write root on the log's file system" "$r_out"
	umount "$FULL"
else
	echo "# cannot mount a tmpfs here: disk-full checks skipped"
fi

ag_done
