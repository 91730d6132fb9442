#!/bin/bash
# debuggers.sh - issue 36: the developer tier runs the debuggers and
# tracers developers run.  Through the real sshd with the shipped developer
# profile: a C program built with -g, run under gdb -batch (a backtrace),
# strace -f (its system calls) and valgrind (a real leak); then a denied
# `git push` under each of them, hidden from the typed line (eval, a
# Makefile recipe), refused at its exec and audited, and the bare remote
# still empty.  Each tool is skipped where it is not installed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_shipped_world developer

x() {
	ag_run x "$@"
	[ -n "$x_err" ] && printf '%s\n' "$x_err" | head -n 5 | sed 's/^/#   stderr: /'
	return 0
}

# each case's push names its own branch: refused at exec (an exec_denied
# record whose words hold it), and the remote never gets it
refused_at_exec() {	# refused_at_exec BRANCH NAME
	ag_is "$(ag_audit_query "any(x.get('event') == 'exec_denied' and any('refs/heads/$1' in w for w in x.get('argv') or []) for x in r)")" \
	    yes "${2}_refused_at_exec" "$x_out" "$x_err"
	ag_ok "${2}_remote_still_empty" sh -c "! git -c safe.directory='*' -C '$W/remote.git' rev-parse -q --verify refs/heads/$1 >/dev/null"
}

x "cd ~/work && cat > leak.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *kept;

static int
deep(int n)
{
	char *p = malloc(64);

	memset(p, n, 64);
	kept = NULL;		/* the only pointer to p is lost: a leak */
	return p[0];
}

int
main(void)
{
	printf(\"leaky %d\\n\", deep(7));
	return 0;
}
EOF
cc -g -O0 -o leak leak.c && ./leak && git init -q repo && cd repo && echo a > a && git add a &&
git commit -qm a && git init -q --bare ../remote.git && echo setup-ok"
ag_like "$x_out" "leaky 7" "program_built_and_runs"
ag_like "$x_out" "setup-ok" "repo_setup"

PUSH="git push -q ../remote.git HEAD:refs/heads"

# ---- gdb ---------------------------------------------------------------------
if command -v gdb >/dev/null; then
	x "cd ~/work && gdb -q -batch -ex 'break deep' -ex run -ex bt ./leak"
	ag_like "$x_out" "#0 +deep \(n=7\) at leak.c" "gdb_backtrace_frame_deep" "$x_out"
	ag_like "$x_out" "#1 +0x[0-9a-f]+ in main \(\) at leak.c" "gdb_backtrace_frame_main" "$x_out"

	x "cd ~/work/repo && gdb -q -batch -ex run --args $PUSH/gdbargs"
	ag_like "$x_err" "denied by profiles.developer.deny" "gdb_args_git_push_refused_as_typed"
	x "cd ~/work/repo && gdb -q -batch -ex 'shell $PUSH/gdbshell'; echo \"rc=\$?\""
	refused_at_exec gdbshell gdb_shell_git_push
else
	for t in gdb_backtrace_frame_deep gdb_backtrace_frame_main gdb_args_git_push_refused_as_typed \
	    gdb_shell_git_push_refused_at_exec gdb_shell_git_push_remote_still_empty; do
		ag_pass "$t # skip: gdb not installed"
	done
fi

# ---- strace ------------------------------------------------------------------
if command -v strace >/dev/null; then
	x "cd ~/work && strace -f -o st.txt ./leak && grep -c 'write(1, \"leaky 7' st.txt"
	ag_is "$x_out" "leaky 7
1" "strace_sees_the_write"
	x "cd ~/work && strace -f -e trace=execve ./leak 2>&1 >/dev/null | grep -c 'execve(\"./leak\"'"
	ag_is "$x_out" "1" "strace_sees_the_exec"
	x "strace -o /etc/agentgate-strace ./leak"
	ag_like "$x_err" "outside paths.write" "strace_output_outside_work_refused"

	x "cd ~/work/repo && strace -f $PUSH/stracetyped"
	ag_like "$x_err" "denied by profiles.developer.deny" "strace_git_push_refused_as_typed"
	x "cd ~/work/repo && eval 'strace -f -o /dev/null $PUSH/strace'; echo \"rc=\$?\""
	ag_like "$x_out" "rc=[1-9]" "strace_git_push_fails"
	refused_at_exec strace strace_git_push
else
	for t in strace_sees_the_write strace_sees_the_exec strace_output_outside_work_refused \
	    strace_git_push_refused_as_typed strace_git_push_fails \
	    strace_git_push_refused_at_exec strace_git_push_remote_still_empty; do
		ag_pass "$t # skip: strace not installed"
	done
fi

# ---- valgrind ----------------------------------------------------------------
if command -v valgrind >/dev/null; then
	x "cd ~/work && valgrind --leak-check=full ./leak"
	ag_like "$x_err" "definitely lost: 64 bytes in 1 blocks" "valgrind_reports_the_leak" "$x_err"
	ag_like "$x_out" "leaky 7" "valgrind_runs_the_program"
	x "cd ~/work && valgrind -q --trace-children=yes sh -c ./leak"
	ag_is "$x_out" "leaky 7" "valgrind_traces_children"

	x "cd ~/work/repo && valgrind $PUSH/vgtyped"
	ag_like "$x_err" "denied by profiles.developer.deny" "valgrind_git_push_refused_as_typed"
	x "cd ~/work/repo && eval 'valgrind -q $PUSH/vg'; echo \"rc=\$?\""
	ag_like "$x_out" "rc=[1-9]" "valgrind_git_push_fails"
	refused_at_exec vg valgrind_git_push
	x "cd ~/work/repo && valgrind -q --trace-children=yes sh -c '$PUSH/vgchildren'; echo \"rc=\$?\""
	refused_at_exec vgchildren valgrind_children_git_push
	x "cd ~/work/repo && printf 'all: a b\na:\n\tvalgrind -q $PUSH/vgmake\nb:\n\tvalgrind -q --trace-children=yes sh -c \"$PUSH/vgmake2\"\n' > Makefile &&
make -k -s; echo \"rc=\$?\""
	refused_at_exec vgmake valgrind_in_make_recipe
	refused_at_exec vgmake2 valgrind_children_in_make_recipe
	# the tool binary run by path, with what the launcher would give it
	tool=$(ls /usr/libexec/valgrind/memcheck-*-linux /usr/lib/*/valgrind/memcheck-*-linux \
	    /usr/lib/valgrind/memcheck-*-linux 2>/dev/null | head -n 1)
	if [ -n "$tool" ]; then
		x "cd ~/work/repo && $tool $PUSH/tooltyped"
		ag_like "$x_err" "denied by profiles.developer.deny" "valgrind_tool_git_push_refused_as_typed"
		x "cd ~/work/repo && eval 'VALGRIND_LAUNCHER=\$(command -v valgrind.bin || command -v valgrind) $tool -q $PUSH/tool'; echo \"rc=\$?\""
		refused_at_exec tool valgrind_tool_binary_git_push
	else
		for t in valgrind_tool_git_push_refused_as_typed valgrind_tool_binary_git_push_refused_at_exec \
		    valgrind_tool_binary_git_push_remote_still_empty; do
			ag_pass "$t # skip: no memcheck tool binary found"
		done
	fi
else
	for t in valgrind_reports_the_leak valgrind_runs_the_program valgrind_traces_children \
	    valgrind_git_push_refused_as_typed valgrind_git_push_fails \
	    valgrind_git_push_refused_at_exec valgrind_git_push_remote_still_empty \
	    valgrind_children_git_push_refused_at_exec valgrind_children_git_push_remote_still_empty \
	    valgrind_in_make_recipe_refused_at_exec valgrind_in_make_recipe_remote_still_empty \
	    valgrind_children_in_make_recipe_refused_at_exec \
	    valgrind_children_in_make_recipe_remote_still_empty \
	    valgrind_tool_git_push_refused_as_typed valgrind_tool_binary_git_push_refused_at_exec \
	    valgrind_tool_binary_git_push_remote_still_empty; do
		ag_pass "$t # skip: valgrind not installed"
	done
fi

# ---- AddressSanitizer ----------------------------------------------------------
# the shipped profile bounds no process's address space: ASan's shadow fits
x "cd ~/work && printf '#include <stdlib.h>\nint main(void){char *p=malloc(4);p[4]=1;free(p);return 0;}\n' > asan.c &&
cc -g -fsanitize=address -o asan asan.c && ./asan"
ag_like "$x_err" "heap-buffer-overflow" "asan_reports_the_overflow" "$x_err"

ag_ok "remote_has_no_branch_at_all" sh -c "[ -z \"\$(git -c safe.directory='*' -C '$W/remote.git' for-each-ref)\" ]"

ag_done
