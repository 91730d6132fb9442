#!/bin/bash
# limits.timeout (status 124 + message) and limits.max_output (cut with one
# notice, audit says truncated); streaming stays streaming.
. "$(dirname "$0")/lib.sh"
ag_setup

start=$(date +%s)
ag_run t 'sleep 30'
end=$(date +%s)
ag_is "$t_rc" 124 "timeout_status_124"
ag_like "$t_err" "agentgate: command timed out after 4 s" "timeout_message"
ag_ok "timeout_kills_promptly" test $((end - start)) -lt 12

# a command that ignores SIGTERM is killed after the grace period
start=$(date +%s)
ag_run u 'trap "" TERM; sleep 30'
end=$(date +%s)
ag_is "$u_rc" 124 "timeout_term_ignored_killed_after_grace"
ag_ok "timeout_grace_is_bounded" test $((end - start)) -lt 14

# the REPL goes on after a timeout
out=$(printf 'sleep 30\necho "after $?"\n' | ag_ssh 2>/dev/null)
ag_is "$out" "after 124" "repl_continues_after_timeout"

# output cap: 100000 bytes per stream, one notice
ag_run o 'seq 1 100000'
expect=$(seq 1 100000 | head -c 100000)
ag_is "${#o_out}" "${#expect}" "stdout_cut_at_max_output"
ag_is "$o_out" "$expect" "stdout_cut_keeps_the_first_bytes"
ag_is "$(printf '%s' "$o_err" | grep -c 'output truncated')" 1 "one_truncation_notice"
ag_is "$o_rc" 0 "truncated_command_status_kept"
ag_is "$(ag_audit_query '[x.get("truncated") for x in r if x["event"]=="command" and x.get("command")=="seq 1 100000"]')" \
    "[True]" "audit_records_truncated"

ag_run p 'seq 1 1000'
ag_is "$(ag_audit_query '[x.get("truncated") for x in r if x["event"]=="command" and x.get("command")=="seq 1 1000"]')" \
    "[False]" "audit_not_truncated_when_small"

# streaming: the first line arrives long before the command ends
t0=$(date +%s.%N)
first=$(ag_ssh 'echo first; sleep 3; echo second' | { IFS= read -r l; date +%s.%N; cat >/dev/null; })
ag_ok "output_is_streamed" "$AG_PYTHON" -c "import sys; sys.exit(0 if $first - $t0 < 2.5 else 1)"

ag_done
