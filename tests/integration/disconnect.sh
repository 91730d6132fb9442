#!/bin/bash
# A client that goes away mid-command leaves nothing running: the gateway
# kills the command's whole process group (and anything that escaped it).
. "$(dirname "$0")/lib.sh"
ag_setup

count_sleeps() { pgrep -u "$AG_USER" -x sleep | wc -l; }

# exec mode
"${AG_SSH[@]}" 'sleep 100' >/dev/null 2>&1 &
cpid=$!
ag_wait_until 30 sh -c "[ \$(pgrep -u $AG_USER -x sleep | wc -l) -ge 1 ]"
ag_is "$(count_sleeps)" 1 "exec_command_running"
kill -KILL "$cpid"; wait "$cpid" 2>/dev/null
ag_wait_until 30 sh -c "! pgrep -u $AG_USER -x sleep >/dev/null"
ag_is "$(count_sleeps)" 0 "exec_disconnect_kills_command"
# sshd's session process and the gateway exit (and are reaped) shortly after
ag_wait_until 30 sh -c "! pgrep -u $AG_USER >/dev/null"
ag_is "$(pgrep -u "$AG_USER" | wc -l)" 0 "exec_disconnect_leaves_no_process"

# REPL, with grandchildren in the background and one that left the group
mkfifo "$AG_DIR/fifo"
"${AG_SSH[@]}" < "$AG_DIR/fifo" >/dev/null 2>&1 &
cpid=$!
exec 7>"$AG_DIR/fifo"
printf 'sleep 100 & sleep 101 & setsid sleep 102\n' >&7
ag_wait_until 30 sh -c "[ \$(pgrep -u $AG_USER -x sleep | wc -l) -ge 3 ]"
ag_is "$(count_sleeps)" 3 "repl_commands_running"
kill -KILL "$cpid"; wait "$cpid" 2>/dev/null
ag_wait_until 30 sh -c "! pgrep -u $AG_USER -x sleep >/dev/null"
ag_is "$(count_sleeps)" 0 "repl_disconnect_kills_background_jobs"
exec 7>&-

# background jobs do not outlive the command that started them
ag_run b 'sleep 100 & echo started'
ag_is "$b_out" "started" "background_job_command_returns"
ag_wait_until 30 sh -c "! pgrep -u $AG_USER -x sleep >/dev/null"
ag_is "$(count_sleeps)" 0 "background_job_killed_with_its_command"

# the gateway itself terminated (sshd stopping a session): group dies too
"${AG_SSH[@]}" 'sleep 100' >/dev/null 2>&1 &
cpid=$!
ag_wait_until 30 sh -c "[ \$(pgrep -u $AG_USER -x sleep | wc -l) -ge 1 ]"
gw=$(ag_gateway_pids | head -n 1)
[ -n "$gw" ] && kill -TERM "$gw"
ag_wait_until 30 sh -c "! pgrep -u $AG_USER -x sleep >/dev/null"
ag_is "$(count_sleeps)" 0 "gateway_sigterm_kills_command"
wait "$cpid" 2>/dev/null

ag_done
