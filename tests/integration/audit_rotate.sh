#!/bin/bash
# audit_rotate.sh - the audit chain goes on across rotation (issue 35): the
# real logrotate renames the log (compress, delaycompress, create) under an
# open session, with sessions running while it does and a session that
# starts after it; the new file's first record names the rotated file's
# last one, `agentgate audit verify` checks the series as one chain
# (.gz read, logrotate's numbering put in order, - for standard input, the
# policy's file by default), the newest file alone verifies as a chain that
# starts mid-way, and a record removed inside a file or at the boundary
# between two is found.
. "$(dirname "$0")/lib.sh"
if ! command -v logrotate >/dev/null; then
	echo "SKIP: logrotate not installed (contrib/deps.sh --tests installs it)"
	exit 77
fi
ag_setup

LR=$AG_DIR/logrotate.conf
cat > "$LR" <<EOF
$AG_AUDIT {
	su $AG_USER $AG_USER
	rotate 5
	missingok
	compress
	delaycompress
	create 0600 $AG_USER $AG_USER
}
EOF
rotate() {
	logrotate -f -s "$AG_DIR/logrotate.state" "$LR" 2>&1
}
verify() { "$AGENTGATE" audit verify "$@" 2>&1; }

# a session open across both rotations: its records land in each new file
mkfifo "$AG_DIR/in"
ag_ssh < "$AG_DIR/in" > "$AG_DIR/out" 2>&1 &
spid=$!
exec 9>"$AG_DIR/in"
echo 'echo open-before' >&9
ag_wait_until 30 grep -q open-before "$AG_DIR/out"
ag_run a 'echo one'
ag_run a 'echo two; false'

# sessions running while logrotate renames the file: however they
# interleave with the rename, the chain holds
busy() {	# busy N: N sessions, one after another
	local i
	for i in $(seq 1 "$1"); do ag_ssh "echo busy $i" >/dev/null 2>&1; done
}
busy 4 & b1=$!
busy 4 & b2=$!
out=$(rotate); ag_is "$?" 0 "logrotate rotates the audit log" "$out"
wait "$b1" "$b2"
echo 'echo open-after-first' >&9
ag_wait_until 30 grep -q open-after-first "$AG_DIR/out"
ag_run a 'echo three'

# the second rotation while no session writes: the next session, which
# never saw the rotated file, goes on from it too
out=$(rotate); ag_is "$?" 0 "logrotate rotates it again, compressing the older one" "$out"
ag_ok "the older file is compressed" test -f "$AG_AUDIT.2.gz"
ag_run a 'echo four'
echo 'echo open-after-second' >&9
ag_wait_until 30 grep -q open-after-second "$AG_DIR/out"
echo exit >&9
exec 9>&-
wait "$spid"

ag_like "$(grep -c open-after-second "$AG_AUDIT")" '^[1-9]' "the open session's records go on in the new file"
ag_is "$(zcat "$AG_AUDIT.2.gz" | grep -c '"seed"')" 1 "the chain's start (seed) is in the oldest file"
ag_is "$(cat "$AG_AUDIT.1" "$AG_AUDIT" | grep -c '"seed"')" 0 "and in no other: the chain goes on"
hash_of_last() { tail -n 1 | tr -d '\n' | sha256sum | cut -d' ' -f1; }
ag_is "$(head -n 1 "$AG_AUDIT" | grep -o '"prev":"[0-9a-f]*"')" \
    "\"prev\":\"$(hash_of_last < "$AG_AUDIT.1")\"" "the new file's first record names the rotated file's last"

# ---- the series ----------------------------------------------------------------
N=$(( $(zcat "$AG_AUDIT.2.gz" | wc -l) + $(wc -l < "$AG_AUDIT.1") + $(wc -l < "$AG_AUDIT") ))
out=$(verify "$AG_AUDIT.2.gz" "$AG_AUDIT.1" "$AG_AUDIT"); rc=$?
ag_is "$rc" 0 "the series verifies, oldest first" "$out"
ag_like "$out" "3 files, $N records: the chain is intact across them" "verify counts every record"
ag_like "$out" "$AG_AUDIT: [0-9]+ records, the chain goes on from $AG_AUDIT.1 and is intact" \
    "verify says each file goes on from the one before"
out=$(verify "$AG_AUDIT"*); rc=$?
ag_is "$rc" 0 "the shell's glob order (newest first) is put in logrotate's order" "$out"
ag_like "$(echo "$out" | head -n 1)" "^$AG_AUDIT.2.gz: " "the oldest file first"

# ---- one file alone, standard input, the policy's file ---------------------------
out=$(verify "$AG_AUDIT"); rc=$?
ag_is "$rc" 0 "the newest file alone verifies" "$out"
ag_like "$out" "the chain is intact; it starts mid-chain, going on from the record whose hash is $(hash_of_last < "$AG_AUDIT.1") \\(the file before it was not given\\)" \
    "and verify says it starts mid-chain, from which record"
out=$(verify --from-start "$AG_AUDIT"); rc=$?
ag_is "$rc" 1 "--from-start: a file that does not hold the chain's start fails" "$out"
ag_ok "--from-start: the whole series passes" "$AGENTGATE" audit verify --from-start "$AG_AUDIT"*
out=$(verify - < "$AG_AUDIT.1"); rc=$?
ag_is "$rc" 0 "- reads standard input" "$out"
ag_like "$out" "^\\(standard input\\): [0-9]+ records" "and names it"
out=$(verify - < "$AG_AUDIT.2.gz"); rc=$?
ag_is "$rc" 0 "- reads a compressed file too" "$out"
out=$(verify "$AG_AUDIT.2.gz" - "$AG_AUDIT" < "$AG_AUDIT.1"); rc=$?
ag_is "$rc" 0 "- takes its place in a series" "$out"
out=$(verify --config "$AG_DIR/policy.yaml"); rc=$?
ag_is "$rc" 0 "without FILE, the policy's audit file is verified" "$out"
ag_like "$out" "^$AG_AUDIT: [0-9]+ records, the chain is intact; it starts mid-chain" "named as the policy names it"
# audit show, without FILE, reads the series (like journalctl), oldest first
out=$("$AGENTGATE" audit show --config "$AG_DIR/policy.yaml" --json 2>&1); rc=$?
ag_is "$rc" 0 "without FILE, audit show reads the policy's file" "$out"
ag_is "$(printf '%s\n' "$out" | wc -l)" "$N" "and the files logrotate made of it: every record"
ag_is "$(printf '%s\n' "$out" | head -n 1)" "$(zcat "$AG_AUDIT.2.gz" | head -n 1)" \
    "the oldest file's records first"
ag_is "$(printf '%s\n' "$out" | tail -n 1)" "$(tail -n 1 "$AG_AUDIT")" "the newest file's last"
out=$("$AGENTGATE" audit show --config "$AG_DIR/policy.yaml" --since 1h 2>&1)
ag_like "$out" "echo one" "--since reaches back into the rotated files"
sed '/^  audit:/,/^    required:/d' "$AG_DIR/policy.yaml" > "$AG_DIR/nofile.yaml"
chmod 0644 "$AG_DIR/nofile.yaml"
out=$(verify --config "$AG_DIR/nofile.yaml"); rc=$?
ag_is "$rc" 2 "a policy without an audit file: a usage error" "$out"
ag_like "$out" "configures no audit file \\(gateway.audit.file\\)" "that says so"

# ---- tampering within the series -----------------------------------------------
T=$AG_DIR/t
mkdir -p "$T"
copy() {	# the series as T/audit.jsonl{.2.gz,.1,}
	rm -f "$T"/*
	cp "$AG_AUDIT.2.gz" "$AG_AUDIT.1" "$AG_AUDIT" "$T/"
}
broken() {	# broken NAME FILE LINE PATTERN: the series in T fails there
	out=$(verify "$T/audit.jsonl.2.gz" "$T/audit.jsonl.1" "$T/audit.jsonl"); rc=$?
	ag_is "$rc" 1 "$1: the series fails" "$out"
	ag_like "$out" "^$T/$2: line $3: $4" "$1: the file, the line and what is wrong" "$out"
}
n1=$(wc -l < "$AG_AUDIT.1")
copy; sed -i '3d' "$T/audit.jsonl.1"
broken "a record removed inside a file" audit.jsonl.1 3 "the chain breaks here"
copy; sed -i '$d' "$T/audit.jsonl.1"
broken "the last record of the rotated file removed" audit.jsonl 1 "the chain breaks between the file before this one and this one"
copy; sed -i '1d' "$T/audit.jsonl"
broken "the first record of the new file removed" audit.jsonl 1 "the chain breaks between"
copy; zcat "$AG_AUDIT.2.gz" | sed '2s/"ts":"2/"ts":"1/' | gzip > "$T/audit.jsonl.2.gz"
broken "a record altered inside the compressed file" audit.jsonl.2.gz 3 "the chain breaks here: line 2 was altered"
copy; rm "$T/audit.jsonl.1"; touch "$T/audit.jsonl.1"
broken "a whole file emptied" audit.jsonl 1 "the chain breaks between"
copy
cp "$T/audit.jsonl.1" "$T/b"; cp "$T/audit.jsonl" "$T/c"
out=$(verify "$T/c" "$T/b"); rc=$?
ag_is "$rc" 1 "other names are taken in the order given" "$out"
ag_like "$out" "^$T/b: line 1: the chain breaks between" "and the break is named at the second"
out=$(verify "$T/b" "$T/c"); rc=$?
ag_is "$rc" 0 "in the right order they verify" "$out"
head -c -5 "$AG_AUDIT.2.gz" > "$T/cut.gz"
out=$(verify "$T/cut.gz"); rc=$?
ag_is "$rc" 2 "a compressed file cut short is a read error" "$out"
ag_like "$out" "cut.gz: the compressed file is cut short" "that says so"
[ "$n1" -ge 3 ] || ag_fail "the rotated file is long enough for the tests above ($n1 records)"

ag_done
