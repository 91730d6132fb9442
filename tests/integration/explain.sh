#!/bin/bash
# explain.sh - `agentgate explain` as admins use it: exit status per verdict
# (0 allow, 1 deny, 2 ask, 3 parse error, 4 usage/config), the text and JSON
# outputs, a multi-line script on stdin, --cwd.  Uses the built binary and a
# policy file in a private temporary directory; needs no root, no sshd (of
# tests/integration/lib.sh it uses the assertions and ag_done only).
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
AGENTGATE=${AGENTGATE:-$top_builddir/src/agentgate}
PY=$(command -v python3 || true)

. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

[ -x "$AGENTGATE" ] || { echo "missing $AGENTGATE"; exit 99; }

D=$(mktemp -d /tmp/agentgate-explain.XXXXXX) || exit 99
trap 'rm -rf "$D"' EXIT
chmod 755 "$D"
mkdir -p "$D/home/work"
cat > "$D/agentgate.yaml" <<'EOF'
version: 1
gateway:
  default_profile: readonly
profiles:
  readonly:
    allow:
      - ls
      - cat
      - grep
      - { command: git, subcommands: [status, log, diff, show], allow_options: ["-C"] }
    deny:
      - { command: cat, args: ["/etc/shadow*"] }
    paths: { read: ["/"], write: ["~/work"] }
    unknown: deny
  asker:
    allow: [ls]
    unknown: ask
    validator: { url: "http://127.0.0.1:9/v1/chat/completions", model: m }
EOF
chmod 644 "$D/agentgate.yaml"
export HOME="$D/home"

ex() { "$AGENTGATE" explain --config "$D/agentgate.yaml" --cwd "$D/home/work" "$@"; }

status_is() {	# status_is NAME EXPECTED ARGS...
	local name=$1 want=$2 out rc
	shift 2
	out=$(ex "$@" 2>&1)
	rc=$?
	ag_is "$rc" "$want" "$name" "output: $out"
}

status_is "allow exits 0" 0 -- 'git log --oneline -n 3 | grep fix'
status_is "words after -- are joined" 0 -- ls -la "$D"
status_is "deny exits 1" 1 -- 'ls; rm -rf x'
status_is "ask exits 2" 2 --profile asker -- 'make'
status_is "parse error exits 3" 3 -- 'echo "unterminated'
status_is "no command exits 4" 4
status_is "unknown profile exits 4" 4 --profile nope -- ls
status_is "bad option exits 4" 4 --frobnicate -- ls
status_is "missing file exits 4" 4 --config "$D/nope.yaml" -- ls
status_is "--cwd decides relative paths" 1 --cwd /etc -- 'cat shadow'

out=$(ex -- 'echo hi > ~/.bashrc')
case "$out" in
*"decision: deny"*"path:protect"*) ag_pass "text output names decision and rule" ;;
*) ag_fail "text output names decision and rule" "$out" ;;
esac
case "$(ex -- 'ls -la | grep x')" in
*"program: /"*"/ls"*"program: /"*"/grep"*) ag_pass "one line per command with its program" ;;
*) ag_fail "one line per command with its program" "$(ex -- 'ls -la | grep x')" ;;
esac

out=$(printf 'ls\ncat <<EOF\n$(rm x)\nEOF\n' | ex -)
rc=$?
if [ "$rc" = 1 ] && [[ "$out" == *"'rm' is not allowed in profile 'readonly'"* ]]; then
	ag_pass "script on stdin: here-doc body checked"
else
	ag_fail "script on stdin: here-doc body checked" "exit $rc" "$out"
fi

if [ -n "$PY" ]; then
	out=$(ex --json -- 'git -C dir --no-pager status; cat /etc/shadow')
	if printf '%s' "$out" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["decision"] == "deny", d
assert d["rule"] == "profiles.readonly.deny[0]", d
assert d["parse_error"] is False
c = d["commands"]
assert [x["name"] for x in c] == ["git", "cat"], c
assert c[0]["verdict"] == "allow" and c[1]["verdict"] == "deny", c
assert c[1]["offset"] == 30, c
assert c[0]["rule"] == "profiles.readonly.allow[3]", c
'; then ag_pass "--json: decision, rule and per-command entries"; else ag_fail "--json" "$out"; fi
	out=$(ex --json -- 'ls |')
	if printf '%s' "$out" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["decision"] == "deny" and d["parse_error"] is True and d["rule"] == "parse", d
'; then ag_pass "--json: parse error"; else ag_fail "--json parse error" "$out"; fi
else
	echo "# python3 not found: JSON checks skipped"
fi

# a refused transfer points only at what the profile offers instead
cat > "$D/xfer.yaml" <<'EOF'
version: 1
gateway: { sandbox: "off" }
profiles:
  none: { allow: [ls], file_transfer: { sftp: "off" } }
  both: { allow: [ls, cat], file_transfer: { sftp: read } }
  sftp: { allow: [ls], file_transfer: { sftp: read } }
EOF
chmod 0644 "$D/xfer.yaml"
declare -A hint
for p in none both sftp; do
	hint[$p]=$("$AGENTGATE" explain --config "$D/xfer.yaml" --profile "$p" -- 'scp -f /etc/hosts' |
	    sed -n 's/^reason: //p')
done
ag_is "${hint[none]}" "scp file transfer is off for profile none (file_transfer.scp)" \
    "transfer refusal offers nothing the profile lacks"
ag_like "${hint[both]}" "; use sftp or commands such as cat instead$" "transfer refusal offers sftp and cat"
ag_like "${hint[sftp]}" "; use sftp instead$" "transfer refusal offers sftp alone"

ag_done
