#!/bin/bash
# scan_cache.sh - the sandbox's repository scan kept between connections
# (issue 20), through the real sshd with the gateway installed
# set-group-ID: one `ssh host cmd` after another, the git repositories
# beneath the write roots stay protected however they appear, the cache
# lives where only the gateway's group can reach it, and a cache file that
# is not exactly what the account's gateway wrote is not believed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_need_sandbox_lib
ag_setgid_gateway

policy() {	# policy TIER ALLOW: sandbox required, ~/work the write root
	sed -e "s|@TIER@|$1|" -e "s|@ALLOW@|$2|" <<'EOF' | ag_write_policy "$AG_DIR/policy.yaml"
version: 1
gateway:
  runner: /bin/bash
  sandbox: required
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: test
profiles:
  test:
    tier: @TIER@
    allow: [@ALLOW@]
    paths: { read: ["/"], write: ["~/work"] }
    limits: { timeout: 120 }
    unknown: deny
EOF
}
policy strict 'awk, python3, cat, "true", echo'

H=/home/$AG_USER
W=$H/work
UID_=$(id -u "$AG_USER")
SCANS=$AG_RUNDIR/scans
runuser -u "$AG_USER" -- mkdir -p "$W/a/b/c" "$W/d/e"
rm -f "$SCANS/$UID_"-*	# a deleted account's, whose uid this one reuses

cache() { ls "$SCANS/$UID_"-* 2>/dev/null | grep -v '\.new$'; }

# ---- the first connection leaves a cache, in the group's directory -------------
ag_run t0 "echo first"
ag_is "$t0_out/$t0_rc" "first/0" a_sandboxed_command_runs "$t0_err"
F=$(cache)
ag_is "$(printf '%s\n' "$F" | grep -c .)" 1 one_cache_file_for_the_account "$(ls -la "$SCANS")"
ag_is "$(stat -c '%U %g %a' "$SCANS")" "root $(getent group "$G" | cut -d: -f3) 3770" \
    cache_directory_is_roots_and_the_groups_3770
ag_is "$(stat -c '%u %a %h' "$F")" "$UID_ 600 1" cache_file_is_the_accounts_0600
ag_is "$(head -c 8 "$F")" "AGSCAN2" cache_file_has_its_magic
# the account owns the file but cannot reach it: the directory is the group's
if runuser -u "$AG_USER" -- cat "$F" >/dev/null 2>&1 ||
    runuser -u "$AG_USER" -- ls "$SCANS" >/dev/null 2>&1; then
	ag_fail agent_uid_cannot_reach_the_cache "it could"
else
	ag_pass agent_uid_cannot_reach_the_cache
fi
ag_run t1 "cat $F"
ag_unlike "$t1_out" "AGSCAN" command_cannot_read_the_cache "$t1_err"

# A listing read within a second of its directory's change is read again
# next time (the ctime clock's tick), so the cache settles once the tree
# has been still: then a connection reads nothing and leaves the file be.
# (By content: a connection searches before and after its command, and two
# rewrites can give the file back its inode number.)
settled() {
	local s1
	s1=$(md5sum < "$(cache)" 2>/dev/null)
	ag_ssh true >/dev/null 2>&1 || return 1
	[ -n "$s1" ] && [ "$s1" = "$(md5sum < "$(cache)" 2>/dev/null)" ]
}
if ag_wait_until 60 settled; then
	ag_pass unchanged_tree_is_not_read_again
else
	ag_fail unchanged_tree_is_not_read_again "the cache was rewritten at every connection"
fi

# ---- a repository made between connections, deep in a cached tree --------------
attack() {	# attack VAR CONFIG: write it through awk and python3
	ag_run "$1" "awk 'BEGIN { print \"[core]\\n\\thooksPath = /tmp\" >> \"$2\"; exit 0 }';
	    echo awk=\$?; python3 -c 'open(\"$2\", \"a\").write(\"[alias]\\n\\tx = !id\\n\")';
	    echo py=\$?"
}
runuser -u "$AG_USER" -- git init -q "$W/a/b/c/deep"
cfg=$(md5sum < "$W/a/b/c/deep/.git/config")
attack d "$W/a/b/c/deep/.git/config"
ag_is "$(md5sum < "$W/a/b/c/deep/.git/config")" "$cfg" \
    repo_made_outside_between_connections_is_protected "$d_out" "$d_err"
ag_like "$d_out" "awk=[1-9]" awk_was_refused "$d_out" "$d_err"
ag_like "$d_out" "py=[1-9]" python3_was_refused "$d_out" "$d_err"
# the benign neighbour: the work tree itself stays writable
ag_run b "echo ok > $W/a/b/c/deep/file && cat $W/a/b/c/deep/file"
ag_is "$b_out/$b_rc" "ok/0" work_tree_beside_it_stays_writable "$b_err"

# a repository moved in whole (its directory's ctime is not what moves)
runuser -u "$AG_USER" -- git init -q "$H/moved"
runuser -u "$AG_USER" -- mv "$H/moved" "$W/d/e/moved"
cfg=$(md5sum < "$W/d/e/moved/.git/config")
attack m "$W/d/e/moved/.git/config"
ag_is "$(md5sum < "$W/d/e/moved/.git/config")" "$cfg" repo_moved_in_is_protected "$m_out" "$m_err"

# ---- a cache not exactly as the gateway writes it is not believed ---------------
# forge SRC DST DIR: a copy of the cache SRC in which the git directory DIR
# is no repository; the format is scancache.c's (native order, preorder)
forge() {
	"$AG_PYTHON" - "$@" <<'PY'
import struct, sys
src, dst, target = sys.argv[1], sys.argv[2], sys.argv[3]
b = bytearray(open(src, "rb").read())
assert b[:8] == b"AGSCAN2\n"
p = 12
(nroots,) = struct.unpack_from("=I", b, p); p += 4
roots = []
for _ in range(nroots):
    (n,) = struct.unpack_from("=I", b, p); p += 4
    roots.append(b[p:p + n].decode()); p += n
REC = struct.Struct("=QQqqqqQIHBB")
found = []
def node(path):
    global p
    at = p
    f = REC.unpack_from(b, p); p += REC.size
    name = b[p:p + f[8]].decode(); p += f[8]
    full = path + "/" + name if name else path
    if full == target:
        found.append(at)
    for _ in range(f[7]):
        node(full)
for r in roots:
    node(r)
assert found, "no node for " + target
b[found[0] + REC.size - 1] = 0      # repo = 0
open(dst, "wb").write(b)
PY
}
runuser -u "$AG_USER" -- git init -q "$W/d/forged"
ag_wait_until 60 settled
F=$(cache)
good=$AG_DIR/good.scan
cp -p "$F" "$good"
fcfg=$W/d/forged/.git/config
try_forged() {	# try_forged NAME: the repository must still be protected
	local sum
	sum=$(md5sum < "$fcfg")
	attack x "$fcfg"
	ag_is "$(md5sum < "$fcfg")" "$sum" "$1" "$x_out" "$x_err"
}
restore() {	# the account's own, valid cache back in place
	rm -f "$F" "$SCANS/.link-$UID_"
	cp -p "$good" "$F"
}

# The control: forged and otherwise exactly what the gateway writes (its
# owner, 0600, one name), it is believed: the group's directory is the
# boundary, which is why the agent's uid must not reach it (above).
forge "$good" "$F" "$W/d/forged/.git"
sum=$(md5sum < "$fcfg")
attack x "$fcfg"
ag_unlike "$(md5sum < "$fcfg")" "^$sum\$" forged_cache_in_the_groups_directory_is_believed \
    "$x_out" "$x_err"
# (appending to a file moves no directory's ctime: the real cache still holds)
cp "$W/d/e/moved/.git/config" "$fcfg"

restore; forge "$good" "$F" "$W/d/forged/.git"; chown root "$F"
try_forged forged_cache_of_another_owner_is_ignored
restore; forge "$good" "$F" "$W/d/forged/.git"; chmod 0644 "$F"
try_forged forged_cache_readable_by_others_is_ignored
restore; rm -f "$F"; forge "$good" "$AG_DIR/target" "$W/d/forged/.git"
chown "$AG_USER" "$AG_DIR/target"; chmod 0600 "$AG_DIR/target"; ln -s "$AG_DIR/target" "$F"
try_forged forged_cache_behind_a_symlink_is_ignored
restore; forge "$good" "$F" "$W/d/forged/.git"; ln "$F" "$SCANS/.link-$UID_"
try_forged forged_cache_with_a_second_name_is_ignored
restore

# garbage, a truncated file, an impossible count: read afresh and replaced,
# and a repository made meanwhile is still found
rewritten() {	# rewritten NAME: the cache is the gateway's again
	local f
	f=$(cache)
	if [ -f "$f" ] && [ ! -L "$f" ] && [ "$(stat -c '%u %a' "$f")" = "$UID_ 600" ] &&
	    [ "$(head -c 8 "$f")" = "AGSCAN2" ]; then
		ag_pass "$1"
	else
		ag_fail "$1" "$(ls -la "$SCANS")"
	fi
}
for how in garbage truncated count; do
	cp -p "$good" "$F"
	case $how in
	garbage) head -c 4096 /dev/urandom > "$F" ;;
	truncated) truncate -s $(( $(stat -c %s "$good") - 70 )) "$F" ;;
	count) printf '\377\377\377\377' | dd of="$F" bs=1 seek=$((8 + 4 + 4 + 4 + ${#W} + 56)) \
	    conv=notrunc status=none ;;
	esac
	runuser -u "$AG_USER" -- git init -q "$W/a/r-$how"
	cfg=$(md5sum < "$W/a/r-$how/.git/config")
	attack x "$W/a/r-$how/.git/config"
	ag_is "$(md5sum < "$W/a/r-$how/.git/config")" "$cfg" "cache_${how}_repo_still_protected" \
	    "$x_out" "$x_err"
	rewritten "cache_${how}_is_replaced"
done

# ---- the developer tier: a repository the agent makes in one connection -------
# and a build recipe in the next (the kernel is the boundary there)
policy developer 'git, make, sh, mkdir, echo, cat, python3, "true"'
rm -f "$SCANS/$UID_"-*
ag_run v1 "mkdir -p $W/dev && cd $W/dev && git init -q app && echo made"
ag_is "$v1_out/$v1_rc" "made/0" developer_git_init_through_the_gateway "$v1_err"
ag_is "$(cache | grep -c .)" 1 developer_tier_keeps_a_cache_too "$(ls -la "$SCANS")"
dcfg=$W/dev/app/.git/config
sum=$(md5sum < "$dcfg")
printf 'all:\n\techo "[core]" >> .git/config; echo "\\thooksPath = /tmp" >> .git/config\n' \
    > "$AG_DIR/Makefile.pwn"
install -o "$AG_USER" -m 0644 "$AG_DIR/Makefile.pwn" "$W/dev/app/Makefile"
ag_run v2 "cd $W/dev/app && make; echo make=\$?; sh -c 'echo x >> .git/config'; echo sh=\$?"
ag_is "$(md5sum < "$dcfg")" "$sum" developer_recipe_cannot_write_config_next_connection \
    "$v2_out" "$v2_err"
ag_like "$v2_out$v2_err" "Read-only file system" developer_make_recipe_refused_by_the_kernel "$v2_out" "$v2_err"
ag_run v3 "cd $W/dev/app && echo 'int x;' > x.c && cat x.c"
ag_is "$v3_out/$v3_rc" "int x;/0" developer_work_tree_stays_writable "$v3_err"

# ---- no group, no cache: a gateway not installed set-group-ID keeps none --------
rm -f "$SCANS/$UID_"-*
chmod 0755 "$AG_DIR/agentgate"
chown "$AG_USER" "$AG_DIR/log" "$AG_AUDIT"
chmod 0755 "$AG_DIR/log"
chmod 0600 "$AG_AUDIT"
ag_run n "echo plain"
ag_is "$n_out/$n_rc" "plain/0" gateway_without_the_group_runs "$n_err"
ag_is "$(cache | grep -c .)" 0 gateway_without_the_group_keeps_no_cache "$(ls -la "$SCANS")"

ag_done
