#!/bin/bash
# audit_chain.sh - the audit file is tamper-evident (issue 14): every record
# carries the hash of the line before it, the first a seed, and `agentgate
# audit verify` finds the first record that was altered, removed or
# reordered and a torn end, and says when the start is not there.  The
# account owns its audit file today (no privilege separation yet), so each
# tampering below is what it could do with a shell outside the gateway.
. "$(dirname "$0")/lib.sh"
ag_setup

ag_run a 'echo one'
ag_run a 'echo two; false'
ag_run a 'rm -rf /nothing'
printf 'cd /tmp\necho three\nexit 0\n' | ag_ssh >/dev/null 2>&1
N=$(wc -l < "$AG_AUDIT")

verify() { "$AGENTGATE" audit verify "$1" 2>&1; }
out=$(verify "$AG_AUDIT"); rc=$?
ag_is "$rc" 0 "the file as written verifies"
ag_is "$out" "$AG_AUDIT: $N records, the chain is intact" "verify says how many records"
ag_is "$(ag_audit_query 'r[0].get("seed") is not None and all("seed" not in x for x in r[1:])')" yes \
    "only the first record holds the seed"
ag_is "$(ag_audit_query 'all(len(x["prev"]) == 64 for x in r)')" yes "every record holds prev"

T=$AG_DIR/tampered
tampered() {	# tampered NAME EXPECTED-LINE PATTERN: verify $T
	out=$(verify "$T"); rc=$?
	ag_is "$rc" 1 "$1: verify fails"
	ag_like "$out" "^$T: line $2: $3" "$1: the line and what is wrong"
}

# one byte of a record in the middle: the next record's prev no longer matches
sed '3s/"ts":"2/"ts":"1/' "$AG_AUDIT" > "$T"
tampered altered 4 "the chain breaks here: line 3 was altered"
# a record removed
sed '3d' "$AG_AUDIT" > "$T"
tampered removed 3 "the chain breaks here: line 2 was altered, or records"
# two records swapped
awk 'NR == 3 { held = $0; next } { print } NR == 4 { print held }' "$AG_AUDIT" > "$T"
tampered reordered 3 "the chain breaks here"
# the start cut off: alone, the file is one that goes on from records in
# a file not given (a rotated one, a collector's), and verify says so;
# --from-start, for a file that must hold the whole chain, refuses it
sed '1,2d' "$AG_AUDIT" > "$T"
out=$(verify "$T"); rc=$?
ag_is "$rc" 0 "start_removed: verifies as a chain that starts mid-way" "$out"
ag_like "$out" "^$T: $((N - 2)) records, the chain is intact; it starts mid-chain, going on from the record whose hash is [0-9a-f]{64} \\(the file before it was not given\\)" \
    "start_removed: verify says it starts mid-chain"
out=$("$AGENTGATE" audit verify --from-start "$T" 2>&1); rc=$?
ag_is "$rc" 1 "start_removed: --from-start fails"
ag_like "$out" "^$T: line 1: no seed" "start_removed: --from-start says the start is missing"
# the end torn (a record half written, or cut)
head -c -5 "$AG_AUDIT" > "$T"
tampered torn "$N" "truncated"
# a record rewritten whole, prev and all, still breaks at the next one
"$AG_PYTHON" - "$AG_AUDIT" "$T" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
r = json.loads(lines[2]); r["decision"] = "deny"
lines[2] = json.dumps(r, separators=(",", ":"))
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
tampered rewritten 4 "the chain breaks here: line 3"
# a line that is not a record
sed '2s/.*/not json/' "$AG_AUDIT" > "$T"
tampered garbage 2 "not a JSON record"

# usage and read errors are status 2, distinct from a broken chain
"$AGENTGATE" audit verify "$AG_DIR/none" >/dev/null 2>&1
ag_is "$?" 2 "a missing file is a read error (2)"
"$AGENTGATE" audit >/dev/null 2>&1
ag_is "$?" 2 "audit without verify is a usage error (2)"

ag_done
