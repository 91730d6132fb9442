#!/bin/bash
# developer_deny.sh - the developer tier's deny rules hold however the
# program is spelled (issue 33, item 2; red team 20: H1, H2, H5), through
# the real sshd with the shipped profile (etc/agentgate.yaml, `developer`).
#
# The remote is a bare repository inside ~/work: the kernel would let a
# push land there, so only the deny rule on `git push` stands.  Each way
# around it is tried from a typed line, a Makefile recipe, python3, a
# freshly built C program and MCP `run` (where red team 20's probes did),
# and after each the remote must hold no branch; its benign twin (the same
# spelling of an allowed command) must keep working.
#   H2  the program is the file: a link named g, /dev/fd/N, /proc/self/fd/N,
#       /proc/thread-self/fd/N, /proc/PID/fd/N of an open git, the loader's
#       operand (ld.so /dev/fd/3 push) and a link to the loader are git
#   H5  a script the gateway may not read (mode 0111), and a deleted script
#       run by fexecve, are not let through unjudged
#   H1  help.autocorrect cannot turn `git pusj` into a push: a word outside
#       git's own commands is refused while a git action is denied

. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_need_sandbox_lib
ag_shipped_policy developer
ag_setgid_gateway

H=/home/$AG_USER
W=$H/work
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "$W"
LDSO=$(ag_ldso)
[ -n "$LDSO" ] || { echo "no loader found" >&2; exit 99; }

x() {
	ag_run x "$@"
	[ -n "$x_err" ] && printf '%s\n' "$x_err" | head -n 4 | sed 's/^/#   stderr: /'
	return 0
}
# the remote's branches, as root sees them (none: nothing was pushed)
landed() { git -c safe.directory='*' -C "$W/rem.git" for-each-ref --format='%(refname)' 2>&1; }
# an exec_denied record whose argv holds WORD
denied_with() {
	ag_audit_query "sum(1 for x in r if x['event'] == 'exec_denied' and '$1' in ' '.join(x.get('argv') or []))"
}

x "git init -q --bare ~/work/rem.git && mkdir -p ~/work/r && cd ~/work/r && git init -q && git commit -q --allow-empty -m one && echo ready"
ag_is "$x_out" "ready" "a_repository_and_a_remote_inside_the_write_roots"

# ---- H2: the program is the file ----------------------------------------------
# typed: bash opens git on fd 3 and runs /dev/fd/3; a link named g
x 'cd ~/work/r && exec 3</usr/bin/git && /dev/fd/3 push -q ../rem.git HEAD:refs/heads/devfd'
ag_is "$(landed)" "" "typed_dev_fd_push_refused" "$x_err"
ag_like "$x_err" "git push .* is refused by profiles\.developer\.deny" "typed_dev_fd_push_is_judged_as_git_push"
x 'cd ~/work/r && exec 3</usr/bin/git && /dev/fd/3 log --oneline'
ag_like "$x_out" "one" "typed_dev_fd_git_log_still_runs" "$x_err"
# (the link made by python3: the typed `ln -s /usr/bin/git g` reads as a
# write of /usr/bin/git to the gateway)
x "cd ~/work/r && python3 -c 'import os; os.symlink(\"/usr/bin/git\", \"g\")' && ./g push -q ../rem.git HEAD:refs/heads/link"
ag_like "$x_err" "git push .* is refused" "typed_link_named_g_push_is_judged_as_git_push" "$x_err"
ag_is "$(landed)" "" "typed_link_named_g_push_refused"
x 'cd ~/work/r && ./g log --oneline'
ag_like "$x_out" "one" "typed_link_named_g_log_still_runs" "$x_err"

# a Makefile recipe: /proc/self/fd/3, a link in /tmp, the loader with /dev/fd/3,
# a link named ldx to the loader
cat > "$AG_DIR/spell.mk" <<EOF
all: procself procroot tmplink loaderfd loaderlink ok
procself:
	-exec 3</usr/bin/git; /proc/self/fd/3 push -q ../rem.git HEAD:refs/heads/procself; echo "procself=\$\$?"
procroot:
	-/proc/self/root/usr/bin/git push -q ../rem.git HEAD:refs/heads/procroot; echo "procroot=\$\$?"
tmplink:
	-ln -sf /usr/bin/git /tmp/x; /tmp/x push -q ../rem.git HEAD:refs/heads/tmplink; echo "tmplink=\$\$?"
loaderfd:
	-exec 3</usr/bin/git; $LDSO /dev/fd/3 push -q ../rem.git HEAD:refs/heads/loaderfd; echo "loaderfd=\$\$?"
loaderlink:
	-ln -sf $LDSO ldx; ./ldx /usr/bin/git push -q ../rem.git HEAD:refs/heads/loaderlink; echo "loaderlink=\$\$?"
ok:
	-exec 3</usr/bin/git; /proc/self/fd/3 rev-parse --verify -q HEAD >/dev/null; echo "ok_procself=\$\$?"
	-$LDSO /dev/fd/3 --version 3</usr/bin/git >/dev/null; echo "ok_loaderfd=\$\$?"
EOF
x "cd ~/work/r && cat > spell.mk <<'EOF'
$(cat "$AG_DIR/spell.mk")
EOF
make -s -f spell.mk 2>/dev/null"
for t in procself procroot tmplink loaderfd loaderlink; do
	ag_like "$x_out" "(^|$(printf '\n'))$t=[1-9]" "recipe_${t}_push_refused" "$x_out"
done
ag_like "$x_out" "ok_procself=0" "recipe_proc_self_fd_git_rev_parse_still_runs" "$x_out"
ag_like "$x_out" "ok_loaderfd=0" "recipe_loader_with_dev_fd_git_version_still_runs" "$x_out"
ag_is "$(landed)" "" "no_recipe_spelling_landed"
ag_like "$(denied_with 'refs/heads/loaderfd')" "^[1-9]" "the_loader_spelling_is_recorded"

# python3: /proc/self/fd, /proc/thread-self/fd and /proc/PID/fd of an open git
for how in self:'"/proc/self/fd/%d" % f' thread_self:'"/proc/thread-self/fd/%d" % f' \
    pid:'"/proc/%d/fd/%d" % (os.getpid(), f)'; do
	x "cd ~/work/r && python3 -c 'import os, sys
f = os.open(\"/usr/bin/git\", os.O_RDONLY); os.set_inheritable(f, True)
os.execv(${how#*:}, [\"x\"] + sys.argv[1:])' push -q ../rem.git HEAD:refs/heads/py"
	ag_like "$x_err" "git push .* is refused" "python3_proc_${how%%:*}_fd_push_refused" "$x_err"
done
ag_is "$(landed)" "" "no_python3_spelling_landed"
x "cd ~/work/r && python3 -c 'import os
f = os.open(\"/usr/bin/git\", os.O_RDONLY); os.set_inheritable(f, True)
os.execv(\"/proc/thread-self/fd/%d\" % f, [\"x\", \"--version\"])'"
ag_like "$x_out" "^git version" "python3_thread_self_fd_git_version_still_runs" "$x_err"
# node's child_process and awk's system() with /dev/fd
x "cd ~/work/r && node -e 'const f = require(\"fs\").openSync(\"/usr/bin/git\", \"r\");
for (const a of [[\"push\", \"-q\", \"../rem.git\", \"HEAD:refs/heads/node\"], [\"--version\"]]) {
	const r = require(\"child_process\").spawnSync(\"/dev/fd/\" + f, a, { stdio: [0, \"pipe\", 2, f] });
	console.log(a[0], r.status, r.error ? r.error.code : String(r.stdout).trim());
}'"
ag_like "$x_out" "^push null EACCES" "node_spawn_dev_fd_push_refused" "$x_out"
ag_like "$x_out" "--version 0 git version" "node_spawn_dev_fd_git_version_still_runs" "$x_out"
x "cd ~/work/r && awk 'BEGIN { system(\"exec 3</usr/bin/git; /dev/fd/3 push -q ../rem.git HEAD:refs/heads/awk; echo awk=\$?\") }'"
ag_like "$x_out" "awk=126" "awk_system_dev_fd_push_refused" "$x_out"
ag_is "$(landed)" "" "no_node_or_awk_spelling_landed"

# a PATH search meets files that are not there: the kernel's answer, not a refusal
x "python3 -c 'import os, subprocess
try:
    subprocess.run([\"no-such-program-here\"])
except FileNotFoundError:
    print(\"enoent\", flush=True)
os.execvp(\"git\", [\"git\", \"--version\"])'"
ag_like "$x_out" "^enoent" "a_missing_program_is_still_not_found"
ag_like "$x_out" "git version" "execvp_still_searches_path"
ag_unlike "$(ag_audit_query "[x.get('argv') for x in r if x['event'] == 'exec_denied']")" "no-such-program" "a_missing_program_is_not_recorded_as_refused"

# a freshly built C program: the four /proc and /dev/fd spellings
cat > "$AG_DIR/fdexec.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
int main(int argc, char **argv)
{
	const char *fmt[] = { "/proc/self/fd/%d", "/dev/fd/%d", "/proc/thread-self/fd/%d", NULL };
	int i;
	for (i = 0; i < 4; i++) {
		pid_t p = fork();
		if (p == 0) {
			char path[64], ref[64];
			int fd = open("/usr/bin/git", O_RDONLY);
			char *av[] = { "x", argv[1], "-q", "../rem.git", ref, NULL };
			snprintf(ref, sizeof(ref), "HEAD:refs/heads/c%d", i);
			if (strcmp(argv[1], "push") != 0)
				av[2] = NULL;
			if (fmt[i] != NULL)
				snprintf(path, sizeof(path), fmt[i], fd);
			else
				snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), fd);
			execve(path, av, environ);
			_exit(126);
		}
		int st;
		waitpid(p, &st, 0);
		printf("c%d=%d\n", i, WIFEXITED(st) ? WEXITSTATUS(st) : 128);
	}
	return 0;
}
EOF
install -o "$AG_USER" -m 0644 "$AG_DIR/fdexec.c" "$W/r/fdexec.c"
x 'cd ~/work/r && cc -o fdexec fdexec.c && ./fdexec push'
ag_is "$(printf '%s\n' "$x_out" | grep -c '=126$')" "4" "c_program_fd_spellings_push_refused" "$x_out"
ag_is "$(landed)" "" "no_c_spelling_landed"
x 'cd ~/work/r && ./fdexec --version'
ag_is "$(printf '%s\n' "$x_out" | grep -c '=0$')" "4" "c_program_fd_spellings_git_version_still_run" "$x_out"

# ---- H5: a script is judged by its #! line, or does not run ----------------------
x "cd ~/work/r && printf '#!/usr/bin/git push\n' > rem && chmod 0111 rem && ln -s ../rem.git rem.git && ./rem; echo rc=\$?"
ag_like "$x_out" "rc=126" "typed_execute_only_git_push_script_refused"
ag_like "$x_err" "may not read .*rem" "the_agent_is_told_the_script_is_unreadable"
x "cd ~/work/r && printf 'all:\n\tGIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=push.default GIT_CONFIG_VALUE_0=current GIT_CONFIG_KEY_1=url.\$\$HOME/work/rem.git.insteadOf GIT_CONFIG_VALUE_1=./rem ./rem\n' > exo.mk && make -s -f exo.mk; echo rc=\$?"
ag_like "$x_out" "rc=2" "recipe_execute_only_script_refused"
ag_like "$(ag_audit_query "sum(1 for x in r if x['event'] == 'exec_denied' and x.get('rule') == 'exec:unreadable')")" \
    "^[2-9]" "both_are_recorded_as_unreadable"
x "cd ~/work/r && printf '#!/bin/sh\necho script-ran\n' > ok.sh && chmod 0755 ok.sh && ./ok.sh && printf '#!/usr/bin/git status\n' > rp && chmod 0755 rp && ./rp"
ag_like "$x_out" "script-ran" "a_readable_script_still_runs"
ag_like "$x_out" "rp" "a_readable_git_script_still_runs"

# fexecve of a deleted script: its #! line is read through the descriptor
cat > "$AG_DIR/fexec.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char url[512], val[64], *env[8], *av[] = { "s", NULL };
	int fd = open("s", O_RDWR | O_CREAT | O_TRUNC, 0755);
	write(fd, argv[1], strlen(argv[1]));
	close(fd);
	fd = open("s", O_RDONLY);	/* not close-on-exec: the interpreter reads /dev/fd/N */
	unlink("s");
	snprintf(url, sizeof(url), "GIT_CONFIG_KEY_1=url.%s/work/rem.git.insteadOf", getenv("HOME"));
	snprintf(val, sizeof(val), "GIT_CONFIG_VALUE_1=/dev/fd/%d", fd);
	env[0] = "GIT_CONFIG_COUNT=2"; env[1] = "GIT_CONFIG_KEY_0=push.default";
	env[2] = "GIT_CONFIG_VALUE_0=current"; env[3] = url; env[4] = val;
	env[5] = "PATH=/usr/bin:/bin"; env[6] = NULL;
	fexecve(fd, av, env);
	perror("fexecve");
	return 1;
}
EOF
install -o "$AG_USER" -m 0644 "$AG_DIR/fexec.c" "$W/r/fexec.c"
x "cd ~/work/r && git checkout -q -b fexec && cc -o fexec fexec.c && ./fexec '#!/usr/bin/git push
'; echo rc=\$?"
ag_like "$x_err" "git push .* is refused" "c_fexecve_of_a_deleted_push_script_refused"
ag_is "$(landed)" "" "no_script_spelling_landed"
x "cd ~/work/r && ./fexec '#!/bin/sh
echo fexec-ran
'"
ag_like "$x_out" "fexec-ran" "c_fexecve_of_a_deleted_shell_script_still_runs" "$x_err"

# ---- red team 21, H1: a script run by a bare name -------------------------------
# The kernel hands a #! interpreter the name the exec gave (`push`, not
# ~/work/r/push): git takes it as its command.  Typed (glibc's execvp
# turns an empty PATH entry into the bare name), python3 and a recipe.
x "cd ~/work/r && printf '#!/usr/bin/git\n' > push && chmod +x push && PATH=:/usr/bin env push -q ../rem.git HEAD:refs/heads/bare1; echo rc=\$?"
ag_like "$x_err" "git push .* is refused" "typed_bare_name_push_script_judged_as_git_push" "$x_err"
x "cd ~/work/r && python3 -c 'import os; os.execv(\"push\", [\"push\", \"-q\", \"../rem.git\", \"HEAD:refs/heads/bare2\"])'"
ag_like "$x_err" "git push .* is refused" "python3_bare_name_push_script_judged_as_git_push" "$x_err"
x "cd ~/work/r && printf 'all:\n\tPATH=:/usr/bin env push -q ../rem.git HEAD:refs/heads/bare3; echo rc=\$\$?\n' > bare.mk && make -s -f bare.mk"
ag_like "$x_out" "rc=[1-9]" "recipe_bare_name_push_script_refused" "$x_out"
ag_is "$(landed)" "" "no_bare_name_script_landed"
ag_like "$(denied_with 'refs/heads/bare3')" "^[1-9]" "the_bare_name_push_is_recorded"
# benign twins: the same spelling of git status, and a shell script
x "cd ~/work/r && printf '#!/usr/bin/git\n' > status && chmod +x status && PATH=:/usr/bin env status --short >/dev/null && echo status-ok; printf '#!/bin/sh\necho bare-ran\n' > hello && chmod +x hello && python3 -c 'import os; os.execv(\"hello\", [\"hello\"])'"
ag_like "$x_out" "status-ok" "bare_name_git_status_script_still_runs" "$x_err"
ag_like "$x_out" "bare-ran" "bare_name_shell_script_still_runs" "$x_err"
x "cd ~/work/r && rm -f push status hello bare.mk"

# ---- red team 21, H3: the loader's operand, as rtld finds it ---------------------
# glibc's ld.so takes only its own `--` words as options: `-d/git` is the
# program (./-d/git, a link to git), from a recipe and from python3
x "cd ~/work/r && python3 -c 'import os; os.makedirs(\"-d\", exist_ok=True); os.symlink(\"/usr/bin/git\", \"-d/git\")' && printf 'all:\n\t$LDSO -d/git push -q ../rem.git HEAD:refs/heads/dashd; echo dashd=\$\$?\n\t$LDSO --inhibit-cache -d/git log --oneline; echo dashlog=\$\$?\n' > dashd.mk && make -s -f dashd.mk"
ag_like "$x_out" "dashd=[1-9]" "recipe_loader_dash_operand_push_refused" "$x_out"
ag_like "$x_out" "dashlog=0" "recipe_loader_dash_operand_git_log_still_runs" "$x_out"
x "cd ~/work/r && python3 -c 'import os; os.execv(\"$LDSO\", [\"ld.so\", \"--inhibit-cache\", \"-d/git\", \"push\", \"-q\", \"../rem.git\", \"HEAD:refs/heads/dashpy\"])'"
ag_like "$x_err" "git push .* is refused" "python3_loader_dash_operand_judged_as_git_push" "$x_err"
ag_is "$(landed)" "" "no_loader_dash_operand_landed"
ag_like "$(denied_with 'refs/heads/dashd')" "^[1-9]" "the_loader_dash_operand_is_recorded"
x "cd ~/work/r && rm -rf ./-d dashd.mk"

# ---- red team 21, H4: a shell given a registry program's file -------------------
# /usr/bin/mvn is a shell script: `sh /usr/bin/mvn deploy` is mvn deploy
if [ -x /usr/bin/mvn ]; then
	x "mkdir -p ~/work/mv && cd ~/work/mv && sh /usr/bin/mvn -o deploy; echo rc=\$?"
	ag_like "$x_err" "mvn .*deploy.* is refused" "typed_sh_mvn_deploy_judged_as_mvn_deploy" "$x_err"
	ag_unlike "$x_out$x_err" "MissingProjectException|Scanning for projects" "typed_sh_mvn_deploy_ran_no_maven" "$x_out"
	x "cd ~/work/mv && printf 'all:\n\tbash -e /usr/bin/mvn -o deploy; echo mvnrc=\$\$?\n' > Makefile && make -s"
	ag_like "$x_out" "mvnrc=[1-9]" "recipe_bash_mvn_deploy_refused" "$x_out"
	ag_unlike "$x_out$x_err" "MissingProjectException|Scanning for projects" "recipe_bash_mvn_deploy_ran_no_maven" "$x_out"
	x "cd ~/work/mv && python3 -c 'import os; os.execv(\"/bin/sh\", [\"sh\", \"--\", \"/usr/bin/mvn\", \"-o\", \"deploy\"])'"
	ag_like "$x_err" "mvn .*deploy.* is refused" "python3_sh_mvn_deploy_refused" "$x_err"
	ag_like "$(ag_audit_query "sum(1 for x in r if x['event'] == 'exec_denied' and 'deploy' in ' '.join(x.get('argv') or []) and '/usr/bin/mvn' in ' '.join(x.get('argv') or []))")" \
	    "^[3-9]" "sh_mvn_deploy_recorded"
	# benign twins: maven's other goals through sh, and a shell's own script
	x "cd ~/work/mv && sh /usr/bin/mvn -o --version"
	ag_like "$x_out" "Apache Maven" "sh_mvn_version_still_runs" "$x_err"
	x "cd ~/work/mv && printf 'echo sh-file-ran \$1\n' > s.sh && sh s.sh deploy && bash -c 'echo bash-c-ran'"
	ag_like "$x_out" "sh-file-ran deploy" "sh_with_a_plain_script_still_runs" "$x_err"
	ag_like "$x_out" "bash-c-ran" "bash_c_still_runs" "$x_err"
else
	ag_pass "sh_mvn_skipped_no_maven"
fi

# ---- H1: help.autocorrect --------------------------------------------------------
printf 'all:\n\tGIT_CONFIG_PARAMETERS="%s" git pusj -q ../rem.git HEAD:refs/heads/ac; echo "ac=$$?"\n\tgit log --oneline; echo "log=$$?"\n' \
    "'help.autocorrect'='1'" > "$AG_DIR/ac.mk"
x "cd ~/work/r && cat > ac.mk <<'EOF'
$(cat "$AG_DIR/ac.mk")
EOF
make -s -f ac.mk"
ag_like "$x_out" "ac=[1-9]" "recipe_autocorrect_pusj_refused" "$x_out"
ag_like "$x_out" "log=0" "recipe_git_log_still_runs" "$x_out"
x "cd ~/work/r && python3 -c 'import os
e = dict(os.environ, GIT_CONFIG_COUNT=\"1\", GIT_CONFIG_KEY_0=\"help.autocorrect\", GIT_CONFIG_VALUE_0=\"1\")
os.execve(\"/usr/bin/git\", [\"git\", \"pusj\", \"-q\", \"../rem.git\", \"HEAD:refs/heads/acpy\"], e)'"
ag_like "$x_err" "git pusj.* is not one of git's own commands" "python3_autocorrect_pusj_refused" "$x_err"
ag_like "$x_err" "help\.autocorrect" "the_refusal_names_help_autocorrect"
# typed, in a repository in /tmp whose config the agent wrote
x "git init -q /tmp/q && python3 -c 'open(\"/tmp/q/.git/config\", \"a\").write(\"[help]\\n\\tautocorrect = 1\\n\")' && cd /tmp/q && git fetch -q ~/work/r HEAD && git pusj -q ~/work/rem.git FETCH_HEAD:refs/heads/typed"
ag_is "$x_rc" "126" "typed_autocorrect_pusj_in_tmp_repository_refused" "$x_err"
x 'cd ~/work/r && export AC=1 && git --config-env=help.autocorrect=AC pusj -q ../rem.git HEAD:refs/heads/cfgenv'
ag_is "$x_rc" "126" "typed_config_env_pusj_refused"
ag_is "$(landed)" "" "no_autocorrect_spelling_landed"
# git's own commands, its helpers (submodule--helper in git 2.39) and a
# dashed name git does not have (git dies on it) still run
x 'cd ~/work/r && git stash list && git worktree list >/dev/null && git submodule status && echo own-ok; /usr/lib/git-core/git-rev-parse --is-inside-work-tree'
ag_like "$x_out" "own-ok" "git_own_commands_still_run" "$x_err"
ag_like "$x_out" "true" "a_dashed_git_command_still_runs" "$x_err"
x 'cd ~/work/r && ln -sf /usr/bin/git git-frob && ./git-frob; echo rc=$?; rm git-frob'
ag_unlike "$x_err" "agentgate: denied" "a_dashed_name_git_lacks_is_left_to_git" "$x_err"
# explain says why
ex=$("$AGENTGATE" explain --config "$AG_DIR/policy.yaml" --profile developer -- git pusj 2>&1)
ag_like "$ex" "help\.autocorrect" "explain_says_an_unknown_word_may_be_autocorrected" "$ex"

# ---- MCP run: the same through the agent's protocol ------------------------------
mcp_run() {
	"$AG_PYTHON" -c 'import json, sys; print(json.dumps({"jsonrpc": "2.0", "id": int(sys.argv[1]), "method": "tools/call", "params": {"name": "run", "arguments": {"command": sys.argv[2]}}}))' "$1" "$2"
}
mcp=$({
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}' \
	    '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	mcp_run 2 'cd ~/work/r && exec 3</usr/bin/git && /dev/fd/3 push -q ../rem.git HEAD:refs/heads/mcpfd'
	mcp_run 3 "cd ~/work/r && python3 -c 'import os
e = dict(os.environ, GIT_CONFIG_COUNT=\"1\", GIT_CONFIG_KEY_0=\"help.autocorrect\", GIT_CONFIG_VALUE_0=\"1\")
os.execve(\"/usr/bin/git\", [\"git\", \"pusj\", \"-q\", \"../rem.git\", \"HEAD:refs/heads/mcpac\"], e)'"
	mcp_run 4 'cd ~/work/r && exec 3</usr/bin/git && /dev/fd/3 rev-parse --is-inside-work-tree'
} | timeout 120 "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" mcp 2>&1)
ag_is "$(landed)" "" "mcp_run_spellings_refused" "$mcp"
ag_like "$(printf '%s\n' "$mcp" | grep '"id":4')" 'true' "mcp_run_dev_fd_git_still_runs" "$mcp"
ag_like "$(denied_with 'refs/heads/mcpfd')" "^[1-9]" "mcp_dev_fd_push_recorded"
ag_like "$(denied_with 'refs/heads/mcpac')" "^[1-9]" "mcp_autocorrect_pusj_recorded"

ag_done
