#!/bin/bash
# repl_shadow.sh - functions a REPL line defines are kept for the next
# lines, but never one named after a shell builtin or reserved word: the
# runner's own script (the restored state, $?, a long line's `eval`, the
# capture trap) calls builtins, and a function `:` or `eval` would run in
# their place on every later line, unseen by the record (red team 20, M3).
# Through the real sshd with the shipped developer profile.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_shipped_world developer
ag_setgid_gateway
install -d -o "$AG_USER" -g "$AG_USER" "$W/s"

# the attack: each function writes a file when it runs (`builtin` only
# when it runs in a later line: its own line's capture trap calls it, as
# that line's own text shows)
PAD=$(head -c 100000 /dev/zero | tr '\0' A)
{
	printf '%s\n' ':() { echo x >> ~/work/s/COLON_RAN; }' \
	    'eval() { echo x >> ~/work/s/EVAL_RAN; }' \
	    'printf() { echo x >> ~/work/s/PRINTF_RAN; }' \
	    'unset() { echo x >> ~/work/s/UNSET_RAN; }; return() { echo x >> ~/work/s/RETURN_RAN; }' \
	    'P=$BASHPID; builtin() { [ "$BASHPID" = "$P" ] || echo x >> ~/work/s/BUILTIN_RAN; }' \
	    'declare() { echo x >> ~/work/s/DECLARE_RAN; }' \
	    'exit() { echo x >> ~/work/s/EXIT_RAN; }; mine() { echo "mine $1"; }' \
	    'false' 'echo "line status $?"'
	printf 'echo long-line-ran #%s\n' "$PAD"
	printf '%s\n' 'mine kept' 'echo last'
} | ag_ssh >"$AG_DIR/sh.out" 2>"$AG_DIR/sh.err"
ag_is "$(ls "$W/s")" "" "repl_shadow_no_function_ran_in_the_runner" "$(ls "$W/s")"
ag_is "$(cat "$AG_DIR/sh.out")" "line status 1
long-line-ran
mine kept
last" "repl_shadow_lines_ran_as_recorded" "$(cat "$AG_DIR/sh.err")"
ag_like "$(cat "$AG_DIR/sh.err")" \
    "not kept for the next lines: : \\(a function named after a shell builtin or keyword\\)" \
    "repl_shadow_refusal_said"
ag_like "$(cat "$AG_DIR/sh.err")" \
    "not kept for the next lines: eval \\(a function named after" "repl_shadow_eval_refusal_said"
ag_is "$(ag_audit_query '[x["command"][:20] for x in r if x.get("event") == "command" and x.get("command", "").startswith("echo long")]')" \
    "['echo long-line-ran #']" "repl_shadow_long_line_recorded"

# within one line a function of such a name is the line's own business:
# it runs there, and is not kept
out=$(printf '%s\n' 'echo() { builtin echo "own $*"; }; echo a' 'echo b' | ag_ssh 2>/dev/null)
ag_is "$out" "own a
b" "repl_shadow_same_line_only"

# the benign twin: ordinary functions and variables carry over
out=$(printf '%s\n' 'greet() { echo "hi $1"; }' 'N=3' 'greet you; echo "$N"' 'false' \
    'greet again; echo "$?"' | ag_ssh 2>"$AG_DIR/b.err")
ag_is "$out" "hi you
3
hi again
0" "repl_shadow_benign_functions_kept" "$(cat "$AG_DIR/b.err")"
ag_is "$(cat "$AG_DIR/b.err")" "" "repl_shadow_benign_nothing_said"

ag_done
