#!/bin/bash
# The identity's persistent /tmp (issue 36, item 2), through the real sshd
# with the shipped developer profile, two identities and the account's own
# unidentified key on one Unix account:
#   - what one call writes to /tmp the next call of the same identity reads
#     (`make > /tmp/log`, then `cat /tmp/log`); TMPDIR and the toolchains'
#     caches point beneath it, unless env.set says otherwise
#   - another identity's /tmp, and the account's own, are other directories;
#     a process of the account outside the gateway reaches none of them
#   - /tmp is noexec unless paths.exec names it
#   - a link planted in place of an identity's directory (or of its tmp) is
#     not followed: that session gets a tmpfs of its own, as does one whose
#     parent directory is not root:group 1770
#   - entries unused for limits.tmp_age are removed at a later session; links
#     a command left there go as links, what they name stays
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
ag_world_identities alice bob
ag_need_sandbox_lib
ag_write_pam use_key use_token allow_unidentified
ag_shipped_policy developer
ag_setgid_gateway
# where make install puts identities' /tmp, here in the world
PT=$AG_DIR/ptmp
install -d -o root -g "$G" -m 1770 "$PT"
# the identities, and their keys in the account's authorized keys
ag_identities_policy developer alice bob
# the profile's own choice for one cache wins over the built-in one
sed -i 's|^        PAGER: cat$|        PAGER: cat\n        PIP_CACHE_DIR: /tmp/pip-mine|' "$AG_DIR/policy.yaml"
"$AGENTGATE" check --config "$AG_DIR/policy.yaml" >/dev/null ||
    { echo "the test's policy does not check" >&2; exit 99; }
AG_FORCE_COMMAND="$AG_DIR/agentgate --config $AG_DIR/policy.yaml --test-tmp-base $PT"
ag_start_sshd || exit 99
ag_ssh_argv

T="$AG_USER@127.0.0.1"
U=$(id -u "$AG_USER")
H=/home/$AG_USER
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "$H/work"
printf 'all:\n\t@echo made-by-make\n' > "$H/work/Makefile"

# ---- one identity's calls share /tmp ------------------------------------------------
out=$(ag_as alice "$T" 'cd ~/work && make > /tmp/log; echo status $?' 2>&1)
ag_is "$out" "status 0" "make_writes_its_log_to_tmp" "$out"
out=$(ag_as alice "$T" 'cat /tmp/log' 2>&1)
ag_is "$out" "made-by-make" "the_next_call_reads_the_log" "$out"
ag_ok "the_identity_directory_is_the_accounts_own_0700" \
    test "$(stat -c %U:%a "$PT/$U-alice")" = "$AG_USER:700"
ag_ok "the_log_lives_in_it" test -f "$PT/$U-alice/tmp/log"
out=$(ag_as alice "$T" 'echo "$TMPDIR|$npm_config_cache|$GOPATH|$CARGO_HOME|$CCACHE_DIR|$PIP_CACHE_DIR"' 2>&1)
ag_is "$out" "/tmp|/tmp/.cache/npm|/tmp/.cache/go|/tmp/.cache/cargo|/tmp/.cache/ccache|/tmp/pip-mine" \
    "tmpdir_and_caches_point_beneath_tmp_env_set_wins" "$out"
out=$(ag_as alice "$T" 'mkdir -p /tmp/.cache/npm && echo cached > /tmp/.cache/npm/x; echo $?' 2>&1)
ag_is "$out" "0" "a_tool_writes_its_cache" "$out"
out=$(ag_as alice "$T" 'cat /tmp/.cache/npm/x' 2>&1)
ag_is "$out" "cached" "a_cache_outlives_the_call" "$out"

# ---- the others' are not the same ---------------------------------------------------
out=$(ag_as bob "$T" 'cat /tmp/log; ls -A /tmp' 2>&1)
ag_unlike "$out" "made-by-make|^log$" "bob_does_not_see_alices_tmp" "$out"
ag_as bob "$T" 'echo bobs > /tmp/bobs' >/dev/null 2>&1
out=$(ag_ssh 'cat /tmp/log /tmp/bobs; echo acct > /tmp/acct; ls -A /tmp' 2>&1)
ag_unlike "$out" "made-by-make|^bobs$" "the_accounts_own_tmp_is_a_third" "$out"
ag_ok "the_account_without_identity_has_its_own_directory" test -f "$PT/$U/tmp/acct"
out=$(ag_as alice "$T" 'ls -A /tmp' 2>&1)
ag_unlike "$out" "^acct$|^bobs$" "alice_sees_neither_bobs_nor_the_accounts" "$out"
# the account's processes outside the gateway: no way in
out=$(runuser -u "$AG_USER" -- cat "$PT/$U-alice/tmp/log" 2>&1)
ag_unlike "$out" "made-by-make" "outside_the_gateway_the_account_cannot_read_it" "$out"
out=$(runuser -u "$AG_USER" -- ls "$PT" 2>&1)
ag_unlike "$out" "alice|bob" "outside_the_gateway_the_account_cannot_list_them" "$out"
out=$(runuser -u "$AG_USER" -- sh -c "echo x > '$PT/$U-alice/tmp/planted'" 2>&1)
ag_ok "outside_the_gateway_the_account_cannot_write_there" test ! -e "$PT/$U-alice/tmp/planted"

# ---- exec only where paths.exec says ------------------------------------------------
# (the shipped developer profile names /tmp: without it here)
sed -i 's|exec: \["~/work", "/tmp"\]|exec: ["~/work"]|' "$AG_DIR/policy.yaml"
out=$(ag_as alice "$T" "cp /bin/true /tmp/t && sh -c '/tmp/t && echo ran'" 2>&1)
ag_unlike "$out" "^ran$" "tmp_is_noexec_by_default" "$out"
sed -i 's|exec: \["~/work"\]|exec: ["~/work", "/tmp"]|' "$AG_DIR/policy.yaml"
out=$(ag_as alice "$T" "sh -c '/tmp/t && echo ran'" 2>&1)
ag_is "$out" "ran" "tmp_runs_what_is_there_when_paths_exec_names_it" "$out"
sed -i 's|exec: \["~/work", "/tmp"\]|exec: ["~/work"]|' "$AG_DIR/policy.yaml"

# ---- links planted where the directories are ----------------------------------------
# (root's doing here: only root and the gateway can enter the parent)
rm -rf "${PT:?}/$U-bob"
ln -s /etc "$PT/$U-bob"
out=$(ag_as bob "$T" 'ls /tmp; echo x > /tmp/f && cat /tmp/f' 2>&1)
ag_unlike "$out" "^passwd$" "a_link_for_the_identity_directory_is_not_followed" "$out"
ag_like "$out" "^x$" "that_session_has_a_tmp_of_its_own_still" "$out"
ag_ok "the_link_is_left_as_it_was" test "$(readlink "$PT/$U-bob")" = /etc
ag_ok "nothing_was_written_through_it" test ! -e /etc/f
rm -f "$PT/$U-bob"
install -d -o "$AG_USER" -m 0700 "$PT/$U-bob"
ln -s /etc "$PT/$U-bob/tmp"
out=$(ag_as bob "$T" 'ls /tmp; echo y > /tmp/g && cat /tmp/g' 2>&1)
ag_unlike "$out" "^passwd$" "a_link_for_its_tmp_is_not_followed" "$out"
ag_like "$out" "^y$" "and_that_session_has_a_tmp_of_its_own" "$out"
ag_ok "nothing_was_written_through_the_tmp_link" test ! -e /etc/g
# a parent others may write: not used
chmod 1777 "$PT"
out=$(ag_as alice "$T" 'cat /tmp/log; echo z' 2>&1)
ag_unlike "$out" "made-by-make" "a_parent_open_to_others_is_not_used" "$out"
ag_like "$out" "^z$" "commands_still_run_with_a_tmpfs" "$out"
chmod 1770 "$PT"
out=$(ag_as alice "$T" 'cat /tmp/log' 2>&1)
ag_is "$out" "made-by-make" "put_right_the_directory_is_used_again" "$out"

# ---- cleaning by age -----------------------------------------------------------------
# (the links through sh: the typed line judges ln's target as a write)
sed -i 's|^      tmp_age: 7d |      tmp_age: 2s |' "$AG_DIR/policy.yaml"
grep -q '^      tmp_age: 2s ' "$AG_DIR/policy.yaml" || { echo "no tmp_age in the shipped profile" >&2; exit 99; }
A=$PT/$U-alice/tmp
out=$(ag_as alice "$T" 'mkdir -p /tmp/olddir/sub && echo o > /tmp/olddir/sub/f && echo o > /tmp/old &&
    sh -c "ln -s /etc/passwd /tmp/x && ln -s /etc /tmp/etclink" && echo made' 2>&1)
ag_is "$out" "made" "the_session_made_old_files_and_links" "$out"
# nothing touches them for three seconds (their ctime says so) ...
old_enough() { [ $(( $(date +%s) - $(stat -c %Z "$A/olddir/sub/f") )) -ge 3 ]; }
ag_wait_until 30 old_enough
# ... while root uses one of them
touch "$A/old" && touch "$A/recent"
out=$(ag_as alice "$T" 'ls -A /tmp' 2>&1)
ag_unlike "$out" "^olddir$|^x$|^etclink$|^log$" "old_entries_and_links_are_removed" "$out"
ag_like "$out" "^recent$" "a_recent_entry_stays" "$out"
ag_like "$out" "^old$" "an_entry_used_lately_stays" "$out"
ag_ok "what_a_link_named_stays" test -f /etc/passwd -a -d /etc
ag_ok "the_identity_tmp_itself_stays" test -d "$A"

ag_done
