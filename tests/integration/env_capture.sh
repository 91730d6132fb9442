#!/bin/bash
# The runner reports its exported environment back through a pipe; the
# dangerous-variable filter and the profile's env.set apply to every capture.
. "$(dirname "$0")/lib.sh"
ag_setup

# the policy refuses the export itself
out=$(printf 'export LD_PRELOAD=/tmp/evil.so\necho "rc=$?"\nenv\n' | ag_ssh 2>"$AG_DIR/e")
ag_like "$out" "rc=126" "export_ld_preload_denied"
ag_unlike "$out" "LD_PRELOAD" "ld_preload_absent_next_command"
ag_like "$(cat "$AG_DIR/e")" "^agentgate: " "export_ld_preload_reason"

# dangerous names that reach the capture another way are stripped
out=$(printf 'export FOO=1 SECRET_TOKEN=x\nenv\n' | ag_ssh 2>/dev/null)
ag_unlike "$out" "SECRET_TOKEN" "profile_env_deny_glob_stripped_or_refused"

# PATH cannot be widened: env.set wins over anything captured
out=$(printf 'export PATH=/tmp/evil:$PATH\necho "$PATH"\n' | ag_ssh 2>/dev/null)
ag_is "$(printf '%s' "$out" | tail -n 1)" "/usr/local/bin:/usr/bin:/bin" "path_not_widened"

# the other env.set values are where the session starts: an export changes
# them for the commands after it (a commit identity, a locale)
out=$(printf 'echo "$LANG"\nexport LANG=C\necho "$LANG"\n' | ag_ssh 2>/dev/null)
ag_is "$out" "C.UTF-8
C" "env_set_value_changed_by_export"
# ...unless the name is also dangerous (env.deny): then it holds
sed -i 's/deny: \["SECRET_\*"\]/deny: ["SECRET_*", "LANG"]/' "$AG_DIR/policy.yaml"
out=$(printf 'export LANG=C; echo "in=$LANG"\necho "after=$LANG"\n' | ag_ssh 2>/dev/null)
ag_like "$out" "after=C.UTF-8" "env_set_value_in_env_deny_holds"
sed -i 's/deny: \["SECRET_\*", "LANG"\]/deny: ["SECRET_*"]/' "$AG_DIR/policy.yaml"

# capture survives exit N, a trailing comment, here-documents, odd input
out=$(printf 'export A1=one; exit 4\necho "$A1"\n' | ag_ssh)
ag_is "$out" "one" "capture_survives_exit"
out=$(printf 'export A2=two # export A2=comment\necho "$A2"\n' | ag_ssh)
ag_is "$out" "two" "capture_survives_trailing_comment"
out=$(printf 'export A3=three; cat <<X\nbody\nX\necho "$A3"\n' | ag_ssh)
ag_is "$out" "body
three" "capture_survives_heredoc"
out=$(printf "export A4='a b\\nc=d'\nprintf '%%s|' \"\$A4\"\n" | ag_ssh)
ag_is "$out" "a b
c=d|" "capture_keeps_newlines_and_equals"
out=$(printf 'export A5=five; seq 1 20000 | wc -l\necho "$A5"\n' | ag_ssh)
ag_is "$out" "20000
five" "capture_with_large_output"
out=$(printf 'export A6=six\nexport -n A6\necho "[${A6-}]"\n' | ag_ssh 2>/dev/null)
ag_is "$(printf '%s' "$out" | tail -n 1)" "[]" "unexported_variable_dropped"

# SHLVL does not creep up across commands
out=$(printf 'echo $SHLVL\necho $SHLVL\necho $SHLVL\n' | ag_ssh)
ag_is "$(printf '%s' "$out" | sort -u | wc -l)" "1" "shlvl_stable"

# a command that dies by a signal leaves the state as it was
out=$(printf 'export B1=before\nexport B1=after; kill -9 $$\necho "$B1"\n' | ag_ssh)
ag_is "$out" "before" "killed_runner_state_unchanged"

# writes to the capture fd are filtered like everything else
out=$(printf "printf 'LD_AUDIT=/x\\\\0' >&3\nenv\n" | ag_ssh 2>/dev/null)
ag_unlike "$out" "LD_AUDIT" "forged_capture_record_filtered"

ag_done
