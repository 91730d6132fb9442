#!/bin/bash
# approvals.sh - issue 39 item 3: a line a rule holds for approval
# (decision: approve, unknown: approve) waits, through the real sshd and
# the gateway installed set-group-ID, until a person answers from another
# terminal (`agentgate approve` / `refuse`, run as an approver account
# the test makes, or root):
#   - the agent is told at once that it waits, the request id and for whom
#   - an approval releases exactly one line (--once), or the rest of the
#     session's lines meeting the same rule (--session)
#   - a refusal returns the refuser's reason; a timeout refuses
#   - the agent's own account cannot approve: not with agentgate approve,
#     and not with an answer file of its own; an answer naming another
#     command (or request) is not believed
#   - the client leaving withdraws its request
#   - the audit records the request, the approver, the scope and the time
#     waited, and its chain verifies; check and explain know the keys
#   - what the approver is shown is the whole command, on one line, every
#     control, C1, bidi and invalid byte escaped; a line too long to show
#     is refused at once; only approvers (and root) see a request
#   - each answer is audited in the asking session's log; a request whose
#     gateway is gone is not answered; pending requests and justifications
#     are capped
. "$(dirname "$0")/lib.sh"
ag_own_mount_ns "$@"
ag_world_identities alice

APPROVER=agap$$
flock /run/agentgate-test.lock useradd -M -s /bin/sh "$APPROVER" || exit 99
OTHER=agot$$
flock /run/agentgate-test.lock useradd -M -s /bin/sh "$OTHER" || exit 99
# the answers this world's people left (a uid is reused by the next
# world's accounts); the directory is the host's, shared with other worlds
forget_answers() {
	local f
	for f in "$AG_RUNDIR"/approvals/*.ok "$AG_RUNDIR"/approvals/*.no; do
		[ -e "$f" ] && grep -qx "user $AG_USER" "$f" && rm -f "$f"
	done
}
trap 'forget_answers; userdel "$APPROVER" >/dev/null 2>&1; userdel "$OTHER" >/dev/null 2>&1; ag_cleanup' EXIT

ag_setgid_gateway
# an upstream host (bastion mode): `@web1 uptime` waits as a local line does
trap 'forget_answers; ag_stop_upstream; userdel "$APPROVER" >/dev/null 2>&1; userdel "$OTHER" >/dev/null 2>&1; ag_cleanup' EXIT
ag_start_upstream || exit 99
# policy TIMEOUT
policy() {
	ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
approvals: { approvers: [$APPROVER], timeout: $1 }
identities:
  - { name: alice, keys: ["$(ag_key alice)"], profile: dev }
upstreams:
  web1:
    host: 127.0.0.1
    port: $UP_PORT
    user: $UP_USER
    key: $UP/gwkey
    known_hosts: $UP/known_hosts
    connect_timeout: 60
    profile: web
profiles:
  web:
    allow:
      - echo
      - { name: restart, command: touch, decision: approve }
    paths: { read: ["/"], write: ["/tmp"] }
  dev:
    targets: [local, web1]
    allow:
      - echo
      - ls
      - { name: stamp, command: date, decision: approve }
    deny:
      - { name: root-listing, command: ls, args: ["/"], decision: approve }
    unknown: approve
    paths: { read: ["/"], write: ["/tmp"] }
    limits: { timeout: 600 }
POLICY
}
policy 10m
AG_SSHD_EXTRA="AuthorizedKeysCommand $AG_DIR/agentgate authorized-keys --config $AG_DIR/policy.yaml %u
AuthorizedKeysCommandUser root"
AG_SSHD_AUTHKEYS_FILE=none
AG_FORCE_COMMAND="$AG_DIR/agentgate"
ag_start_sshd || exit 99
ag_default_policy_path
T="$AG_USER@127.0.0.1"
GW="$AG_DIR/agentgate"
DIR="$AG_RUNDIR/approvals"

as_approver() { runuser -u "$APPROVER" -- "$GW" "$@"; }
as_agent() { runuser -u "$AG_USER" -- "$GW" "$@"; }

# the id of the pending request whose command is shown as $1 (none: empty)
# (this world's account only: other tests' worlds file requests in the same
# directory, and root sees them all)
pending_id() {
	"$GW" approvals 2>/dev/null | C="    command: $1" U="account=${2:-$AG_USER}" awk '
	    /^[0-9a-f]+  / { id = $1; mine = index($0, " " ENVIRON["U"] " ") > 0 }
	    mine && $0 == ENVIRON["C"] { print id; exit }'
}
# wait_pending COMMAND: its id in ID, once the request is listed
wait_pending() {
	local i
	ID=
	for i in $(seq 1 600); do
		ID=$(pending_id "$1" "${2:-}")
		[ -n "$ID" ] && return 0
		sleep 0.1
	done
	return 1
}
# start LINE: the agent's line in the background, its stdout and stderr
# in $AG_DIR/out.N, err.N; PID its client
N=0
start() {
	N=$((N + 1))
	ag_as alice "$T" "$1" >"$AG_DIR/out.$N" 2>"$AG_DIR/err.$N" &
	PID=$!
}
finish() { wait "$PID"; RC=$?; OUT=$(cat "$AG_DIR/out.$N"); ERR=$(cat "$AG_DIR/err.$N"); }
one() { printf '%s' "$1" | tr '\n' ' '; }	# one line, for a pattern across lines
# answer_file ID SUFFIX OWNER ID-IN-FILE DIGEST [REASON]: an answer written by
# hand, as OWNER would have
answer_file() {
	local f="$DIR/.$1.$2.hand"
	printf 'id %s\ndigest %s\nscope once\nuser %s\n' "$4" "$5" "$AG_USER" > "$f"
	[ -n "${6:-}" ] && printf 'reason %s\n' "$6" >> "$f"
	chown "$3" "$f"
	chmod 0644 "$f"
	mv -f "$f" "$DIR/$1.$2"
}
digest_of() { sed -n 's/^digest //p' "$DIR/$1.req"; }
last_cmd() { ag_audit_query "[x.get('$1') for x in r if x.get('event') == 'command'][-1]"; }
last_approval() { ag_audit_query "[(x.get('approval') or {}).get('$1') for x in r if x.get('event') == 'command'][-1]"; }

# ---- check and explain ---------------------------------------------------------
cat > "$AG_DIR/noapprovers.yaml" <<'EOF2'
version: 1
profiles:
  p:
    allow:
      - echo
      - { command: date, decision: approve }
EOF2
out=$("$GW" check --config "$AG_DIR/noapprovers.yaml" 2>&1)
ag_like "$out" "noapprovers.yaml:6:[0-9]+: .*nobody may approve" "check_refuses_approve_rule_without_approvers" "$out"
out=$("$GW" check --config "$AG_DIR/policy.yaml" 2>&1)
ag_is "$?" 0 "check_takes_the_policy" "$out"
out=$("$GW" explain --config "$AG_DIR/policy.yaml" --profile dev -- 'date +%s' 2>&1)
ag_like "$out" "approval: the line waits for approval by $APPROVER" "explain_says_it_waits_and_for_whom" "$out"
out=$("$GW" doctor --config "$AG_DIR/policy.yaml" --user "$AG_USER" 2>&1)
ag_like "$out" "NOTE  profile dev: lines that meet an approve rule wait up to 600 s for $APPROVER" \
    "doctor_says_who_approves" "$out"
out=$("$GW" explain --config "$AG_DIR/policy.yaml" --profile dev -- 'echo hi' 2>&1)
ag_unlike "$out" "approval:" "explain_plain_allowed_line_does_not_wait" "$out"

# ---- the benign use: one approval releases exactly one line ---------------------
out=$(ag_as alice "$T" 'echo plain' 2>&1)
ag_is "$out" "plain" "allowed_line_runs_without_asking"

start 'date +%s'
ag_ok request_listed wait_pending 'date +%s'
ag_like "$ID" '^[0-9a-f]{16}$' "request_has_an_id"
ag_ok agent_told_it_waits ag_wait_until 60 grep -q "waiting for approval (request $ID) by $APPROVER" "$AG_DIR/err.$N"
listing=$("$GW" approvals)
ag_like "$listing" "identity=alice account=$AG_USER profile=dev" "approvals_lists_who" "$listing"
ag_like "$listing" "rule: profiles.dev.allow.stamp" "approvals_lists_the_rule" "$listing"
# the agent's own account cannot approve
out=$(as_agent approve "$ID" 2>&1); rc=$?
ag_like "$rc/$out" "^1/.*own account" "agent_cannot_approve_with_the_command" "$out"
# someone who is not an approver cannot either
out=$(runuser -u "$OTHER" -- "$GW" approve "$ID" 2>&1); rc=$?
ag_like "$rc/$out" "^1/.*may not answer" "non_approver_cannot_approve" "$out"
out=$(as_approver approve "$ID" 2>&1)
ag_like "$out" "approved request $ID \(once\)" "approver_approves" "$out"
finish
ag_like "$RC/$OUT" '^0/[0-9]+$' "approved_line_runs" "$ERR"
ag_is "$(last_cmd decision)/$(last_cmd rule)" "allow/profiles.dev.allow.stamp" "approved_line_recorded_allowed"
ag_is "$(last_approval approver)/$(last_approval scope)/$(last_approval id)" "$APPROVER/once/$ID" \
    "record_names_approver_scope_and_request"
ag_like "$(last_approval approval_ms)" '^[0-9]+$' "record_says_how_long_it_waited"
ag_is "$(ag_audit_query "[x.get('rule') for x in r if x.get('event') == 'approval_requested' and x.get('id') == '$ID'][0]")" \
    "profiles.dev.allow.stamp" "approval_requested_recorded"
ag_ok request_file_gone test ! -e "$DIR/$ID.req"

# exactly one: the next line waits again, and a refusal says why
start 'date +%s'
ag_ok second_line_waits_again wait_pending 'date +%s'
out=$(as_approver refuse "$ID" --reason "not during the freeze" 2>&1)
ag_like "$out" "refused request $ID" "approver_refuses" "$out"
finish
ag_is "$RC" 126 "refused_line_does_not_run" "$OUT"
ag_like "$ERR" "refused by $APPROVER: not during the freeze" "refusal_returns_its_reason" "$ERR"
ag_is "$(last_cmd decision)" "deny" "refusal_recorded_as_deny"
ag_like "$(last_cmd reason)" "not during the freeze" "refusal_record_has_the_reason"
ag_is "$(last_approval approver)" "$APPROVER" "refusal_record_names_the_refuser"

# what the agent wrote reaches the approver's terminal escaped
start "$(printf 'date "+%%s \033[2J"')"
ag_ok escape_line_waits ag_wait_until 60 grep -q "waiting for approval" "$AG_DIR/err.$N"
ID=$(sed -n 's/.*waiting for approval (request \([0-9a-f]*\)).*/\1/p' "$AG_DIR/err.$N")
listing=$("$GW" approvals)
ag_unlike "$listing" $'\033' "approvals_sends_no_control_characters" "$(printf '%q' "$listing")"
ag_like "$listing" 'x1b\[2J' "approvals_shows_them_escaped" "$listing"
"$GW" refuse "$ID" --reason "no escapes" >/dev/null 2>&1
finish
ag_like "$ERR" "no escapes" "escape_line_refused" "$ERR"

# ---- a deny rule and unknown: approve --------------------------------------------
start 'ls /'
ag_ok deny_rule_line_waits wait_pending 'ls /'
as_approver approve "$ID" >/dev/null 2>&1
finish
ag_like "$RC/$(one "$OUT")" "^0/.*etc" "deny_rule_line_runs_once_approved" "$ERR"
start 'id -u'
ag_ok unknown_program_waits wait_pending 'id -u'
"$GW" approve "$ID" >/dev/null 2>&1	# root always may
finish
ag_is "$RC/$OUT" "0/$(id -u "$AG_USER")" "root_approves_unknown_program" "$ERR"
ag_is "$(last_approval approver)" "root" "root_recorded_as_approver"
# what the gateway checks itself is never up for approval
out=$(ag_as alice "$T" 'echo x > ~/.bashrc' 2>&1); rc=$?
ag_is "$rc" 126 "protected_path_refused_without_asking" "$out"
ag_unlike "$out" "waiting for approval" "protected_path_never_waits" "$out"

# ---- --session: the rest of the session ------------------------------------------
N=$((N + 1))
printf 'date +%%s\ndate +%%s\nid -u\n' | ag_as alice "$T" >"$AG_DIR/out.$N" 2>"$AG_DIR/err.$N" &
PID=$!
ag_ok session_first_line_waits wait_pending 'date +%s'
SID_REQ=$ID
as_approver approve "$ID" --session >/dev/null 2>&1
# the third line meets another rule (unknown): it waits on its own
ag_ok session_other_rule_still_waits wait_pending 'id -u'
as_approver refuse "$ID" --reason "only the stamp" >/dev/null 2>&1
finish
ag_like "$OUT" '^[0-9]+
[0-9]+$' "session_approval_runs_both_lines" "$ERR"
ag_is "$(ag_audit_query "len([x for x in r if x.get('event') == 'approval_requested' and x.get('command') == 'date +%s' and x.get('id') == '$SID_REQ'])")" \
    1 "session_second_line_did_not_ask"
ag_is "$(ag_audit_query "[(x.get('approval') or {}).get('scope') for x in r if x.get('event') == 'command' and x.get('command') == 'date +%s'][-2:]")" \
    "['session', 'session']" "session_scope_recorded_for_both"
ag_like "$ERR" "refused by $APPROVER: only the stamp" "session_grant_covers_only_its_rule" "$ERR"
# a new session asks again
start 'date +%s'
ag_ok new_session_asks_again wait_pending 'date +%s'

# ---- what is not believed ------------------------------------------------------
# an answer file of the agent's own uid (written as root here: the agent
# cannot write in the directory at all), naming the right request and command
ag_ok agent_cannot_write_the_directory sh -c "! runuser -u '$AG_USER' -- touch '$DIR/x' 2>/dev/null"
answer_file "$ID" ok "$AG_USER" "$ID" "$(digest_of "$ID")"
# then a refusal from an approver: an answer believed the moment it was
# seen would have run the line first (answers are read ok before no)
answer_file "$ID" no "$APPROVER" "$ID" "$(digest_of "$ID")" "agent file ignored"
finish
ag_like "$RC/$(one "$ERR")" "^126/.*agent file ignored" "agent_owned_answer_not_believed" "$ERR"
# an approval that names another command (moved from another line)
start 'date -u +%s'
ag_ok moved_line_waits wait_pending 'date -u +%s'
answer_file "$ID" ok "$APPROVER" "$ID" "$(printf 'date +%%s' | sha256sum | cut -d' ' -f1)"
answer_file "$ID" no "$APPROVER" "$ID" "$(digest_of "$ID")" "moved approval ignored"
finish
ag_like "$RC/$(one "$ERR")" "^126/.*moved approval ignored" "approval_of_another_command_not_believed" "$ERR"
# an approval of another request, renamed onto this one
start 'date -u +%s'
ag_ok renamed_line_waits wait_pending 'date -u +%s'
answer_file "$ID" ok "$APPROVER" "0123456789abcdef" "$(digest_of "$ID")"
answer_file "$ID" no "$APPROVER" "$ID" "$(digest_of "$ID")" "renamed approval ignored"
finish
ag_like "$RC/$(one "$ERR")" "^126/.*renamed approval ignored" "approval_of_another_request_not_believed" "$ERR"

# ---- the client leaving withdraws the request -----------------------------------
start 'date +%s'
ag_ok leaving_line_waits wait_pending 'date +%s'
LEFT=$ID
# the ssh client itself (the background job is the function's subshell)
kill $(pgrep -P "$PID" -x ssh) 2>/dev/null; wait "$PID" 2>/dev/null
ag_ok request_withdrawn_when_client_leaves ag_wait_until 60 test ! -e "$DIR/$LEFT.req"
out=$(as_approver approve "$LEFT" 2>&1)
ag_like "$out" "no request $LEFT is waiting" "withdrawn_request_cannot_be_approved" "$out"

# ---- a timeout refuses -----------------------------------------------------------
policy 2s
start 'date +%s'
finish
ag_is "$RC" 126 "timed_out_line_does_not_run" "$OUT"
ag_like "$ERR" "approval timed out" "timeout_says_so" "$ERR"
ag_like "$(last_cmd reason)" "approval timed out" "timeout_recorded" "$ERR"

# ---- --for: the identity's lines of that rule, any session, until then -----------
policy 10m
start 'date +%s'
ag_ok for_line_waits wait_pending 'date +%s'
as_approver approve "$ID" --for 30m >/dev/null 2>&1
finish
ag_like "$RC/$OUT" '^0/[0-9]+$' "for_approval_runs_the_line" "$ERR"
out=$(ag_as alice "$T" 'date +%s' 2>&1); rc=$?
ag_like "$rc/$out" '^0/[0-9]+$' "for_approval_covers_a_new_session" "$out"
ag_is "$(last_approval scope)/$(last_approval approver)" "for/$APPROVER" "for_scope_recorded"

# ---- JSON Lines: request_access files the request with a justification -----------
# (a new rule's line: the --for grant above covers the stamp)
N=$((N + 1))
printf '%s\n' '{"id":1,"request_access":"ls /","justification":"need to see the root"}' \
    '{"id":2,"command":"ls /"}' |
    ag_as alice -s "$T" agentgate-json >"$AG_DIR/out.$N" 2>"$AG_DIR/err.$N" &
PID=$!
ag_ok jsonl_request_listed wait_pending 'ls /'
listing=$("$GW" approvals)
ag_like "$listing" "justification: need to see the root" "approvals_shows_the_justification" "$listing"
as_approver approve "$ID" >/dev/null 2>&1
finish
q() { "$AG_PYTHON" -c 'import json, sys; r = [json.loads(l) for l in open(sys.argv[1])]; print(eval(sys.argv[2]))' "$AG_DIR/out.$N" "$1" 2>&1; }
ag_is "$(q "[(x.get('state'), x.get('request_id')) for x in r if x.get('id') == 1][0]")" "('pending', '$ID')" \
    "request_access_answers_pending_at_once" "$OUT"
ag_is "$(q "[x.get('exit_code') for x in r if x.get('id') == 2][0]")" 0 "run_after_request_access_runs_once_approved" "$OUT"
ag_is "$(ag_audit_query "[x.get('justification') for x in r if x.get('event') == 'approval_requested' and x.get('id') == '$ID'][0]")" \
    "need to see the root" "justification_recorded"
ag_is "$(ag_audit_query "len([x for x in r if x.get('event') == 'approval_requested' and x.get('command') == 'ls /' and x.get('ts', '') >= [y for y in r if y.get('id') == '$ID'][0]['ts']])")" \
    1 "run_waited_on_the_filed_request"
ag_is "$(last_approval id)/$(last_approval approver)" "$ID/$APPROVER" "run_record_names_the_filed_request"

# ---- an upstream's line waits at the gateway, and runs there once approved ------
# (the gateway connects to the upstream to decide the line; the command
# itself does not reach it before the approval: the canary says so)
CANARY=/tmp/approval-canary-$$
out=$(ag_as alice "$T" '@web1 echo up' 2>&1)
ag_is "$out" "up" "upstream_allowed_line_runs_without_asking"
start "@web1 touch $CANARY"
ag_ok upstream_request_listed wait_pending "touch $CANARY" "$UP_USER"
ag_ok upstream_agent_told_it_waits ag_wait_until 60 grep -q "waiting for approval (request $ID)" "$AG_DIR/err.$N"
ag_ok upstream_command_not_run_while_waiting test ! -e "$CANARY"
as_approver approve "$ID" >/dev/null 2>&1
finish
ag_is "$RC/$(stat -c %U "$CANARY" 2>&1)" "0/$UP_USER" "upstream_line_runs_there_once_approved" "$ERR"
ag_is "$(last_approval approver)/$(last_approval scope)" "$APPROVER/once" "upstream_approval_recorded"
rm -f "$CANARY"
start "@web1 touch $CANARY"
ag_ok upstream_next_line_waits_again wait_pending "touch $CANARY" "$UP_USER"
as_approver refuse "$ID" --reason "not during the freeze" >/dev/null 2>&1
finish
ag_is "$RC/$(test -e "$CANARY" && echo made)" "126/" "upstream_refused_line_does_not_run" "$OUT"
ag_like "$ERR" "not during the freeze" "upstream_refusal_reason_returned" "$ERR"


# ---- what the approver is shown is what runs (red team 19, finding 3) -----------
X=/tmp/apx$$
# no byte past ASCII, no tab, no carriage return in $1
no_raw() { ! printf '%s' "$1" | LC_ALL=C grep -qP '[\x80-\xff\t\r]'; }
mkx() { rm -rf $X; mkdir -p $X/keep; echo precious > $X/keep/data; echo old > $X/scratch.log; chown -R "$AG_USER" $X; }
mkx
# a second line hidden after a comment: shown with its \n, never flattened
start "$(printf 'rm -f %s/scratch.log # old log\nrm -rf %s/keep' $X $X)"
ag_ok newline_line_listed_escaped wait_pending "rm -f $X/scratch.log # old log\\nrm -rf $X/keep"
listing=$("$GW" approvals)
ag_like "$(one "$listing")" "command: rm -f $X/scratch.log # old log\\\\nrm -rf $X/keep     rule: " \
    "newline_command_on_one_line" "$listing"
out=$(as_approver approve "$ID" 2>&1)
ag_is "$out" "approved request $ID (once): rm -f $X/scratch.log # old log\\nrm -rf $X/keep" \
    "approve_echoes_the_whole_command" "$out"
finish
ag_is "$RC/$(test -e $X/keep && echo kept)" "0/" "the_shown_command_is_what_ran" "$ERR"
ag_is "$(ag_audit_query "[(x.get('answer'), x.get('scope'), x.get('approver'), x.get('request') is not None) for x in r if x.get('event') == 'approval_answer' and x.get('id') == '$ID']")" \
    "[('approved', 'once', '$APPROVER', True)]" "approve_audited_as_approval_answer"
# a command longer than a request can show is refused at once, not cut
mkx
pad=$(printf '%*s' 2100 '')
out=$(ag_as alice "$T" "rm -f $X/scratch.log${pad}$X/keep/data" 2>&1); rc=$?
ag_like "$rc/$(one "$out")" "^126/.*too long to show a person for approval \(2[0-9]{3} bytes, at most 2048\)" \
    "too_long_line_refused_at_once" "$out"
ag_unlike "$out" "waiting for approval" "too_long_line_never_waits" "$out"
ag_is "$(cat $X/keep/data)" "precious" "too_long_line_did_not_run"
ag_like "$(last_cmd decision)/$(last_cmd reason)" "^deny/.*too long to show" "too_long_line_audited_as_deny"
# tabs, carriage returns, C1 and bidi controls, bytes that are not UTF-8,
# and a backslash of the command's own
start "$(printf 'rm -f %s/none #\tx\r \xc2\x9b2J \xe2\x80\xae gol \x9b31m a\\nb' $X)"
ag_ok c1_line_waits ag_wait_until 60 grep -q "waiting for approval" "$AG_DIR/err.$N"
ID=$(LC_ALL=C sed -n 's/.*waiting for approval (request \([0-9a-f]*\)).*/\1/p' "$AG_DIR/err.$N")
"$GW" approvals > "$AG_DIR/list.c1"
ag_ok c1_line_listed grep -q "^$ID " "$AG_DIR/list.c1"
# (root lists every world's requests: this one's lines)
block=$(awk -v id="$ID" '/^[0-9a-f]+  / { p = ($1 == id) } p' "$AG_DIR/list.c1")
ag_ok listing_has_no_c1_bidi_or_invalid_bytes no_raw "$block"
ag_like "$block" "#\\\\x09x\\\\x0d \\\\u009b2J \\\\u202e gol \\\\x9b31m a\\\\\\\\nb" \
    "c1_bidi_invalid_shown_escaped" "$block"
# ---- who sees a request (finding 5) --------------------------------------------
out=$(as_agent approvals 2>&1)
ag_unlike "$out" "$ID" "agent_account_does_not_list_its_request" "$out"
ag_like "$out" "cannot be approved, nor listed, by this account" "agent_account_told_it_may_not_approve" "$out"
out=$(runuser -u "$OTHER" -- "$GW" approvals 2>&1)
ag_unlike "$out" "$ID|$X" "non_approver_lists_nothing" "$out"
ag_like "$out" "no line waits for your approval" "non_approver_told_none" "$out"
ag_like "$(as_approver approvals)" "$ID" "approver_lists_the_request"
out=$(as_approver refuse "$ID" --reason "$(printf 'no \xe2\x80\xae thanks')" 2>&1)
ag_ok refuse_output_escaped no_raw "$out"
ag_like "$out" "refused request $ID: rm -f $X/none #\\\\x09x" "refuse_echoes_the_command_escaped" "$out"
finish
ag_is "$(ag_audit_query "[(x.get('answer'), x.get('approver'), x.get('reason')) for x in r if x.get('event') == 'approval_answer' and x.get('id') == '$ID']")" \
    "[('refused', '$APPROVER', 'no \\u202e thanks')]" "refuse_audited_with_its_reason"
# ---- a request whose gateway is gone is not answered (finding 6) -----------------
start "rm -f $X/gone"
ag_ok gone_line_waits wait_pending "rm -f $X/gone"
GP=$(sed -n 's/^pid //p' "$DIR/$ID.req")
ag_like "$(sed -n 's/^start //p' "$DIR/$ID.req")" '^[1-9][0-9]*$' "request_records_the_gateway_start_time"
kill -9 "$GP"
finish
out=$(as_approver approve "$ID" --for 1h 2>&1); rc=$?
ag_like "$rc/$out" "^1/.*is gone" "dead_gateway_request_not_approved" "$out"
ag_ok dead_gateway_no_answer_file test ! -e "$DIR/$ID.ok"
ag_unlike "$(as_approver approvals)" "$ID" "dead_gateway_request_not_listed"
rm -f "$DIR/$ID.req"
# ---- caps (finding 7) ------------------------------------------------------------
N=$((N + 1))
for i in 1 2 3 4 5 6 7 8 9; do
	printf '{"id":%d,"request_access":"rm -f %s/cap%d","justification":"cap test"}\n' $i $X $i
done | ag_as alice -s "$T" agentgate-json >"$AG_DIR/out.$N" 2>"$AG_DIR/err.$N"
ag_is "$(q "[x.get('state') for x in r if x.get('id') in range(1, 9)].count('pending')")" 8 \
    "eight_requests_pending_per_session" "$(cat "$AG_DIR/out.$N")"
ag_like "$(q "[(x.get('state'), x.get('reason')) for x in r if x.get('id') == 9][0]")" \
    "this session has 8 requests waiting already \(at most 8\)" "ninth_request_refused" "$(cat "$AG_DIR/out.$N")"
N=$((N + 1))
J=$(printf 'J%.0s' $(seq 1 501))
printf '{"id":1,"request_access":"rm -f %s/j","justification":"%s"}\n' $X "$J" |
    ag_as alice -s "$T" agentgate-json >"$AG_DIR/out.$N" 2>"$AG_DIR/err.$N"
ag_like "$(q "[x.get('reason') for x in r if x.get('id') == 1][0]")" \
    "justification is too long to show a person for approval \(501 bytes, at most 500\)" \
    "long_justification_refused" "$(cat "$AG_DIR/out.$N")"
rm -rf $X

# ---- the chain ---------------------------------------------------------------
out=$("$GW" audit verify "$AG_DIR/log/audit.jsonl" 2>&1)
ag_is "$?" 0 "audit_chain_verifies" "$out"

ag_done
