#!/bin/bash
# developer.sh - the developer tier through the real sshd with the shipped
# profile (etc/agentgate.yaml, `developer`), issue 12.
#
# First the work an agent does: a C project with a hand-written
# ./configure and shell recipes, make, make check running the built test
# binary, a python3 unittest suite, an npm test script, git init / commit /
# stash / log, and the everyday idioms (cd DIR && ..., set -euo pipefail,
# $? in the REPL, wrappers).  Then the adversarial side under the same
# profile: Makefile recipes, awk, sed, python3 and a freshly built binary
# try to write git hooks and config, startup files and authorized_keys, to
# write outside paths.write, to reach an unlisted TCP port, and to run a
# denied `git push`; each must fail, and a later login and `git status` by
# the account outside the gateway must run nothing planted.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup

ag_need_sandbox_lib
# The shipped policy, the account mapped to the developer profile.
ag_shipped_policy developer
# installed as make install and the Debian package install it: set-group-ID
# to its group, so the sandbox's repository search is kept between the
# connections below (src/exec/scancache.c), as on a real host
ag_setgid_gateway
"$AGENTGATE" check --config "$AG_DIR/policy.yaml" >/dev/null ||
    { echo "the shipped policy does not check" >&2; exit 99; }

H=/home/$AG_USER
W=$H/work
# the one thing the admin does: create ~/work for the account
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "$W"
# what a later login of the account would run; planted payloads touch $PWN
# (a directory DAC lets the account write: only the sandbox says no)
PUB=$AG_DIR/pub
install -d -m 1777 "$PUB"
PWN=$PUB/pwned
install -d -o "$AG_USER" -m 0700 "$H/.ssh"
install -o "$AG_USER" -m 0600 /dev/null "$H/.ssh/authorized_keys"

# a TCP listener on a port the profile does not list (it lists 443)
PORTS_FILE=$AG_DIR/ports
"$AG_PYTHON" - "$PORTS_FILE" <<'EOF' &
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    c.sendall(b"connected\n")
    c.close()
EOF
LISTENER=$!
trap 'kill $LISTENER 2>/dev/null; ag_cleanup' EXIT
ag_wait_until 30 test -s "$PORTS_FILE" || { echo "listener did not start" >&2; exit 99; }
read -r PORT < "$PORTS_FILE"

# x NAME CMD: run CMD through the gateway, keep x_out/x_err/x_rc
x() {
	ag_run x "$@"
	# the gateway's and the programs' complaints, for whoever reads a failure
	[ -n "$x_err" ] && printf '%s\n' "$x_err" | head -n 5 | sed 's/^/#   stderr: /'
	return 0
}

# ---- a C project, from empty to committed with passing tests ---------------------
x 'mkdir -p ~/work/hello && cd ~/work/hello && git init -q && echo init-ok'
ag_is "$x_out" "init-ok" "c_git_init"

x "cd ~/work/hello || exit 1
cat > configure <<'EOF'
#!/bin/sh
# a hand-written configure: probes the compiler, writes config.mk
set -e
: \"\${CC:=cc}\"
printf 'int main(void){return 0;}\n' > conftest.c
\$CC -o conftest conftest.c && ./conftest
rm -f conftest conftest.c
echo \"CC = \$CC\" > config.mk
echo \"checking for a working C compiler... \$CC\"
EOF
chmod +x configure"
ag_is "$x_rc" 0 "c_write_configure"

x "cd ~/work/hello || exit 1
cat > Makefile <<'EOF'
include config.mk
all: hello test_hello
hello: hello.c greet.o
	\$(CC) -o \$@ hello.c greet.o
test_hello: test_hello.c greet.o
	\$(CC) -o \$@ test_hello.c greet.o
greet.o: greet.c greet.h
	\$(CC) -c greet.c
check: test_hello
	./test_hello && echo 'all tests passed'
clean:
	rm -f hello test_hello *.o
.PHONY: all check clean
EOF
printf '%s\n' 'const char *greet(void);' > greet.h
printf '%s\n' '#include \"greet.h\"' 'const char *greet(void) { return \"hello, world\"; }' > greet.c
printf '%s\n' '#include <stdio.h>' '#include \"greet.h\"' 'int main(void) { puts(greet()); return 0; }' > hello.c
printf '%s\n' '#include <string.h>' '#include \"greet.h\"' 'int main(void) { return strcmp(greet(), \"hello, world\") != 0; }' > test_hello.c
printf '%s\n' hello test_hello '*.o' config.mk > .gitignore"
ag_is "$x_rc" 0 "c_write_sources"

x 'cd ~/work/hello && ./configure'
ag_like "$x_out" "working C compiler\\.\\.\\. cc" "c_configure_runs_and_compiles_a_probe"
x 'cd ~/work/hello && make'
ag_is "$x_rc" 0 "c_make_builds"
x 'cd ~/work/hello && ./hello'
ag_is "$x_out" "hello, world" "c_built_binary_runs"
x 'cd ~/work/hello && make check'
ag_like "$x_out" "all tests passed" "c_make_check_runs_the_built_test"
x 'cd ~/work/hello && git add -A && git commit -qm "hello: first version" && git log --format=%s'
ag_is "$x_out" "hello: first version" "c_git_commit_and_log"
x 'cd ~/work/hello && echo "// draft" >> greet.c && git stash -q && git status --short && git stash pop -q && git status --short'
ag_is "$x_out" " M greet.c" "c_git_stash_and_pop"
x 'cd ~/work/hello && git checkout -q greet.c && git status --short && echo clean'
ag_is "$x_out" "clean" "c_git_checkout_file"

# the account's runtime directory (the systemd user manager's bus, agent
# sockets) is hidden: connecting to a socket there would start programs
# outside the sandbox
RT=/run/user/$(id -u "$AG_USER")
install -d -o "$AG_USER" -m 0700 "$RT"
"$AG_PYTHON" -c 'import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(4)
open(sys.argv[1] + ".ready", "w").close()
while True: s.accept()[0].close()' "$RT/bus" &
BUSPID=$!
ag_wait_until 30 test -e "$RT/bus.ready"
x "ls -A $RT; echo listed"
ag_is "$x_out" "listed" "runtime_directory_hidden"
x "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"$RT/bus\")'; echo rc=\$?"
ag_like "$x_out" "rc=[1-9]" "runtime_bus_unreachable"
kill "$BUSPID" 2>/dev/null; wait "$BUSPID" 2>/dev/null
rm -rf "$RT"

# fetch and pull (git's helpers run in this tier) from a local clone
x 'cd ~/work && git clone -q --bare hello origin.git && cd hello && git fetch -q ../origin.git && git pull -q ../origin.git HEAD && git log --format=%s -1'
ag_is "$x_out" "hello: first version" "c_git_clone_fetch_pull"

# ---- a Python project ------------------------------------------------------------
x "mkdir -p ~/work/calc && cd ~/work/calc && git init -q &&
printf '%s\n' 'def add(a, b):' '    return a + b' > calc.py &&
printf '%s\n' 'import unittest' 'import calc' '' 'class TestAdd(unittest.TestCase):' \
    '    def test_add(self):' '        self.assertEqual(calc.add(2, 3), 5)' '' \
    'if __name__ == \"__main__\":' '    unittest.main()' > test_calc.py &&
python3 -m unittest -v 2>&1 | tail -n 1"
ag_is "$x_out" "OK" "py_unittest_passes"
x 'cd ~/work/calc && git add calc.py test_calc.py && git commit -qm "calc: add" && git log --oneline | wc -l'
ag_is "$x_out" "1" "py_git_commit"

# ---- an npm test script ----------------------------------------------------------
if command -v npm >/dev/null 2>&1; then
	x "mkdir -p ~/work/js && cd ~/work/js &&
printf '%s\n' '{\"name\": \"js\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node test.js && echo npm-tests-ok\"}}' > package.json &&
printf '%s\n' 'const assert = require(\"assert\");' 'assert.strictEqual([1, 2].length, 2);' > test.js &&
npm test 2>&1"
	ag_like "$x_out" "npm-tests-ok" "npm_test_runs_its_script"
fi

# ---- the everyday idioms ---------------------------------------------------------
x 'cd ~/work/hello && printf "x\n" > notes.txt && cat notes.txt'
ag_is "$x_out" "x" "cd_then_redirect_writes_in_the_new_directory"
x 'set -euo pipefail; cd ~/work/hello; ls Makefile'
ag_is "$x_out" "Makefile" "set_euo_pipefail_allowed"
x 'cd ~/work/hello && timeout 60 make -s check'
ag_like "$x_out" "all tests passed" "timeout_wrapper_runs_make"
x 'cd ~/work/hello && ls *.c | xargs wc -l | tail -n 1'
ag_like "$x_out" "total" "xargs_wrapper_runs_wc"
x 'echo hi > /tmp/scratch && cat /tmp/scratch'
ag_is "$x_out" "hi" "private_tmp_is_writable"
out=$(printf 'true\necho "status=$?"\nfalse\necho "status=$?"\n' | ag_ssh 2>&1)
ag_is "$out" "$(printf 'status=0\nstatus=1')" "repl_status_is_right_under_the_sandbox"
x 'export GIT_AUTHOR_NAME="Agent Smith"; cd ~/work/calc && touch b && git add b && git commit -qm b && git log -1 --format=%an'
ag_is "$x_out" "Agent Smith" "commit_identity_from_an_export"
# a cd on its own (it may fail): the kernel holds whichever directory it is
x 'cd ~/work/hello; printf "y\n" > notes2.txt; cat notes2.txt'
ag_is "$x_out" "y" "cd_semicolon_then_redirect"
x 'cd ~/work/hello
./hello'
ag_is "$x_out" "hello, world" "cd_newline_then_built_binary"
x 'if cd ~/work/hello; then ./hello > out.txt; fi; cat ~/work/hello/out.txt'
ag_is "$x_out" "hello, world" "if_cd_then_runs_there"
x 'set -e; cd ~/work/hello; ./hello'
ag_is "$x_out" "hello, world" "set_e_cd_then_built_binary"
x 'cd ~/work/hello && ls greet.c | xargs -I{} echo file {}'
ag_is "$x_out" "file greet.c" "xargs_runs_the_echo_program"
x 'env printf "%s\n" via-env'
ag_is "$x_out" "via-env" "env_runs_the_printf_program"
# an export in one command holds for the next ones, env.set values included
out=$(printf '%s\n' 'export GIT_AUTHOR_NAME="Repl Agent"' \
    'cd ~/work/calc && touch c && git add c && git commit -qm c && git log -1 --format=%an' | ag_ssh 2>&1)
ag_is "$out" "Repl Agent" "export_holds_for_later_commands"

# renames and links across directories (Landlock's REFER right)
x 'mkdir -p ~/work/mvt/a ~/work/mvt/b && cd ~/work/mvt && echo f > a/f && mv a/f b/f && cat b/f'
ag_is "$x_out" "f" "mv_across_directories"
x "cd ~/work/mvt && python3 -c 'import os; os.rename(\"b/f\", \"a/g\"); os.link(\"a/g\", \"b/h\")' && cat a/g b/h"
ag_is "$x_out" "f
f" "python_rename_and_link_across_directories"
x 'cd ~/work/calc && mkdir -p pkg && git mv calc.py pkg/calc.py && git status --short && git mv pkg/calc.py calc.py'
ag_like "$x_out" "R  calc.py -> pkg/calc.py" "git_mv_across_directories"
# the branch moves; git's note that it could not record the rename in the
# read-only .git/config is expected (doc/sandbox.md)
x 'cd ~/work/calc && git branch -M trunk; git branch --show-current'
ag_is "$x_out" "trunk" "git_branch_rename_moves_the_branch"

# the shipped profile has `unknown: allow`: an unlisted program runs under
# the kernel sandbox (this one does not exist), audited as such
x 'frobnicate --now'
ag_is "$x_rc" 127 "unlisted_program_runs_under_the_kernel"
ag_like "$x_err" "frobnicate" "unlisted_program_missing_is_said"
ag_ok "message_is_short" test "${#x_err}" -lt 200
ag_like "$(ag_audit_query "[x.get('rule') for x in r if x.get('event') == 'command' and 'frobnicate' in x.get('command', '')]")" \
    "profiles.developer.unknown" "unlisted_program_audited_with_its_rule"

# ---- the adversarial side ------------------------------------------------------
# A Makefile whose recipes try every way around; each step prints its status.
cat > "$AG_DIR/evil.mk" <<EOF
all: hook cfg bashrc profile authkeys outside port push pushargv0 pushhelper sendpack su
hook:
	-printf '#!/bin/sh\ntouch $PWN\n' > hello/.git/hooks/post-checkout; chmod +x hello/.git/hooks/post-checkout; echo "hook=\$\$?"
cfg:
	-printf '[core]\n\tfsmonitor = touch $PWN\n' >> hello/.git/config; echo "cfg=\$\$?"
bashrc:
	-echo 'touch $PWN' >> $H/.bashrc; echo "bashrc=\$\$?"
profile:
	-echo 'touch $PWN' >> $H/.profile; echo "profile=\$\$?"
authkeys:
	-echo 'ssh-ed25519 AAAA planted' >> $H/.ssh/authorized_keys; echo "authkeys=\$\$?"
outside:
	-touch $PUB/outside-make; echo "outside=\$\$?"
port:
	-bash -c 'exec 3<>/dev/tcp/127.0.0.1/$PORT && cat <&3'; echo "port=\$\$?"
push:
	-git -C hello push -q ../remote.git HEAD:refs/heads/main; echo "push=\$\$?"
pushargv0:
	-cd hello && python3 -c 'import os; os.execv("/usr/bin/git", ["git-push", "-q", "../remote.git", "HEAD:refs/heads/main"])'; echo "pushargv0=\$\$?"
pushhelper:
	-cd hello && \$\$(git --exec-path)/git-push -q ../remote.git HEAD:refs/heads/main; echo "pushhelper=\$\$?"
sendpack:
	-cd hello && git send-pack ../remote.git HEAD:refs/heads/main >/dev/null; echo "sendpack=\$\$?"
su:
	-su -c true </dev/null; echo "su=\$\$?"
EOF
x "cd ~/work || exit 1
git init -q --bare remote.git
cat > evil.mk <<'EOF'
$(cat "$AG_DIR/evil.mk")
EOF
make -s -f evil.mk 2>/dev/null"
for t in hook cfg bashrc profile authkeys outside port push pushargv0 pushhelper sendpack; do
	ag_like "$x_out" "(^|$(printf '\n'))$t=[1-9]" "make_recipe_cannot_$t"
done
# su is denied outright: the kernel refuses to execute it (126), rather
# than su failing for want of a password
ag_like "$x_out" "(^|$(printf '\n'))su=126" "make_recipe_cannot_execute_a_denied_program"
ag_unlike "$x_out" "connected" "make_recipe_reaches_no_unlisted_port"
# (git as root on the account's repository: safe.directory, or git stops
# with "dubious ownership" and any answer reads as empty)
ag_ok "the_remote_is_a_repository_git_reads" git -c safe.directory='*' -C "$W/remote.git" rev-parse --git-dir
ag_ok "denied_push_left_the_remote_empty" sh -c "! git -c safe.directory='*' -C '$W/remote.git' rev-parse -q --verify refs/heads/main >/dev/null"
ag_like "$(ag_audit_query '[x.get("path") for x in r if x.get("event") == "exec_denied"]')" \
    "git" "exec_time_refusal_is_audited"

# a git directory is protected whatever its name: the bare repository the
# recipe made (a push to it runs its hooks) and a --separate-git-dir, from
# the next command on
x "cd ~/work && git init -q --separate-git-dir=$W/sepgit sepwt && echo made"
ag_is "$x_out" "made" "separate_git_dir_created"
for gd in remote.git sepgit; do
	x "printf '#!/bin/sh\ntouch $PWN\n' > ~/work/$gd/hooks/post-receive; echo rc=\$?"
	ag_like "$x_out$x_err" "rc=[1-9]" "hooks_of_${gd%.git}_read_only"
	x "python3 -c 'open(\"$W/$gd/config\", \"a\").write(\"[core]\\n\\thooksPath = /tmp\\n\")'; echo rc=\$?"
	ag_like "$x_out" "rc=[1-9]" "config_of_${gd%.git}_read_only"
done

# In one REPL session the scan before each command keeps what it read in
# a directory whose ctime has been still for over a second, and reads it
# again when that moves.  A tree that has been still (the first line waits
# for it, in the session), a repository made deep inside it by the third
# line, moved in beside it from /tmp by the fourth: from the next line on
# both are protected.
install -d -o "$AG_USER" -g "$AG_USER" "$W/still" "$W/still/a" "$W/still/a/b" "$W/still/a/b/c"
still_script=$(printf '%s\n' \
    "python3 -c 'import os, time; p = \"$W/still/a/b/c\"; [time.sleep(0.05) for _ in iter(lambda: time.time_ns() - os.lstat(p).st_ctime_ns < 1500000000, False)]; print(\"waited-until-still\")'" \
    'true' \
    "cd $W/still/a/b/c && git init -q deep && echo made-deep" \
    "cd /tmp && git init -q moved && mv moved $W/still/a/b/ && echo made-moved" \
    "python3 -c 'open(\"$W/still/a/b/c/deep/.git/config\", \"a\").write(\"[core]\\n\\thooksPath = /tmp\\n\")'; echo deep=\$?" \
    "python3 -c 'open(\"$W/still/a/b/moved/.git/hooks/post-checkout\", \"w\").write(\"#!/bin/sh\\ntouch $PWN\\n\")'; echo moved=\$?" \
    "awk 'BEGIN { print \"[core]\\n\\thooksPath = /tmp\" >> \"$W/still/a/b/moved/.git/config\"; exit 0 }'; echo awk=\$?" \
    "cd $W/still && printf 'all:\\n\\tprintf x >> a/b/c/deep/.git/hooks/pre-commit; echo recipe=\$\$?\\n' > still.mk && make -s -f still.mk" \
    "cd $W/still && printf '%s\\n' '#include <stdio.h>' 'int main(void) { FILE *f = fopen(\"a/b/c/deep/.git/config\", \"a\"); printf(\"built=%d\\n\", f == NULL); return 0; }' > w.c && cc -o w w.c && ./w" \
    "cd $W/still/a/b/c/deep && echo x > f && git add f && git commit -qm one && echo committed")
still_out=$(printf '%s\n' "$still_script" | ag_ssh 2>&1)
ag_like "$still_out" "waited-until-still" "scan_memory_tree_was_still" "$still_out"
ag_like "$still_out" "made-deep" "scan_memory_deep_repository_made" "$still_out"
ag_like "$still_out" "made-moved" "scan_memory_moved_repository_made" "$still_out"
ag_like "$still_out" "deep=[1-9]" "scan_memory_sees_a_repository_made_in_a_still_tree" "$still_out"
ag_like "$still_out" "moved=[1-9]" "scan_memory_sees_a_repository_moved_into_a_still_tree" "$still_out"
ag_like "$still_out" "awk=[1-9]" "scan_memory_awk_cannot_write_the_moved_config" "$still_out"
ag_like "$still_out" "recipe=[1-9]" "scan_memory_recipe_cannot_plant_a_hook" "$still_out"
ag_like "$still_out" "built=1" "scan_memory_built_binary_cannot_open_the_config" "$still_out"
ag_like "$still_out" "committed" "scan_memory_benign_commit_in_the_new_repository_runs" "$still_out"
ag_ok "scan_memory_config_unchanged" sh -c "! grep -q hooksPath '$W/still/a/b/c/deep/.git/config' '$W/still/a/b/moved/.git/config'"
ag_ok "scan_memory_no_hook_planted" sh -c "! test -s '$W/still/a/b/c/deep/.git/hooks/pre-commit' && ! test -e '$W/still/a/b/moved/.git/hooks/post-checkout'"

# the same writes from allowed programs that can write files on their own
x "awk 'BEGIN { print \"[core]\\n\\thooksPath = /tmp\" >> \"$W/hello/.git/config\"; exit 0 }'; echo awk=\$?"
ag_like "$x_out$x_err" "awk=[1-9]|denied|Read-only" "awk_cannot_write_git_config"
x "python3 -c 'open(\"$W/hello/.git/hooks/pre-commit\", \"w\").write(\"#!/bin/sh\\ntouch $PWN\\n\")'; echo py=\$?"
ag_like "$x_out" "py=[1-9]" "python3_cannot_write_a_hook"
x "python3 -c 'open(\"$H/.bashrc\", \"a\").write(\"touch $PWN\\n\")'; echo py=\$?"
ag_like "$x_out" "py=[1-9]" "python3_cannot_write_bashrc"
x "cd ~/work/hello && sed -i 's/x/y/' .git/config; echo sed=\$?"
ag_like "$x_out$x_err" "sed=[1-9]|denied" "sed_cannot_edit_git_config"
x "cd ~/work/hello && mv .git .git-moved; echo mv=\$?"
ag_like "$x_out$x_err" "mv=[1-9]|denied" "git_dir_cannot_be_moved_aside"
# renames into and out of the protected places fail like writes do
x "cd ~/work/hello && printf '#!/bin/sh\ntouch $PWN\n' > payload && chmod +x payload && python3 -c 'import os; os.rename(\"payload\", \".git/hooks/post-checkout\")'; echo py=\$?"
ag_like "$x_out" "py=[1-9]" "rename_into_hooks_fails"
x "cd ~/work/hello && python3 -c 'import os; os.link(\"payload\", \".git/hooks/post-commit\")'; echo py=\$?"
ag_like "$x_out" "py=[1-9]" "link_into_hooks_fails"
x "cd ~/work/hello && python3 -c 'import os; os.rename(\".git/config\", \"config.away\")'; echo py=\$?"
ag_like "$x_out" "py=[1-9]" "rename_out_of_git_dir_fails"
x "cd ~/work/hello && mv payload $H/.profile; echo mv=\$?"
ag_like "$x_out$x_err" "mv=[1-9]|denied" "rename_onto_a_startup_file_fails"
x "cd ~/work/hello && rm -f payload"

# a freshly built binary tries the same
x "cd ~/work && printf '%s\n' '#include <stdio.h>' '#include <unistd.h>' \
  'static int w(const char *p) { FILE *f = fopen(p, \"a\"); if (!f) return 1; fputs(\"touch $PWN\\n\", f); return fclose(f) != 0; }' \
  'int main(void) { int bad = 0; bad += !w(\"$W/hello/.git/config\"); bad += !w(\"$W/hello/.git/hooks/post-commit\");' \
  '  bad += !w(\"$H/.profile\"); bad += !w(\"$H/.ssh/authorized_keys\"); bad += !w(\"$PUB/outside-bin\");' \
  '  printf(\"succeeded=%d\\n\", bad); return 0; }' > writer.c && cc -o writer writer.c && ./writer"
ag_is "$x_out" "succeeded=0" "built_binary_cannot_write_protected_files"
# nor fake keystrokes on its terminal (TIOCSTI, TIOCLINUX): what a command
# leaves unread there is the REPL's next input.  Through a real PTY (-tt),
# where the ioctl would work, from a built binary and python3 alike.
x "cd ~/work && printf '%s\n' '#include <errno.h>' '#include <stdio.h>' '#include <sys/ioctl.h>' \
  'int main(void) { char c = 10; int r = ioctl(0, TIOCSTI, &c); printf(\"sti=%d/%d\\n\", r, r < 0 ? errno : 0); return 0; }' \
  > sti.c && cc -o sti sti.c && echo built"
ag_is "$x_out" "built" "tiocsti_probe_builds"
x -tt "cd ~/work && ./sti; python3 -c 'import fcntl, termios
try: fcntl.ioctl(0, termios.TIOCSTI, b\"x\"); print(\"py=ok\")
except OSError as e: print(\"py=%d\" % e.errno)'; test -t 0 && echo on-a-tty"
x_out=$(printf '%s' "$x_out" | tr -d '\r')
ag_like "$x_out" "on-a-tty" "tiocsti_probe_has_a_terminal"
ag_like "$x_out" "sti=-1/13" "built_binary_cannot_fake_keystrokes"
ag_like "$x_out" "py=13" "python3_cannot_fake_keystrokes"

# a file written outside paths.exec cannot be run, not even through the
# loader (the shipped profile's /tmp is executable: take it out here)
LDSO=$(ag_ldso)
sed -i 's|exec: \["~/work", "/tmp"\]|exec: ["~/work"]|' "$AG_DIR/policy.yaml"
x "bash -c 'cp ~/work/writer /tmp/w2 && /tmp/w2; echo run=\$?; $LDSO /tmp/w2; echo ld=\$?'"
ag_like "$x_out" "run=126" "written_file_outside_exec_does_not_run"
ag_like "$x_out" "ld=[1-9]" "written_file_outside_exec_does_not_run_through_the_loader"
ag_unlike "$x_out" "succeeded=" "written_file_outside_exec_never_started"

# a second name for a protected file, made in the command that created the
# repository (the only moment it can be, in the same directory), would be
# a way past the read-only mount: the next command is refused until it goes
printf '%s\n' 'all:' '	git init -q linked && cd linked/.git && ln config alias && echo linked' \
    > "$AG_DIR/link.mk"
x "make -s -C ~/work -f $AG_DIR/link.mk"
ag_is "$x_out" "linked" "hard_link_made_before_protection"
x "echo '[core]' >> ~/work/linked/.git/alias"
ag_like "$x_err" "has another name \(a hard link\)" "hard_linked_protected_file_refuses_commands"
ag_is "$(grep -c core "$W/linked/.git/config")" 1 "hard_linked_config_unchanged"
rm -f "$W/linked/.git/alias"
x 'echo works-again'
ag_is "$x_out" "works-again" "commands_run_again_once_the_link_is_gone"

# every refused exec is counted in the audit, past the 63 listed one by one
# (issue 33, 5): 100 pushes from one command
x "cd ~/work && bash -c 'i=0; while [ \$i -lt 100 ]; do git -C hello push -q ../remote.git HEAD:refs/heads/x\$i 2>/dev/null; i=\$((i + 1)); done; echo loop-done'"
ag_like "$x_out" "loop-done" "hundred_pushes_ran_their_course"
ag_like "$x_err" "37 more execs in this command were refused" "the_agent_is_told_how_many_more" "$(printf '%s' "$x_err" | tail -n 2)"
ag_is "$(ag_audit_query "sum(1 for x in r if x['event'] == 'exec_denied' and 'refs/heads/x' in (x.get('command') or ''))")" \
    "64" "sixty_three_listed_and_one_count_record"
ag_like "$(ag_audit_query "[x['reason'] for x in r if x['event'] == 'exec_denied' and x.get('rule') == 'exec:more']")" \
    "37 more execs" "the_count_record_says_how_many"

# the private /tmp is bounded (limits.tmp_size, default 512M): a session
# cannot fill the host's memory through it (issue 33, 4).  A session's
# tmpfs: the persistent one is a directory, there only when the host has
# /var/lib/agentgate/tmp (persistent_tmp.sh)
sed -i 's/^      tmp: persistent$/      tmp: session/' "$AG_DIR/policy.yaml"
x 'df -k /tmp | tail -n 1'
ag_like "$x_out" "^tmpfs +524288 " "private_tmp_is_512m_by_default" "$x_out"
sed -i 's/^      processes: 512$/      processes: 512\n      tmp_size: 4M/' "$AG_DIR/policy.yaml"
x 'head -c 8388608 /dev/zero > /tmp/big; echo rc=$?; du -k /tmp/big | cut -f1'
ag_like "$x_out" "rc=1" "a_write_past_tmp_size_fails" "$x_out"
ag_like "$x_out" "^4096$" "tmp_size_bounds_what_lands" "$x_out"
sed -i '/^      tmp_size: 4M$/d' "$AG_DIR/policy.yaml"
sed -i 's/^      tmp: session$/      tmp: persistent/' "$AG_DIR/policy.yaml"

# a line shaped like a private key cannot hide what it runs from the audit
# (issue 33): nothing of it is masked
PEM_LINE="echo '-----BEGIN RSA PRIVATE KEY-----'; touch ~/work/pem-ran; echo '-----END RSA PRIVATE KEY-----'"
x "$PEM_LINE"
ag_ok "pem_shaped_line_ran" test -e "$W/pem-ran"
ag_like "$(ag_audit_query "[x['command'] for x in r if x['event'] == 'command' and 'pem-ran' in x.get('command', '')]")" \
    "touch ~/work/pem-ran" "pem_shaped_line_shows_its_programs_in_the_audit"
x "$(printf 'cat > ~/work/k.pem <<EOF\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----\nEOF\ntouch ~/work/pem-ran2')"
ag_ok "pem_heredoc_line_ran" test -e "$W/pem-ran2"
rec=$(ag_audit_query "[x for x in r if x['event'] == 'command' and 'pem-ran2' in x.get('command', '')][-1]")
# a key in a command is recorded as typed (red team 24, M1: no shape
# tells a key from what a shell runs), with the programs that ran
ag_like "$rec" "MIIEpAIBAAKCAQEA" "pem_key_material_is_recorded" "$rec"
ag_like "$rec" "'execs': \\['/usr/bin/cat', '/usr/bin/touch'\\]|'execs': \\['/bin/cat', '/bin/touch'\\]" \
    "pem_record_lists_what_ran" "$rec"

# sftp-server runs in the same namespace: with uploads allowed it still
# cannot plant a hook, a git config or a startup file
sed -i 's/^    tier: developer$/    tier: developer\n    file_transfer: { sftp: write }/' "$AG_DIR/policy.yaml"
SFTP=(sftp -F /dev/null -i "$AG_DIR/client" -P "$AG_PORT" -o StrictHostKeyChecking=no
    -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o IdentitiesOnly=yes)
printf '#!/bin/sh\ntouch %s\n' "$PWN" > "$AG_DIR/payload"
chmod 0644 "$AG_DIR/payload"
printf 'put %s %s/upload-ok\n' "$AG_DIR/payload" "$W/hello" |
    "${SFTP[@]}" -b - "$AG_USER@127.0.0.1" >/dev/null 2>&1
ag_ok "sftp_upload_into_the_work_tree_works" test -f "$W/hello/upload-ok"
for target in "$W/hello/.git/hooks/post-checkout" "$W/hello/.git/config" "$H/.bashrc" \
    "$H/.ssh/authorized_keys"; do
	before=$(md5sum < "$target" 2>/dev/null)
	printf 'put %s %s\n' "$AG_DIR/payload" "$target" |
	    "${SFTP[@]}" -b - "$AG_USER@127.0.0.1" >/dev/null 2>&1
	ag_is "$(md5sum < "$target" 2>/dev/null)" "$before" "sftp_cannot_write_${target##*/}"
done

# nothing was planted: the files are as they were, and a later login and
# git status by the account outside the gateway run nothing
ag_ok "no_outside_files" sh -c "[ ! -e '$PUB/outside-make' ] && [ ! -e '$PUB/outside-bin' ]"
ag_is "$(cat "$H/.ssh/authorized_keys")" "" "authorized_keys_unchanged"
runuser -u "$AG_USER" -- bash -lc "cd '$W/hello' && git status --short >/dev/null; git checkout -q -- . ; true" </dev/null >/dev/null 2>&1
ag_ok "later_login_and_git_run_nothing_planted" test ! -e "$PWN"

ag_done
