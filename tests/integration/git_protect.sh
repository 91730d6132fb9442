#!/bin/bash
# git_protect.sh - the developer tier's git protection cannot be outrun
# (issue 33, 1), through the real sshd with the shipped profile.
#
# Before each command the gateway searches the write roots for git
# directories and binds their config and hooks read-only.  That search has
# bounds (depth, repositories, directory entries): past one it refuses the
# command, loudly and in the audit, rather than run with a repository it
# did not see.  Python and a Makefile recipe create repositories past each
# bound and then try to plant a hook; the account's own git, run outside
# the gateway afterwards, must run nothing.  The benign side: a repository
# deeper than the old bound (6) and one inside node_modules are protected.
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
HOOK="#!/bin/sh\ntouch $PWN\n"

x() {
	ag_run x "$@"
	[ -n "$x_err" ] && printf '%s\n' "$x_err" | head -n 3 | sed 's/^/#   stderr: /'
	return 0
}

# plant GITDIR [HOOK]: python3 writes a hook (post-commit) into GITDIR
plantg() {
	x "python3 -c 'import os
p = \"$1/hooks/${2:-post-commit}\"
try:
    open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755); print(\"planted\")
except OSError as e:
    print(\"refused-by-kernel\", e.errno)'"
}
# plant REPO: the same into REPO's .git
plant() { plantg "$1/.git"; }

# victim REPO: the account's own git, outside the gateway, commits there
victim() {
	runuser -u "$AG_USER" -- git -C "$1" -c user.name=v -c user.email=v@x \
	    commit -q --allow-empty -m victim </dev/null >/dev/null 2>&1
	v_rc=$?
	return 0
}

# rootvictim REPO: root, trusting every repository (safe.directory=*), runs
# git status (fsmonitor, a pager) and commits (hooks) there
rootvictim() {
	git -c safe.directory='*' -C "$1" status </dev/null >/dev/null 2>&1
	git -c safe.directory='*' -c user.name=r -c user.email=r@x -C "$1" \
	    commit -q --allow-empty -m root </dev/null >/dev/null 2>&1
	v_rc=$?
	return 0
}

# refused_with RE NAME: the command was refused with RE, and audited so
refused_with() {
	ag_like "$x_err" "agentgate: refused: $1" "$2" "$x_err"
	ag_unlike "$x_out" "planted" "$2_nothing_ran"
	ag_is "$(ag_audit_query "any(x.get('decision') == 'deny' and 'the git protection cannot see past it' in (x.get('reason') or '') and '$(printf '%s' "$1" | sed 's/\\//g')' in (x.get('reason') or '') for x in r)")" \
	    yes "$2_audited"
}

# ---- benign: deeper than the old bound of 6, and inside node_modules ----------
DEEP=$W/a/b/c/d/e/f/g/h/i/j/k/l/deep
x "mkdir -p $DEEP && git -C $DEEP init -q && echo made"
ag_is "$x_out" "made" "deep_repository_created"
plant "$DEEP"
ag_like "$x_out" "refused-by-kernel" "deep_repository_hook_is_read_only"
NM=$W/app/node_modules/left-pad
x "mkdir -p $NM && git -C $NM init -q && echo made"
ag_is "$x_out" "made" "node_modules_repository_created"
plant "$NM"
ag_like "$x_out" "refused-by-kernel" "node_modules_repository_hook_is_read_only"
victim "$DEEP"
victim "$NM"
ag_ok "benign_repositories_run_nothing_planted" test ! -e "$PWN"

# ---- depth: a repository 70 levels down, made by a Makefile recipe ------------
TOO=$W/t$(printf '/%s' $(seq 1 70))
printf 'all:\n\tmkdir -p %s && git -C %s init -q && echo made\n' "$TOO" "$TOO" > "$AG_DIR/deep.mk"
x "make -s -f $AG_DIR/deep.mk"
ag_is "$x_out" "made" "too_deep_repository_created"
plant "$TOO"
refused_with "more than 64 levels of directories beneath a write root, at $W/t/1" "too_deep_refused"
victim "$TOO"
ag_ok "too_deep_victim_ran_nothing" test ! -e "$PWN"
rm -rf "$W/t"
x 'echo works-again'
ag_is "$x_out" "works-again" "depth_commands_run_again_once_it_is_gone"

# ---- count: 1,025 repositories (one a real checkout), made by python3 ---------
x "python3 -c 'import os, subprocess
for i in range(1024):
    g = \"$W/many/r%04d.git\" % i
    for d in (\"objects\", \"refs\"): os.makedirs(os.path.join(g, d))
    open(os.path.join(g, \"HEAD\"), \"w\").write(\"ref: refs/heads/main\\n\")
subprocess.run([\"git\", \"init\", \"-q\", \"$W/many/real\"], check=True)
print(\"made\")'"
ag_is "$x_out" "made" "many_repositories_created"
plant "$W/many/real"
refused_with "more than 1024 git repositories beneath the write roots" "too_many_refused"
victim "$W/many/real"
ag_ok "too_many_victim_ran_nothing" test ! -e "$PWN"
rm -rf "$W/many"
x 'echo works-again'
ag_is "$x_out" "works-again" "count_commands_run_again_once_they_are_gone"

# ---- entries: 200,001 names in one directory, then a repository ----------------
x "python3 -c 'import os, subprocess
os.makedirs(\"$W/big\")
for i in range(200001):
    os.close(os.open(\"$W/big/f%06d\" % i, os.O_CREAT | os.O_WRONLY, 0o644))
subprocess.run([\"git\", \"init\", \"-q\", \"$W/zz\"], check=True)
print(\"made\")'"
ag_is "$x_out" "made" "big_directory_created"
plant "$W/zz"
refused_with "more than 200000 directory entries beneath the write roots" "too_many_entries_refused"
victim "$W/zz"
ag_ok "too_many_entries_victim_ran_nothing" test ! -e "$PWN"
rm -rf "$W/big"
plant "$W/zz"
ag_like "$x_out" "refused-by-kernel" "entries_repository_protected_once_the_tree_shrinks"

# ---- indirections git follows (issue 33, 1: links, commondir, .git files) ------
# HEAD and objects/ as links: git takes it for a repository, so does the scan
x "python3 -c 'import os, subprocess
subprocess.run([\"git\", \"init\", \"-q\", \"$W/sym\"], check=True)
g = \"$W/sym/.git\"
os.rename(g + \"/objects\", \"$W/sym-objects\"); os.symlink(\"$W/sym-objects\", g + \"/objects\")
os.unlink(g + \"/HEAD\"); os.symlink(\"refs/heads/master\", g + \"/HEAD\")
print(\"made\")'"
ag_is "$x_out" "made" "linked_repository_created"
plant "$W/sym"
ag_like "$x_out" "refused-by-kernel" "linked_head_and_objects_repository_is_protected"
victim "$W/sym"
ag_is "$v_rc" 0 "victim_commits_in_sym"
ag_ok "linked_repository_victim_ran_nothing" test ! -e "$PWN"

# commondir planted in a protected repository, to a directory of the
# agent's with objects/, refs/ and a config: that directory is protected
x "git init -q ~/work/cd && echo made"
ag_is "$x_out" "made" "commondir_repository_created"
x "cd ~/work && mkdir -p evil/objects evil/refs && cp cd/.git/config evil/config && \
    printf '../../evil\n' > cd/.git/commondir && echo planted-pointer"
ag_is "$x_out" "planted-pointer" "commondir_can_be_written"
plantg "$W/evil"
ag_like "$x_out" "refused-by-kernel" "commondir_target_hooks_are_read_only"
x "python3 -c 'open(\"$W/evil/config\", \"a\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\")'; echo cfg=\$?"
ag_like "$x_out$x_err" "cfg=[1-9]" "commondir_target_config_is_read_only"
victim "$W/cd"
ag_is "$v_rc" 0 "victim_commits_in_cd"
ag_ok "commondir_victim_ran_nothing" test ! -e "$PWN"
rootvictim "$W/cd"
ag_ok "commondir_root_ran_nothing" test ! -e "$PWN"
# ... and to one without a config (which a later command could create): one
# is made and bound, as for a repository, and commands go on
x "cd ~/work && mkdir -p evil2/objects evil2/refs && printf '%s\n' $W/evil2 > cd/.git/commondir && echo pointed"
ag_is "$x_out" "pointed" "commondir_to_configless_directory_written"
ag_unlike "$x_err" "was put in a git repository" "commondir_to_configless_directory_is_benign" "$x_err"
x "python3 -c 'open(\"$W/evil2/config\", \"a\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\")'; echo cfg=\$?"
ag_like "$x_out$x_err" "cfg=[1-9]" "commondir_to_configless_directory_config_made_read_only"
rm -f "$W/cd/.git/commondir"
x 'echo works-again'
ag_is "$x_out" "works-again" "commondir_commands_run_again_once_it_is_gone"

# a .git file (git init --separate-git-dir) into the object store of a
# protected repository, which the scan does not walk: followed
x "git init -q ~/work/host && echo made"
ag_is "$x_out" "made" "object_store_host_created"
x "mkdir -p $W/host/.git/objects/ev && git init -q --separate-git-dir=$W/host/.git/objects/ev/hidden ~/work/gf && cat ~/work/gf/.git"
ag_like "$x_out" "gitdir: $W/host/.git/objects/ev/hidden" "gitdir_file_written"
plantg "$W/host/.git/objects/ev/hidden"
ag_like "$x_out" "refused-by-kernel" "gitdir_file_target_is_protected"
victim "$W/gf"
ag_is "$v_rc" 0 "victim_commits_in_gf"
ag_ok "gitdir_file_victim_ran_nothing" test ! -e "$PWN"

# a bare repository nested in a .git elsewhere than modules/: found; a push
# to it (by the account, outside the gateway) runs no planted hook
x "git init -q --bare ~/work/host/.git/stash-area/nested.git && echo made"
ag_is "$x_out" "made" "nested_bare_repository_created"
plantg "$W/host/.git/stash-area/nested.git" post-receive
ag_like "$x_out" "refused-by-kernel" "nested_bare_repository_is_protected"
victim "$W/host"
runuser -u "$AG_USER" -- git -C "$W/host" push -q "$W/host/.git/stash-area/nested.git" \
    HEAD:refs/heads/v </dev/null >/dev/null 2>&1
ag_ok "nested_bare_victim_ran_nothing" test ! -e "$PWN"

# ---- planted in the command that creates the repository (issue 33, 1) ---------
# the scan after the command finds it: the hook is set aside where git does
# not look, the caller is told, it is audited, and every later command is
# refused (and doctor lists it) until it is removed
printf 'all:\n\tgit init -q made && printf "%s" > made/.git/hooks/post-commit && chmod +x made/.git/hooks/post-commit && echo planted-in-recipe\n' \
    "$HOOK" > "$AG_DIR/plant.mk"
x "make -s -C ~/work -f $AG_DIR/plant.mk"
ag_is "$x_out" "planted-in-recipe" "same_command_plant_ran"
ag_like "$x_err" "agentgate: $W/made/.git/hooks/post-commit was put in a git repository by the command that created it" \
    "same_command_plant_is_reported" "$x_err"
ag_ok "same_command_hook_set_aside" test -f "$W/made/.git/hooks/post-commit.planted" -a ! -e "$W/made/.git/hooks/post-commit"
ag_is "$(ag_audit_query "any(x.get('event') == 'sandbox' and 'made/.git/hooks/post-commit was put' in (x.get('reason') or x.get('detail') or str(x)) for x in r)")" \
    yes "same_command_plant_audited"
x 'echo should-not-run'
ag_like "$x_err" "agentgate: refused: $W/made/.git/hooks/post-commit.planted was put in a git repository" \
    "later_commands_refused_while_planted" "$x_err"
ag_unlike "$x_out" "should-not-run" "later_command_ran_nothing"
doc=$("$AG_DIR/agentgate" doctor --config "$AG_DIR/policy.yaml" --user "$AG_USER" 2>&1)
ag_like "$doc" "FAIL  git repository planted by a command; fix: $W/made/.git holds a hook" "doctor_lists_the_planted_repository" "$doc"
victim "$W/made"
ag_is "$v_rc" 0 "victim_commits_in_made"
ag_ok "same_command_plant_victim_ran_nothing" test ! -e "$PWN"
rootvictim "$W/made"
ag_is "$v_rc" 0 "root_commits_in_made"
ag_ok "same_command_plant_root_ran_nothing" test ! -e "$PWN"
rm -f "$W/made/.git/hooks/post-commit.planted"
x 'echo works-again'
ag_is "$x_out" "works-again" "commands_run_again_once_the_planted_hook_is_gone"
doc=$("$AG_DIR/agentgate" doctor --config "$AG_DIR/policy.yaml" --user "$AG_USER" 2>&1)
ag_unlike "$doc" "git repository planted by a command" "doctor_no_longer_lists_it"

# a config that runs a program (python3, same command): set aside as well
x "python3 -c 'import subprocess
subprocess.run([\"git\", \"init\", \"-q\", \"$W/cfg\"], check=True)
open(\"$W/cfg/.git/config\", \"a\").write(\"[Core]\\n\\tfsMonitor = touch $PWN\\n\")
print(\"planted\")'"
ag_is "$x_out" "planted" "same_command_config_plant_ran"
ag_like "$x_err" "$W/cfg/.git/config \(core.fsmonitor\) was put in a git repository" \
    "same_command_config_is_reported" "$x_err"
runuser -u "$AG_USER" -- git -C "$W/cfg" status </dev/null >/dev/null 2>&1
ag_ok "planted_config_victim_ran_nothing" test ! -e "$PWN"
rootvictim "$W/cfg"
ag_ok "planted_config_root_ran_nothing" test ! -e "$PWN"
x 'echo should-not-run'
ag_like "$x_err" "refused: $W/cfg/.git/config.planted was put" "planted_config_refuses" "$x_err"
rm -f "$W/cfg/.git/config.planted"
x "python3 -c 'open(\"$W/cfg/.git/config\", \"a\").write(\"[core]\\n\")'; echo cfg=\$?"
ag_like "$x_out$x_err" "cfg=[1-9]" "config_put_back_empty_is_read_only"

# a checkout renamed aside and copied back with a planted hook, one command
x "git init -q ~/work/co && echo made"
ag_is "$x_out" "made" "renamed_checkout_created"
printf 'all:\n\tmv co co.away && cp -r co.away co && printf "%s" > co/.git/hooks/post-commit && chmod +x co/.git/hooks/post-commit && echo swapped\n' \
    "$HOOK" > "$AG_DIR/swap.mk"
x "make -s -C ~/work -f $AG_DIR/swap.mk"
ag_is "$x_out" "swapped" "checkout_renamed_aside_and_copied_back"
ag_like "$x_err" "$W/co/.git/hooks/post-commit was put in a git repository" "copied_back_plant_is_reported" "$x_err"
victim "$W/co"
ag_is "$v_rc" 0 "victim_commits_in_co"
ag_ok "copied_back_plant_victim_ran_nothing" test ! -e "$PWN"
rm -f "$W/co/.git/hooks/post-commit.planted"

# the benign side: git's own sample hooks, a clone, a worktree and a
# submodule made in one command are not taken for planted
x "cd ~/work && git init -q --template=/usr/share/git-core/templates tpl && git clone -q tpl cl 2>/dev/null; \
   git -C co worktree add -q ../co-wt 2>/dev/null; echo benign-done"
ag_is "$x_out" "benign-done" "benign_git_work_ran"
ag_unlike "$x_err" "was put in a git repository" "benign_git_work_not_taken_for_planted" "$x_err"
x 'echo still-works'
ag_is "$x_out" "still-works" "benign_git_work_refuses_nothing"

# ---- red team 19: where the gateway's view may differ from git's, it fails closed
# (a link, a part it cannot read, a config it cannot read as git would)

# planted_reported RE NAME [AUDIT]: the command's plant was reported as RE
# (set aside), audited (AUDIT, a plain string: RE without its backslashes
# by default), and the next command is refused while it is there
planted_reported() {
	ag_like "$x_err" "agentgate: $1 was put in a git repository by the command that created it.*it is set aside" \
	    "$2_reported" "$x_err"
	ag_is "$(ag_audit_query "any(x.get('event') == 'sandbox' and '${3:-$(printf '%s' "$1" | sed 's/\\//g')}' in str(x) for x in r)")" \
	    yes "$2_audited"
	x 'echo should-not-run'
	ag_like "$x_err" "agentgate: refused: .* was put in a git repository" "$2_later_commands_refused" "$x_err"
	ag_unlike "$x_out" "should-not-run" "$2_later_command_ran_nothing"
}
# unplant REPO: root removes what was set aside; commands run again
unplant() {
	find "$1" -name '*.planted' -prune -exec rm -rf {} +
	x 'echo works-again'
	ag_is "$x_out" "works-again" "commands_run_again_after_$(basename "$1")"
}
# victims REPO NAME: the account and root (status, commit) run nothing there
victims() {
	runuser -u "$AG_USER" -- git -C "$1" status </dev/null >/dev/null 2>&1
	victim "$1"
	rootvictim "$1"
	ag_ok "$2_victims_ran_nothing" test ! -e "$PWN"
	rm -f "$PWN"
}

# H5: hooks a link at creation, to a directory holding post-commit: the
# link is set aside (hooks.planted), a real hooks/ bound in its place
x "python3 -c 'import os, subprocess
subprocess.run([\"git\", \"init\", \"-q\", \"$W/hl\"], check=True)
os.makedirs(\"$W/hk\"); p = \"$W/hk/post-commit\"; open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755)
os.rename(\"$W/hl/.git/hooks\", \"$W/hl-hooks\"); os.symlink(\"../../hk\", \"$W/hl/.git/hooks\"); print(\"made\")'"
ag_is "$x_out" "made" "hooks_link_made"
planted_reported "$W/hl/.git/hooks \(a symbolic link or not a directory\)" "hooks_link"
ag_ok "hooks_link_set_aside" test -f "$W/hl/.git/hooks.planted" -a ! -L "$W/hl/.git/hooks.planted" -a -d "$W/hl/.git/hooks" -a ! -L "$W/hl/.git/hooks"
victims "$W/hl" "hooks_link"
unplant "$W/hl"
x "python3 -c 'import os
os.rmdir(\"$W/hl/.git/hooks\"); os.symlink(\"../../hk\", \"$W/hl/.git/hooks\")' 2>&1 | tail -1; echo tried"
victims "$W/hl" "hooks_link_swap_later"
# ... and one made outside the gateway in a repository it already knew:
# refused by the scan before the command, and audited
runuser -u "$AG_USER" -- sh -c "git init -q $W/ol && mv $W/ol/.git/hooks $W/ol-hooks && ln -s ../../ol-hooks $W/ol/.git/hooks"
x 'echo should-not-run'
ag_like "$x_err" "agentgate: refused: $W/ol/.git/hooks is a symbolic link" "existing_hooks_link_refused" "$x_err"
ag_unlike "$x_out" "should-not-run" "existing_hooks_link_ran_nothing"
ag_is "$(ag_audit_query "any(x.get('decision') == 'deny' and '$W/ol/.git/hooks is a symbolic link' in (x.get('reason') or '') for x in r)")" \
    yes "existing_hooks_link_audited"
rm -rf "$W/ol"

# H5: config a dangling link at creation (Makefile); a later command fills its target
printf 'all:\n\tgit init -q dl && mv dl/.git/config dl-config-real && ln -s ../../dl-config-later dl/.git/config && echo made\n' > "$AG_DIR/dl1.mk"
x "make -s -C ~/work -f $AG_DIR/dl1.mk"
ag_is "$x_out" "made" "config_link_made"
planted_reported "$W/dl/.git/config \(a symbolic link\)" "config_link"
unplant "$W/dl"
printf 'all:\n\t{ cat dl-config-real; printf "[core]\\n\\tfsmonitor = touch %s\\n"; } > dl-config-later && echo filled\n' "$PWN" > "$AG_DIR/dl2.mk"
x "make -s -C ~/work -f $AG_DIR/dl2.mk"
ag_is "$x_out" "filled" "config_link_target_filled"
victims "$W/dl" "config_link"

# H9: refs an executable regular file (git takes it for a repository)
x "python3 -c 'import os, shutil, subprocess
subprocess.run([\"git\", \"init\", \"-q\", \"$W/rf\"], check=True)
shutil.rmtree(\"$W/rf/.git/refs\"); open(\"$W/rf/.git/refs\", \"w\").close(); os.chmod(\"$W/rf/.git/refs\", 0o755)
open(\"$W/rf/.git/config\", \"a\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\")
p = \"$W/rf/.git/hooks/pre-commit\"; open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755); print(\"made\")'"
ag_is "$x_out" "made" "refs_file_repository_made"
planted_reported "$W/rf/.git/config \(core.fsmonitor\)" "refs_file"
victims "$W/rf" "refs_file"
unplant "$W/rf"
x "python3 -c 'open(\"$W/rf/.git/config\", \"a\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\")'; echo cfg=\$?"
ag_like "$x_out$x_err" "cfg=[1-9]" "refs_file_repository_config_is_read_only"
victims "$W/rf" "refs_file_later"

# H1: a directory the gateway cannot list hides a protected repository: refused
x "mkdir -p ~/work/d && git init -q ~/work/d/proj && chmod 311 ~/work/d && echo hidden"
ag_is "$x_out" "hidden" "unlistable_directory_made"
x "python3 -c 'open(\"$W/d/proj/.git/config\", \"a\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\"); print(\"planted\")'"
ag_like "$x_err" "agentgate: refused: $W/d cannot be read by the gateway" "unlistable_directory_refused" "$x_err"
ag_unlike "$x_out" "planted" "unlistable_directory_ran_nothing"
ag_is "$(ag_audit_query "any(x.get('decision') == 'deny' and '$W/d cannot be read by the gateway' in (x.get('reason') or '') for x in r)")" \
    yes "unlistable_directory_audited"
victims "$W/d/proj" "unlistable_directory"
chmod 755 "$W/d"
x 'echo works-again'
ag_is "$x_out" "works-again" "unlistable_directory_commands_run_once_readable"

# H2: hooks/ made unlistable by the command that creates the repository:
# planted, and set aside whole
printf 'all:\n\tgit init -q hu && printf "%s" > hu/.git/hooks/pre-commit && chmod +x hu/.git/hooks/pre-commit && chmod 311 hu/.git/hooks && echo made\n' "$HOOK" > "$AG_DIR/hu.mk"
x "make -s -C ~/work -f $AG_DIR/hu.mk"
ag_is "$x_out" "made" "unlistable_hooks_made"
planted_reported "$W/hu/.git/hooks \(cannot be listed\)" "unlistable_hooks"
ag_ok "unlistable_hooks_set_aside" test -d "$W/hu/.git/hooks.planted"
victims "$W/hu" "unlistable_hooks"
unplant "$W/hu"

# H6: config.worktree written by a later command: bound (made empty) beforehand
x "git init -q ~/work/wtc && git -C ~/work/wtc config core.repositoryformatversion 1 && git -C ~/work/wtc config extensions.worktreeConfig true && echo made"
ag_is "$x_out" "made" "worktree_config_repository_made"
ag_unlike "$x_err" "was put in a git repository" "worktree_config_extension_is_benign" "$x_err"
x "python3 -c 'open(\"$W/wtc/.git/config.worktree\", \"w\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\")'; echo cfg=\$?"
ag_like "$x_out$x_err" "cfg=[1-9]" "config_worktree_is_read_only"
victims "$W/wtc" "config_worktree"
# ... a linked worktree's: bound where git worktree add made one, else
# looked into by the scan after the command that writes it
x "cd ~/work/wtc && GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x git commit -q --allow-empty -m i && git worktree add -q ../wtc-wt && echo made"
ag_is "$x_out" "made" "linked_worktree_made"
x "python3 -c 'open(\"$W/wtc/.git/worktrees/wtc-wt/config.worktree\", \"a\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\")'; echo cfg=\$?"
ag_like "$x_out$x_err" "cfg=[1-9]" "linked_worktree_config_made_by_git_is_read_only"
victims "$W/wtc-wt" "linked_worktree_config_made_by_git"
x "git init -q ~/work/lw && cd ~/work/lw && GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x git commit -q --allow-empty -m i && git worktree add -q ../lw-wt && git config core.repositoryformatversion 1 && git config extensions.worktreeConfig true && echo made"
ag_is "$x_out" "made" "linked_worktree_without_config_made"
ag_ok "linked_worktree_has_no_config_worktree" test ! -e "$W/lw/.git/worktrees/lw-wt/config.worktree"
x "python3 -c 'open(\"$W/lw/.git/worktrees/lw-wt/config.worktree\", \"w\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\"); print(\"planted\")'"
planted_reported "$W/lw/.git/worktrees/lw-wt/config.worktree \(core.fsmonitor\)" "linked_worktree_config"
victims "$W/lw-wt" "linked_worktree_config"
unplant "$W/lw"

# H4: configs the gateway's reader does not follow as git does, and keys
# off git's own list: planted
# cfgplant NAME PYTHON-BYTES: git init, then the bytes appended to its config
cfgplant() {
	x "python3 -c 'import subprocess
subprocess.run([\"git\", \"init\", \"-q\", \"$W/$1\"], check=True)
p = \"$W/$1/.git/config\"; c = open(p, \"rb\").read()
open(p, \"wb\").write($2); print(\"made\")'"
	ag_is "$x_out" "made" "config_$1_made"
}
cfgplant bom "b\"\\xef\\xbb\\xbf[core]\\n\\tfsmonitor = touch $PWN\\n\" + c"
planted_reported "$W/bom/.git/config \(begins with a byte-order mark\)" "config_bom"
victims "$W/bom" "config_bom"
unplant "$W/bom"
cfgplant nul "c + b\"# x\\0y\\n[core]\\n\\tfsmonitor = touch $PWN\\n\""
planted_reported "$W/nul/.git/config \(holds a NUL byte\)" "config_nul"
victims "$W/nul" "config_nul"
unplant "$W/nul"
cfgplant cont "c + b\"[core]\\n\\tzz = a\\\\\\n[user]\\n\\tfsmonitor = touch $PWN\\n\""
planted_reported "$W/cont/.git/config \(continues a line with .\)" "config_continued" \
    "$W/cont/.git/config (continues a line with"
victims "$W/cont" "config_continued"
unplant "$W/cont"
cfgplant gpg "c + b\"[commit]\\n\\tgpgSign = true\\n[gpg]\\n\\tformat = ssh\\n[gpg \\\"ssh\\\"]\\n\\tdefaultKeyCommand = touch $PWN\\n\""
planted_reported "$W/gpg/.git/config \(commit.gpgsign\)" "config_gpg"
victims "$W/gpg" "config_gpg"
unplant "$W/gpg"
# the benign side: a clone's config (remote, branch, sparse checkout) is on the list
x "cd ~/work && git clone -q wtc wtc-clone 2>&1 && git -C wtc-clone config user.name someone && git -C wtc-clone sparse-checkout set --cone src && echo cloned"
ag_like "$x_out" "cloned" "clone_made"
ag_unlike "$x_err" "was put in a git repository" "clone_config_is_benign" "$x_err"

# H3: the client goes away (TERM, KILL) while the command that planted
# still runs, so the check after it has not run: the next connection looks
# into what was made since that command started (recorded before the
# runner started), sets it aside and refuses
for v in TERM KILL; do
	ag_ssh "python3 -c 'import os, subprocess, time
subprocess.run([\"git\", \"init\", \"-q\", \"$W/hup$v\"], check=True)
p = \"$W/hup$v/.git/hooks/post-commit\"; open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755)
print(\"planted\", flush=True); time.sleep(600)'" > "$AG_DIR/hup$v.out" 2> "$AG_DIR/hup$v.err" &
	pid=$!
	ag_wait_until 30 grep -q planted "$AG_DIR/hup$v.out"
	kill -$v $pid
	wait $pid 2>/dev/null
	x 'echo should-not-run'
	ag_like "$x_err" "agentgate: refused: $W/hup$v/.git/hooks/post-commit.planted was put in a git repository" \
	    "hangup_${v}_next_connection_refused" "$x_err"
	ag_unlike "$x_out" "should-not-run" "hangup_${v}_next_connection_ran_nothing"
	victims "$W/hup$v" "hangup_$v"
	unplant "$W/hup$v"
done

# H8: a .git file pointing through /proc (git resolves /proc/self as
# itself, the gateway as itself) into a repository in an object store:
# the repository is found where it is, and the pointer, which the gateway
# cannot follow as git would, is set aside by the check after the command
x "python3 -c 'import os, subprocess
subprocess.run([\"git\", \"init\", \"-q\", \"--bare\", \"$W/host/.git/objects/ev/hid2\"], check=True)
os.makedirs(\"$W/pcw\")
open(\"$W/pcw/.git\", \"w\").write(\"gitdir: /proc/self/cwd/../host/.git/objects/ev/hid2\\n\")
print(\"pointed\")'"
ag_is "$x_out" "pointed" "proc_pointer_written"
planted_reported "$W/pcw/.git \(points through /proc .*\)" "proc_pointer" "$W/pcw/.git (points through /proc"
ag_ok "proc_pointer_set_aside" test -f "$W/pcw/.git.planted" -a ! -e "$W/pcw/.git"
rm -f "$W/pcw/.git.planted"
x "python3 -c 'import os
p = \"$W/host/.git/objects/ev/hid2/hooks/pre-commit\"; open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755)
print(\"planted\")'"
ag_like "$x_out$x_err" "Read-only file system" "proc_pointer_target_is_protected" "$x_out" "$x_err"
rm -rf "$W/pcw"
x 'echo works-again'
ag_is "$x_out" "works-again" "proc_pointer_commands_run_again_once_it_is_gone"

# H7: a commondir naming the persistent /tmp by its host path
x "grep ' /tmp ' /proc/self/mountinfo"
T=$(printf '%s\n' "$x_out" | awk '$5 == "/tmp" { print $4; exit }')
if [ -n "$T" ] && [ -d "$T" ]; then
	x "git init -q ~/work/pc && echo made"
	ag_is "$x_out" "made" "persistent_tmp_pointer_repository_made"
	x "python3 -c 'import os, shutil
for d in (\"objects\", \"refs/heads\", \"hooks\"): os.makedirs(\"/tmp/ev/\" + d, exist_ok=True)
shutil.copy(\"$W/pc/.git/config\", \"/tmp/ev/config\")
open(\"/tmp/ev/config\", \"a\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\")
open(\"$W/pc/.git/commondir\", \"w\").write(\"$T/ev\\n\"); print(\"pointed\")'"
	ag_is "$x_out" "pointed" "persistent_tmp_pointer_written"
	planted_reported "$W/pc/.git/commondir \(points through /proc .* or into a persistent /tmp .*\)" \
	    "persistent_tmp_pointer" "$W/pc/.git/commondir (points through /proc"
	ag_ok "persistent_tmp_pointer_set_aside" test -f "$W/pc/.git/commondir.planted" -a ! -e "$W/pc/.git/commondir"
	victims "$W/pc" "persistent_tmp_pointer"
	# one the account wrote outside the gateway: refused (or, while a
	# command of the account may still run - the hung-up ones above - set
	# aside as one it could have written)
	runuser -u "$AG_USER" -- sh -c "printf '%s\n' '$T/ev' > $W/pc/.git/commondir"
	rm -f "$W/pc/.git/commondir.planted"
	x 'echo should-not-run'
	ag_like "$x_err" "agentgate: refused: $W/pc/.git/commondir( points through /proc .* or into a persistent /tmp|\.planted was put)" \
	    "persistent_tmp_pointer_refused" "$x_err"
	ag_unlike "$x_out" "should-not-run" "persistent_tmp_pointer_ran_nothing"
	rm -f "$W/pc/.git/commondir" "$W/pc/.git/commondir.planted"
	rm -rf "$T/ev"
	x 'echo works-again'
	ag_is "$x_out" "works-again" "persistent_tmp_pointer_commands_run_again_once_it_is_gone"
	# red team 33-25, H2: the same commondir behind a first line that
	# points nowhere special: git reads the whole file ("nl\n/../..." is a
	# directory named "nl<newline>" and on), and so does the check
	x "git init -q ~/work/pc2 && python3 -c 'import os, shutil
for d in (\"objects\", \"refs/heads\", \"hooks\"): os.makedirs(\"/tmp/ev/\" + d, exist_ok=True)
shutil.copy(\"$W/pc2/.git/config\", \"/tmp/ev/config\")
open(\"/tmp/ev/config\", \"a\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\")
os.makedirs(\"$W/pc2/.git/nl\\n\")
open(\"$W/pc2/.git/commondir\", \"w\").write(\"nl\\n/../\" + os.path.relpath(\"$T/ev\", \"$W/pc2/.git\") + \"\\n\"); print(\"pointed\")'"
	ag_is "$x_out" "pointed" "newline_pointer_written"
	ag_like "$x_err" "commondir.*(points through /proc .* or into a persistent /tmp|was put in a git repository)" \
	    "newline_pointer_caught" "$x_err"
	ag_ok "newline_pointer_set_aside" test ! -e "$W/pc2/.git/commondir"
	victims "$W/pc2" "newline_pointer"
	rm -rf "$W/pc2" "$T/ev"
	x 'echo works-again'
	ag_is "$x_out" "works-again" "newline_pointer_commands_run_again_once_it_is_gone"
	# red team 22, H1: a work tree that is a link into the persistent
	# /tmp's host path, its .git (hooks and all) made there in an
	# earlier command, where no scan looks: the link is a pointer too
	x "mkdir -p /tmp/wt && git init -q /tmp/wt && python3 -c 'import os
p = \"/tmp/wt/.git/hooks/post-commit\"; open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755)
print(\"made\")'"
	ag_is "$x_out" "made" "work_tree_link_target_made_in_tmp"
	x "python3 -c 'import os; os.symlink(\"$T/wt\", \"$W/wtl\"); print(\"linked\")'"
	ag_is "$x_out" "linked" "work_tree_link_into_persistent_tmp_written"
	ag_like "$x_err" "agentgate: $W/wtl \(points through /proc .* or into a persistent /tmp .*\).*set aside" \
	    "work_tree_link_into_persistent_tmp_set_aside_and_said" "$x_err"
	# red team 23, L3: not renamed (a link still, which a review would
	# follow into the repository there) but replaced by a note naming it
	ag_ok "work_tree_link_is_no_longer_there" test ! -L "$W/wtl" -a ! -L "$W/wtl.planted" -a -f "$W/wtl.planted"
	ag_like "$(cat "$W/wtl.planted")" "a symbolic link to: $T/wt" "work_tree_link_note_says_where_it_led"
	victims "$W/wtl" "work_tree_link_into_persistent_tmp"
	rm -f "$PWN" "$W/wtl.planted"
	rm -rf "$T/wt"
	x 'echo works-again'
	ag_is "$x_out" "works-again" "work_tree_link_commands_run_again_once_it_is_gone"
	# benign: a link to the session's /tmp by its own name is the host's
	# /tmp outside the session, and is left alone
	x "ln -s /tmp/notes ~/work/notes-link && echo kept"
	ag_is "$x_out" "kept" "a_link_to_slash_tmp_is_left_alone"
	ag_ok "  (still there)" test -L "$W/notes-link"
	rm -f "$W/notes-link"
else
	ag_pass "persistent_tmp_pointer_skipped_no_persistent_tmp"
fi

# ---- issue 33, 1: what remained after red team 19 ------------------------------
# pushvictim REPO TARGET NAME: the account pushes from REPO into TARGET
# (a bare repository: its post-receive would run), outside the gateway
pushvictim() {
	runuser -u "$AG_USER" -- git -C "$1" push -q "$2" HEAD:refs/heads/v$RANDOM </dev/null >/dev/null 2>&1
	git -c safe.directory='*' -C "$1" push -q "$2" HEAD:refs/heads/r$RANDOM </dev/null >/dev/null 2>&1
	ag_ok "$3_push_victims_ran_nothing" test ! -e "$PWN"
	rm -f "$PWN"
}

# a git directory inside an object store (objects/, lfs/), with no pointer
# to it: found by the scan like any other
x "git init -q ~/work/os && cd ~/work/os && GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x git commit -q --allow-empty -m i && echo made"
ag_is "$x_out" "made" "object_store_owner_made"
x "git init -q --bare ~/work/os/.git/objects/ne/np.git && echo made"
ag_is "$x_out" "made" "repository_in_object_store_made"
plantg "$W/os/.git/objects/ne/np.git" post-receive
ag_like "$x_out" "refused-by-kernel" "repository_in_object_store_is_protected"
pushvictim "$W/os" "$W/os/.git/objects/ne/np.git" "object_store"
x "python3 -c 'import os, subprocess
g = \"$W/os/.git/lfs/objects/lf.git\"
subprocess.run([\"git\", \"init\", \"-q\", \"--bare\", g], check=True)
p = g + \"/hooks/post-receive\"; open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755); print(\"made\")'"
ag_is "$x_out" "made" "repository_in_lfs_made_and_planted"
planted_reported "$W/os/.git/lfs/objects/lf.git/hooks/post-receive" "repository_in_lfs"
pushvictim "$W/os" "$W/os/.git/lfs/objects/lf.git" "lfs"
unplant "$W/os"
# the benign side: a repository with loose objects and packs works as before
x "cd ~/work/os && for i in 1 2 3; do echo \$i > f\$i; git add f\$i; GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x git commit -q -m c\$i; done && git gc -q && git log --oneline | wc -l"
ag_is "$x_out" "4" "object_store_repository_commits_and_packs"

# a pointer and what it points to made in one command: what it reaches is
# looked into, and what it cannot protect is set aside with the pointer
# (commondir to a directory without a config, holding a hook)
x "git init -q ~/work/cp && echo made"
ag_is "$x_out" "made" "configless_commondir_owner_made"
x "python3 -c 'import os
for d in (\"objects\", \"refs\", \"hooks\"): os.makedirs(\"$W/ev3/\" + d)
p = \"$W/ev3/hooks/post-commit\"; open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755)
open(\"$W/cp/.git/commondir\", \"w\").write(\"$W/ev3\\n\"); print(\"pointed\")'"
ag_is "$x_out" "pointed" "configless_commondir_and_hook_written"
planted_reported "$W/ev3/hooks/post-commit" "configless_commondir_target"
victims "$W/cp" "configless_commondir_target"
unplant "$W/ev3"
x "python3 -c 'open(\"$W/ev3/config\", \"a\").write(\"[core]\\n\\tfsmonitor = touch $PWN\\n\")'; echo cfg=\$?"
ag_like "$x_out$x_err" "cfg=[1-9]" "configless_commondir_target_config_made_read_only"
victims "$W/cp" "configless_commondir_target_later"
# ... written by a command whose connection went away, to a directory an
# earlier command filled: the next connection looks into what it reaches
x "python3 -c 'import os
for d in (\"objects\", \"refs\", \"hooks\"): os.makedirs(\"$W/ev4/\" + d)
p = \"$W/ev4/hooks/post-commit\"; open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755); print(\"filled\")'"
ag_is "$x_out" "filled" "old_commondir_target_filled"
x "git init -q ~/work/cq && echo made"
ag_is "$x_out" "made" "hangup_commondir_owner_made"
ag_ssh "python3 -c 'import time
open(\"$W/cq/.git/commondir\", \"w\").write(\"$W/ev4\\n\"); print(\"pointed\", flush=True); time.sleep(600)'" \
    > "$AG_DIR/hupcd.out" 2> "$AG_DIR/hupcd.err" &
pid=$!
ag_wait_until 30 grep -q pointed "$AG_DIR/hupcd.out"
kill -KILL $pid
wait $pid 2>/dev/null
x 'echo should-not-run'
ag_like "$x_err" "agentgate: refused: $W/ev4/hooks/post-commit.planted was put in a git repository" \
    "hangup_commondir_next_connection_refused" "$x_err"
ag_unlike "$x_out" "should-not-run" "hangup_commondir_next_connection_ran_nothing"
victims "$W/cq" "hangup_commondir"
unplant "$W/ev4"

# a pointer the gateway cannot follow as git would (through /proc, into the
# persistent /tmp): set aside in the command that wrote it, not left live
x "git init -q ~/work/pp && echo made"
ag_is "$x_out" "made" "proc_commondir_owner_made"
x "python3 -c 'import os, subprocess
subprocess.run([\"git\", \"init\", \"-q\", \"--bare\", \"$W/pq.git\"], check=True)
open(\"$W/pp/.git/commondir\", \"w\").write(\"/proc/self/cwd/../pq.git\\n\")
os.makedirs(\"$W/pw\"); open(\"$W/pw/.git\", \"w\").write(\"gitdir: /proc/self/cwd/../pq.git\\n\")
print(\"pointed\")'"
ag_is "$x_out" "pointed" "proc_pointers_written"
ag_like "$x_err" "agentgate: $W/p[pw]/.git(/commondir)? \(points through /proc" "proc_pointers_reported" "$x_err"
ag_ok "proc_commondir_set_aside" test -f "$W/pp/.git/commondir.planted" -a ! -e "$W/pp/.git/commondir"
ag_ok "proc_gitdir_file_set_aside" test -f "$W/pw/.git.planted" -a ! -e "$W/pw/.git"
x 'echo should-not-run'
ag_like "$x_err" "agentgate: refused: $W/p[pw]/.git[./].*planted was put" "proc_pointers_refuse_later_commands" "$x_err"
ag_unlike "$x_out" "should-not-run" "proc_pointers_later_command_ran_nothing"
doc=$("$AG_DIR/agentgate" doctor --config "$AG_DIR/policy.yaml" --user "$AG_USER" 2>&1)
ag_like "$doc" "FAIL  git repository planted by a command; fix: $W/pw/.git.planted" "doctor_lists_the_set_aside_pointer" "$doc"
rm -f "$W/pp/.git/commondir.planted" "$W/pw/.git.planted"
x 'echo works-again'
ag_is "$x_out" "works-again" "proc_pointers_commands_run_again_once_removed"

# red team 21, H6: the set-aside cannot be made to fail.  A decoy at
# NAME.planted (a non-empty directory: a plain rename onto it fails) and
# a directory the account made read-only (chmod 555) leave nothing live:
# the plant goes to a fresh NAME.RANDOM.planted, the directory is made
# writable for the rename and given its mode back
if [ -n "$T" ] && [ -d "$T" ]; then
	x "mkdir -p /tmp/ev6/hooks /tmp/ev6/objects /tmp/ev6/refs && printf 'ref: refs/heads/main\n' > /tmp/ev6/HEAD && printf '[core]\n\trepositoryformatversion = 0\n' > /tmp/ev6/config && printf '$HOOK' > /tmp/ev6/hooks/post-commit && chmod +x /tmp/ev6/hooks/post-commit && mkdir -p ~/work/s6/.git.planted/x && echo target"
	ag_is "$x_out" "target" "decoy_aside_target_made"
	x "printf 'gitdir: $T/ev6\n' > ~/work/s6/.git && echo ptr"
	ag_is "$x_out" "ptr" "decoy_aside_pointer_written"
	planted_reported "$W/s6/.git \(points through /proc .* or into a persistent /tmp .*\)" \
	    "decoy_aside_pointer" "$W/s6/.git (points through /proc"
	ag_ok "decoy_aside_pointer_moved_to_a_fresh_name" test ! -e "$W/s6/.git" -a -d "$W/s6/.git.planted/x" \
	    -a -n "$(find "$W/s6" -maxdepth 1 -name '.git.*.planted' -type f)"
	victims "$W/s6" "decoy_aside_pointer"
	unplant "$W/s6"
	# the pointer and chmod 555 in one command
	x "mkdir -p ~/work/s7 && printf 'gitdir: $T/ev6\n' > ~/work/s7/.git && chmod 555 ~/work/s7 && echo ptr"
	ag_is "$x_out" "ptr" "readonly_dir_pointer_written"
	planted_reported "$W/s7/.git \(points through /proc .* or into a persistent /tmp .*\)" \
	    "readonly_dir_pointer" "$W/s7/.git (points through /proc"
	ag_ok "readonly_dir_pointer_set_aside" test ! -e "$W/s7/.git" -a -f "$W/s7/.git.planted"
	ag_is "$(stat -c %a "$W/s7")" "555" "readonly_dir_mode_given_back"
	victims "$W/s7" "readonly_dir_pointer"
	unplant "$W/s7"
	rm -rf "$W/s6" "$W/s7"
	x "rm -rf /tmp/ev6; echo gone"
else
	ag_pass "decoy_aside_skipped_no_persistent_tmp"
fi
# a new repository's hook with a decoy at hooks/post-commit.planted, one
# command (python3): the hook is what is named and set aside, not the decoy
x "cd ~/work && python3 - <<'PY'
import os, subprocess
subprocess.run(['git','init','-q','h6'])
G='h6/.gi'+'t'
os.makedirs(G+'/hooks/post-commit.planted/x')
open(G+'/hooks/post-commit','w').write('$HOOK'); os.chmod(G+'/hooks/post-commit',0o755)
print('planted')
PY"
ag_is "$x_out" "planted" "decoy_hook_planted"
ag_unlike "$x_err" "post-commit.planted was put" "decoy_hook_decoy_not_named" "$x_err"
planted_reported "$W/h6/.git/hooks/post-commit" "decoy_hook"
ag_ok "decoy_hook_set_aside" test ! -e "$W/h6/.git/hooks/post-commit" \
    -a -n "$(find "$W/h6/.git/hooks" -maxdepth 1 -name 'post-commit.*.planted' -type f)"
victims "$W/h6" "decoy_hook"
unplant "$W/h6"
# ... and the same in a read-only hooks directory, from a recipe
printf 'all:\n\tgit init -q h7 && printf "%s" > h7/.git/hooks/post-commit && chmod +x h7/.git/hooks/post-commit && chmod 555 h7/.git/hooks && echo planted\n' \
    "$HOOK" > "$AG_DIR/h7.mk"
x "make -s -C ~/work -f $AG_DIR/h7.mk"
ag_is "$x_out" "planted" "readonly_hooks_planted"
planted_reported "$W/h7/.git/hooks/post-commit" "readonly_hooks"
ag_ok "readonly_hooks_set_aside" test ! -e "$W/h7/.git/hooks/post-commit" -a -f "$W/h7/.git/hooks/post-commit.planted"
ag_is "$(stat -c %a "$W/h7/.git/hooks")" "555" "readonly_hooks_mode_given_back"
victims "$W/h7" "readonly_hooks"
unplant "$W/h7"
rm -rf "$W/h6" "$W/h7"
# benign twin: a read-only directory holding a plain new repository is
# left as it is, and nothing is refused
x "git init -q ~/work/ro6 && chmod 555 ~/work/ro6 && echo made"
ag_is "$x_out" "made" "readonly_benign_made"
ag_unlike "$x_err" "was put in a git repository" "readonly_benign_not_taken_for_planted" "$x_err"
ag_is "$(stat -c %a "$W/ro6")" "555" "readonly_benign_mode_kept"
x 'echo still-works'
ag_is "$x_out" "still-works" "readonly_benign_refuses_nothing"
chmod 755 "$W/ro6"; rm -rf "$W/ro6"

# a part swapped for a link between the gateway's check and its bind, by a
# command of another connection (B, which made the repository, so its own
# namespace binds nothing there): what is bound is the inode checked, or
# the command (A) is refused; never the link's target, which would leave
# the part the agent's to fill once B's check after it has set the link aside
rm -f "$AG_DIR/raceB.out"
ag_ssh "cd ~/work && git init -q race && mkdir -p racehooks && python3 -c 'import ctypes, os, struct, sys
g = \"$W/race/.git\"
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init()
if fd < 0 or libc.inotify_add_watch(fd, (g + \"/hooks\").encode(), 0x10) < 0: sys.exit(1)
print(\"ready\", flush=True)
n = 0
while n < 2:
    b = os.read(fd, 4096)
    while b:
        wd, mask, cookie, ln = struct.unpack(\"iIII\", b[:16]); b = b[16 + ln:]
        n += ln == 0
os.rename(g + \"/hooks\", g + \"/hooks.real\"); os.symlink(\"../../racehooks\", g + \"/hooks\")
print(\"swapped\", flush=True)'" > "$AG_DIR/raceB.out" 2> "$AG_DIR/raceB.err" &
raceB=$!
ag_wait_until 60 grep -q ready "$AG_DIR/raceB.out"
x "python3 -c 'import os, time
g = \"$W/race/.git\"
for i in range(2400):
    if os.path.lexists(g + \"/hooks.planted\") and os.path.isdir(g + \"/hooks\") and not os.path.islink(g + \"/hooks\"): break
    time.sleep(0.05)
p = g + \"/hooks/post-commit\"; open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755); print(\"planted\")'"
wait $raceB
ag_like "$(cat "$AG_DIR/raceB.out")" "swapped" "race_swapped_between_check_and_bind" "$(cat "$AG_DIR/raceB.err")"
# whichever came first: refused before it ran (the swap came before the
# bind), the write refused (the bind, found detached by the rename in B's
# namespace before the command, made again), or what it wrote set aside by
# the check after it (found detached after the command)
if printf '%s\n' "$x_out" | grep -qx planted; then
	ag_like "$x_err" "agentgate: $W/race/.git/hooks[./].* was put in a git repository.*it is set aside" \
	    "race_plant_set_aside" "$x_err"
else
	ag_like "$x_err" "agentgate: refused: a part of a git repository .* changed .* between the gateway's check and its read-only mount|Read-only file system: '$W/race/.git/hooks/post-commit'" \
	    "race_plant_refused" "$x_err"
fi
ag_ok "race_no_hook_left_live" test ! -e "$W/race/.git/hooks/post-commit"
victims "$W/race" "race"
rm -rf "$W/race" "$W/racehooks"
x 'echo works-again'
ag_is "$x_out" "works-again" "race_commands_run_again_once_it_is_gone"

ag_done
