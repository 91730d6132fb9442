#!/bin/bash
# limits.timeout (status 124 + message) and limits.max_output (cut with one
# notice, audit says truncated); streaming stays streaming.
. "$(dirname "$0")/lib.sh"
ag_setup
# the default test policy's limit is far beyond any test: a short one here
sed 's/^      timeout: 300$/      timeout: 4/' "$AG_DIR/policy.yaml" | ag_write_policy "$AG_DIR/policy.yaml"
grep -q '^      timeout: 4$' "$AG_DIR/policy.yaml" || { echo "cannot set the timeout" >&2; exit 99; }

# The command never ends by itself (300 s against a 4 s limit): only the
# gateway's timer can end it.  Its killed processes are gone once they are
# reaped, which the test waits for (bounded) rather than assumes.
no_sleep_left() { ! pgrep -u "$AG_USER" -x sleep >/dev/null; }
ag_run t 'sleep 300'
ag_is "$t_rc" 124 "timeout_status_124"
ag_like "$t_err" "agentgate: command timed out after 4 s" "timeout_message"
ag_ok "timeout_killed_the_command" ag_wait_until 60 no_sleep_left

# a command that ignores SIGTERM is killed after the grace period
ag_run u 'trap "" TERM; sleep 300'
ag_is "$u_rc" 124 "timeout_term_ignored_killed_after_grace"
ag_ok "term_ignoring_command_killed" ag_wait_until 60 no_sleep_left

# the REPL goes on after a timeout
out=$(printf 'sleep 300\necho "after $?"\n' | ag_ssh 2>/dev/null)
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

# memory: without the key, a default bound (1 GiB for a strict profile)
ag_run m 'grep "^Max data size" /proc/self/limits'
ag_like "$m_out" "^Max data size +1073741824 +1073741824 +bytes" "memory_bound_by_default"
# with limits.memory, a command that writes more memory than that fails,
# one that stays under it runs
sed 's/^      idle_timeout: 600$/      idle_timeout: 600\n      memory: 64M/' "$AG_DIR/policy.yaml" |
    ag_write_policy "$AG_DIR/policy.yaml"
ag_run m 'v=$(yes | head -c 8000000); echo ${#v}'
ag_is "$m_out" 7999999 "memory_under_the_limit_works"
ag_run m 'v=$(yes | head -c 300000000); echo ${#v}'
ag_unlike "$m_out" 299999999 "memory_over_the_limit_fails"
ag_like "$m_err" "cannot allocate" "memory_over_the_limit_says_so"
sed 's/^      memory: 64M$/      memory: unlimited/' "$AG_DIR/policy.yaml" | ag_write_policy "$AG_DIR/policy.yaml"
ag_run m 'grep "^Max data size" /proc/self/limits'
ag_like "$m_out" "^Max data size +unlimited" "memory_unlimited_when_said"
sed '/^      memory: unlimited$/d' "$AG_DIR/policy.yaml" | ag_write_policy "$AG_DIR/policy.yaml"

# streaming: the command prints a line and then waits for input that the
# test sends only once that line has arrived; output held back until the
# end would leave both waiting (the read's 60 s bound)
mkfifo "$AG_DIR/s.in" "$AG_DIR/s.out"
ag_ssh 'echo first; head -n 1; echo second' <"$AG_DIR/s.in" >"$AG_DIR/s.out" 2>/dev/null &
spid=$!
exec 7>"$AG_DIR/s.in" 8<"$AG_DIR/s.out"
l1= l2= l3=
IFS= read -t 60 -r l1 <&8
[ "$l1" = first ] && echo go >&7
exec 7>&-
IFS= read -t 60 -r l2 <&8
IFS= read -t 60 -r l3 <&8
exec 8<&-
wait "$spid"
ag_is "$l1 $l2 $l3" "first go second" "output_is_streamed"

ag_done
