#!/bin/bash
# audit_chain.sh - the audit file is tamper-evident (issue 14): every record
# carries the hash of the line before it, the first a seed, and `agentgate
# audit verify` finds the first record that was altered, removed or
# reordered and a torn end, and says when the start is not there; the live
# log's end is checked against the chain's state file (records cut from
# it are found, sessions writing meanwhile are no failure), and a line
# longer than any record is refused before it is held whole.  The
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
ag_is "$(echo "$out" | head -n 1)" "$AG_AUDIT: $N records, the chain is intact" "verify says how many records"
ag_is "$(echo "$out" | sed -n 2p)" \
    "$AG_AUDIT: its last record is the one the chain's state names: none is missing at the end" \
    "and that the live log ends with the record its chain state names"
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

# a copy, whole: no state file beside it, and verify says its end is not
# checked; torn, it still fails
cp "$AG_AUDIT" "$T"
out=$(verify "$T"); rc=$?
ag_is "$rc" 0 "a copy verifies" "$out"
ag_is "$(echo "$out" | sed -n 2p)" \
    "$T: note: its end is not checked: the chain's state file $AG_DIR/.tampered.chain: No such file or directory" \
    "a copy without a state file: verify says its end is not checked" "$out"
head -c -5 "$AG_AUDIT" > "$T"
tampered "torn, without a state file" "$N" "truncated"

# a line longer than any record (a gzip bomb: 80 MB of one line in a few
# hundred KB) is refused as soon as it passes 64 MiB, not held whole
head -c 80000000 /dev/zero | tr '\0' a | gzip -1 > "$AG_DIR/bomb.jsonl.gz"
# (a sanitizer build's memory is the sanitizer's, and it cannot start in a
# small address space: the bound is measured in the plain build's pass)
san=0
ldd "$AGENTGATE" 2>/dev/null | grep -q libasan && san=1
if [ "$san" = 1 ]; then
	out=$("$AGENTGATE" audit verify "$AG_DIR/bomb.jsonl.gz" 2>&1); rc=$?
elif [ -x /usr/bin/time ] && /usr/bin/time -v true >/dev/null 2>&1; then
	out=$(/usr/bin/time -v "$AGENTGATE" audit verify "$AG_DIR/bomb.jsonl.gz" 2>&1); rc=$?
	rss=$(echo "$out" | sed -n 's/.*Maximum resident set size (kbytes): //p')
	ag_ok "the gzip bomb: verify's peak memory stays near the limit ($rss KiB)" \
	    test "${rss:-999999}" -lt 150000
else
	out=$(ulimit -v 200000; "$AGENTGATE" audit verify "$AG_DIR/bomb.jsonl.gz" 2>&1); rc=$?
fi
ag_is "$rc" 2 "the gzip bomb: refused as a read error (2), not killed" "$out"
ag_like "$out" "bomb.jsonl.gz: line 1 is longer than 67108864 bytes: not an audit log \\(not read further\\)" \
    "the gzip bomb: verify says why" "$out"
out=$([ "$san" = 1 ] || ulimit -v 200000; "$AGENTGATE" audit verify - < "$AG_DIR/bomb.jsonl.gz" 2>&1); rc=$?
ag_is "$rc" 2 "the gzip bomb on standard input, in 200 MB of address space: refused (2)" "$out"
ag_like "$out" "\\(standard input\\): line 1 is longer than" "and said so" "$out"

# usage and read errors are status 2, distinct from a broken chain
"$AGENTGATE" audit verify "$AG_DIR/none" >/dev/null 2>&1
ag_is "$?" 2 "a missing file is a read error (2)"
"$AGENTGATE" audit >/dev/null 2>&1
ag_is "$?" 2 "audit without verify is a usage error (2)"

# sessions writing while verify reads the live log: a record appended
# after verify read the file, or half written when it read it, is read
# again under the chain state's lock, never a false failure
busy() {	# sessions one after another, then the marker
	local i
	for i in $(seq 1 12); do ag_ssh "echo busy $i" >/dev/null 2>&1; done
	touch "$AG_DIR/busy.done"
}
rm -f "$AG_DIR/busy.done"
before=$(wc -l < "$AG_AUDIT")
busy & bpid=$!
runs=0 bad=""
while [ ! -e "$AG_DIR/busy.done" ]; do
	out=$(verify "$AG_AUDIT"); rc=$?
	runs=$((runs + 1))
	[ "$rc" -eq 0 ] || bad="$bad run $runs (rc $rc): $out"
done
wait "$bpid"
ag_ok "they wrote records ($before before)" test "$(wc -l < "$AG_AUDIT")" -gt "$before"
ag_is "$bad" "" "verify never failed while sessions wrote ($runs runs)"
ag_ok "verify ran at least once while they did ($runs runs)" test "$runs" -ge 1

# the last records cut from the live log itself: its state file still
# names the true last record
last_hash=$(tail -n 1 "$AG_AUDIT" | tr -d '\n' | sha256sum | cut -d' ' -f1)
ag_is "$(cat "$(dirname "$AG_AUDIT")/.$(basename "$AG_AUDIT").chain")" "$last_hash" \
    "the chain state holds the hash of the last record"
head -n -2 "$AG_AUDIT" > "$AG_DIR/cut"
cat "$AG_DIR/cut" > "$AG_AUDIT"
cut_hash=$(tail -n 1 "$AG_AUDIT" | tr -d '\n' | sha256sum | cut -d' ' -f1)
out=$(verify "$AG_AUDIT"); rc=$?
ag_is "$rc" 1 "the end cut from the live log: verify fails" "$out"
ag_is "$out" "$AG_AUDIT: records are missing at the end of the file: the chain's state file $(dirname "$AG_AUDIT")/.$(basename "$AG_AUDIT").chain says the last record's hash is $last_hash, the file ends at $cut_hash" \
    "and says records are missing at its end, with both hashes"
out=$("$AGENTGATE" audit verify --config "$AG_DIR/policy.yaml" 2>&1); rc=$?
ag_is "$rc" 1 "so does verify of the policy's file" "$out"

ag_done
