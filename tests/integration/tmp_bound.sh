#!/bin/bash
# tmp_bound.sh - the persistent /tmp is host disk, bounded, and never
# inherited (red team 20, M2 and L1), through the real sshd with the
# shipped developer profile:
#   - past limits.tmp_disk (measured when a session starts and after each
#     command) commands are refused with how to clean up, a line that
#     cleans up runs, and once under it again everything runs; a directory
#     made unreadable to hide what it holds is refused the same way
#   - a uid reused by a new account (here: a home with another inode) does
#     not inherit the old /tmp: it is set aside and removed; the same
#     account keeps its /tmp between sessions
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_shipped_world developer
sed -i 's|^      tmp_disk: 4G .*|      tmp_disk: 8M|' "$AG_DIR/policy.yaml"
grep -q '^      tmp_disk: 8M' "$AG_DIR/policy.yaml" || { echo "no tmp_disk line" >&2; exit 99; }
"$AGENTGATE" check --config "$AG_DIR/policy.yaml" >/dev/null || { echo "the policy does not check" >&2; exit 99; }
ag_setgid_gateway
PT=$AG_DIR/ptmp
install -d -o root -g "$G" -m 1770 "$PT"
# the world's sshd again, its gateway told where identities' /tmp are
kill "$AG_SSHD_PID" 2>/dev/null
wait "$AG_SSHD_PID" 2>/dev/null
AG_SSHD_PID= AG_PORT=
AG_FORCE_COMMAND="$AG_DIR/agentgate --config $AG_DIR/policy.yaml --test-tmp-base $PT"
ag_start_sshd || exit 99
ag_ssh_argv
U=$(id -u "$AG_USER")

# ---- the same account keeps its /tmp; the directory says whose it is ----------------
ag_run a 'echo kept > /tmp/keep'
ag_is "$(ag_ssh 'cat /tmp/keep' 2>&1)" "kept" "tmp_bound_same_account_keeps_tmp"
ag_is "$(cat "$PT/$U/owner")" "$AG_USER $(stat -c '%d %i' "$H")" "tmp_bound_owner_names_account_and_home"

# ---- past limits.tmp_disk -----------------------------------------------------------
# a program called rm that is not the system's, made before (red team 23, M2)
install -d -o "$AG_USER" -g "$AG_USER" "$W"
printf '#!/usr/bin/python3\nimport sys; open("/tmp/by_script_"+sys.argv[1],"w").write("s")\n' > "$W/rm"
chown "$AG_USER" "$W/rm"; chmod 755 "$W/rm"
ag_run a 'head -c 12582912 /dev/zero > /tmp/big; echo wrote $?'
ag_is "$a_out" "wrote 0" "tmp_bound_a_command_may_write_past_it"
ag_run b 'date >/dev/null; echo next'
ag_is "$b_rc:$b_out" "126:" "tmp_bound_past_it_commands_refused"
ag_like "$b_err" "persistent /tmp holds over 1[0-9] MiB, more than limits.tmp_disk \\(8 MiB\\).*rm -rf /tmp/NAME" \
    "tmp_bound_refusal_says_how_to_clean_up" "$b_err"
ag_is "$(ag_audit_query '[x["rule"] for x in r if x.get("event") == "command" and x.get("command") == "date >/dev/null; echo next"]')" \
    "['limits.tmp_disk']" "tmp_bound_refusal_recorded"
# a new session measures at its start: still refused
ag_run b 'python3 -c "print(1)"'
ag_is "$b_rc" 126 "tmp_bound_new_session_refused_too" "$b_err"
# while over: nothing that writes runs, not find -exec, not a redirection
# to a file (red team 22, M2); clean-up lines, /dev/null and fds do
ag_run w1 'find /tmp -maxdepth 0 -exec python3 -c "open(\"/tmp/more\", \"w\").write(\"x\")" \;'
ag_like "$w1_err" "limits.tmp_disk" "tmp_bound_find_exec_refused_while_over" "$w1_err"
ag_run w2 'echo x > /tmp/more2'
ag_like "$w2_err" "limits.tmp_disk" "tmp_bound_redirection_refused_while_over" "$w2_err"
ag_ok "tmp_bound_nothing_written_while_over" test ! -e "$PT/$U/tmp/more" -a ! -e "$PT/$U/tmp/more2" -a -e "$PT/$U/tmp/big"
# a clean-up program is the system's file, not one of its name (red team 23, M2)
ag_run w3 '~/work/rm 1'
ag_like "$w3_err" "limits.tmp_disk" "tmp_bound_own_rm_refused_while_over" "$w3_err"
ag_run w4 'cd ~/work && ./rm 2'
ag_like "$w4_err" "limits.tmp_disk" "tmp_bound_own_rm_by_relative_path_refused" "$w4_err"
# a PATH the line sets: whatever the line's words say, the exec supervisor
# lets only the system's clean-up files run meanwhile
ag_run w5 'cd ~/work && PATH=~/work:$PATH rm x3'
ag_is "$(ag_audit_query "[x.get('rule') for x in r if x.get('event') == 'exec_denied']")" \
    "['limits.tmp_disk']" "tmp_bound_own_rm_by_path_refused_by_the_exec_judge" "$w5_rc $w5_err"
ag_ok "tmp_bound_own_rm_never_ran" test ! -e "$PT/$U/tmp/by_script_1" -a ! -e "$PT/$U/tmp/by_script_2" \
    -a ! -e "$PT/$U/tmp/by_script_x3"
ag_run c 'du -sh /tmp/big >/dev/null 2>&1 && ls /tmp && rm -f /tmp/big'
ag_unlike "$c_err" "limits.tmp_disk" "tmp_bound_cleanup_with_dev_null_runs" "$c_err"
ag_is "$c_rc:$c_out" "0:big
keep" "tmp_bound_cleanup_line_runs" "$c_err"
ag_run d 'echo back'
ag_is "$d_out" "back" "tmp_bound_under_it_again_commands_run" "$d_err"

# ---- in the REPL: functions named rm and ls kept from before -------------------------
out=$(printf '%s\n' \
    'rm() { python3 -c "open(\"/tmp/by_func\",\"w\").write(\"x\")"; command rm "$@"; }' \
    'ls() { python3 -c "open(\"/tmp/by_ls\",\"w\").write(\"x\")"; }' \
    'D=/tmp/big2; head -c 12582912 /dev/zero > "$D"; echo over' \
    'python3 -c "print(1)"; echo not-refused' \
    'rm -f /tmp/nothing; echo rm-ran' \
    'ls / >/dev/null; echo ls-ran' \
    'rm -f "$D"; echo cleaned' \
    'type -t rm ls' | ag_ssh 2>&1)
ag_unlike "$out" "not-refused" "tmp_bound_repl_over" "$out"
ag_ok "tmp_bound_repl_functions_did_not_run" test ! -e "$PT/$U/tmp/by_func" -a ! -e "$PT/$U/tmp/by_ls"
ag_like "$out" "rm-ran" "tmp_bound_repl_system_rm_ran" "$out"
ag_like "$out" "ls-ran" "tmp_bound_repl_system_ls_ran" "$out"
# the kept variables stay for a clean-up line (`rm -f "$D"` names the file)
ag_ok "tmp_bound_repl_cleaned_up" test ! -e "$PT/$U/tmp/big2"
# under again: the functions were kept through the clean-up lines
ag_like "$out" "function
function" "tmp_bound_repl_functions_kept" "$out"

# ---- what cannot be measured is refused, and can be undone ---------------------------
ag_run e 'mkdir -p /tmp/hide && chmod 000 /tmp/hide'
ag_run f 'date >/dev/null; echo next'
ag_like "$f_err" "cannot be measured.*hide cannot be read.*chmod u\\+rx it" \
    "tmp_bound_unreadable_directory_refused" "$f_rc $f_err"
ag_run g 'chmod 700 /tmp/hide && rmdir /tmp/hide'
ag_run h 'echo back'
ag_is "$g_rc:$h_out" "0:back" "tmp_bound_unreadable_undone" "$g_err $h_err"

# ---- a new account with the uid: nothing inherited ----------------------------------
mv "$H" "$H.old" && cp -a "$H.old" "$H" && rm -rf "$H.old"
ag_run i 'ls -A /tmp; cat /tmp/keep 2>&1 >/dev/null | wc -l'
ag_unlike "$i_out" "^keep$" "tmp_bound_reused_uid_does_not_inherit" "$i_out"
ag_is "$(ls "$PT/$U" | grep -c '^old-')" 0 "tmp_bound_former_tmp_removed"
ag_ok "tmp_bound_former_files_gone" test ! -e "$PT/$U/tmp/keep"
ag_is "$(cat "$PT/$U/owner")" "$AG_USER $(stat -c '%d %i' "$H")" "tmp_bound_owner_rewritten"
ag_run j 'echo again > /tmp/keep'
ag_is "$(ag_ssh 'cat /tmp/keep' 2>&1)" "again" "tmp_bound_new_owner_keeps_its_tmp"

ag_done
