#!/bin/bash
# git_state.sh - what git run outside the gateway takes from a repository's
# state rather than its config and hooks (red team 23), through the real
# sshd with the shipped developer profile.
#
# H1: a stopped rebase keeps its plan in the git directory; `git rebase
# --continue` outside (the person, or root with safe.directory) carries it
# out, and an `exec` line or a `strategy` naming a program runs there.  The
# gateway looks after every command at every git directory's rebase state
# and sets aside what holds a program, whatever bound the scan reached.
# H2: core.worktree sends git's checkout anywhere (~, /): planted unless it
# lies beneath the write roots, and a link put on its way later is set
# aside.  L2: a url is judged as git unquotes it.  The benign side: a
# rebase stopped on a conflict and continued inside the gateway, a
# submodule (git writes core.worktree for it).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_need_sandbox_lib
ag_shipped_policy developer
ag_setgid_gateway

H=/home/$AG_USER
W=$H/work
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "$W"
PUB=$AG_DIR/pub
install -d -m 1777 "$PUB"
PWN=$PUB/pwned

x() {
	ag_run x "$@"
	[ -n "$x_err" ] && printf '%s\n' "$x_err" | head -n 3 | sed 's/^/#   stderr: /'
	return 0
}

# planted_reported RE NAME: the command's plant was reported as RE (set
# aside), audited, and the next command is refused while it is there
planted_reported() {
	ag_like "$x_err" "agentgate: $1.* was put in a git repository by the command .*it is set aside" \
	    "$2_reported" "$x_err"
	ag_is "$(ag_audit_query "any(x.get('event') == 'sandbox' and '$(printf '%s' "$1" | sed 's/\\//g')' in str(x) for x in r)")" \
	    yes "$2_audited"
	x 'echo should-not-run'
	ag_like "$x_err" "agentgate: refused: .*\.planted was put in a git repository" "$2_later_commands_refused" "$x_err"
	ag_unlike "$x_out" "should-not-run" "$2_later_command_ran_nothing"
}
# unplant DIR: root removes what was set aside; commands run again
unplant() {
	find "$1" -name '*.planted' -prune -exec rm -rf {} +
	x 'echo works-again'
	ag_is "$x_out" "works-again" "commands_run_again_after_$(basename "$1")"
}
# continued REPO NAME: the person and root continue the rebase git status
# tells them about, outside the gateway: nothing runs
continued() {
	runuser -u "$AG_USER" -- git -C "$1" status </dev/null >/dev/null 2>&1
	runuser -u "$AG_USER" -- git -C "$1" -c user.name=v -c user.email=v@x rebase --continue \
	    </dev/null >/dev/null 2>&1
	git -c safe.directory='*' -c user.name=r -c user.email=r@x -C "$1" rebase --continue \
	    </dev/null >/dev/null 2>&1
	ag_ok "$2_continue_outside_ran_nothing" test ! -e "$PWN"
	rm -f "$PWN"
}
# stopped REPO: a repository whose rebase stopped on a conflict in f
stopped() {
	x "mkdir -p ~/work/$1 && cd ~/work/$1 && git init -q -b master && for i in 1 2 3; do echo \$i > f; git add f; git commit -qm c\$i; done; git checkout -q -b b HEAD~2 && echo x > f && git commit -qam b1 && echo y > g && git add g && git commit -qm b2 && git rebase master >/dev/null 2>&1; test -f .git/rebase-merge/git-rebase-todo && echo stopped"
	ag_is "$x_out" "stopped" "$1_rebase_stopped"
	ag_unlike "$x_err" "was put in a git repository" "$1_stopped_rebase_is_not_planted" "$x_err"
}

# ---- H1: the todo of a stopped rebase given an exec line (python3) -------------
stopped r1
x "cd ~/work/r1 && python3 -c \"p = '.git/rebase-merge/git-rebase-todo'; open(p, 'w').write('exec touch $PWN\\n' + open(p).read())\" && echo 3 > f && git add f && echo edited"
ag_is "$x_out" "edited" "exec_line_written"
planted_reported "$W/r1/.git/rebase-merge/git-rebase-todo \(line 1: exec\)" "exec_line"
ag_ok "exec_line_state_set_aside_whole" test -d "$W/r1/.git/rebase-merge.planted" -a ! -e "$W/r1/.git/rebase-merge"
doc=$("$AG_DIR/agentgate" doctor --config "$AG_DIR/policy.yaml" --user "$AG_USER" 2>&1)
ag_like "$doc" "FAIL  git repository planted by a command; fix: $W/r1/.git/rebase-merge.planted is a rebase, cherry-pick or am in progress" \
    "doctor_lists_the_set_aside_rebase" "$doc"
continued "$W/r1" "exec_line"
unplant "$W/r1"
# ... `x`, git's own abbreviation, with leading blanks, from a Makefile recipe
stopped r2
printf 'all:\n\tcd r2 && printf "pick 0000000 one\\n  x touch %s\\n" > .git/rebase-merge/git-rebase-todo && echo 3 > f && git add f && echo edited\n' \
    "$PWN" > "$AG_DIR/x.mk"
x "make -s -C ~/work -f $AG_DIR/x.mk"
ag_is "$x_out" "edited" "abbreviated_exec_written"
planted_reported "$W/r2/.git/rebase-merge/git-rebase-todo \(line 2: x\)" "abbreviated_exec"
continued "$W/r2" "abbreviated_exec"
unplant "$W/r2"

# ---- H1: the todo untouched, a strategy naming a program in the work tree -------
stopped r3
printf 'all:\n\tcd r3 && mkdir -p git-merge-x && printf "#!/bin/sh\\ntouch %s\\n" > pay && chmod +x pay && printf "x/../pay\\n" > .git/rebase-merge/strategy && echo 3 > f && git add f && echo edited\n' \
    "$PWN" > "$AG_DIR/strategy.mk"
x "make -s -C ~/work -f $AG_DIR/strategy.mk"
ag_is "$x_out" "edited" "strategy_written"
planted_reported "$W/r3/.git/rebase-merge/strategy \(names the merge program git-merge-x/../pay" "strategy"
continued "$W/r3" "strategy"
unplant "$W/r3"

# ... a strategy that is git's own on its first line only (git reads the
# whole file: "resolve\n/../pay" runs git-merge-resolve\n/../pay)
stopped r3b
x "cd ~/work/r3b && python3 -c \"import os; os.makedirs('git-merge-resolve\\n', exist_ok=True); open('pay', 'w').write('#!/bin/sh\\ntouch $PWN\\n'); os.chmod('pay', 0o755); open('.git/rebase-merge/strategy', 'w').write('resolve\\n/../pay\\n')\" && echo 3 > f && git add f && echo edited"
ag_is "$x_out" "edited" "strategy_with_a_newline_written"
planted_reported "$W/r3b/.git/rebase-merge/strategy \(names the merge program git-merge-resolve" "strategy_with_a_newline"
continued "$W/r3b" "strategy_with_a_newline"
unplant "$W/r3b"
# ... git's own strategy with an option that writes where it is told
stopped r3c
x "cd ~/work/r3c && printf 'resolve\n' > .git/rebase-merge/strategy && printf -- '--index-output=$PUB/idx\n' > .git/rebase-merge/strategy_opts && echo 3 > f && git add f && echo edited"
ag_is "$x_out" "edited" "strategy_option_written"
planted_reported "$W/r3c/.git/rebase-merge/strategy_opts \(strategy option --index-output" "strategy_option"
continued "$W/r3c" "strategy_option"
ag_ok "strategy_option_wrote_no_index_outside" test ! -e "$PUB/idx"
unplant "$W/r3c"

# ---- H1: the scan's bound reached in the same command: the sweep does not stop ---
stopped r4
x "python3 -c 'import os
os.makedirs(\"$W/big\")
for i in range(200001):
    os.close(os.open(\"$W/big/f%06d\" % i, os.O_CREAT | os.O_WRONLY, 0o644))
p = \"$W/r4/.git/rebase-merge/git-rebase-todo\"; open(p, \"w\").write(\"exec touch $PWN\\n\" + open(p).read())
print(\"edited\")'"
ag_is "$x_out" "edited" "bound_and_exec_written"
ag_like "$x_err" "agentgate: $W/r4/.git/rebase-merge/git-rebase-todo \(line 1: exec\).*it is set aside" \
    "bound_exec_set_aside" "$x_err"
ag_ok "bound_exec_state_gone" test ! -e "$W/r4/.git/rebase-merge"
continued "$W/r4" "bound_exec"
rm -rf "$W/big"
unplant "$W/r4"

# ---- H1: the state moved out, given an exec line there, moved back later ---------
stopped r6
x "cd ~/work/r6 && mv .git/rebase-merge ~/work/held && python3 -c \"p = '$W/held/git-rebase-todo'; open(p, 'w').write('exec touch $PWN\\n' + open(p).read())\" && echo held"
ag_is "$x_out" "held" "state_moved_out_and_edited"
x "mv ~/work/held ~/work/r6/.git/rebase-merge && echo back"
ag_is "$x_out" "back" "state_moved_back"
planted_reported "$W/r6/.git/rebase-merge/git-rebase-todo \(line 1: exec\)" "moved_back"
continued "$W/r6" "moved_back"
unplant "$W/r6"
# ... and a work tree moved to a new name, its git directory bringing state
# no look has seen in place (made in a directory git took for none)
stopped r7
x "cd ~/work/r7 && mv .git/rebase-merge ~/work/held7 && python3 -c \"p = '$W/held7/git-rebase-todo'; open(p, 'w').write('exec touch $PWN\\n' + open(p).read())\" && echo held"
ag_is "$x_out" "held" "state_for_a_moved_tree_held"
printf 'all:\n\tmkdir -p s7/.git && mv held7 s7/.git/rebase-merge && echo staged\n' > "$AG_DIR/stage.mk"
x "make -s -C ~/work -f $AG_DIR/stage.mk"
ag_is "$x_out" "staged" "state_staged_in_no_git_directory"
x "cd ~/work && python3 -c 'import os, shutil
for n in (\"HEAD\", \"index\", \"config\"): shutil.copy(\"r7/.gi\" \"t/\" + n, \"s7/.gi\" \"t/\" + n)
for n in (\"objects\", \"refs\"): shutil.copytree(\"r7/.gi\" \"t/\" + n, \"s7/.gi\" \"t/\" + n)
os.rename(\"s7\", \"t7\"); print(\"moved\")'"
ag_is "$x_out" "moved" "tree_with_state_moved"
planted_reported "$W/t7/.git/rebase-merge/git-rebase-todo \(line 1: exec\)" "moved_tree"
continued "$W/t7" "moved_tree"
unplant "$W/t7"
rm -rf "$W/t7" "$W/r7"

# ---- H1, the benign side: a rebase stopped on a conflict, continued inside ------
stopped r5
x "cd ~/work/r5 && echo 4 > f && git add f && GIT_EDITOR=true git rebase --continue >/dev/null 2>&1; git log --format=%s | head -n 3 | tr '\n' ' '"
ag_is "$x_out" "b2 b1 c3 " "benign_rebase_continued_inside"
ag_unlike "$x_err" "was put in a git repository" "benign_rebase_not_planted" "$x_err"
x 'echo still-works'
ag_is "$x_out" "still-works" "benign_rebase_refuses_nothing"
# a stopped rebase the account made outside, with an exec line: its own,
# left alone by the agent's commands
runuser -u "$AG_USER" -- sh -c "cd $W/r5 && git checkout -q -b o master~2 && echo z > f && git -c user.name=v -c user.email=v@x commit -qam o1 && git -c user.name=v -c user.email=v@x rebase -x true master" >/dev/null 2>&1
ag_ok "account_rebase_stopped" grep -q '^exec true' "$W/r5/.git/rebase-merge/git-rebase-todo"
# the look allows the file system's coarse clock a second: the account's
# state is older than that when the command starts
older() { python3 -c 'import os, sys, time; sys.exit(not all(time.time() - os.lstat(os.path.join(sys.argv[1], n)).st_ctime > 1.5 for n in os.listdir(sys.argv[1])))' "$1"; }
ag_wait_until 10 older "$W/r5/.git/rebase-merge"
x 'echo runs'
ag_is "$x_out" "runs" "account_own_rebase_state_left_alone"
ag_ok "account_own_rebase_state_kept" test -d "$W/r5/.git/rebase-merge"

# ---- H2: core.worktree naming the account's home, one command --------------------
x "mkdir -p ~/work/w1 && cd ~/work/w1 && git init -q -b master && git commit -q --allow-empty -m base && git checkout -q -b feature && echo 'touch $PWN' > .bash_aliases && git add -A && git commit -qm tools && git checkout -q master && git config core.worktree \"\$HOME\" && echo made"
ag_is "$x_out" "made" "home_worktree_made"
planted_reported "$W/w1/.git/config \(core.worktree: $H is outside the write roots" "home_worktree"
runuser -u "$AG_USER" -- git -C "$W/w1" checkout -q feature </dev/null >/dev/null 2>&1
ag_ok "home_worktree_checkout_wrote_nothing_in_home" test ! -e "$H/.bash_aliases"
unplant "$W/w1"
# ... and /, from a Makefile recipe; root checks the branch out
printf 'all:\n\tgit init -q -b master w2 && cd w2 && git commit -q --allow-empty -m base && git checkout -q -b feature && mkdir -p %s && echo x > %s/rootwrote && git add -A && git commit -qm t && git checkout -q master && git config core.worktree / && echo made\n' \
    "${PUB#/}" "${PUB#/}" > "$AG_DIR/root.mk"
x "make -s -C ~/work -f $AG_DIR/root.mk"
ag_is "$x_out" "made" "root_worktree_made"
planted_reported "$W/w2/.git/config \(core.worktree: / is outside the write roots" "root_worktree"
git -c safe.directory='*' -C "$W/w2" checkout -q feature </dev/null >/dev/null 2>&1
ag_ok "root_worktree_checkout_wrote_nothing_outside" test ! -e "$PUB/rootwrote"
unplant "$W/w2"
# ... in config.worktree (python3), and in a module's git directory
x "python3 -c 'import subprocess
subprocess.run([\"git\", \"init\", \"-q\", \"$W/w5\"], check=True)
subprocess.run([\"git\", \"-C\", \"$W/w5\", \"config\", \"extensions.worktreeConfig\", \"true\"], check=True)
open(\"$W/w5/.gi\" \"t/config.worktree\", \"w\").write(\"[core]\\n\\tworktree = \\\"$H\\\"\\n\")
print(\"made\")'"
ag_is "$x_out" "made" "config_worktree_made"
planted_reported "$W/w5/.git/config.worktree \(core.worktree: $H is outside" "config_worktree"
unplant "$W/w5"
x "git init -q ~/work/w6 && git -C ~/work/w6 commit -q --allow-empty -m i && python3 -c 'import subprocess
m = \"$W/w6/.gi\" \"t/modules/m\"
subprocess.run([\"git\", \"clone\", \"-q\", \"--bare\", \"$W/w6\", m], check=True)
open(m + \"/config\", \"a\").write(\"[core]\\n\\tworktree = ../../../../..\\n\")
print(\"made\")'"
ag_is "$x_out" "made" "module_worktree_made"
planted_reported "$W/w6/.git/modules/m/config \(core.worktree: $H is outside" "module_worktree"
unplant "$W/w6"
# ... through a link of the account's outside the write roots: in the
# persistent /tmp, named by its host path (the gateway follows it there),
# it could be pointed at ~ later (red team 33-25, H7)
x "grep ' /tmp ' /proc/self/mountinfo"
T=$(printf '%s\n' "$x_out" | awk '$5 == "/tmp" { print $4; exit }')
if [ -n "$T" ] && [ -d "$T" ]; then
	x "mkdir -p ~/work/w7t && ln -sfn $W/w7t /tmp/w7lnk && git init -q ~/work/w7 && git -C ~/work/w7 config core.worktree $T/w7lnk && echo made"
	ag_is "$x_out" "made" "linked_worktree_made"
	ag_like "$x_err" "core.worktree: .* is outside the write roots" "linked_worktree_planted" "$x_err"
	rm -f "$T/w7lnk"
	unplant "$W/w7"
fi
# a work tree beneath the write roots (git's submodule form), swapped for a
# link to ~ by a later command: the link is set aside (a note in its place)
x "mkdir -p ~/work/w3 && cd ~/work/w3 && git init -q -b master && git commit -q --allow-empty -m base && git checkout -q -b feature && echo 'touch $PWN' > .bash_aliases && git add -A && git commit -qm tools && git checkout -q master && mkdir sub && git config core.worktree ../sub && echo made"
ag_is "$x_out" "made" "inside_worktree_made"
ag_unlike "$x_err" "was put in a git repository" "inside_worktree_is_benign" "$x_err"
x "cd ~/work/w3 && rmdir sub && ln -s ~ sub && echo swapped"
ag_is "$x_out" "swapped" "worktree_swapped_for_a_link"
planted_reported "$W/w3/sub \(points where a git work tree" "worktree_link"
ag_ok "worktree_link_replaced_by_a_note" test ! -L "$W/w3/sub" -a -f "$W/w3/sub.planted"
runuser -u "$AG_USER" -- git -C "$W/w3" checkout -q feature </dev/null >/dev/null 2>&1
git -c safe.directory='*' -C "$W/w3" checkout -q feature </dev/null >/dev/null 2>&1
ag_ok "worktree_link_checkout_wrote_nothing_in_home" test ! -e "$H/.bash_aliases"
unplant "$W/w3"
# ... and a directory on its way renamed into place, holding an old link
x "mkdir -p ~/work/w4 && cd ~/work/w4 && git init -q -b master && git commit -q --allow-empty -m base && git checkout -q -b feature && echo 'touch $PWN' > .bash_aliases && git add -A && git commit -qm tools && git checkout -q master && mkdir -p d/sub spare && ln -s ~ spare/sub && git config core.worktree ../d/sub && echo made"
ag_is "$x_out" "made" "renamed_way_worktree_made"
ag_unlike "$x_err" "was put in a git repository" "renamed_way_worktree_is_benign" "$x_err"
x "cd ~/work/w4 && mv d d.old && mv spare d && echo swapped"
ag_is "$x_out" "swapped" "renamed_way_swapped"
planted_reported "$W/w4/d/sub \(points where a git work tree" "renamed_way"
runuser -u "$AG_USER" -- git -C "$W/w4" checkout -q feature </dev/null >/dev/null 2>&1
ag_ok "renamed_way_checkout_wrote_nothing_in_home" test ! -e "$H/.bash_aliases"
unplant "$W/w4"
# the benign side: a submodule added inside (git writes its core.worktree)
x "cd ~/work && git init -q lib && git -C lib commit -q --allow-empty -m l && git init -q sup && cd sup && git clone -q ../lib lib && git submodule add -q ../lib lib >/dev/null && git submodule absorbgitdirs >/dev/null 2>&1; git config -f .git/modules/lib/config core.worktree"
ag_is "$x_out" "../../../lib" "submodule_added_with_core_worktree"
ag_unlike "$x_err" "was put in a git repository" "submodule_is_benign" "$x_err"
x 'git -C ~/work/sup/lib rev-parse --show-toplevel'
ag_is "$x_out" "$W/sup/lib" "submodule_works"

# ---- L2: a url judged as git unquotes it; a helper of an unknown scheme ------------
x "git init -q ~/work/u1 && python3 -c \"open('$W/u1/.git/config', 'a').write('[remote \\\"origin\\\"]\\n\\turl = ext:\\\"\\\":sh -c touch% $PWN\\n')\" && echo made"
ag_is "$x_out" "made" "quoted_url_made"
planted_reported "$W/u1/.git/config \(remote.\*.url\)" "quoted_url"
git -c safe.directory='*' -c protocol.ext.allow=always -C "$W/u1" fetch -q origin </dev/null >/dev/null 2>&1
ag_ok "quoted_url_fetch_ran_nothing" test ! -e "$PWN"
unplant "$W/u1"
x "git init -q ~/work/u2 && git -C ~/work/u2 remote add origin foo://example/x && echo made"
ag_is "$x_out" "made" "unknown_scheme_made"
planted_reported "$W/u2/.git/config \(remote.\*.url\)" "unknown_scheme"
unplant "$W/u2"
x "git init -q ~/work/u3 && git -C ~/work/u3 remote add origin https://example.org/x.git && echo made"
ag_unlike "$x_err" "was put in a git repository" "https_url_is_benign" "$x_err"

ag_done
