#!/bin/bash
# git_protect_identities.sh - what one identity's command planted in a git
# repository (issue 33, 1; red team 19, M2) refuses that identity's
# commands, not those of the account's other identities, through the real
# sshd with the shipped developer profile and two identities sharing ~/work:
#   - alice creates a repository with a hook in one command: it is set
#     aside, she is told, and her commands are refused until it is removed;
#     bob's commands run (nothing runs what is set aside) and git run
#     outside the gateway runs nothing
#   - doctor names the identity; removing the *.planted name is the clear
#   - a scan limit is the tree's, not an identity's: it refuses every
#     identity whose write roots hold it, naming what to remove
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
ag_world_identities alice bob
ag_need_sandbox_lib
ag_write_pam use_key use_token
ag_shipped_policy developer
ag_setgid_gateway
ag_identities_policy developer alice bob
W=/home/$AG_USER/work
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "$W"
"$AGENTGATE" check --config "$AG_DIR/policy.yaml" >/dev/null ||
    { echo "the test's policy does not check" >&2; exit 99; }
ag_start_sshd || exit 99

T="$AG_USER@127.0.0.1"
U=$(id -u "$AG_USER")
PUB=$AG_DIR/pub
install -d -m 1777 "$PUB"
PWN=$PUB/pwned

# as NAME CMD: ssh as that identity; out, err
as() {
	local e
	e=$(mktemp "$AG_DIR/err.XXXXXX")
	out=$(ag_as "$1" "$T" "$2" 2>"$e")
	err=$(cat "$e")
	rm -f "$e"
}

# ---- alice plants in the command that creates the repository ------------------
as alice "python3 -c 'import os, subprocess
subprocess.run([\"git\", \"init\", \"-q\", \"$W/ap\"], check=True)
p = \"$W/ap/.git/hooks/post-commit\"; open(p, \"w\").write(\"#!/bin/sh\\ntouch $PWN\\n\"); os.chmod(p, 0o755)
print(\"planted\")'"
ag_is "$out" "planted" "alice_plant_ran"
ag_like "$err" "agentgate: $W/ap/.git/hooks/post-commit was put in a git repository.*it is set aside" \
    "alice_is_told" "$err"
ag_ok "kept_for_alice_alone" test -f "$AG_RUNDIR/scans/$U-alice.planted" -a ! -e "$AG_RUNDIR/scans/$U.planted" \
    -a ! -e "$AG_RUNDIR/scans/$U-bob.planted"
as alice 'echo should-not-run'
ag_like "$err" "agentgate: refused: $W/ap/.git/hooks/post-commit.planted was put in a git repository .* set aside under this name, which git does not read .* delete it .* this identity's commands are refused" \
    "alice_refused_until_removed" "$err"
ag_unlike "$out" "should-not-run" "alice_ran_nothing"
as bob 'echo bob-works'
ag_is "$out" "bob-works" "bob_is_not_refused" "$err"
# what is set aside runs nowhere: bob's git work there, and git outside
as bob "cd $W/ap && GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@x git commit -q --allow-empty -m b && echo committed"
ag_is "$out" "committed" "bob_commits_there" "$err"
runuser -u "$AG_USER" -- git -C "$W/ap" -c user.name=v -c user.email=v@x commit -q --allow-empty -m v </dev/null >/dev/null 2>&1
git -c safe.directory='*' -c user.name=r -c user.email=r@x -C "$W/ap" commit -q --allow-empty -m r </dev/null >/dev/null 2>&1
ag_ok "nothing_ran_the_set_aside_hook" test ! -e "$PWN"
doc=$("$AG_DIR/agentgate" doctor --config "$AG_DIR/policy.yaml" --user "$AG_USER" 2>&1)
ag_like "$doc" "FAIL  git repository planted by a command; fix: $W/ap/.git holds a hook .* refuses identity alice of $AG_USER's commands" \
    "doctor_names_the_identity" "$doc"
# the clear: the name removed (as the account outside the gateway, or root)
rm -f "$W/ap/.git/hooks/post-commit.planted"
as alice 'echo alice-works-again'
ag_is "$out" "alice-works-again" "alice_runs_again_once_it_is_removed" "$err"
ag_ok "alice_record_cleared" test ! -e "$AG_RUNDIR/scans/$U-alice.planted"

# ---- a scan limit is the tree's: both are refused, told what to remove ----------
as alice "mkdir -p ~/work/d/proj && chmod 311 ~/work/d && echo hidden"
ag_is "$out" "hidden" "unlistable_directory_made"
for who in alice bob; do
	as $who 'echo should-not-run'
	ag_like "$err" "agentgate: refused: $W/d cannot be read by the gateway .* make it readable, or remove it" \
	    "limit_refuses_$who" "$err"
	ag_unlike "$out" "should-not-run" "limit_${who}_ran_nothing"
done
chmod 755 "$W/d"
as bob 'echo bob-works-again'
ag_is "$out" "bob-works-again" "limit_cleared_by_fixing_the_tree" "$err"

ag_done
