#!/bin/bash
# REPL over a pipe (no terminal): no prompt or banner, one command per
# complete input, and cwd, exported variables and $? carried between lines.
. "$(dirname "$0")/lib.sh"
ag_setup

out=$(printf 'cd /tmp\npwd\n' | ag_ssh)
ag_is "$out" "/tmp" "repl_cd_then_pwd"

out=$(printf 'false\necho $?\ntrue\necho $?\n' | ag_ssh)
ag_is "$out" "1
0" "repl_status_visible_to_next_line"

out=$(printf 'ls /nonexistent-dir 2>/dev/null\necho $?\n' | ag_ssh)
ag_is "$out" "2" "repl_status_of_program"

out=$(printf 'export FOO=bar\necho "$FOO"\nunset FOO\necho "[${FOO-unset}]"\n' | ag_ssh)
ag_is "$out" "bar
[unset]" "repl_export_and_unset_persist"

out=$(printf 'NOTEXPORTED=1\necho "[${NOTEXPORTED-}]"\n' | ag_ssh)
ag_is "$out" "[]" "repl_plain_variable_does_not_persist"

# continuation lines: open quote, trailing backslash, &&, here-document
out=$(printf 'echo "a\nb"\necho c \\\nd\ntrue &&\necho e\ncat <<EOT\nx\nEOT\necho f\n' | ag_ssh)
ag_is "$out" "a
b
c d
e
x
f" "repl_continuations_join_lines"

# exit N inside a longer line ends only that command; earlier exports persist
out=$(printf 'export KEEP=yes; cd /tmp; exit 3\necho "$? $KEEP $PWD"\n' | ag_ssh)
ag_is "$out" "3 yes /tmp" "repl_exit_in_command_keeps_state_and_session"

# a bare exit N ends the session with N; later lines are not run
printf 'echo one\nexit 5\necho two\n' | ag_ssh > "$AG_DIR/o" 2>&1
rc=$?
ag_is "$rc" 5 "repl_bare_exit_status"
ag_is "$(cat "$AG_DIR/o")" "one" "repl_bare_exit_stops_reading"

# EOF ends the session with the last status
printf 'false\n' | ag_ssh >/dev/null 2>&1
ag_is "$?" 1 "repl_eof_status_is_last"

# a refused line: reason on stderr, status 126 for $?, the REPL goes on
out=$(printf 'rm -rf /\necho "after $?"\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "after 126" "repl_denied_then_continues"
ag_like "$(cat "$AG_DIR/e")" "^agentgate: " "repl_denied_reason_on_stderr"

# a line that does not parse: refused in the words of its one parse (the
# byte and the token), recorded with rule "parse"; the next line runs
out=$(printf 'echo )\necho "after $?"\n' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "after 126" "repl_syntax_error_then_continues"
ag_is "$(cat "$AG_DIR/e")" \
    "agentgate: denied: cannot parse the command at byte 5: syntax error near unexpected token \`)'" \
    "repl_syntax_error_worded_from_the_parse"
ag_is "$(ag_audit_query '[(x["decision"], x["rule"]) for x in r if x.get("event") == "command" and x.get("command") == "echo )"]')" \
    "[('deny', 'parse')]" "repl_syntax_error_recorded_as_parse"

# input the script leaves incomplete is refused as such, in the words of
# the whole input's parse
out=$(printf 'echo a \\\n' | ag_ssh 2>&1)
ag_is "$out" "agentgate: denied: the command is incomplete (line continuation at the end)" \
    "repl_incomplete_at_eof_refused"

# commands do not eat the following input lines
out=$(printf 'cat\necho next\n' | ag_ssh)
ag_is "$out" "next" "repl_command_stdin_is_not_the_script"

# an over-long command is discarded with a message; the next line still runs
out=$( { head -c 1100000 /dev/zero | tr '\0' a; printf '\necho "next $?"\n'; } | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "next 126" "repl_overlong_line_discarded_session_goes_on"
ag_like "$(cat "$AG_DIR/e")" "^agentgate: command longer than" "repl_overlong_line_message"

# no prompt and no banner without a terminal
out=$(printf '' | ag_ssh 2>&1)
ag_is "$out" "" "repl_silent_without_tty"

# the directory the session is in disappears between two lines: the next
# command says so, nothing else breaks, and the session goes on
mkfifo -m 0666 "$AG_DIR/gone.fifo"
gone=/tmp/agentgate-gone-$$
printf 'mkdir %s && cd %s\ncat %s\necho after\ncd /\necho alive\n' "$gone" "$gone" \
    "$AG_DIR/gone.fifo" | ag_ssh >"$AG_DIR/gone.out" 2>"$AG_DIR/gone.err" &
gone_pid=$!
ag_wait_until 30 pgrep -u "$AG_USER" -x cat >/dev/null
rmdir "$gone"
echo released > "$AG_DIR/gone.fifo"
wait "$gone_pid"
ag_like "$(cat "$AG_DIR/gone.err")" "cannot enter $gone" "repl_vanished_cwd_is_said"
ag_is "$(cat "$AG_DIR/gone.out")" "released
alive" "repl_goes_on_after_vanished_cwd"

ag_done
