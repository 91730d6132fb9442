#!/bin/bash
# mcp.sh - agents' protocols over the SSH channel (issue 17): MCP driven by
# the official TypeScript SDK's Client (npm), whose stdio transport spawns
# the real ssh with `-s mcp`, through the real sshd and through `agentgate
# serve`; JSON-RPC edge cases written by hand; JSON Lines for scripts.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_need_sandbox_lib
SDK=$(ag_mcp_sdk) || { echo "SKIP: the MCP SDK could not be installed"; exit 77; }
CLIENT=${top_srcdir:-$(dirname "$0")/../..}/tests/integration/mcp_client.mjs

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
    allow: [echo, pwd, cd, export, "true", "false", sleep, cat, ls, printf, head]
    paths:
      read: ["/"]
      write: ["/tmp", "~"]
    limits: { timeout: 300 }
    output: { redact: true, redact_patterns: ["corp-[0-9a-f]{8}"] }
    unknown: deny
EOF

# q JSON PYTHON-EXPR: an expression over the parsed object j
q() { "$AG_PYTHON" -c 'import json, sys; j = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2" 2>&1; }

# mcp_session NAME SSH-ARGV...: the SDK client's whole session; its report in $r
FIFO=$AG_DIR/cancel.fifo
mkfifo -m 0666 "$FIFO"
chmod 0666 "$FIFO"
# in the home (a write root): /tmp is the session's own
FILES=$(getent passwd "$AG_USER" | cut -d: -f6)/agt-mcp-$$
install -d -o "$AG_USER" -m 0755 "$FILES"
trap 'rm -rf "$FILES"; ag_cleanup' EXIT
mcp_session() {
	r=$(timeout 240 node "$CLIENT" "$SDK" "$FIFO" "$FILES" "$@" 2>"$AG_DIR/node.err")
	[ -n "$r" ] || r='{"failure": "no report"}'
	printf '# client: %.300s\n' "$r"
}

check_session() {	# check_session LABEL
	local l=$1
	ag_is "$(q "$r" 'j.get("failure", "none")')" none "${l}_client_completes"
	ag_is "$(q "$r" 'j["server"]["name"]')" agentgate "${l}_initialize_names_the_server"
	ag_is "$(q "$r" '" ".join(j["tools"])')" "explain list_dir read_file request_access run write_file" "${l}_tools_listed"
	ag_is "$(q "$r" 'j["toolsHaveSchemas"]')" True "${l}_tools_have_input_and_output_schemas"
	ag_is "$(q "$r" 'j["allowed"]["s"]["stdout"]')" hello-mcp "${l}_run_returns_stdout"
	ag_is "$(q "$r" 'j["allowed"]["s"]["stderr"]')" to-stderr "${l}_run_keeps_stderr_apart"
	ag_is "$(q "$r" '(j["allowed"]["isError"], j["allowed"]["s"]["exit_code"], j["allowed"]["s"]["decision"])')" \
	    "(False, 0, 'allow')" "${l}_allowed_run_is_a_success"
	ag_is "$(q "$r" '(j["refused"]["isError"], j["refused"]["s"]["decision"], j["refused"]["s"]["exit_code"], j["refused"]["s"]["stdout"])')" \
	    "(True, 'deny', 126, '')" "${l}_refusal_is_a_tool_error"
	ag_like "$(q "$r" 'j["refused"]["s"]["reason"]')" "'rm' is not allowed" "${l}_refusal_says_why"
	ag_is "$(q "$r" '"echo" in j["refused"]["s"]["allowed_here"]')" True "${l}_refusal_lists_what_is_allowed"
	ag_like "$(q "$r" 'j["refused"]["s"]["unlisted_programs"]')" "^(deny|ask|allow|approve)$" "${l}_refusal_says_what_unlisted_programs_get"
	ag_is "$(q "$r" '"allowed_here" in j["allowed"]["s"]')" False "${l}_allowed_run_has_no_allowed_here"
	ag_like "$(q "$r" 'j["refused_part"]["s"]["reason"]')" \
	    "'rm' is not allowed.*; nothing of the line ran \(the part refused: .rm -rf /tmp/nothing-here.\)" \
	    "${l}_refused_part_says_nothing_ran"
	ag_is "$(q "$r" 'j["after_part"]["s"]["stdout"]')" "rc=1" "${l}_refused_line_ran_no_part"
	ag_is "$(q "$r" 'j["cd"]["s"]["cwd"]')" /tmp "${l}_cd_reports_the_new_cwd"
	ag_is "$(q "$r" 'j["after_cd"]["s"]["stdout"]')" $'/tmp\nkept' "${l}_cd_and_export_persist_to_the_next_call"
	ag_is "$(q "$r" '(j["exit_code"]["s"]["exit_code"], j["exit_code"]["isError"])')" "(1, False)" \
	    "${l}_exit_status_is_data"
	ag_is "$(q "$r" '(j["timeout"]["isError"], j["timeout"]["s"]["timed_out"], j["timeout"]["s"]["exit_code"])')" \
	    "(True, True, 124)" "${l}_timeout_s_ends_the_command"
	ag_is "$(q "$r" '(j["cancel"]["rejected"], j["cancel"]["progress"] >= 1)')" "(True, True)" \
	    "${l}_progress_then_cancellation"
	ag_is "$(q "$r" 'j["after_cancel"]["s"]["stdout"]')" $'still-here\n/tmp' "${l}_session_goes_on_after_cancel"
	ag_is "$(q "$r" '(j["explain"]["s"]["decision"], [c["verdict"] for c in j["explain"]["s"]["commands"]])')" \
	    "('deny', ['allow', 'deny'])" "${l}_explain_decides_without_running"
	ag_is "$(q "$r" 'j["unknown_tool"]')" -32602 "${l}_unknown_tool_is_a_protocol_error"
	ag_is "$(q "$r" '(j["write"]["isError"], j["write"]["s"]["bytes"], j["write"]["s"]["decision"])')" \
	    "(False, 31, 'allow')" "${l}_write_file_inside_paths_write"
	ag_is "$(q "$r" 'j["readBack"]')" True "${l}_read_file_returns_what_was_written"
	ag_is "$(q "$r" '[e["type"] for e in j["list"]["s"]["entries"] if e["name"] == "it'"'"'s here.txt"]')" \
	    "['file']" "${l}_list_dir_lists_the_file"
	ag_is "$(q "$r" '(j["writeOutside"]["isError"], j["writeOutside"]["s"]["decision"])')" \
	    "(True, 'deny')" "${l}_write_file_outside_paths_write_refused"
	ag_like "$(q "$r" 'j["writeOutside"]["s"]["reason"]')" "/var/tmp" "${l}_write_file_refusal_names_the_path"
	ag_is "$(q "$r" '(j["writeProtected"]["isError"], j["writeProtected"]["s"]["decision"])')" \
	    "(True, 'deny')" "${l}_write_file_to_a_protected_file_refused"
	ag_is "$(q "$r" '(j["readMissing"]["isError"], j["readMissing"]["s"]["exit_code"])')" \
	    "(True, 1)" "${l}_read_file_of_a_missing_file_is_an_error"
	ag_ok "${l}_nothing_written_outside" test ! -e /var/tmp/agentgate-mcp-outside
	ag_ok "${l}_bashrc_untouched" sh -c "! grep -qs pwned ~$AG_USER/.bashrc"
}

# ---- through the real sshd -------------------------------------------------------
mcp_session "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" mcp
check_session sshd
cancel_gone() { ! pgrep -u "$AG_USER" -f "cat $FIFO" >/dev/null; }
ag_ok sshd_cancel_ended_the_command ag_wait_until 30 cancel_gone
ag_is "$(ag_audit_query 'sorted(set(x.get("mode") for x in r if x.get("event") == "command"))')" \
    "['mcp']" "audit_records_say_mode_mcp"
ag_is "$(ag_audit_query '[(x["decision"], x.get("exit")) for x in r if x.get("event") == "command" and x["command"].startswith("rm ")]')" \
    "[('deny', None)]" "refusal_over_mcp_audited"
ag_like "$(ag_audit_query '[x.get("signal") for x in r if x.get("event") == "command" and "cat '"$FIFO"'" in x["command"]]')" \
    "TERM|KILL|15|9" "cancelled_command_audited_with_its_signal"
ag_is "$(ag_audit_query '[x["decision"] for x in r if x.get("event") == "command" and x["command"].startswith("cat > ")]')" \
    "['allow', 'deny', 'deny']" "file_tools_audited_as_their_commands"
ag_ok "written_content_not_in_the_audit" sh -c "! grep -q 'second, ' '$AG_AUDIT'"

# ---- JSON-RPC edge cases, by hand --------------------------------------------------
# requests that need no command are answered in order, so the answers line
# up with the requests; the last (ping) shows the session survived them all
{
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}'
	printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	printf '%s\n' '{"jsonrpc": "2.0", "id": 2, "method": '
	printf '%s\n' '[{"jsonrpc":"2.0","id":3,"method":"ping"}]'
	printf '%s\n' '{"jsonrpc":"2.0","id":4,"method":"no/such/method"}'
	printf '%s\n' '{"jsonrpc":"2.0","id":5,"method":"notifications/initialized"}'
	printf '{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":"%s"}}\n' "$(head -c 2200000 /dev/zero | tr '\0' x)"
	printf '%s\n' '{"jsonrpc":"1.0","id":7,"method":"ping"}'
	printf '%s\n' '"just a string"'
	printf '%s\n' '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"run"}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"}'
	printf '%s\n' '{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":10,"method":"ping"}'
} | timeout 120 "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" mcp > "$AG_DIR/raw.out" 2>"$AG_DIR/raw.err"
raw_rc=$?
codes=$("$AG_PYTHON" - "$AG_DIR/raw.out" <<'EOF'
import json, sys
out = []
for line in open(sys.argv[1]):
    m = json.loads(line)
    if "error" in m:
        out.append("%s:%s" % (m["id"], m["error"]["code"]))
    elif m["id"] == 9:
        out.append("9:%s" % m["result"]["protocolVersion"])
    else:
        out.append("%s:ok" % m["id"])
print(" ".join(out))
EOF
)
ag_is "$raw_rc" 0 "raw_session_ends_cleanly"
ag_is "$codes" "1:ok None:-32700 None:-32600 4:-32601 5:-32600 None:-32600 7:-32600 None:-32600 8:-32602 None:-32600 9:2025-11-25 10:ok" \
    "jsonrpc_errors_as_the_spec_says"

# ---- JSON Lines ----------------------------------------------------------------------
printf '%s\n' '{"id":1,"command":"cd /tmp; echo one"}' 'not json' '{"id":"two","command":"pwd; exit 4"}' \
    '{"id":3,"command":"rm -f x"}' '{"id":4,"explain":"echo hi"}' '{"id":5}' |
    timeout 120 "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" agentgate-json > "$AG_DIR/jl.out" 2>&1
jl=$("$AG_PYTHON" - "$AG_DIR/jl.out" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if "error" in m:
        print("%s error" % m["id"])
    elif "commands" in m:
        print("%s %s" % (m["id"], m["decision"]))
    else:
        print("%s %s %s %s %r" % (m["id"], m["decision"], m["exit_code"], m["cwd"], m["stdout"]))
EOF
)
ag_is "$(printf '%s\n' "$jl" | sort)" "$(printf '%s\n' "1 allow 0 /tmp 'one\n'" "3 deny 126 /tmp ''" "4 allow" "5 error" \
    "None error" "two allow 4 /tmp '/tmp\n'" | sort)" "json_lines_results"
# allowed_here beside a refusal only; a line refused for one part says
# that nothing of it ran, and which part
jl=$("$AG_PYTHON" - "$AG_DIR/jl.out" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("id") in (1, 3, 4):
        print("%s %s" % (m["id"], "allowed_here" in m))
EOF
)
ag_is "$(printf '%s\n' "$jl" | sort | tr '\n' ' ')" "1 False 3 True 4 False " "json_lines_allowed_here_only_beside_a_refusal"
printf '%s\n' '{"id":1,"command":"echo ran > /tmp/jl-part && rm -f x"}' \
    '{"id":2,"command":"test -e /tmp/jl-part; echo \"rc=$?\""}' |
    timeout 120 "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" agentgate-json > "$AG_DIR/jlp.out" 2>&1
ag_like "$(q "$(sed -n 1p "$AG_DIR/jlp.out")" 'j["reason"]')" \
    "'rm' is not allowed.*; nothing of the line ran \(the part refused: .rm -f x.\)" \
    "json_lines_refused_part_says_nothing_ran"
ag_is "$(q "$(sed -n 2p "$AG_DIR/jlp.out")" 'j["stdout"]')" "rc=1" "json_lines_refused_line_ran_no_part"

# one form of a decision (issue 37): for each line, the protocol's explain
# is explain --json's document (less what only one of them adds), and the
# audit's command record of the line run through the protocol carries the
# same decision, rule and label
FORMS=('echo hi' 'rm -f x' 'cat /etc/hostname | head -1' 'echo $(' 'ls; sudo id' 'printf "%s" a > /tmp/f')
for i in "${!FORMS[@]}"; do
	"$AG_PYTHON" -c 'import json, sys; print(json.dumps({"id": int(sys.argv[1]), "explain": sys.argv[2]})); print(json.dumps({"id": 100 + int(sys.argv[1]), "command": sys.argv[2]}))' "$i" "${FORMS[$i]}"
done | timeout 120 "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" agentgate-json > "$AG_DIR/forms.out" 2>&1
for i in "${!FORMS[@]}"; do
	printf '%s' "${FORMS[$i]}" | "$AGENTGATE" explain --config "$AG_DIR/policy.yaml" --user "$AG_USER" \
	    --cwd "/home/$AG_USER" --json - > "$AG_DIR/forms.explain.$i" 2>/dev/null
done
forms=$("$AG_PYTHON" - "$AG_DIR" "$AG_AUDIT" "${FORMS[@]}" <<'EOF'
import json, sys
d, audit, lines = sys.argv[1], sys.argv[2], sys.argv[3:]
proto = {}
for l in open(d + "/forms.out"):
    m = json.loads(l)
    proto[m["id"]] = m
recs = [json.loads(l) for l in open(audit)]
extra_top, extra_cmd = {"cwd", "allowed_here", "unlisted_programs", "id"}, {"note", "runs", "actions"}
bad = []
for i, line in enumerate(lines):
    e = json.load(open("%s/forms.explain.%d" % (d, i)))
    p = dict((k, v) for k, v in proto[i].items() if k not in extra_top)
    e = dict((k, v) for k, v in e.items() if k not in extra_top)
    e["commands"] = [dict((k, v) for k, v in c.items() if k not in extra_cmd) for c in e["commands"]]
    if p != e:
        bad.append("explain %r: protocol %s, explain --json %s" % (line, p, e))
    a = [r for r in recs if r.get("event") == "command" and r.get("command") == line]
    if not a:
        bad.append("no record of %r" % line)
        continue
    got = tuple(a[-1].get(k) for k in ("decision", "rule", "rule_label"))
    want = tuple(e.get(k) for k in ("decision", "rule", "rule_label"))
    if got != want:
        bad.append("audit %r: %s, explain %s" % (line, got, want))
print("\n".join(bad) or "same")
EOF
)
ag_is "$forms" "same" "one_decision_form_in_explain_protocol_and_audit"

# the example client in contrib/ over the same subsystem
ex_out=$("$AG_PYTHON" "${top_srcdir:-$(dirname "$0")/../..}/contrib/agentgate-json.py" \
    "${AG_SSH[@]:1}" -- 'cd /tmp' 'echo "in $PWD"' 'rm -f x' 2>&1)
ex_rc=$?
ag_like "$ex_out" "in /tmp" "contrib_client_runs_commands_in_one_session" "$ex_out"
ag_like "$ex_out" "\[3\] refused: .*'rm' is not allowed" "contrib_client_shows_refusals"
ag_is "$ex_rc" 126 "contrib_client_exit_status_is_the_last_commands"

# ---- output redaction ----------------------------------------------------------------
# each secret printed in two writes with a pause between, every other one
# on stderr; a private key's lines in writes of their own
SECRETS=(AKIAIOSFODNN7EXAMPLE ghp_0123456789abcdefghijABCDEFGHIJ012345
    glpat-abcdefghij0123456789 xoxb-1234567890-0987654321-abcdefABCDEF
    sk-proj-abcdefghijklmnopqrstuvwxyz0123456789
    sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-_AA
    eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U
    github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS
    AIzaSyA-abcdefghijklmnopqrstuvwxyz01234
    https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX
    corp-deadbeef)
PEMBODY=b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
leak_cmd=""
i=0
for s in "${SECRETS[@]}"; do
	h=$((${#s} / 2)) redir=""
	[ $((i++ % 2)) = 1 ] && redir=" >&2"
	leak_cmd+="printf %s 'tok=${s:0:h}'$redir; sleep 0.05; printf '%s\n' '${s:h}'$redir; "
done
leak_cmd+="printf '%s\n' '-----BEGIN OPENSSH PRIVATE KEY-----'; sleep 0.05; printf '%s\n' $PEMBODY; "
leak_cmd+="sleep 0.05; printf '%s\n' '-----END OPENSSH PRIVATE KEY-----' 'after-key'"
no_secret() {	# no_secret TEXT: none of the secrets, nor the key's body
	local s
	for s in "${SECRETS[@]}" "$PEMBODY"; do
		case $1 in *"$s"*) echo "leaked: $s"; return 1 ;; esac
	done
	return 0
}
ag_run e "$leak_cmd"
ag_ok "exec_output_holds_no_secret" no_secret "$e_out$e_err"
ag_is "$(printf '%s\n' "$e_out" "$e_err" | grep -c '^tok=\[REDACTED\]$')" "${#SECRETS[@]}" \
    "exec_every_secret_replaced"
ag_like "$e_out" $'\\[REDACTED PRIVATE KEY\\]\nafter-key' "exec_private_key_replaced_whole"
"$AG_PYTHON" -c 'import json, sys; print(json.dumps({"id": 1, "command": sys.argv[1]}))' "$leak_cmd" |
    timeout 120 "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" agentgate-json > "$AG_DIR/leak.out" 2>&1
ag_ok "json_output_holds_no_secret" no_secret "$(cat "$AG_DIR/leak.out")"
ag_like "$(q "$(cat "$AG_DIR/leak.out")" 'j["stdout"] + j["stderr"]')" "tok=\[REDACTED\]" \
    "json_secrets_replaced"
# the audit record of the command line holds no token either
ag_run e 'export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345; DB_PASSWORD=hunter2xyz true; echo set'
ag_is "$e_out" set "secret_assignments_run"
ag_ok "audit_holds_no_secret" sh -c "! grep -q -e ghp_0123456789abcdefghijABCDEFGHIJ012345 -e hunter2xyz '$AG_AUDIT'"
ag_like "$(ag_audit_query '[x["command"] for x in r if x.get("event") == "command" and "GITHUB_TOKEN" in x["command"]][0]')" \
    '^export GITHUB_TOKEN=\*\*\*; DB_PASSWORD=\*\*\* true; echo set$' "audit_masks_secret_assignments"

# ---- through agentgate serve --------------------------------------------------------
sed -e 's|^gateway:$|gateway:\n  server: { host_keys: [@DIR@/hostkey], allow_users: [@USER@] }|' \
    "$AG_DIR/policy.yaml" | ag_write_policy "$AG_DIR/serve.yaml"
if ag_start_serve "$AG_DIR/serve.yaml"; then
	mcp_session "${SRV_SSH[@]:0:${#SRV_SSH[@]}-1}" -s "${SRV_SSH[-1]}" mcp
	check_session serve
	ag_ok serve_cancel_ended_the_command ag_wait_until 30 cancel_gone
	printf '%s\n' '{"id":1,"command":"echo via-serve"}' |
	    timeout 120 "${SRV_SSH[@]:0:${#SRV_SSH[@]}-1}" -s "${SRV_SSH[-1]}" agentgate-json > "$AG_DIR/sj.out" 2>&1
	ag_is "$(q "$(cat "$AG_DIR/sj.out")" 'j["stdout"]')" via-serve "serve_json_lines"
	kill "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
else
	ag_fail serve_started "$(cat "$AG_DIR/serve.log")"
fi

ag_done
