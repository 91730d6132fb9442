#!/bin/bash
# session_lost.sh - a gateway killed by another process of the account
# (sandbox off: nothing keeps them apart) leaves no session without its
# end, through the real sshd with the `bind` line in sshd's PAM stack:
#   - SIGKILL to alice's gateway from a process of the account (runuser):
#     a session_end with reason gateway_lost is written for her session by
#     whoever sees the gateway gone first (here sshd's session close, in
#     the PAM module), exactly once, and the chain verifies
#   - an admin's `agentgate sessions` and the next gateway of the account,
#     looking after that, write no second one
#   - a session that ends normally has exactly one session_end, its own
. "$(dirname "$0")/lib.sh"
ag_own_mount_ns "$@"
ag_world_identities alice bob

ag_setgid_gateway
ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
identities:
  - { name: alice, keys: ["$(ag_key alice)"], profile: dev }
  - { name: bob, keys: ["$(ag_key bob)"], profile: dev }
profiles:
  dev:
    allow: [echo, sleep, "true"]
    paths: { read: ["/"], write: ["/tmp"] }
    limits: { timeout: 600 }
POLICY
chown root:"$G" "$AG_DIR/policy.yaml"
chmod 0640 "$AG_DIR/policy.yaml"
AG_SSHD_EXTRA="AuthorizedKeysCommand $AG_DIR/agentgate authorized-keys --config $AG_DIR/policy.yaml %u
AuthorizedKeysCommandUser root"
AG_SSHD_AUTHKEYS_FILE=none
AG_FORCE_COMMAND="$AG_DIR/agentgate"
ag_start_sshd || exit 99
ag_default_policy_path

T="$AG_USER@127.0.0.1"
ends() {	# ends SESSION-PREFIX: its session_end records, one a line
	ag_audit_query "'\n'.join(json.dumps(x, sort_keys=True) for x in r if x.get('event') == 'session_end' and x.get('session', '').startswith('$1'))"
}
nends() { ends "$1" | grep -c session_end; }

# ---- a gateway killed by another process of the account --------------------
ag_as alice "$T" 'sleep 4242' >/dev/null 2>&1 &
client=$!
ag_wait_until 60 sh -c "'$AG_DIR/agentgate' sessions | grep -q 'sleep 4242'"
out=$("$AG_DIR/agentgate" sessions 2>&1)
sid=$(awk '/sleep 4242/ {print $1}' <<<"$out")
gwpid=$(awk '/sleep 4242/ {print $(NF-2)}' <<<"$out")
ag_like "$sid/$gwpid" "^[0-9a-f]{8}/[0-9]+$" "killed_session_listed" "$out"
# the account's own process, outside any sandbox, kills the gateway, then
# the command it left behind (its connection ends with it)
runuser -u "$AG_USER" -- kill -KILL "$gwpid"
ag_ok gateway_killed ag_wait_until 60 sh -c "! kill -0 $gwpid 2>/dev/null || grep -q '^[^ ]* ([^)]*) Z' /proc/$gwpid/stat"
for p in $(pgrep -u "$AG_USER" -x sleep); do
	[ "$(cat /proc/"$p"/cmdline 2>/dev/null | tr '\0' ' ')" = "sleep 4242 " ] && kill "$p"
done
wait "$client" 2>/dev/null
has_lost() { [ "$(nends "$sid")" -ge 1 ]; }
ag_ok killed_session_gets_a_session_end ag_wait_until 60 has_lost
rec=$(ends "$sid")
ag_like "$rec" '"reason": "gateway_lost"' "its_reason_is_gateway_lost" "$rec"
ag_like "$rec" "\"identity\": \"alice\".*\"witness\": \"sshd's session close" \
    "it_names_the_identity_and_the_witness" "$rec"
ag_like "$rec" "pid $gwpid" "it_names_the_gateway_pid" "$rec"
ag_ok command_start_of_the_killed_command_stays ag_audit_query \
    "any(x['event'] == 'command_start' and x['session'].startswith('$sid') and x.get('command') == 'sleep 4242' for x in r)"

# later witnesses find nothing left to write: the admin's list, and the next
# gateway of the account (at its start and end)
"$AG_DIR/agentgate" sessions >/dev/null 2>&1
out=$(ag_as bob "$T" 'echo after' 2>&1)
ag_is "$out" after "next_session_runs" "$out"
ag_is "$(nends "$sid")" 1 "killed_session_has_exactly_one_session_end" "$(ends "$sid")"

# ---- the end is not lost while the audit log cannot take it -----------------
# a process holds the log's lock (a stopped gateway would): the witnesses
# that see the gateway gone cannot write, and leave the session for the
# next one instead of dropping it
ag_as alice "$T" 'sleep 4244' >/dev/null 2>&1 &
client=$!
ag_wait_until 60 sh -c "'$AG_DIR/agentgate' sessions | grep -q 'sleep 4244'"
out=$("$AG_DIR/agentgate" sessions 2>&1)
sid2=$(awk '/sleep 4244/ {print $1}' <<<"$out")
gwpid2=$(awk '/sleep 4244/ {print $(NF-2)}' <<<"$out")
mkfifo "$AG_DIR/lockhold"
flock -x "$AG_AUDIT" cat "$AG_DIR/lockhold" >/dev/null &
holder=$!
AG_SERVER_PIDS+=("$holder")
ag_wait_until 30 sh -c "grep -q ' FLOCK .* $holder ' /proc/locks"
runuser -u "$AG_USER" -- kill -KILL "$gwpid2"
ag_wait_until 60 sh -c "! kill -0 $gwpid2 2>/dev/null || grep -q '^[^ ]* ([^)]*) Z' /proc/$gwpid2/stat"
for p in $(pgrep -u "$AG_USER" -x sleep); do
	[ "$(cat /proc/"$p"/cmdline 2>/dev/null | tr '\0' ' ')" = "sleep 4244 " ] && kill "$p"
done
wait "$client" 2>/dev/null
# root's witness meets the held lock: it writes nothing, and keeps the entry
"$AG_DIR/agentgate" sessions >/dev/null 2>&1
ag_is "$(nends "$sid2")" 0 "no_end_written_while_the_log_is_held" "$(ends "$sid2")"
# a witness killed while it waits for the log (the account can kill its
# own gateway, a witness too) leaves the session to the next one
"$AG_DIR/agentgate" sessions >/dev/null 2>&1 &
w=$!
ag_wait_until 30 sh -c "grep -q ' FLOCK .* $w ' /proc/locks"
kill -KILL "$w"
wait "$w" 2>/dev/null
ag_is "$(nends "$sid2")" 0 "no_end_written_by_a_killed_witness" "$(ends "$sid2")"
echo release > "$AG_DIR/lockhold"
wait "$holder" 2>/dev/null
"$AG_DIR/agentgate" sessions >/dev/null 2>&1
has_lost2() { [ "$(nends "$sid2")" -ge 1 ]; }
ag_ok end_written_once_the_log_is_free ag_wait_until 60 has_lost2
"$AG_DIR/agentgate" sessions >/dev/null 2>&1
ag_is "$(nends "$sid2")" 1 "held_session_has_exactly_one_session_end" "$(ends "$sid2")"

# ---- a session ending normally: its own end, once ----------------------------
out=$(ag_as alice "$T" 'echo normal-4243' 2>&1)
ag_is "$out" normal-4243 "normal_session_runs" "$out"
nsid=$(ag_audit_query "[x['session'] for x in r if x['event'] == 'command' and x.get('command') == 'echo normal-4243'][0]")
"$AG_DIR/agentgate" sessions >/dev/null 2>&1
ag_as bob "$T" true >/dev/null 2>&1
rec=$(ends "$nsid")
ag_is "$(nends "$nsid")" 1 "normal_session_has_exactly_one_session_end" "$rec"
ag_unlike "$rec" "gateway_lost" "normal_session_end_is_its_own" "$rec"

out=$("$AG_DIR/agentgate" audit verify --from-start "$AG_AUDIT" 2>&1)
ag_is "$?" 0 "audit_chain_verifies" "$out"

ag_done
