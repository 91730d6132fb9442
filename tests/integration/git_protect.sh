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

# plant REPO: python3 writes a post-commit hook into REPO's .git
plant() {
	x "python3 -c 'import os
p = \"$1/.git/hooks/post-commit\"
try:
    open(p, \"w\").write(\"$HOOK\"); os.chmod(p, 0o755); print(\"planted\")
except OSError as e:
    print(\"refused-by-kernel\", e.errno)'"
}

# victim REPO: the account's own git, outside the gateway, commits there
victim() {
	runuser -u "$AG_USER" -- git -C "$1" -c user.name=v -c user.email=v@x \
	    commit -q --allow-empty -m victim </dev/null >/dev/null 2>&1
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

ag_done
