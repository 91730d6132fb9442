#!/bin/bash
# approvals_exec.sh - issue 39 item 3, red team round: a rule that says
# decision: approve holds the line wherever the rule's program runs, in the
# developer tier with the kernel sandbox and the exec supervisor:
#   - behind a wrapper (env, nice, find -exec, xargs) the typed line waits,
#     naming the rule, as the bare command does;
#   - a program the line does not show (a Makefile recipe's git push) is
#     refused at its exec, saying it waits for approval, and audited;
#   - a line that meets two such rules names both, and an answer for one
#     rule (a --session grant) does not release a line that also meets
#     another.
# Through the real sshd, the gateway installed set-group-ID.
. "$(dirname "$0")/lib.sh"
ag_setup
ag_need_sandbox_lib
APPROVER=agax$$
flock /run/agentgate-test.lock useradd -M -s /bin/sh "$APPROVER" || exit 99
forget_answers() {
	local f
	for f in "$AG_RUNDIR"/approvals/*.ok "$AG_RUNDIR"/approvals/*.no; do
		[ -e "$f" ] && grep -qx "user $AG_USER" "$f" && rm -f "$f"
	done
}
V=$AG_DIR/mk
trap 'forget_answers; userdel "$APPROVER" >/dev/null 2>&1; ag_cleanup' EXIT
ag_setgid_gateway
ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: required
  audit: { file: @AUDIT@, required: true }
approvals: { approvers: [$APPROVER], timeout: 10m }
users:
  @USER@: dev
profiles:
  dev:
    tier: developer
    allow:
      - echo
      - make
      - env
      - nice
      - find
      - xargs
      - { name: stamp, command: date, decision: approve }
      - { name: remove, command: rm, decision: approve }
    paths: { read: ["/"], write: ["/tmp"] }
POLICY
GW="$AG_DIR/agentgate"
as_approver() { runuser -u "$APPROVER" -- "$GW" "$@"; }
mkdir -p "$V"
printf 'all:\n\tdate +%%s\n' > "$V/mk-date"
chmod 0755 "$V"
chmod 0644 "$V/mk-date"

# the request of this world's account (not the one named $1): its id in ID
# and its rule in RULE
pending() {
	local i
	ID= RULE=
	for i in $(seq 1 600); do
		ID=$("$GW" approvals 2>/dev/null | awk -v u=" account=$AG_USER " -v skip="${1:-}" \
		    '/^[0-9a-f]+  / && index($0, u) && $1 != skip { print $1; exit }')
		if [ -n "$ID" ]; then
			RULE=$("$GW" approvals | awk -v id="$ID" '$1 == id { on = 1; next }
			    /^[0-9a-f]+  / { on = 0 } on && /^    rule: / { sub(/^    rule: /, ""); print }')
			return 0
		fi
		sleep 0.1
	done
	return 1
}
N=0
start() {
	N=$((N + 1))
	ag_ssh "$1" >"$AG_DIR/out.$N" 2>"$AG_DIR/err.$N" </dev/null &
	PID=$!
}
finish() { wait "$PID"; RC=$?; OUT=$(cat "$AG_DIR/out.$N"); ERR=$(cat "$AG_DIR/err.$N"); }

# ---- the benign use: the bare command waits, and runs once approved ---------------
start 'date +%s'
ag_ok bare_line_waits pending
ag_is "$RULE" "profiles.dev.allow.stamp" "bare_line_names_its_rule"
as_approver approve "$ID" >/dev/null 2>&1
finish
ag_like "$RC/$OUT" '^0/[0-9]+$' "bare_line_runs_once_approved" "$ERR"

# ---- behind a wrapper, the same rule holds the typed line ---------------------------
for line in 'env date +%s' 'nice -n 5 date +%s' 'find /etc/hostname -exec date +%s \;'; do
	start "$line"
	ag_ok "wrapped_line_waits: $line" pending
	ag_is "$RULE" "profiles.dev.allow.stamp" "wrapped_line_names_the_inner_rule: $line"
	as_approver refuse "$ID" --reason "not now" >/dev/null 2>&1
	finish
	ag_is "$RC/$OUT" "126/" "wrapped_line_refused_does_not_run: $line" "$ERR"
done

# ---- what the line does not show is held at its exec ---------------------------------
ag_run m "make -s -f $V/mk-date"
ag_unlike "$m_out" '^[0-9]+$' "recipe_program_under_approve_rule_does_not_run" "$m_out"
ag_like "$m_err" "waits for a person's approval \(profiles.dev.allow.stamp\)" \
    "recipe_refusal_says_it_waits_for_approval" "$m_err"
ag_like "$(ag_audit_query "[x.get('rule') for x in r if x.get('event') == 'exec_denied'][-1]")" \
    "profiles.dev.allow.stamp" "recipe_refusal_audited_as_exec_denied"

# ---- a line that meets two rules names both; a grant for one releases nothing else ---
# one REPL session: a --session answer for stamp, then a line with stamp
# alone (runs), then one with stamp and remove (waits, naming both)
N=$((N + 1))
printf '%s\n' 'date +%s >/dev/null; echo first' 'date +%s >/dev/null; echo stamp-granted' \
    'date +%s >/dev/null; rm -f /tmp/nothing-here; echo both' |
    ag_ssh >"$AG_DIR/out.$N" 2>"$AG_DIR/err.$N" &
PID=$!
ag_ok session_line_waits pending
FIRST=$ID
as_approver approve "$ID" --session >/dev/null 2>&1
ag_ok two_rule_line_waits pending "$FIRST"
ag_is "$RULE" "profiles.dev.allow.stamp,profiles.dev.allow.remove" "two_rule_line_names_both" "$RULE"
as_approver refuse "$ID" --reason "one at a time" >/dev/null 2>&1
wait "$PID"
OUT=$(cat "$AG_DIR/out.$N"); ERR=$(cat "$AG_DIR/err.$N")
ag_is "$OUT" "first
stamp-granted" "session_grant_covers_only_its_rule" "$ERR"
ag_like "$ERR" "one at a time" "two_rule_line_refused_with_the_reason" "$ERR"

out=$("$GW" audit verify "$AG_DIR/log/audit.jsonl" 2>&1)
ag_is "$?" 0 "audit_chain_verifies" "$out"
ag_done
