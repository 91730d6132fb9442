#!/bin/bash
# mcp_write_race.sh - the MCP write_file tool against a link swapped in
# after the decision (issue 34), through the real sshd: a process of the
# account outside the sandbox turns the target into a symlink to a
# protected name (.gitattributes, refused at the typed line) and back, as
# fast as it can, while the agent writes the target again and again.  The
# protected file never changes; the calls that lost the race say the link
# was not followed; the test goes on until the race was won at least once
# (a decision that allowed the write while the link was there at the
# write), within a bound of attempts.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_need_sandbox_lib
cat <<'EOF' | ag_write_policy "$AG_DIR/policy.yaml"
version: 1
gateway:
  runner: /bin/bash
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: agent
profiles:
  agent:
    allow: [cat, "true"]
    paths:
      read: ["/"]
      write: ["~"]
    limits: { timeout: 300 }
    unknown: deny
EOF

H=$(getent passwd "$AG_USER" | cut -d: -f6)
W=$H/agt-race-$$
install -d -o "$AG_USER" -m 0755 "$W"
printf 'orig\n' > "$W/.gitattributes"
chown "$AG_USER" "$W/.gitattributes"
SWAP=
stop_swapper() { [ -n "$SWAP" ] && kill -TERM -- "-$SWAP" 2>/dev/null; wait "$SWAP" 2>/dev/null; SWAP=; }
trap 'stop_swapper; rm -rf "$W"; ag_cleanup' EXIT

# a protected name is refused at the typed line, link or not
ln -s .gitattributes "$W/out.txt"
chown -h "$AG_USER" "$W/out.txt"

# the swapper: the account's own process, in a session of its own
setsid runuser -u "$AG_USER" -- bash -c \
    'while :; do ln -sfn .gitattributes "$1/out.txt"; rm -f "$1/out.txt"; done' swap "$W" 2>/dev/null &
SWAP=$!

# the agent: write_file on out.txt until one call was allowed and then met
# the link (the race won), at most BOUND calls; what each call came to
BOUND=3000
"$AG_PYTHON" - "$W/out.txt" "$BOUND" "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" mcp \
    > "$AG_DIR/race.out" 2>"$AG_DIR/race.err" <<'PY'
import json, subprocess, sys
path, bound, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def rpc(i, method, params=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
    while True:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("the session ended")
        r = json.loads(line)
        if r.get("id") == i:
            return r
rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "race", "version": "0"}})
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
counts = {"denied": 0, "written": 0, "link_refused": 0, "other": 0}
for n in range(bound):
    r = rpc(n + 2, "tools/call", {"name": "write_file",
        "arguments": {"path": path, "content": "pwned\n"}})
    res = r.get("result", {})
    s = res.get("structuredContent", {})
    text = json.dumps(s)
    if s.get("decision") == "deny":
        counts["denied"] += 1
    elif "symbolic link" in text:
        counts["link_refused"] += 1
        break
    elif not res.get("isError"):
        counts["written"] += 1
    else:
        counts["other"] += 1
        counts["last_other"] = text[:300]
counts["calls"] = n + 1
p.stdin.close()
p.wait(timeout=60)
print(json.dumps(counts, sort_keys=True))
PY
stop_swapper
out=$(cat "$AG_DIR/race.out")
printf '# %s\n' "$out"
ag_like "$out" '"link_refused": 1' "race_won_within_the_bound" "$out" "$(head -c 600 "$AG_DIR/race.err")"
ag_is "$(cat "$W/.gitattributes")" orig "protected_file_never_changes" "$(cat "$W/.gitattributes")"
ag_ok some_write_was_judged_and_allowed sh -c "printf '%s' '$out' | grep -Eq '\"(written|link_refused)\": [1-9]'"
# the refused write is audited as the command it is
ag_ok link_refusal_audited_with_its_exit ag_audit_query \
    "any(x['event'] == 'command' and x['decision'] == 'allow' and x.get('exit') == 1 and x['command'].startswith('cat > ') for x in r)"

# a plain write still works, also through a directory that is a link (the
# write resolves the directory, then follows no link), and the protected
# name itself is still refused
rm -f "$W/out.txt"
install -d -o "$AG_USER" "$W/sub"
ln -s sub "$W/lnk"
call() {	# call ID PATH: a write_file request line
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"%s","content":"w%s\\n"}}}\n' "$1" "$2" "$1"
}
{
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}' \
	    '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	call 2 "$W/plain.txt"
	call 3 "~/agt-race-$$/lnk/y.txt"
	call 4 "$W/.gitattributes"
} | timeout 120 "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" mcp > "$AG_DIR/plain.out" 2>&1
ag_is "$(cat "$W/plain.txt" 2>&1)" w2 "plain_write_file_writes" "$(cat "$AG_DIR/plain.out")"
ag_is "$(stat -c %U "$W/plain.txt")" "$AG_USER" "written_file_is_the_accounts"
ag_is "$(cat "$W/sub/y.txt" 2>&1)" w3 "write_through_a_linked_directory_works" "$(cat "$AG_DIR/plain.out")"
ag_is "$(cat "$W/.gitattributes")" orig "protected_name_still_refused" "$(cat "$AG_DIR/plain.out")"
ag_done
