#!/usr/bin/env bash
# faults.sh - faults injected for real, and what must hold after each
# (issue 14's fault suite): the gateway killed with SIGKILL mid-command
# leaves no process of the command's tree behind, whatever the tree did
# to get away (background jobs, setsid, double forks), and the command's
# write-ahead audit record, under sshd and under serve.  Under the sandbox
# every command runs in the session's PID namespace, whose init dies with
# the gateway.  A policy replaced by an invalid one mid-session: the running
# session goes on with what it loaded, new ones are refused with one short
# line (the detail, file:line:col, is for the admin: syslog, agentgate check).
# (The audit disk full: audit_required.sh; the collector down: audit_http.sh;
# tampering as the agent's uid: privsep.sh; 200 sessions: audit_concurrent.sh.)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_need_sandbox_lib
ag_write_policy "$AG_DIR/policy.yaml" <<'EOF'
version: 1
gateway:
  runner: /bin/bash
  sandbox: required
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: t
profiles:
  t:
    allow: [ls, cat, sleep, setsid, echo, "true", grep, wc]
    features: { background: allow, subshell: allow }
    paths: { read: ["/"], write: ["/tmp"] }
    limits: { timeout: 600 }
EOF


sleeps() { pgrep -u "$AG_USER" -x sleep | wc -l; }

# ---- the command's view: its own processes only ------------------------------
# (its shell is pid 2 after the namespace's init; ls and grep make four)
ag_run v 'echo $$; ls /proc | grep -c "^[0-9]"'
ag_like "$(echo $v_out)" "^2 [1-6]$" "a command sees only its session's processes" "$v_err"

# ---- SIGKILL of the gateway mid-command (sshd) ---------------------------------
"${AG_SSH[@]}" 'sleep 3131 & setsid sleep 3132 & (sleep 3133 &); sleep 3134' >/dev/null 2>&1 &
client=$!
ag_wait_until 60 sh -c "[ \$(pgrep -u $AG_USER -x sleep | wc -l) -ge 4 ]"
ag_is "$(sleeps)" 4 "the command's tree is running (four sleeps)"
gw=$(ag_gateway_pids)
ag_like "$gw" '^[0-9]+$' "the gateway is found"
kill -KILL $gw
ag_wait_until 60 sh -c "! pgrep -u $AG_USER -x sleep >/dev/null"
ag_is "$(sleeps)" 0 "SIGKILL of the gateway leaves no process of the tree (setsid, double fork)"
ag_wait_until 60 sh -c "! pgrep -u $AG_USER -x agentgate >/dev/null"
ag_is "$(pgrep -u "$AG_USER" -x agentgate | wc -l)" 0 \
    "nor any helper of the gateway (the namespace's keeper and init)"
wait "$client" 2>/dev/null
# the killed command left its write-ahead record, and nothing after it
ag_is "$(ag_audit_query '[x["event"] for x in r if "sleep 3134" in (x.get("command") or "")]')" \
    "['command_start']" "the killed command's write-ahead record is in the audit log"
ag_ok "the audit file's chain still verifies" "$AGENTGATE" audit verify "$AG_AUDIT"

# ---- background jobs end with their command line, in the namespace too ---------
ag_run b 'setsid sleep 3135 & (sleep 3136 &); echo started'
ag_is "$b_out" "started" "a line that leaves jobs behind returns"
ag_wait_until 60 sh -c "! pgrep -u $AG_USER -x sleep >/dev/null"
ag_is "$(sleeps)" 0 "what it left running was swept when it ended"

# ---- the policy replaced by an invalid one mid-session -------------------------
mkfifo "$AG_DIR/repl.in"
"${AG_SSH[@]}" < "$AG_DIR/repl.in" > "$AG_DIR/repl.out" 2>&1 &
repl=$!
exec 7>"$AG_DIR/repl.in"
echo "echo before-$$" >&7
ag_wait_until 120 grep -q "before-$$" "$AG_DIR/repl.out"
cp "$AG_DIR/policy.yaml" "$AG_DIR/policy.good"
printf 'version: 1\nprofiles:\n  t: { allow: [echo }\n' | ag_write_policy "$AG_DIR/policy.yaml"
ag_run n "echo new-session"
ag_is "$n_out/$n_rc" "/1" "a new session is refused while the policy is invalid" "$n_err"
ag_is "$n_err" "agentgate: policy unavailable; the administrator has been told" \
    "the client gets one short line, not the policy's detail" "$n_err"
ag_like "$("$AGENTGATE" check --config "$AG_DIR/policy.yaml" 2>&1)" "policy\.yaml:[0-9]+:[0-9]+: " \
    "agentgate check names file:line:col"
echo "echo after-$$" >&7
ag_wait_until 120 grep -q "after-$$" "$AG_DIR/repl.out"
ag_like "$(cat "$AG_DIR/repl.out")" "after-$$" "the running session goes on with the policy it loaded"
exec 7>&-
wait "$repl"
ag_is "$?" 0 "the running session ends normally"
cp "$AG_DIR/policy.good" "$AG_DIR/policy.yaml"
ag_run n "echo restored"
ag_is "$n_out" restored "the repaired policy is used by the next session"

# ---- SIGKILL of the gateway mid-command (serve) --------------------------------
# serve opens the audit log as root, then hands it to the session process
sed -e 's|^gateway:$|gateway:\n  server: { host_keys: [@DIR@/hostkey], allow_users: [@USER@] }|' \
    "$AG_DIR/policy.yaml" > "$AG_DIR/serve.in"
ag_write_policy "$AG_DIR/serve.yaml" < "$AG_DIR/serve.in"
ag_start_serve "$AG_DIR/serve.yaml" || exit 99
# the session processes: serve's, running as the account
session_pids() { pgrep -u "$AG_USER" -x agentgate; }
"${SRV_SSH[@]}" 'sleep 4141 & setsid sleep 4142 & (sleep 4143 &); sleep 4144' >/dev/null 2>&1 &
client=$!
ag_wait_until 60 sh -c "[ \$(pgrep -u $AG_USER -x sleep | wc -l) -ge 4 ]"
ag_is "$(sleeps)" 4 "serve: the command's tree is running (four sleeps)"
sp=$(session_pids | tr '\n' ' ')
ag_like "$sp" '^[0-9]+' "serve: the session process is found"
kill -KILL $sp
ag_wait_until 60 sh -c "! pgrep -u $AG_USER -x sleep >/dev/null"
ag_is "$(sleeps)" 0 "serve: SIGKILL of the session process leaves no process of the tree"
wait "$client" 2>/dev/null
ag_is "$(ag_audit_query '[x["event"] for x in r if "sleep 4144" in (x.get("command") or "")]')" \
    "['command_start']" "serve: the killed command's write-ahead record is in the audit log"
ag_ok "serve: the audit file's chain still verifies" "$AGENTGATE" audit verify "$AG_AUDIT"
ag_ok "serve: the server goes on after a session was killed" kill -0 "$SRV_PID"
out=$("${SRV_SSH[@]}" 'echo after' 2>&1)
ag_is "$out" after "serve: a new session runs after the kill"
kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null

ag_done
