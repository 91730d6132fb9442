#!/bin/bash
# developer_idioms.sh - issue 36: in the developer tier the typed line
# refuses only what the kernel cannot hold.  Through the real sshd with the
# shipped developer profile (`unknown: allow`): the shell idioms and
# everyday tools a coding agent uses, one by one; then what must still be
# refused or held: a denied `git push` behind eval and inside a sourced
# file (refused at exec by the supervisor), writes outside ~/work by a
# redirection (typed refusal) and by an unlisted program (the kernel), and
# a write to .git/hooks through an unlisted program.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_shipped_world developer
# a directory DAC lets the account write: only the sandbox says no
PUB=$AG_DIR/pub
install -d -m 1777 "$PUB"

x() {
	ag_run x "$@"
	[ -n "$x_err" ] && printf '%s\n' "$x_err" | head -n 5 | sed 's/^/#   stderr: /'
	return 0
}

# ---- the idioms, one by one --------------------------------------------------
x "cd ~/work && printf 'one\ntwo\n' > lines && mkdir -p bin src &&
printf '#!/bin/sh\necho tool-ran\n' > bin/tool &&
printf '#!/bin/sh\necho x > \"\$1\"\n' > bin/writer &&
chmod +x bin/tool bin/writer &&
printf 'int a;\n' > src/a.c && printf 'int b;\nint c;\n' > src/b.c &&
printf 'export GREETING=hello\n' > env.sh &&
printf 'all:\n\t@echo \"mf=\$(MAKEFLAGS)\"\n' > Makefile && echo setup-ok"
ag_is "$x_out" "setup-ok" "setup"

x 'cd ~/work && while read l; do echo "got $l"; done < lines'
ag_is "$x_out" "got one
got two" "while_read_loop"

x 'greet() { echo "hi $1"; }; greet there'
ag_is "$x_out" "hi there" "function_definition_and_call"

x 'sleep 1 & wait; echo "waited=$?"'
ag_is "$x_out" "waited=0" "background_and_wait"

# once sleep runs (a TERM while the job's execve waits for the exec
# supervisor's verdict may not end it), kill %1 ends it
x 'sleep 100 & until [ "$(ps -o comm= -p $!)" = sleep ] || ! kill -0 $! 2>/dev/null; do :; done; kill %1; wait %1; echo "killed=$?"'
ag_is "$x_out" "killed=143" "kill_of_own_job"

x 'cd ~/work && source ./env.sh && echo "$GREETING"'
ag_is "$x_out" "hello" "source_of_a_file_in_work"

x 'echo "n=$(nproc)"; seq 3'
ag_like "$x_out" "^n=[0-9]+
1
2
3$" "command_substitution_nproc_and_seq"

x "cd ~/work && find . -name '*.c' -exec wc -l {} +"
ag_like "$x_out" "3 total" "find_exec"

x '~/work/bin/tool'
ag_is "$x_out" "tool-ran" "tilde_command_name"

x 'cd ~/work && python3 -m venv --without-pip .venv && echo made'
ag_is "$x_out" "made" "venv_created"
x "cd ~/work && .venv/bin/python -c 'print(6 * 7)'"
ag_is "$x_out" "42" "relative_venv_python"
x "cd ~/work && source .venv/bin/activate && python -c 'import sys; print(sys.prefix)'"
ag_is "$x_out" "$W/.venv" "source_venv_activate"

x 'export PATH=$PATH:~/work/bin; tool'
ag_is "$x_out" "tool-ran" "export_path_then_tool"

# in a REPL, a PATH change holds for the lines after it (the exec
# supervisor judges every exec); a relative entry is not kept
out=$(printf '%s\n' 'export PATH=$PATH:~/work/bin' 'tool' \
    'cd ~/work && source .venv/bin/activate' 'python -c "import sys; print(sys.prefix)"' \
    'export PATH=.:$PATH' 'echo "$PATH"' | ag_ssh 2>&1)
ag_like "$out" "^tool-ran
$W/.venv
/" "repl_path_change_holds_for_later_lines" "$out"
ag_unlike "$out" "(^|:)\.(:|$)" "repl_relative_path_entry_not_kept" "$out"
ag_like "$out" "agentgate: PATH is kept as it was for the next lines" "repl_says_the_path_was_not_taken" "$out"

# what the line does not show is left to the kernel and the exec-time
# deny rules (coding-agent trial): globs and variables as file operands, a
# command name in a variable, an editor for git, a symlink to a system
# program
x 'cd ~/work && touch a.o b.o && f=lines && rm -f *.o && cp "$f" /tmp/ && out=/tmp/o &&
echo w > "$out" && CC=cc && "$CC" --version >/dev/null && ln -sf /usr/bin/python3 bin/py &&
bin/py -c "print(1)" && cat "$out" && ls *.o 2>/dev/null | wc -l'
ag_is "$x_out" "1
w
0" "unseen_words_left_to_the_kernel"

x 'cd ~/work && export MAKEFLAGS=-j2 && make -s'
ag_like "$x_out" "mf=.*j2" "export_makeflags"

x 'cd ~/work && stat -c %s lines; file lines; sha256sum lines; jq -n "1 + 1"'
ag_like "$x_out" "^8
lines: ASCII text
[0-9a-f]{64}  lines
2$" "stat_file_sha256sum_jq"
ag_like "$(ag_audit_query "[x.get('rule') for x in r if x.get('event') == 'command' and 'sha256sum' in x.get('command', '')]")" \
    "profiles.developer.unknown" "unlisted_program_is_audited_with_its_rule"

# IFS and LD_LIBRARY_PATH within a line (every exec is judged; trial 20):
# the everyday forms, and neither carried to the next line
printf 'a,b c\nd e\n' > "$W/fields" && chown "$AG_USER" "$W/fields"
x 'cd ~/work && while IFS= read -r line; do echo "[$line]"; done < fields; IFS=, read -ra p < fields; echo "${p[1]}"'
ag_is "$x_out" "[a,b c]
[d e]
b c" "ifs_read_loop_and_read_ra"
x 'cd ~/work && printf "int v(void) { return 42; }\n" > v.c && printf "int v(void);\nint main(void) { return v() - 42; }\n" > m.c &&
cc -shared -fPIC -o libv.so v.c && cc -o m m.c -L. -lv && LD_LIBRARY_PATH=. ./m && echo "lib-ran=$?"'
ag_is "$x_out" "lib-ran=0" "ld_library_path_for_a_built_program"
out=$(printf '%s\n' 'IFS=K; export KEEP=1 LDP=x LD_LIBRARY_PATH=/nowhere' 'x="a b"; for w in $x; do echo "w=$w"; done; echo "keep=$KEEP ldp=${LD_LIBRARY_PATH-unset}"' | ag_ssh 2>&1)
ag_like "$out" "w=a
w=b
keep=1 ldp=unset$" "ifs_and_ld_library_path_not_kept_state_still_is" "$out"
ag_like "$out" "^agentgate: not kept for the next lines: LD_LIBRARY_PATH \(" \
    "ld_library_path_not_kept_is_said" "$out"
ag_unlike "$out" "not kept for the next lines: .*(KEEP|LDP|IFS)" "  and only it" "$out"
x 'export LD_PRELOAD=/tmp/x.so; echo ran'
ag_like "$x_out$x_err" "LD_PRELOAD" "ld_preload_still_refused"
ag_unlike "$x_out" "^ran$" "ld_preload_line_did_not_run"

# ---- still refused, or held by the kernel ------------------------------------
x "cd ~/work && git init -q repo && cd repo && echo a > a && git add a &&
git commit -qm a && git init -q --bare ../remote.git && echo repo-ok"
ag_is "$x_out" "repo-ok" "repo_setup"

# git cannot write a repository's config (read-only to every command):
# the gateway says why and what to do instead, and only then
x 'cd ~/work/repo && git config user.name Someone'
ag_like "$x_err" "could not write config file" "git_config_write_fails" "$x_err"
ag_like "$x_err" "agentgate: note: git cannot record settings here.*GIT_AUTHOR_NAME" \
    "git_config_failure_explained" "$x_err"
x 'cd ~/work/repo && git branch -M main'
ag_like "$x_err" "agentgate: note: git cannot record settings here" \
    "git_branch_rename_config_failure_explained" "$x_err"
x 'cd / && git log -1'
ag_unlike "$x_err" "agentgate: note" "no_note_for_other_git_failures" "$x_err"

# the commit identity: the profile's GIT_AUTHOR_* are defaults the
# session's own exports replace (on the line, and on the lines after it
# in a REPL); git -c user.name is refused with the way that works
x "cd ~/work/repo && git commit -q --allow-empty -m dflt && git log -1 --format='%an <%ae>'"
ag_is "$x_out" "Coding Agent <agent@localhost>" "git_identity_profile_default"
x "cd ~/work/repo && export GIT_AUTHOR_NAME='Agent Own' GIT_AUTHOR_EMAIL=own@example.org && git commit -q --allow-empty -m own && git log -1 --format='%an <%ae> %cn'"
ag_is "$x_out" "Agent Own <own@example.org> Coding Agent" "git_identity_export_wins" "$x_err"
out=$(printf '%s\n' 'cd ~/work/repo' 'export GIT_AUTHOR_NAME=Repl GIT_COMMITTER_NAME=Repl' \
    'git commit -q --allow-empty -m repl' "git log -1 --format='%an/%cn'" | ag_ssh 2>&1)
ag_is "$out" "Repl/Repl" "git_identity_export_holds_in_repl" "$out"
x "cd ~/work/repo && git -c user.name=Other commit -q --allow-empty -m c"
ag_like "$x_err" "GIT_AUTHOR_NAME.*export them" "git_c_user_name_refusal_says_what_works" "$x_err"

# a write the kernel refuses reaches the agent as the program's own
# "Read-only file system" or "Permission denied": after a command that
# failed so, the gateway says where this session may write, once, on
# stderr; not for a success, another failure, or an exec the supervisor
# refused (which it explains itself)
x "cd ~/work && printf 'cp lines ~/.bashrc\n' > cpit.sh && bash cpit.sh"
ag_like "$x_err" "Read-only file system" "protected_write_program_message" "$x_err"
ag_like "$x_err" "agentgate: note: .*may write only under ~/work and its own /tmp" \
    "kernel_refusal_note_names_the_write_roots" "$x_err"
ag_unlike "$x_out" "agentgate" "kernel_refusal_note_not_on_stdout" "$x_out"
x "python3 -c 'open(\"$PUB/py1\", \"w\")'; python3 -c 'open(\"$PUB/py2\", \"w\")'"
# outside the write roots the mount is read-only (meta_outside.sh): EROFS
ag_is "$(grep -cE '^(PermissionError|OSError: \[Errno 30\] Read-only file system)' <<<"$x_err")" 2 \
    "two_kernel_refusals" "$x_err"
ag_is "$(grep -c 'agentgate: note' <<<"$x_err")" 1 "kernel_refusal_note_once_per_command" "$x_err"
x "echo 'Permission denied' >&2"
ag_unlike "$x_err" "agentgate: note" "no_note_after_success"
x "ls ~/work/no-such-file"
ag_unlike "$x_err" "agentgate: note" "no_note_for_other_failures" "$x_err"

# in a REPL, variables and functions hold for the lines after them, as in
# bash: typed ones, and the venv's deactivate (which needs the plain
# variable activate set); unset -f forgets one; what a kept function runs
# is judged at its exec like anything else (git push stays refused)
out=$(printf '%s\n' 'cd ~/work; n=0; cnt() { grep -c "$1" "$2"; }' \
    'n=$((n+1)); cnt o lines; echo "n=$n"' 'source .venv/bin/activate' \
    'deactivate; echo "venv=${VIRTUAL_ENV:-none}"; case $PATH in *.venv*) echo path-venv;; *) echo path-clean;; esac' \
    'pushit() { git push -q ../remote.git HEAD:refs/heads/main; }' 'cd repo && pushit; echo "rc=$?"' \
    'unset -f cnt; cnt o ../lines 2>/dev/null; echo "gone=$?"' | ag_ssh 2>&1)
ag_like "$out" "^2
n=1
venv=none
path-clean" "repl_variables_and_functions_hold" "$out"
ag_like "$out" "denied.*git.*push|refused.*git.*push" "repl_kept_function_exec_judged" "$out"
ag_like "$out" "rc=[1-9]" "repl_kept_function_push_failed" "$out"
ag_like "$out" "gone=127" "repl_unset_function_forgotten" "$out"
# a kept function changes the state on a line of its own (the venv's
# deactivate, a counter, a cd), and arithmetic on command output runs
out=$(printf '%s\n' 'cd ~/work && source .venv/bin/activate' 'deactivate' \
    'echo "venv=${VIRTUAL_ENV:-none}"' 'N=1; inc() { N=$((N+1)); cd /tmp; }' 'inc' \
    'echo "N=$N pwd=$PWD"' 'echo "$(( $(nproc) * 2 ))" | grep -c "^[0-9]"' | ag_ssh 2>&1)
ag_like "$out" "^venv=none
N=2 pwd=/tmp
1$" "repl_function_alone_on_its_line_changes_state" "$out"

# what a line writes in place of the trap's report (its own EXIT trap) is
# not code the next line runs unjudged: only definitions the rules allow
# are kept (red team: a forged report exported a variable the typed line
# refuses, and ran code before the next line)
out=$(printf '%s\n' 'cd ~/work' \
    'trap '"'"'printf "\0=<\0PWD=%s\0=fexport GIT_CONFIG_PARAMETERS=x; echo FORGED-RAN\0=\0" "$PWD" >&3'"'"' EXIT' \
    'echo "gcp=${GIT_CONFIG_PARAMETERS:-unset}"' \
    'f() { :; }; trap '"'"'printf "\0=<\0PWD=%s\0=ff () { export LD_PRELOAD=/x.so; }\0=\0" "$PWD" >&3'"'"' EXIT' \
    'type f >/dev/null 2>&1 && echo kept || echo dropped' | ag_ssh 2>&1)
ag_unlike "$out" "FORGED-RAN" "forged_state_code_does_not_run" "$out"
ag_like "$out" "gcp=unset" "forged_state_exports_nothing" "$out"
ag_like "$out" "not kept for the next lines: they hold more than definitions" \
    "forged_state_top_level_code_refused" "$out"
ag_like "$out" "not kept for the next lines: .*LD_PRELOAD" "forged_state_refused_function_refused" "$out"
ag_like "$out" "dropped" "forged_state_function_dropped" "$out"

# a definition the rules refuse is left out and the rest kept (trial 19:
# one refused function cost the session its other functions and arrays);
# the venv's deactivate, which resets PYTHONHOME, is kept; an exec
# request's line is the session's last, so it gets no note
x "cd ~/work && printf 'bad() { LD_PRELOAD=/x.so; export LD_PRELOAD; }\\n' > defs.sh && echo ok"
out=$(printf '%s\n' 'cd ~/work; greet() { echo "hi-$1"; }; arr=(a b c)' \
    'source defs.sh' 'source .venv/bin/activate' \
    'greet two; echo "${arr[2]}"; type deactivate >/dev/null && echo has-deactivate; type bad >/dev/null 2>&1 || echo no-bad' | ag_ssh 2>&1)
ag_like "$out" "not kept for the next lines: bad \(.*LD_PRELOAD" "refused_definition_left_out_named" "$out"
ag_like "$out" "^hi-two
c
has-deactivate
no-bad$" "other_definitions_kept" "$out"
ag_unlike "$out" "PYTHONHOME" "venv_deactivate_kept" "$out"
x "cd ~/work && source defs.sh && echo sourced"
ag_is "$x_out" "sourced" "exec_request_sources_definitions"
ag_unlike "$x_err" "not kept" "exec_request_no_state_note" "$x_err"

# a venv made as people make it (with pip), activated on one line and
# deactivated on a later one: deactivate resets PS1 and PYTHONHOME, which
# an interactive bash alone reads (trial 19b)
out=$(printf '%s\n' 'cd ~/work && python3 -m venv .v2 && echo made' 'source .v2/bin/activate' \
    'deactivate' 'echo "venv=${VIRTUAL_ENV:-none}"' | ag_ssh 2>&1)
ag_is "$out" "made
venv=none" "venv_deactivate_on_a_later_line"

# arrays hold for the lines after them too, indexed and associative,
# values kept as values (quotes, $, a key with ] and =), unset forgets
# one; bash's own arrays (BASH_REMATCH, PIPESTATUS) are not carried
out=$(printf '%s\n' 'a=(x "y z" "$(echo q)"); a[7]="it'"'"'s \$HOME"; declare -A m=([k]=v ["a]=b c"]=w); [[ ab =~ (b) ]]' \
    'k="a]=b c"; echo "${a[1]}|${a[7]}|${m[k]}|${m[$k]}|${#a[@]}|${#BASH_REMATCH[@]}"' \
    'm[n]=two; unset "a[0]"' 'echo "${#a[@]} ${m[n]} ${a[2]}"' 'unset a' 'echo "n=${#a[@]} ${m[k]}"' | ag_ssh 2>&1)
ag_is "$out" "y z|it's \$HOME|v|w|4|0
3 two q
n=0 v" "repl_arrays_hold"
# a forged report cannot make an array run code before the next line
out=$(printf '%s\n' 'cd ~/work' \
    'trap '"'"'printf "\0=<\0PWD=%s\0=aAm\0=kk\0=e\$(echo FORGED-RAN)\0=\0" "$PWD" >&3'"'"' EXIT' \
    'echo "m=${m[k]}"' | ag_ssh 2>&1)
ag_is "$out" 'm=$(echo FORGED-RAN)' "forged_array_value_is_not_code"

# a background job does not outlive its line: alone on a line it is
# ended with the line and the gateway says so (once, on stderr); with
# wait on the same line it works
x 'sleep 100 &'
ag_like "$x_err" "agentgate: note: a background job ends with its line" "background_job_alone_noted" "$x_err"
ag_is "$x_out" "" "background_note_not_on_stdout"
out=$(printf '%s\n' 'sleep 100 &' 'jobs | wc -l' 'sleep 1 & wait; echo "waited=$?"' | ag_ssh 2>&1)
ag_is "$(grep -v 'agentgate: note' <<<"$out")" "0
waited=0" "background_job_ended_with_its_line" "$out"
ag_is "$(grep -c 'background job ends' <<<"$out")" 1 "background_note_only_for_the_job_alone" "$out"

# local and declare with expanded values, as agents write functions
x 'f() { local v=$1; local w="${2:-d}"; declare -A m=([k]=v); echo "$v $w ${m[k]}"; }; f one'
ag_is "$x_out" "one d v" "local_and_declare_with_expanded_values" "$x_err"

x 'git push'
ag_like "$x_err" "denied by profiles.developer.deny" "git_push_typed_refusal"
ag_unlike "$x_err" "nothing of the line" "one_command_refusal_says_only_why" "$x_err"
# a line refused for one of its parts: none of it ran (not the parts
# before the refused one), and the message says so and names the part
x "cd ~/work && echo ran > part-before && git add -A && git push origin main"
ag_like "$x_err" "denied by profiles.developer.deny\[[0-9]+\] \(git\); nothing of the line ran \(the part refused: .git push origin main.\)$" \
    "refused_line_says_nothing_ran_and_names_the_part" "$x_err"
ag_ok "refused_line_ran_no_part" test ! -e "$W/part-before"
out=$(printf '%s\n' 'cd ~/work' 'echo ran > part-before-repl && git push origin main; echo after' \
    'echo next-line' | ag_ssh 2>&1)
ag_like "$out" "nothing of the line ran \(the part refused: .git push origin main.\)" \
    "repl_refused_line_says_nothing_ran" "$out"
ag_like "$out" "next-line" "repl_goes_on_after_the_refused_line" "$out"
ag_ok "repl_refused_line_ran_no_part" test ! -e "$W/part-before-repl"

x "cd ~/work/repo && eval 'git push -q ../remote.git HEAD:refs/heads/main'; echo \"rc=\$?\""
ag_like "$x_out" "rc=[1-9]" "git_push_behind_eval_fails"
printf 'git push -q ../remote.git HEAD:refs/heads/main\n' > "$AG_DIR/push.sh"
x "cd ~/work/repo && cat > push.sh <<'EOF'
$(cat "$AG_DIR/push.sh")
EOF
source ./push.sh; echo \"rc=\$?\""
ag_like "$x_out" "rc=[1-9]" "git_push_in_sourced_file_fails"
ag_ok "remote_exists" git -c safe.directory='*' -C "$W/remote.git" rev-parse -q --git-dir
ag_ok "remote_still_empty" sh -c "! git -c safe.directory='*' -C '$W/remote.git' rev-parse -q --verify refs/heads/main >/dev/null"
ag_is "$(ag_audit_query "sum(1 for x in r if x.get('event') == 'exec_denied' and 'git' in (x.get('path') or ''))")" \
    2 "both_pushes_refused_at_exec_and_audited"

x "echo x > $PUB/outside-redir"
ag_like "$x_err" "outside paths.write" "redirection_outside_work_refused"
x "~/work/bin/writer $PUB/outside-prog; echo \"rc=\$?\""
ag_like "$x_out" "rc=[1-9]" "unlisted_program_cannot_write_outside_work"
ag_ok "nothing_written_outside_work" sh -c "[ ! -e '$PUB/outside-redir' ] && [ ! -e '$PUB/outside-prog' ]"

x "~/work/bin/writer ~/work/repo/.git/hooks/post-checkout; echo \"rc=\$?\""
ag_like "$x_out" "rc=[1-9]" "unlisted_program_cannot_write_git_hooks"
ag_ok "no_hook_planted" test ! -e "$W/repo/.git/hooks/post-checkout"

x "cd ~/work/repo && x=git; \$x push -q ../remote.git HEAD:refs/heads/main; echo \"rc=\$?\""
ag_like "$x_out" "rc=[1-9]" "git_push_through_a_variable_refused_at_exec"
ag_ok "remote_still_empty_after_the_variable" sh -c "! git -c safe.directory='*' -C '$W/remote.git' rev-parse -q --verify refs/heads/main >/dev/null"
# a script whose #! line is git push: the kernel runs git within the
# script's execve, which is judged as the exec it becomes
x "cd ~/work/repo && printf '#!/usr/bin/git push\n' > ../origin && chmod +x ../origin &&
python3 -c 'import os; os.execv(\"../origin\", [\"origin\", \"../remote.git\", \"HEAD:refs/heads/shebang\"])'; echo \"rc=\$?\""
ag_like "$x_out" "rc=[1-9]" "shebang_git_push_refused_at_exec" "$x_out $x_err"
ag_like "$x_err" "refused by profiles.developer.deny" "shebang_refusal_names_the_rule" "$x_err"
ag_ok "remote_still_empty_after_the_shebang" sh -c "! git -c safe.directory='*' -C '$W/remote.git' rev-parse -q --verify refs/heads/shebang >/dev/null"
x 'cd ~/work && printf "#!/bin/sh\necho script-ran \"\$@\"\n" > s.sh && chmod +x s.sh && ./s.sh a b'
ag_is "$x_out" "script-ran a b" "ordinary_script_runs"
x "cd ~/work/repo && echo b > b && git add b && git commit -qm b &&
GIT_EDITOR=true git commit -q --amend && GIT_SEQUENCE_EDITOR=true git rebase -q -i HEAD~1 && git log --format=%s -1"
ag_is "$x_out" "b" "git_editor_for_amend_and_rebase"

# an exec refused inside the command is named as it was typed (git, not
# the file the kernel found), and needs no note about writing
x "cd ~/work/repo && x=git; \$x push -q ../remote.git HEAD:refs/heads/main"
ag_like "$x_err" "an exec inside the command: git\)" "exec_refusal_names_the_typed_program" "$x_err"
ag_unlike "$x_err" "inside the command: /usr" "exec_refusal_not_the_resolved_path" "$x_err"
ag_unlike "$x_err" "may write only" "no_write_note_after_an_exec_refusal" "$x_err"

ag_done
