#!/bin/bash
# cd, cd -, cd ~, pushd/popd/dirs run inside the gateway (no process) with
# bash's messages and statuses; cd inside compound commands persists via
# the runner's PWD.
. "$(dirname "$0")/lib.sh"
ag_setup
H=/home/$AG_USER
mkdir -p "$H/sub/deeper"
chown -R "$AG_USER" "$H/sub"

out=$(printf 'cd /tmp\ncd /usr\ncd -\npwd\n' | ag_ssh)
ag_is "$out" "/tmp
/tmp" "cd_dash_prints_and_returns"

out=$(printf 'cd /tmp\ncd\npwd\ncd ~/sub\npwd\ncd ~%s/sub/deeper\npwd\ncd ../../..\npwd\n' "$AG_USER" | ag_ssh)
ag_is "$out" "$H
$H/sub
$H/sub/deeper
/home" "cd_home_tilde_tilde_user_dotdot"
out=$(printf 'cd ~no-such-user-here\necho "rc=$?"\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "rc=1" "cd_unknown_user_tilde_status"
ag_is "$(cat "$AG_DIR/e")" "bash: cd: ~no-such-user-here: No such file or directory" "cd_unknown_user_tilde_kept_literal"

out=$(printf 'cd sub/deeper/../deeper\npwd\necho "$OLDPWD"\n' | ag_ssh)
ag_is "$out" "$H/sub/deeper
$H" "cd_relative_logical_and_oldpwd"

out=$(printf 'cd /nonexistent-dir\necho "rc=$?"\npwd\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "rc=1
$H" "cd_missing_dir_status_1_cwd_kept"
ag_is "$(cat "$AG_DIR/e")" "bash: cd: /nonexistent-dir: No such file or directory" "cd_missing_dir_bash_message"

out=$(printf 'cd /etc/passwd\necho "rc=$?"\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "rc=1" "cd_not_a_directory_status"
ag_is "$(cat "$AG_DIR/e")" "bash: cd: /etc/passwd: Not a directory" "cd_not_a_directory_message"

out=$(printf 'cd /root\necho "rc=$?"\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "rc=1" "cd_permission_denied_status"
ag_is "$(cat "$AG_DIR/e")" "bash: cd: /root: Permission denied" "cd_permission_denied_message"

out=$(printf 'cd -\necho "rc=$?"\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "rc=1" "cd_dash_without_oldpwd_status"
ag_is "$(cat "$AG_DIR/e")" "bash: cd: OLDPWD not set" "cd_dash_without_oldpwd_message"

out=$(printf 'cd a b\necho "rc=$?"\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$(cat "$AG_DIR/e")" "bash: cd: too many arguments" "cd_too_many_arguments"

out=$(printf 'pushd /tmp\npushd /usr\ndirs\npopd\npwd\npopd\npwd\npopd\necho "rc=$?"\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "/tmp ~
/usr /tmp ~
/usr /tmp ~
/tmp ~
/tmp
~
$H
rc=1" "pushd_popd_dirs_stack"
ag_is "$(cat "$AG_DIR/e")" "bash: popd: directory stack empty" "popd_empty_stack_message"

out=$(printf 'pushd\necho "rc=$?"\npushd /tmp\npushd\npwd\ndirs -v\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "rc=1
/tmp ~
~ /tmp
$H
 0  ~
 1  /tmp" "pushd_swap_and_dirs_v"
ag_is "$(cat "$AG_DIR/e")" "bash: pushd: no other directory" "pushd_no_other_directory"

# compound commands: the cd happens in the runner and PWD comes back
out=$(printf 'cd /tmp && ls -d .\npwd\n' | ag_ssh)
ag_is "$out" ".
/tmp" "compound_and_cd_persists"
out=$(printf 'if true; then cd /usr; fi\npwd\n' | ag_ssh)
ag_is "$out" "/usr" "if_then_cd_persists"
out=$(printf '(cd /usr)\npwd\n' | ag_ssh)
ag_is "$out" "$H" "subshell_cd_does_not_persist"
out=$(printf 'cd /tmp > /dev/null\npwd\n' | ag_ssh)
ag_is "$out" "/tmp" "cd_with_redirection_via_runner"

# cd in exec mode changes nothing afterwards but reports like bash
ag_run x 'cd /nonexistent-dir'
ag_is "$x_rc" 1 "exec_cd_missing_status"

ag_done
