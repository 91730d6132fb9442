#!/bin/bash
# Exec channel (ForceCommand with SSH_ORIGINAL_COMMAND): allowed commands run
# with their own status, refused ones print the reason and end with 126,
# signal deaths are 128+N, file-transfer requests are refused.
. "$(dirname "$0")/lib.sh"
ag_setup

ag_run a 'echo hello; printf "%s\n" "$HOME"'
ag_is "$a_out" "hello
/home/$AG_USER" "exec_allowed_command_runs_in_home_env"
ag_is "$a_rc" 0 "exec_allowed_status_0"

ag_run b 'ls /nonexistent-dir'
ag_is "$b_rc" 2 "exec_status_is_the_commands"
ag_like "$b_err" "No such file" "exec_stderr_relayed"

ag_run c 'false'
ag_is "$c_rc" 1 "exec_false_status_1"

ag_run d 'exit 7'
ag_is "$d_rc" 7 "exec_exit_n_status"

ag_run e 'rm -rf /tmp/x'
ag_is "$e_rc" 126 "exec_denied_status_126"
ag_like "$e_err" "^agentgate: " "exec_denied_reason_prefixed"
ag_is "$e_out" "" "exec_denied_prints_nothing_on_stdout"

ag_run f 'cat /etc/shadow'
ag_is "$f_rc" 126 "exec_deny_rule_wins"

ag_run g 'echo ok; python3 -c 1'
ag_is "$g_rc" 126 "exec_one_denied_part_refuses_whole_line"
ag_is "$g_out" "" "exec_nothing_runs_when_part_denied"

ag_run h 'kill -9 $$'
ag_is "$h_rc" 137 "exec_signal_death_is_128_plus_n"

ag_run i 'sleep 10 & kill -TERM $!; wait $!'
ag_is "$i_rc" 143 "exec_child_signal_status_like_bash"

# The gateway runs as the same user as its commands; it is not dumpable,
# so even with the sandbox off a command cannot read its memory or environ.
ag_run pp 'head -c 64 /proc/$PPID/environ'
ag_is "$pp_rc" 1 "gateway_environ_not_readable_by_its_commands"
ag_like "$pp_err" "Permission denied" "gateway_proc_files_are_root_owned"

ag_run j 'echo "unterminated'
ag_is "$j_rc" 126 "exec_syntax_error_refused"

ag_run k 'echo a # trailing comment'
ag_is "$k_out" "a" "exec_trailing_comment"

ag_run l 'cat <<EOF
line1
EOF'
ag_is "$l_out" "line1" "exec_heredoc"

ag_run m 'env'
ag_unlike "$m_out" "^(SSH_ORIGINAL_COMMAND|MAIL|SSH_AUTH_INFO_0)=" "exec_sshd_env_does_not_leak"
ag_like "$m_out" "SSH_CONNECTION=127\.[0-9.]+ " "exec_ssh_connection_kept"
ag_like "$m_out" "^PATH=/usr/local/bin:/usr/bin:/bin$" "exec_path_from_profile"
ag_unlike "$m_out" "^TERM=" "exec_no_term_without_tty"

# the client cannot change how a command is judged (TERM, LC_*, -t)
ag_run n -o SendEnv=TERM 'rm -rf /tmp/x'
ag_is "$n_rc" 126 "exec_judged_same_with_client_env"

# (sshd drops a subsystem's stderr, so the refusal shows in status and audit)
ag_run s -s sftp </dev/null
ag_is "$s_rc" 126 "sftp_subsystem_refused"
ag_is "$(ag_audit_query '[x["rule"] for x in r if x.get("command")=="internal-sftp"]')" "['file_transfer']" "sftp_refusal_audited"
ag_run t 'scp -t /tmp' </dev/null
ag_is "$t_rc" 126 "scp_sink_refused"
ag_run u 'rsync --server -vlogDtpre.iLsfxC . /tmp'
ag_like "$u_err" "rsync file transfer" "rsync_server_refused"

# stdin reaches the command in exec mode
v_out=$(printf 'piped\n' | ag_ssh 'cat')
ag_is "$v_out" "piped" "exec_stdin_reaches_command"

# a single program is the runner itself (bash execs it: no second process
# waiting for it), as with plain `ssh host cmd`; a REPL line too, though it
# ends in its own newline
# (cat waits on a fifo the test opens once it has looked)
mkfifo -m 0666 "$AG_DIR/one.fifo"
printf 'cat %s\n' "$AG_DIR/one.fifo" | ag_ssh >/dev/null 2>&1 &
ssh_pid=$!
ag_wait_until 30 pgrep -u "$AG_USER" -x cat >/dev/null
one=$(pgrep -u "$AG_USER" -x cat | head -n 1)
ag_is "$(cat "/proc/$(ps -o ppid= -p "$one" | tr -d ' ')/comm" 2>/dev/null)" agentgate \
    "single_command_runs_in_the_runner_process"
echo released > "$AG_DIR/one.fifo"
wait "$ssh_pid"

# the command's stdout is a 1 MiB pipe (runner.c, CMD_PIPE_SZ), so a
# command writing in small pieces wakes the relay less often; its stderr
# keeps the default
mkfifo -m 0666 "$AG_DIR/two.fifo"
ag_ssh "cat $AG_DIR/two.fifo" >/dev/null 2>&1 &
ssh_pid=$!
ag_wait_until 30 pgrep -u "$AG_USER" -x cat >/dev/null
two=$(pgrep -u "$AG_USER" -x cat | head -n 1)
pipe_sz() {
	"$AG_PYTHON" -c 'import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
print(fcntl.fcntl(fd, 1032))' "/proc/$two/fd/$1"	# F_GETPIPE_SZ
}
ag_is "$(pipe_sz 1)" 1048576 "command_stdout_pipe_is_1_MiB"
ag_is "$(pipe_sz 2)" 65536 "command_stderr_pipe_keeps_the_default"
echo released > "$AG_DIR/two.fifo"
wait "$ssh_pid"

# the command holds its stdio and nothing of the gateway's (the runner's
# gate, the script's fd): ls sees only those and its own directory
ag_run g 'ls /proc/self/fd'
ag_is "$(printf '%s' "$g_out" | tr '\n' ' ')" "0 1 2 3" "command_inherits_only_stdio"

# output arrives byte for byte (the relay moves it in the kernel), up to
# the cap (this profile's max_output, 100000) and past a pipe's 64 KiB
head -c 99999 /dev/urandom > "$AG_DIR/big.bin"
chmod 0644 "$AG_DIR/big.bin"
ag_is "$(ag_ssh "cat $AG_DIR/big.bin" | sha256sum)" "$(sha256sum < "$AG_DIR/big.bin")" \
    "large_output_byte_for_byte"

# a broken policy: the gateway fails closed with status 1
printf 'version: 1\ngateway: [\n' > "$AG_DIR/policy.yaml.tmp"; chmod 644 "$AG_DIR/policy.yaml.tmp"
mv "$AG_DIR/policy.yaml.tmp" "$AG_DIR/policy.yaml"
ag_run w 'echo should-not-run'
ag_is "$w_rc" 1 "config_error_exit_1"
ag_is "$w_out" "" "config_error_runs_nothing"
ag_is "$w_err" "agentgate: policy unavailable; the administrator has been told" \
    "config_error_tells_the_client_one_line_not_the_detail"

# start-up maps only what every session needs: libcurl (and the TLS, HTTP/2,
# LDAP and Kerberos libraries behind it) is loaded at the first HTTP
# request, which the validator and audit tests make, libedit when a REPL on
# a terminal starts (repl_tty.sh, pty.sh), libssh (with GSSAPI and
# Kerberos) for serve and upstreams (server.sh, bastion.sh), and libcrypto
# to derive a token hash (pam_module.sh: `agentgate token new`)
ag_is "$(ldd "$AG_DIR/agentgate" | grep -c 'libcurl\|libnghttp2\|libgnutls\|libldap\|libedit\|libssh\|libgssapi\|libkrb5\|libcrypto')" 0 \
    "startup_maps_no_http_ssh_line_editing_or_openssl_libraries"

ag_done
