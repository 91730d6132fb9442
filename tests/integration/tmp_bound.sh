#!/bin/bash
# tmp_bound.sh - the persistent /tmp is host disk, bounded, and never
# inherited (red team 20, M2 and L1), through the real sshd with the
# shipped developer profile:
#   - past limits.tmp_disk (measured when a session starts and after each
#     command) commands are refused with how to clean up, a line that
#     cleans up runs, and once under it again everything runs; a directory
#     made unreadable to hide what it holds is refused the same way
#   - over, a clean-up line holds no assignment or environment prefix and
#     nothing bash evaluates unseen, and gets only the plain kept variables
#     (red team 24, H2); a forged report of the kept state runs nothing
#     (H3)
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
# a PATH the line sets: an environment prefix, refused in a clean-up line
# (red team 24, H2); whatever the words say, the exec supervisor lets only
# the system's clean-up files run meanwhile
ag_run w5 'cd ~/work && PATH=~/work:$PATH rm x3'
ag_like "$w5_rc $w5_err" "^126 .*limits.tmp_disk.*an assignment or an environment prefix" \
    "tmp_bound_own_rm_by_path_refused" "$w5_rc $w5_err"
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

# ---- over: a clean-up line runs nothing bash evaluates unseen (red team 24, H2, H3) ---
T=$PT/$U/tmp
ag_run o1 'mkdir -p /tmp/e && chmod 000 /tmp/e; echo over'
# typed: an environment prefix would make the system's ls load ~/work's libraries
ag_run o2 'LD_LIBRARY_PATH=~/work/lib ls /tmp; echo a'
ag_is "$o2_rc:$o2_out" "126:" "tmp_bound_env_prefix_refused_while_over" "$o2_err"
ag_like "$o2_err" "limits.tmp_disk.*this line holds an assignment or an environment prefix" \
    "tmp_bound_env_prefix_refusal_says_why" "$o2_err"
ag_run o3 'D=/tmp/x; echo "$D"'
ag_is "$o3_rc" 126 "tmp_bound_assignment_refused_while_over" "$o3_err"
# typed: a subscript bash evaluates (test -v, [ -v ]) runs builtins no exec shows
ag_run o4 'test -v '"'"'a[$(printf -v g "\x3e"; eval "echo hi $g /tmp/by_testv")]'"'"'; echo b'
ag_is "$o4_rc:$o4_out" "126:" "tmp_bound_test_v_subscript_refused_while_over" "$o4_err"
ag_like "$o4_err" "subscript .* evaluated by bash" "tmp_bound_test_v_refusal_says_why" "$o4_err"
ag_run o5 '[ -v '"'"'a[$(printf -v g "\x3e"; eval "echo hi $g /tmp/by_bracket")]'"'"' ]; echo c'
ag_is "$o5_rc:$o5_out" "126:" "tmp_bound_bracket_v_subscript_refused_while_over" "$o5_err"
ag_ok "tmp_bound_nothing_evaluated_while_over" test ! -e "$T/by_testv" -a ! -e "$T/by_bracket"
# the benign twins run: ls, test -v of a plain name, [ -d ], a loop over files
ag_run o6 'ls /tmp >/dev/null && test -v HOME && [ -d /tmp/e ] && for f in /tmp/nothing*; do rm -f "$f"; done; echo ok'
ag_is "$o6_rc:$o6_out" "0:ok" "tmp_bound_benign_cleanup_runs_while_over" "$o6_err"
ag_run o7 'chmod 700 /tmp/e && rmdir /tmp/e; echo under'
ag_is "$o7_out" "under" "tmp_bound_over_undone" "$o7_err"
# the REPL: a variable kept from before whose value bash would evaluate is
# not given to a clean-up line (a plain one is), and $((X)) is refused
out=$(printf '%s\n' \
    'X='"'"'a[$(printf -v g "\x3e"; eval "echo arith $g /tmp/by_arith")]'"'"'; P=/tmp/plain; echo set' \
    'mkdir -p /tmp/e && chmod 000 /tmp/e; echo over' \
    'ls /tmp >/dev/null; echo "[${X-dropped}] [$P]"' \
    'rm -f /tmp/nothing$((X)); echo d2' \
    'chmod 700 /tmp/e && rmdir /tmp/e; echo under' \
    'echo "${X:0:2}"' | ag_ssh 2>&1)
ag_like "$out" "^\[dropped\] \[/tmp/plain\]$" "tmp_bound_repl_only_plain_variables_while_over" "$out"
ag_unlike "$out" "^d2$" "tmp_bound_repl_arith_of_kept_refused_while_over" "$out"
ag_ok "tmp_bound_repl_kept_value_not_evaluated" test ! -e "$T/by_arith"
# under again, the variable is there as it was
ag_like "$out" "^a\\[$" "tmp_bound_repl_variable_kept_after" "$out"
# the REPL: a forged report of the state (fd 3, the trap removed) with an
# indexed array whose key is code: nothing runs at a clean-up line's start
printf '\0=<\0=aaQQ\0=k$(printf -v g "\\x3e"; eval "echo forged $g /tmp/by_forged")\0=e1\0=f\0=\0' > "$W/blob"
chown "$AG_USER" "$W/blob"
out=$(printf '%s\n' 'mkdir -p /tmp/e && chmod 000 /tmp/e; cat ~/work/blob >&3; trap - EXIT; echo copied' \
    'ls /tmp; echo cleanup-line' 'chmod 700 /tmp/e && rmdir /tmp/e; echo under' | ag_ssh 2>&1)
ag_like "$out" "cleanup-line" "tmp_bound_repl_cleanup_after_forged_state" "$out"
ag_like "$out" "not kept for the next lines: QQ" "tmp_bound_repl_forged_state_said" "$out"
ag_ok "tmp_bound_repl_forged_key_not_run" test ! -e "$T/by_forged"
ag_like "$out" "^under$" "tmp_bound_repl_forged_over_undone" "$out"

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
