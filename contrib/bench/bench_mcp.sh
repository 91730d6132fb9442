#!/usr/bin/env bash
# bench_mcp.sh - what the agent protocols cost per call, as ratios against
# the piped REPL measured in the same run (needs root: it starts a real
# sshd on 127.0.0.1 and creates a throwaway account, like the tests).
#
#   per call: N `run` calls in one MCP session (ssh -s mcp), and N requests
#   in one JSON Lines session (ssh -s agentgate-json), each vs N lines piped
#   into one REPL session; every session's own start-up (an empty one) is
#   measured and subtracted.  Goal: <= 1.1x.
#
#   AGENTGATE=build/src/agentgate bash contrib/bench/bench_mcp.sh [N]
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
N=${1:-300}
: "${AGENTGATE:=$repo/build/src/agentgate}"
export AGENTGATE
. "$repo/tests/integration/lib.sh"

ag_setup
ag_write_policy "$AG_DIR/policy.yaml" <<'EOF2'
version: 1
gateway:
  sandbox: "off"		# the protocols' own cost (bench_sandbox measures the sandbox's)
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: bench
profiles:
  bench:
    allow: [ls, echo, "true", head, cat]
    paths: { read: ["/"], write: ["/tmp"] }
    env:
      set: { PATH: "/usr/local/bin:/usr/bin:/bin" }
EOF2

SUB=("${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}")
now() { date +%s.%N; }
calc() { "$AG_PYTHON" -c "print($1)"; }

init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}'
mcp_lines() {	# mcp_lines CMD N
	printf '%s\n' "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	"$AG_PYTHON" -c 'import json, sys
for i in range(int(sys.argv[1])):
    print(json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                      "params": {"name": "run", "arguments": {"command": sys.argv[2]}}}))' "$2" "$1"
}
jsonl_lines() {	# jsonl_lines CMD N
	"$AG_PYTHON" -c 'import json, sys
for i in range(int(sys.argv[1])):
    print(json.dumps({"id": i + 1, "command": sys.argv[2]}))' "$2" "$1"
}
per_call() {	# per_call N FEED CMD: ms per call, empty session subtracted
	local n=$1 t0 t1 t2 t3
	shift
	"$@" 0 > "$AG_DIR/feed0"
	"$@" "$n" > "$AG_DIR/feedn"
	t0=$(now); "${FEED_TO[@]}" < "$AG_DIR/feed0" >/dev/null; t1=$(now)
	"${FEED_TO[@]}" < "$AG_DIR/feedn" >/dev/null; t2=$(now)
	calc "(($t2 - $t1) - ($t1 - $t0)) / $n * 1000"
}
repl_lines() { local i; for ((i = 0; i < $2; i++)); do printf '%s\n' "$1"; done; }

echo "agentgate agent-protocol benchmark (N=$N), $(nproc) CPUs, $(date -u +%FT%TZ)"
printf '  %-12s %10s %10s %10s %8s %8s\n' command "REPL ms" "MCP ms" "JSONL ms" "MCP" "JSONL"
for cmd in 'true' 'echo hello' 'ls /'; do
	FEED_TO=("${AG_SSH[@]}");	repl=$(per_call "$N" repl_lines "$cmd")
	FEED_TO=("${SUB[@]}" mcp);	mcp=$(per_call "$N" mcp_lines "$cmd")
	FEED_TO=("${SUB[@]}" agentgate-json); jl=$(per_call "$N" jsonl_lines "$cmd")
	printf '  %-12s %10.3f %10.3f %10.3f %7.2fx %7.2fx\n' "$cmd" "$repl" "$mcp" "$jl" \
	    "$(calc "$mcp / $repl")" "$(calc "$jl / $repl")"
done
echo "  goal: <= 1.1x"
