#!/bin/bash
# approvals_webhook.sh - issue 39 item 3: a line a rule holds for approval
# (decision: approve) in a profile whose validator is a webhook a person
# answers (approval_timeout) is put to that person through the webhook,
# through the real sshd: the request document says which rules hold it
# ("approve"), the agent is told it waits, the person's allow runs the
# line once (the next run asks again: an approval is never kept for the
# session), their deny refuses it with their reason, and the audit names
# the approver.  The webhook is a local server speaking its protocol
# (fake_validator.py, mode "approve": pending, then polled).
. "$(dirname "$0")/lib.sh"
[ -n "$AG_PYTHON" ] || { echo "SKIP: python3 is needed for the fake validator"; exit 77; }
ag_setup
SRV=$AG_DIR/srv
mkdir -p "$SRV"
"$AG_PYTHON" "$top_srcdir/tests/integration/fake_validator.py" "$SRV" &
SRV_PID=$!
trap 'kill $SRV_PID 2>/dev/null; ag_cleanup' EXIT
ag_wait_until 60 test -s "$SRV/port" || { echo "the fake validator did not start"; exit 99; }
P=$(cat "$SRV/port")
ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
approvals: { approvers: [root], timeout: 10m }
users:
  @USER@: hooked
profiles:
  hooked:
    allow:
      - echo
      - { name: stamp, command: date, decision: approve }
    validator: { kind: webhook, url: "http://127.0.0.1:$P/approve/hook", timeout_ms: 5000, approval_timeout: 600 }
    paths: { read: ["/"], write: ["/tmp"] }
POLICY
"$AG_DIR/agentgate" check --config "$AG_DIR/policy.yaml" || exit 99

posts() { grep -c '"method": "POST"' "$SRV/requests.jsonl" 2>/dev/null || echo 0; }
# decide DOC: once the gateway polls the N-th request, the person's answer
decide() {
	local path
	polled() { grep -q '"method": "GET"' "$SRV/requests.jsonl" 2>/dev/null &&
	    [ "$(grep '"method": "GET"' "$SRV/requests.jsonl" | tail -n 1 |
	    "$AG_PYTHON" -c 'import json,sys; print(json.loads(sys.stdin.readline())["path"].split("/")[-1])')" = "$1" ]; }
	ag_wait_until 120 polled "$1" || return 1
	printf '%s' "$2" > "$SRV/decide-$1.tmp" && mv "$SRV/decide-$1.tmp" "$SRV/decide-$1"
}
last_cmd() { ag_audit_query "[x.get('$1') for x in r if x.get('event') == 'command'][-1]"; }
last_approval() { ag_audit_query "[(x.get('approval') or {}).get('$1') for x in r if x.get('event') == 'command'][-1]"; }

out=$(ag_ssh 'echo plain' 2>&1)
ag_is "$out" "plain" "allowed_line_does_not_ask"
ag_is "$(posts)" 0 "allowed_line_sent_nothing"

# ---- a person's allow through the webhook runs the line once ------------------------
ag_ssh 'date +%s' >"$AG_DIR/out.1" 2>"$AG_DIR/err.1" &
PID=$!
ag_ok webhook_person_allows decide 1 '{"decision": "allow", "reason": "go", "approver": "carol"}'
wait "$PID"; rc=$?
ag_like "$rc/$(cat "$AG_DIR/out.1")" '^0/[0-9]+$' "approved_line_runs" "$(cat "$AG_DIR/err.1")"
ag_like "$(cat "$AG_DIR/err.1")" "waiting up to 600 s for a person to approve this command" \
    "agent_told_it_waits" "$(cat "$AG_DIR/err.1")"
doc=$("$AG_PYTHON" -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1])]
print([x["body"].get("approve") for x in r if x["method"] == "POST"][0])' "$SRV/requests.jsonl")
ag_is "$doc" "profiles.hooked.allow.stamp" "request_document_names_the_approve_rule"
ag_is "$(last_approval approver)/$(last_approval scope)/$(last_approval id)" "carol/once/webhook" \
    "audit_names_the_person"

# ---- the next run asks again; a person's deny refuses with their reason -------------
ag_ssh 'date +%s' >"$AG_DIR/out.2" 2>"$AG_DIR/err.2" &
PID=$!
ag_ok webhook_asked_again decide 2 '{"decision": "deny", "reason": "not on a Friday", "approver": "dave"}'
wait "$PID"; rc=$?
ag_is "$rc/$(cat "$AG_DIR/out.2")" "126/" "refused_line_does_not_run" "$(cat "$AG_DIR/err.2")"
ag_like "$(cat "$AG_DIR/err.2")" "refused by dave through validator .*not on a Friday" \
    "refusal_names_the_person_and_reason" "$(cat "$AG_DIR/err.2")"
ag_is "$(last_cmd decision)/$(last_approval approver)" "deny/dave" "refusal_recorded"

out=$("$AG_DIR/agentgate" audit verify "$AG_DIR/log/audit.jsonl" 2>&1)
ag_is "$?" 0 "audit_chain_verifies" "$out"
ag_done
