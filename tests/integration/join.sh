#!/bin/bash
# agentgate join: a person watches a live session through the real sshd
# (tmux is the agent's terminal), the gateway installed set-group-ID:
#   - root's --observe shows a running command's output as it is produced
#     (the first marker before the command is let go on, the second after),
#     with the header (who, account, profile, command) first
#   - an escape sequence the agent prints (a title, a screen erase) reaches
#     the watcher as text, never raw
#   - keys typed at the watcher reach nobody: the session runs nothing
#   - a user gateway.observers names (by a %group) watches too; one it does not cannot
#     join, and the refusal is audited; an observer cannot --moderate
#   - --moderate (root) ends the session with Ctrl-T k; the audit has the
#     join, the termination with the moderator's name, the leave; the
#     chain verifies
#   - a session without a terminal (no recording) shows its commands
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null ||
    { echo "tmux not installed (contrib/deps.sh --tests installs it)" >&2; exit 99; }
ag_setup
ag_write_pam use_key allow_unidentified
ag_setgid_gateway
install -d -o root -g "$G" -m 2770 "$AG_DIR/log/recordings"
TMUX_SOCK=$AG_DIR/tmux.sock
printf 'set-option -g remain-on-exit on\n' > "$AG_DIR/tmux.conf"
tm() { tmux -f "$AG_DIR/tmux.conf" -S "$TMUX_SOCK" "$@"; }
JOINS=()
OBS=
OBS_GROUP=
NOB=
finish() {
	local p u
	tm kill-server >/dev/null 2>&1
	for p in "${JOINS[@]}"; do kill "$p" 2>/dev/null; done
	for u in $OBS $NOB; do ag_userdel "$u"; done
	[ -n "$OBS_GROUP" ] && flock /run/agentgate-test.lock groupdel "$OBS_GROUP" 2>/dev/null
	ag_cleanup
}
trap finish EXIT
# OBS is an observer through a group it is a member of; NOB is none
OBS_GROUP=ago$$
flock /run/agentgate-test.lock groupadd "$OBS_GROUP" || exit 99
OBS=ob$$
flock /run/agentgate-test.lock useradd -M -s /bin/sh -G "$OBS_GROUP" -U "$OBS" || exit 99
NOB=agn$$
flock /run/agentgate-test.lock useradd -M -s /bin/sh "$NOB" || exit 99
ag_write_policy "$AG_DIR/policy.yaml" <<EOF2
version: 1
gateway:
  runner: /bin/bash
  sandbox: "off"
  audit:
    file: @AUDIT@
    required: true
  recordings: @DIR@/log/recordings
  observers: [nosuchuser$$, "%$OBS_GROUP"]
users:
  @USER@: test
profiles:
  test:
    allow: [echo, printf, cat, "true", exit]
    paths:
      read: ["/"]
      write: ["/tmp", "~"]
    unknown: deny
EOF2
"$AG_DIR/agentgate" check --config "$AG_DIR/policy.yaml" >/dev/null ||
    { echo "the policy does not check" >&2; exit 99; }

screen() { tm capture-pane -p -J -t s -S -200 2>/dev/null; }
pane_matches() { screen | grep -Eq -- "$1"; }
pane_dead() { [ "$(tm display-message -p -t s '#{pane_dead}' 2>/dev/null)" = 1 ]; }
has() { grep -Eq -- "$2" "$1" 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
sid_of() { "$AG_DIR/agentgate" sessions | awk -v u="$AG_USER" -v c="$1" '$3 == u && index($0, c) {print $1}'; }
sid_now() { "$AG_DIR/agentgate" sessions | awk -v u="$AG_USER" '$3 == u {print $1}'; }

F=$AG_DIR/fifos
install -d -m 0755 "$F"
mkfifo -m 0666 "$F/go"

ssh_cmd=$(printf '%q ' "${AG_SSH[@]}")
tm new-session -d -s s -x 120 -y 30 "$ssh_cmd -tt"
ag_ok "a terminal session starts" ag_wait_until 30 pane_matches '@[^ ]*:~\$ ?$'
ag_wait_until 30 sh -c "[ -n \"\$('$AG_DIR/agentgate' sessions | awk -v u=$AG_USER '\$3 == u')\" ]"
SID=$(sid_now)
ag_like "$SID" '^[0-9a-f]{8}$' "agentgate sessions lists it" "$("$AG_DIR/agentgate" sessions)"

# root observes, with keys to type at it (a fifo held open here)
mkfifo "$AG_DIR/keys-in"
"$AG_DIR/agentgate" join "$SID" --observe <"$AG_DIR/keys-in" >"$AG_DIR/obs.out" 2>"$AG_DIR/obs.err" &
J1=$!
JOINS+=("$J1")
exec 7>"$AG_DIR/keys-in"
ag_ok "the observer's header comes first" ag_wait_until 30 has "$AG_DIR/obs.out" \
    "^agentgate: session $SID: -@$AG_USER, profile test, from 127\.[0-9.]+:[0-9]+, since [0-9TZ:-]+, now: "
# an observer the policy names, as itself (stdin: nothing to type)
runuser -u "$OBS" -- "$AG_DIR/agentgate" join "$SID" --observe </dev/null \
    >"$AG_DIR/obs2.out" 2>"$AG_DIR/obs2.err" &
J2=$!
JOINS+=("$J2")
ag_ok "a user in a %group of gateway.observers joins" ag_wait_until 30 has "$AG_DIR/obs2.out" '^agentgate: observing'

# a command that prints, waits on the fifo, prints again
tm send-keys -t s "echo MARK-ONE-\$((6*7)); cat $F/go; echo MARK-TWO-\$((6*7))" Enter
ag_ok "the first marker reaches the observer while the command runs" \
    ag_wait_until 30 has "$AG_DIR/obs.out" '^ +\| MARK-ONE-42'
ag_unlike "$(cat "$AG_DIR/obs.out")" 'MARK-TWO-42' "the second is not there before the command goes on"
ag_ok "the command is still waiting (the session is live)" pane_matches 'MARK-ONE-42'
timeout 30 sh -c "echo go > $F/go"
ag_ok "the second marker follows" ag_wait_until 30 has "$AG_DIR/obs.out" '^ +\| MARK-TWO-42'
order=$(grep -E '^ +\| ' "$AG_DIR/obs.out" | head -3 | sed 's/^ *| //' | tr '\n' ' ')
ag_is "$order" "MARK-ONE-42 go MARK-TWO-42 " "in order (with what cat passed on between)" "$(cat "$AG_DIR/obs.out")"
ag_like "$(cat "$AG_DIR/obs.out")" '^\[ *[0-9.]+\] .*\$ echo MARK-ONE' "the gateway's line of the command is shown as such"
ag_ok "the named observer saw both too" ag_wait_until 30 has "$AG_DIR/obs2.out" 'MARK-TWO-42'

# escapes: a title and a screen erase, printed by the agent
tm send-keys -t s "printf '\\033]0;pwned\\007\\033[2JESC-DONE\\n'" Enter
ag_ok "the escaping command's output arrives" ag_wait_until 30 has "$AG_DIR/obs.out" '\| .*ESC-DONE'
ag_is "$(grep -c $'\033' "$AG_DIR/obs.out")" 0 "no raw escape reaches the observer" \
    "$(od -c "$AG_DIR/obs.out" | grep -m3 '033')"
ag_like "$(cat "$AG_DIR/obs.out")" '<ESC\]0;pwned>ESC-DONE' "the title sequence is shown as text, the erase dropped"
ag_is "$(grep -c $'\033' "$AG_DIR/obs2.out")" 0 "nor the named observer's"

# keys typed at the observer go nowhere
printf 'echo INJECTED-%s\r\n\024x' "$$" >&7
tm send-keys -t s "echo AFTER-KEYS" Enter
ag_ok "the session goes on" ag_wait_until 30 has "$AG_DIR/obs.out" '\| AFTER-KEYS'
ag_unlike "$(screen)" "INJECTED" "the observer's keys never reach the session's terminal" "$(screen)"
ag_ok "nor does the gateway run them" ag_audit_query \
    "not any('INJECTED' in json.dumps(x) for x in r)"
ag_unlike "$(cat "$AG_DIR/obs.out")" "INJECTED" "nor are they echoed to the observer"
ag_ok "the observer is still watching" kill -0 "$J1"

# who may not
out=$(runuser -u "$NOB" -- "$AG_DIR/agentgate" join "$SID" --observe </dev/null 2>&1); rc=$?
ag_like "$rc/$out" "^1/agentgate: join: $NOB may not watch sessions" "a user not in gateway.observers cannot join" "$out"
ag_ok "the refusal is audited" ag_audit_query \
    "any(x['event'] == 'session_join' and x.get('decision') == 'deny' and '$NOB' in x.get('reason', '') for x in r)"
out=$(runuser -u "$OBS" -- "$AG_DIR/agentgate" join "$SID" --moderate </dev/null 2>&1); rc=$?
ag_like "$rc/$out" "^1/.*--moderate is root's" "an observer cannot moderate" "$out"
out=$(runuser -u "$NOB" -- "$AG_DIR/agentgate" join "$SID" --observe --config /dev/null </dev/null 2>&1); rc=$?
ag_is "$rc" 1 "nor can one name a policy of its own" "$out"

# q leaves
printf 'q' >&7
ag_ok "q leaves" ag_wait_until 30 gone "$J1"
exec 7>&-
ag_ok "joining and leaving are audited" ag_audit_query \
    "any(x['event'] == 'session_join' and x.get('decision') == 'allow' and (x.get('request') or '').startswith('$SID') and 'root joined to observe' in x.get('reason', '') for x in r) and any(x['event'] == 'session_leave' and (x.get('request') or '').startswith('$SID') for x in r)"
ag_ok "the named observer's join is audited with its name" ag_audit_query \
    "any(x['event'] == 'session_join' and x.get('decision') == 'allow' and '$OBS joined to observe' in x.get('reason', '') for x in r)"

# root moderates: Ctrl-T k ends the session
mkfifo "$AG_DIR/mod-in"
"$AG_DIR/agentgate" join "$SID" --moderate <"$AG_DIR/mod-in" >"$AG_DIR/mod.out" 2>"$AG_DIR/mod.err" &
J3=$!
JOINS+=("$J3")
exec 7>"$AG_DIR/mod-in"
ag_ok "the moderator joins" ag_wait_until 30 has "$AG_DIR/mod.out" '^agentgate: moderating.*Ctrl-T k'
printf '\024k' >&7
ag_ok "Ctrl-T k ends the session" ag_wait_until 30 pane_dead
ag_ok "the moderator's join ends with it" ag_wait_until 30 gone "$J3"
ag_like "$(cat "$AG_DIR/mod.out")" "^agentgate: session $SID ended" "the moderator is told it ended" "$(cat "$AG_DIR/mod.out" "$AG_DIR/mod.err")"
ag_ok "so does the named observer's" ag_wait_until 30 gone "$J2"
ag_like "$(cat "$AG_DIR/obs2.out")" "^agentgate: session $SID ended" "which says so" "$(cat "$AG_DIR/obs2.out")"
exec 7>&-
ag_like "$(screen)" "ended by moderator root" "the agent is told who ended it" "$(screen)"
ag_ok "the moderator's join is audited" ag_audit_query \
    "any(x['event'] == 'session_join' and 'root joined to moderate' in x.get('reason', '') for x in r)"
ag_ok "the termination names the moderator" ag_audit_query \
    "any(x['event'] == 'session_terminate' and (x.get('request') or '').startswith('$SID') and 'moderator root' in x.get('reason', '') and 'agentgate join --moderate' in x.get('reason', '') for x in r)"
ag_ok "the session's end is recorded" ag_audit_query \
    "any(x['event'] == 'session_end' and x.get('session', '').startswith('$SID') for x in r)"

# a session without a terminal: its commands
mkfifo -m 0666 "$F/go2"
"${AG_SSH[@]}" "cat $F/go2" >/dev/null 2>&1 &
client=$!
ag_wait_until 30 sh -c "'$AG_DIR/agentgate' sessions | grep -q 'cat $F/go2'"
SID2=$(sid_of "cat $F/go2")
ag_like "$SID2" '^[0-9a-f]{8}$' "the command's session is listed"
"$AG_DIR/agentgate" join "$SID2" --observe </dev/null >"$AG_DIR/cmd.out" 2>&1 &
J4=$!
JOINS+=("$J4")
ag_ok "a session without a terminal shows its command" ag_wait_until 30 has "$AG_DIR/cmd.out" \
    "^\[command\] cat $F/go2"
ag_like "$(cat "$AG_DIR/cmd.out")" 'has no recording' "and says it has no output to show"
timeout 30 sh -c "echo go > $F/go2"
wait "$client"
ag_ok "the observer ends with the session" ag_wait_until 30 gone "$J4"

# (under a sanitizer, its reports would be here)
ag_is "$(cat "$AG_DIR/obs.err" "$AG_DIR/obs2.err" "$AG_DIR/mod.err")" "" "the watchers wrote no error"
out=$("$AG_DIR/agentgate" audit verify "$AG_AUDIT" 2>&1); rc=$?
ag_is "$rc" 0 "audit verify holds" "$out"
ag_done
