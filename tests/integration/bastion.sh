#!/bin/bash
# bastion.sh - bastion mode with two real OpenSSH sshd's on loopback: the
# gateway (sshd with agentgate as ForceCommand, installed set-group-ID as
# make install leaves it) and an upstream with its own host key whose
# authorized_keys holds only the gateway's key, restricted to the loopback
# address.  Commands go there as `@web1 CMD` or after `@web1`: judged at
# the gateway against the upstream's profile, run there, their output,
# status and tracked state coming back; a refused one never reaches it
# (its sshd log and a canary file say so).  The client is locked down: no
# trust on first use, a changed host key refused with the fingerprint in
# the audit record, the agent's ~/.ssh/config never read, the key out of
# the agent's reach.  With a terminal (tmux, ssh -t) the upstream command
# gets a PTY of the client's size, resizes reach it, ^C stops it.  50 MB go
# through a client that reads slowly without the gateway growing.  Port
# forwarding through the gateway (-W, -J, -L) is refused.
. "$(dirname "$0")/lib.sh"
if ! command -v tmux >/dev/null; then
	echo "SKIP: tmux not installed"
	exit 77
fi
ag_setup
ag_setgid_gateway
ag_write_pam use_key allow_unidentified

trap 'tmux -S "$AG_DIR/tmux.sock" kill-server >/dev/null 2>&1; ag_stop_upstream; ag_cleanup' EXIT
ag_start_upstream || exit 99

install -d -o root -g "$G" -m 2770 "$AG_DIR/log/recordings"
# defence in depth: a second gateway key, which the upstream ties to its own
# agentgate (command= in authorized_keys), with a policy of its own
ssh-keygen -q -t ed25519 -N '' -f "$UP/gwkey2" -C agentgate-gateway-guarded || exit 99
chown root:"$G" "$UP/gwkey2"
chmod 0640 "$UP/gwkey2"
cp "$AGENTGATE" "$UP/agentgate"
chmod 0755 "$UP/agentgate"
mkdir -p "$UP/pam.d" "$UP/log"
chown "$UP_USER" "$UP/log"
printf '%s\n' 'auth required pam_permit.so' 'account required pam_permit.so' \
    'session required pam_permit.so' > "$UP/pam.d/agentgate"
cat > "$UP/policy.yaml" <<EOF
version: 1
gateway:
  pam_confdir: $UP/pam.d
  runner: /bin/bash
  sandbox: "off"
  audit: { file: $UP/log/audit.jsonl, required: true }
users:
  $UP_USER: guarded
profiles:
  guarded:
    allow: [echo, id, pwd]
EOF
chmod 0644 "$UP/policy.yaml" "$UP/pam.d/agentgate"
printf 'command="%s --config %s",restrict,pty,from="127.0.0.1" %s\n' "$UP/agentgate" \
    "$UP/policy.yaml" "$(cat "$UP/gwkey2.pub")" >> "$UP/keys/$UP_USER"
# a host that accepts TCP and never says a word: only the connect timeout ends the wait
SILENT_PORT=$(ag_free_port)
"$AG_PYTHON" -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
held = []
while True:
    c, _ = s.accept(); held.append(c)' "$SILENT_PORT" &
SILENT_PID=$!
trap 'kill $SILENT_PID 2>/dev/null; tmux -S "$AG_DIR/tmux.sock" kill-server >/dev/null 2>&1; ag_stop_upstream; ag_cleanup' EXIT
ag_wait_until 60 ag_listening "$SILENT_PID" "$SILENT_PORT"
sed -e "s|@UPPORT@|$UP_PORT|g" -e "s|@UPUSER@|$UP_USER|g" -e "s|@SILENTPORT@|$SILENT_PORT|g" <<'EOF' | ag_write_policy "$AG_DIR/policy.yaml"
version: 1
gateway:
  runner: /bin/bash
  sandbox: "off"
  audit:
    file: @AUDIT@
    required: true
  recordings: @DIR@/log/recordings
users:
  @USER@: ops
upstreams:
  web1:
    host: 127.0.0.1
    port: @UPPORT@
    user: @UPUSER@
    key: @DIR@/up/gwkey
    known_hosts: @DIR@/up/known_hosts
    connect_timeout: 60
    profile: web
    env: { DEPLOY_ENV: staging }
  swapped:
    host: 127.0.0.1
    port: @UPPORT@
    user: @UPUSER@
    key: @DIR@/up/gwkey
    known_hosts: @DIR@/up/wrong_hosts
    profile: web
  unpinned:
    host: 127.0.0.1
    port: @UPPORT@
    user: @UPUSER@
    key: @DIR@/up/gwkey
    known_hosts: @DIR@/up/empty_hosts
    profile: web
  brief:
    host: 127.0.0.1
    port: @UPPORT@
    user: @UPUSER@
    key: @DIR@/up/gwkey
    known_hosts: @DIR@/up/known_hosts
    profile: brief
  guarded:
    host: 127.0.0.1
    port: @UPPORT@
    user: @UPUSER@
    key: @DIR@/up/gwkey2
    known_hosts: @DIR@/up/known_hosts
    verbatim: true
    profile: web
  ecdsaonly:
    host: 127.0.0.1
    port: @UPPORT@
    user: @UPUSER@
    key: @DIR@/up/gwkey
    known_hosts: @DIR@/up/known_hosts
    hostkey_algorithms: ecdsa-sha2-nistp256
    profile: web
  silent:
    host: 127.0.0.1
    port: @SILENTPORT@
    user: @UPUSER@
    key: @DIR@/up/gwkey
    known_hosts: @DIR@/up/known_hosts
    connect_timeout: 2
    profile: web
  db1:
    host: 127.0.0.1
    port: @UPPORT@
    user: @UPUSER@
    key: @DIR@/up/gwkey
    known_hosts: @DIR@/up/known_hosts
    profile: web
profiles:
  ops:
    targets: [local, web1, swapped, unpinned, brief, ecdsaonly, silent, guarded]
    allow: [echo, cat, pwd, id, "true", ls]
    paths: { read: ["/"], write: ["/tmp", "~"] }
    limits: { timeout: 300 }
    unknown: deny
  web:
    allow: [echo, printf, pwd, id, cd, export, "true", "false", test, sleep, stty, head,
            cat, uptime, python3, exit, env]
    paths: { read: ["/"], write: ["/tmp"] }
    limits: { timeout: 300, max_output: 100000000 }
    output: { redact: true }
    unknown: deny
  brief:
    allow: [sleep, echo]
    limits: { timeout: 2 }
EOF

sessions_started() { grep -c 'Starting session' "$UP/sshd.log"; }

# ---- exec: output and status come back --------------------------------------
ag_run a "@web1 echo hello from \$(id -un)"
ag_is "$a_out/$a_rc" "hello from $UP_USER/0" exec_runs_on_the_upstream_as_its_account "$a_err"
ag_run b "@web1 test 1 = 2 || exit 7"
ag_is "$b_rc" 7 exec_status_comes_back "$b_err"
ag_run b2 "@web1 python3 -c 'import os; os.kill(os.getpid(), 9)'"
ag_is "$b2_rc" 137 exec_killed_by_a_signal_upstream_is_128_plus_n "$b2_err"
ag_run c "@web1 echo \$DEPLOY_ENV"
ag_is "$c_out" staging upstream_fixed_env_is_sent "$c_err"
ag_run a2 "@web1
echo second line"
ag_is "$a2_out/$a2_rc" "second line/0" lines_after_a_target_word_run_there "$a2_err"
ag_run d "echo here; id -un"
ag_is "$d_out" "$(printf 'here\n%s' "$AG_USER")" local_commands_still_run_here "$d_err"

# ---- stdin, limits, redaction, the JSON Lines protocol ------------------------------
ag_run s "@web1 cat" <<<"from stdin"
ag_is "$s_out" "from stdin" exec_stdin_reaches_the_upstream_command "$s_err"
printf 'line one\nline two\n' | ag_ssh "@web1 cat > /tmp/upfile-$$" >/dev/null 2>&1
ag_is "$(cat /tmp/upfile-$$ 2>/dev/null)/$(stat -c %U /tmp/upfile-$$ 2>/dev/null)" \
    "$(printf 'line one\nline two')/$UP_USER" exec_stdin_written_upstream_as_its_account
rm -f "/tmp/upfile-$$"
ag_run t "@brief sleep 1000"
ag_is "$t_rc" 124 upstream_command_timed_out "$t_err"
ag_ok timed_out_upstream_sleep_is_gone ag_wait_until 60 bash -c "! pgrep -u '$UP_USER' -x sleep >/dev/null"
ag_run u "@web1 echo key AKIAIOSFODNN7EXAMPLE end"
ag_like "$u_out" "^key .* end$" redacted_line_still_shown "$u_out"
ag_unlike "$u_out" "AKIAIOSFODNN7EXAMPLE" upstream_output_is_redacted
out=$(printf '%s\n' '{"id":1,"command":"@web1 id -un"}' |
    "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" agentgate-json 2>&1)
ag_is "$("$AG_PYTHON" -c 'import json,sys; j=json.loads(sys.argv[1]); print(j["stdout"].strip(), j["exit_code"])' "$out" 2>&1)" \
    "$UP_USER 0" json_lines_run_on_the_upstream "$out"
out=$(printf '%s\n' '{"id":1,"command":"@web1"}' '{"id":2,"command":"cd /tmp"}' \
    '{"id":3,"explain":"uptime"}' '{"id":4,"command":"@local"}' '{"id":5,"explain":"uptime"}' |
    "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" agentgate-json 2>&1)
ag_is "$("$AG_PYTHON" -c 'import json,sys
r = {j["id"]: j for j in map(json.loads, sys.argv[1].splitlines())}
print(r[2]["cwd"], r[3]["decision"], r[4]["cwd"] != "/tmp", r[5]["decision"])' "$out" 2>&1)" \
    "/tmp allow True deny" json_lines_session_target_cwd_and_explain_follow_it "$out"
# MCP's file tools are commands too: after @web1 they read and write there
init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}'
out=$(printf '%s\n' "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":9,"method":"tools/list"}' \
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run","arguments":{"command":"@web1"}}}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/tmp/mcp-'$$'.txt","content":"hello upstream\n"}}}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/tmp/mcp-'$$'.txt"}}}' |
    "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" mcp 2>&1)
ag_is "$("$AG_PYTHON" -c 'import json,sys
r = {j.get("id"): j for j in map(json.loads, sys.argv[1].splitlines())}
print(r[3]["result"]["structuredContent"]["content"].strip())' "$out" 2>&1)/$(stat -c %U "/tmp/mcp-$$.txt" 2>&1)" \
    "hello upstream/$UP_USER" mcp_file_tools_work_on_the_session_target "$out"
ag_like "$("$AG_PYTHON" -c 'import json,sys
r = {j.get("id"): j for j in map(json.loads, sys.argv[1].splitlines())}
print([t["description"] for t in r[9]["result"]["tools"] if t["name"] == "run"][0])' "$out" 2>&1)" \
    "reachable through this gateway: web1, swapped, .*@HOST" mcp_run_tool_names_the_callers_hosts
rm -f "/tmp/mcp-$$.txt"

# ---- a refused command never reaches the upstream --------------------------------
# a session that only connects, and one that also has a command refused:
# the upstream sees the same sessions for both (the connection's own two)
before=$(sessions_started)
printf '%s\n' '@web1' | ag_ssh >/dev/null 2>&1
mid=$(sessions_started)
e_err=$(printf '%s\n' '@web1' "touch /tmp/canary-$$" | ag_ssh 2>&1 >/dev/null)
after=$(sessions_started)
ag_like "$e_err" "agentgate: .*touch" refusal_names_the_program "$e_err"
ag_ok refused_command_left_no_canary test ! -e "/tmp/canary-$$"
ag_is "$((after - mid))" "$((mid - before))" refused_command_opened_no_upstream_session
ag_run e "@web1 touch /tmp/canary-$$"
ag_is "$e_rc/$(test -e /tmp/canary-$$ && echo made)" "126/" refused_upstream_command_is_126 "$e_err"
ag_run e2 "@web1 echo ok > /etc/agentgate-canary-$$"
ag_is "$e2_rc/$(test -e /etc/agentgate-canary-$$ && echo made)" "126/" redirection_outside_target_paths_refused "$e2_err"

# ---- targets the caller may not reach ----------------------------------------------
ag_run f "@db1 true"
ag_is "$f_rc" 126 target_not_in_profile_refused "$f_err"
ag_like "$f_err" "may not reach upstream 'db1'" refusal_says_not_in_targets
ag_run g "@nosuch true"
ag_like "$g_rc $g_err" "^126 .*no such target" unknown_target_refused
ag_is "$(ag_audit_query "any(x.get('command')=='@db1 true' and x.get('decision')=='deny' and x.get('rule')=='targets' for x in r)")" yes \
    refused_target_is_audited

# ---- host keys: pinned only ------------------------------------------------------------
ag_run h "@swapped true"
ag_is "$h_rc" 126 changed_host_key_refused "$h_err"
has() { [[ "$1" == *"$2"* ]]; }
ag_ok changed_host_key_message_has_the_offered_fingerprint has "$h_err" "$UP_FP"
ag_is "$(ag_audit_query "[x['target']['hostkey'] for x in r if x.get('command')=='@swapped true'][-1]")" "$UP_FP" \
    changed_host_key_fingerprint_in_audit
ag_run i "@unpinned true"
ag_like "$i_rc $i_err" "^126 .*no trust on first use" unpinned_host_refused

ag_run i2 "@ecdsaonly true"
ag_like "$i2_rc $i2_err" "^126 .*cannot connect" host_key_algorithms_restrict_what_is_accepted "$i2_err"
ag_run i3 "@silent true"
ag_like "$i3_rc $i3_err" "^126 .*upstream 'silent': cannot connect" silent_host_refused_after_connect_timeout "$i3_err"
ag_run i4 "@web1 bash -i"
ag_like "$i4_rc $i4_err" "^126 .*bash" no_shell_upstream_unless_its_profile_allows_one "$i4_err"

# ---- defence in depth: the upstream's own agentgate judges again ------------------------
ag_run w "@guarded echo judged twice; id -un"
ag_is "$w_out/$w_rc" "$(printf 'judged twice\n%s' "$UP_USER")/0" verbatim_line_runs_under_the_upstreams_agentgate "$w_err"
ag_run w2 "@guarded uptime"
ag_like "$w2_rc $w2_err" "^126 agentgate: .*'uptime' is not allowed in profile 'guarded'" \
    upstream_agentgate_refuses_what_the_gateway_allowed "$w2_err"
ag_is "$(grep '"event":"command"' "$UP/log/audit.jsonl" | grep -c '"command":"echo judged twice; id -un"')" 1 \
    upstream_agentgate_saw_the_exact_line

# ---- the agent's ssh_config is never read ----------------------------------------------
AHOME=$(getent passwd "$AG_USER" | cut -d: -f6)
install -d -o "$AG_USER" -m 0700 "$AHOME/.ssh"
printf 'Host *\n  ProxyCommand touch /tmp/proxy-canary-%s\n  Hostname 192.0.2.1\n' "$$" > "$AHOME/.ssh/config"
chown "$AG_USER" "$AHOME/.ssh/config"
ag_run j "@web1 echo through"
ag_is "$j_out/$j_rc" "through/0" planted_ssh_config_ignored_connection_works "$j_err"
ag_ok planted_proxycommand_never_ran test ! -e "/tmp/proxy-canary-$$"
# the agent's own known_hosts pins nothing for the gateway
cp "$UP/known_hosts" "$AHOME/.ssh/known_hosts"
chown "$AG_USER" "$AHOME/.ssh/known_hosts"
ag_run j2 "@unpinned true"
ag_like "$j2_rc $j2_err" "^126 .*no trust on first use" agents_known_hosts_is_not_trusted
rm -rf "$AHOME/.ssh"

# ---- the key is out of the agent's reach -------------------------------------------------
ag_run k "cat $UP/gwkey"
ag_unlike "$k_out" "PRIVATE KEY" agent_cannot_cat_the_upstream_key_through_the_gateway
ag_ok agent_cannot_read_the_key_outside_the_gateway \
    bash -c "! runuser -u '$AG_USER' -- cat '$UP/gwkey' >/dev/null 2>&1"
ag_run k2 "@web1 env"
ag_unlike "$k2_out" "PRIVATE|gwkey" key_not_in_upstream_command_env

# ---- audit: one record per upstream command, with where it went --------------------------
q="[x for x in r if x.get('event')=='command' and x.get('command','').startswith('@web1 echo hello')][-1]"
ag_is "$(ag_audit_query "$q['target']['name'], $q['target']['user'], $q['target']['hostkey'], $q['target']['key'], $q['exit']")" \
    "('web1', '$UP_USER', '$UP_FP', '$GW_FP', 0)" audit_record_names_target_user_and_both_keys

# ---- the REPL: a session on the upstream, state tracked there ------------------------------
logins() { grep -c 'Accepted publickey' "$UP/sshd.log"; }
before=$(logins)
out=$(printf '%s\n' '@web1' 'cd /tmp' 'export GREETING=hi' 'pwd' 'echo "$GREETING" $?' \
    'false' 'echo $?' '@local' 'pwd' '@web1' 'pwd' 'echo "$GREETING"' | ag_ssh 2>&1)
ag_is "$out" "$(printf '/tmp\nhi 0\n1\n%s\n/tmp\nhi' "$AHOME")" repl_tracks_cwd_env_and_status_per_target "$out"
ag_is "$(($(logins) - before))" 1 one_login_per_session_and_upstream

# ---- 50 MB through a client that reads slowly ------------------------------------------------
cat > "$AG_DIR/slow.py" <<'EOF'
import sys, time
# reads 50 MB in small bites and looks at the most memory the gateway
# (argv[1]: a file with its pid) has held, after 5 MB and after 45 MB: a
# gateway that buffered what the client had not read yet would grow by
# tens of MB in between
def hwm():
    pid = open(sys.argv[1]).read().split()[0]
    for l in open("/proc/%s/status" % pid):
        if l.startswith("VmHWM:"):
            return int(l.split()[1])
got, at5, at45 = 0, None, None
while True:
    b = sys.stdin.buffer.read1(16384)
    if not b:
        break
    got += len(b)
    time.sleep(0.0005)
    if at5 is None and got > 5_000_000:
        at5 = hwm()
    if at45 is None and got > 45_000_000:
        at45 = hwm()
print(got, (at45 or 0) - (at5 or 0) if at5 and at45 else "none")
EOF
"${AG_SSH[@]}" "@web1 head -c 50000000 /dev/zero" 2>"$AG_DIR/slow.err" | {
	ag_wait_until 60 test -n "$(ag_gateway_pids)"
	ag_gateway_pids > "$AG_DIR/gw.pid"
	"$AG_PYTHON" "$AG_DIR/slow.py" "$AG_DIR/gw.pid"
} > "$AG_DIR/slow.out"
read -r got grew < "$AG_DIR/slow.out"
ag_is "$got" 50000000 fifty_mb_arrive_through_a_slow_reader "$(cat "$AG_DIR/slow.err")"
# (AddressSanitizer's quarantine keeps freed memory: measured in plain builds)
if ! ldd "$AGENTGATE" 2>/dev/null | grep -q libasan; then
	ag_ok gateway_memory_stays_bounded_under_a_slow_reader test "$grew" -lt 16384
fi

# ---- no forwarding through the gateway ----------------------------------------------------
ag_ok dash_W_refused bash -c "! ${AG_SSH[*]:0:${#AG_SSH[@]}-1} -W 127.0.0.1:$UP_PORT $AG_USER@127.0.0.1 </dev/null >/dev/null 2>&1"
# -L: the client listens; what connects there must not reach the upstream
LP=$(ag_free_port)
"${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -N -L "$LP:127.0.0.1:$UP_PORT" "$AG_USER@127.0.0.1" </dev/null 2>/dev/null &
LPID=$!
ag_wait_until 60 ag_listening "$LPID" "$LP"
ag_ok dash_L_client_listens ag_up "$LPID" "$LP"
banner=$("$AG_PYTHON" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
got = b""
while b"\n" not in got:
    b = s.recv(256)
    if not b:
        break
    got += b
print(got.decode(errors="replace").strip())' "$LP" 2>&1)
kill "$LPID" 2>/dev/null; wait "$LPID" 2>/dev/null
ag_unlike "$banner" "SSH-2.0" dash_L_forward_never_reaches_the_upstream "$banner"
ag_ok dash_J_refused bash -c "! ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o IdentitiesOnly=yes -i $AG_DIR/client -o ConnectTimeout=60 -J $AG_USER@127.0.0.1:$AG_PORT -p $UP_PORT $UP_USER@127.0.0.1 true </dev/null >/dev/null 2>&1"

# ---- a terminal: PTY upstream, resize, ^C ----------------------------------------------------
printf 'set-option -g remain-on-exit on\n' > "$AG_DIR/tmux.conf"
tm() { tmux -f "$AG_DIR/tmux.conf" -S "$AG_DIR/tmux.sock" "$@"; }
screen() { tm capture-pane -p -J -t "$1" -S -200 2>/dev/null; }
pane_matches() { screen "$1" | grep -Eq -- "$2"; }
wait_for() { ag_wait_until "${3:-30}" pane_matches "$1" "$2"; }
tm new-session -d -s t -x 100 -y 30 "${AG_SSH[*]:0:${#AG_SSH[@]}-1} -t $AG_USER@127.0.0.1 @web1"
wait_for t "$UP_USER@web1:~\\$ " || ag_fail pty_prompt_names_the_target "$(screen t)"
tm send-keys -t t 'stty size' Enter
wait_for t '^30 100' && ag_pass upstream_pty_has_the_client_size || ag_fail upstream_pty_has_the_client_size "$(screen t)"
tm send-keys -t t "python3 -c 'import signal,os; signal.signal(signal.SIGWINCH, lambda *a: (print(\"NOW\", os.get_terminal_size().columns, os.get_terminal_size().lines, flush=True), os._exit(0))); print(\"READY\", flush=True); signal.pause()'" Enter
wait_for t '^READY'
tm resize-window -t t -x 120 -y 40
wait_for t '^NOW 120 40' && ag_pass resize_reaches_the_running_upstream_command ||
    ag_fail resize_reaches_the_running_upstream_command "$(screen t)"
tm send-keys -t t 'stty size' Enter
wait_for t '^40 120' && ag_pass next_upstream_command_has_the_new_size || ag_fail next_upstream_command_has_the_new_size "$(screen t)"
tm send-keys -t t 'sleep 1000' Enter
ag_wait_until 60 pgrep -u "$UP_USER" -x sleep >/dev/null
tm send-keys -t t C-c
ag_wait_until 60 bash -c "! pgrep -u '$UP_USER' -x sleep >/dev/null" && ag_pass ctrl_c_stops_the_upstream_sleep ||
    ag_fail ctrl_c_stops_the_upstream_sleep "$(screen t)"
# the next prompt, then the next line
at_prompt() { screen t | sed '/^$/d' | tail -1 | grep -Eq "^$UP_USER@web1:~\\$ \$"; }
ag_ok prompt_returns_after_ctrl_c ag_wait_until 60 at_prompt
tm send-keys -t t 'echo after-interrupt' Enter
wait_for t '^after-interrupt' && ag_pass session_goes_on_after_ctrl_c || ag_fail session_goes_on_after_ctrl_c "$(screen t)"
# a secret the upstream prints (put together there, so that what is typed
# holds none): the client sees it redacted, and so does the recording
tm send-keys -t t "printf 'key AKIA%s end\\n' IOSFODNN7EXAMPLE" Enter
wait_for t '^key .* end$'
ag_unlike "$(screen t)" 'AKIAIOSFODNN7EXAMPLE' upstream_pty_output_is_redacted "$(screen t)"
# a private key, its body made by printf from octal escapes (MIIBOgIBAAJB):
# one line on the screen, and the body nowhere in the recording either
tm send-keys -t t "printf -- '-----BEGIN %s-----\\n\\115\\111\\111\\102\\117\\147\\111\\102\\101\\101\\112\\102\\n-----END %s-----\\n' 'RSA PRIVATE KEY' 'RSA PRIVATE KEY'" Enter
wait_for t '^\[REDACTED PRIVATE KEY\]'
ag_unlike "$(screen t)" 'MIIBOgIBAAJB' upstream_pty_private_key_is_redacted "$(screen t)"
tm send-keys -t t 'exit' Enter
pane_dead() { tm list-panes -t t -F '#{pane_dead}' 2>/dev/null | grep -q 1; }
ag_wait_until 60 pane_dead
rec=$(ls -t "$AG_DIR/log/recordings"/* 2>/dev/null | head -1)
ag_like "$(cat "$rec" 2>/dev/null)" 'after-interrupt' upstream_pty_session_is_recorded
ag_like "$(cat "$rec" 2>/dev/null)" 'key .*REDACTED.* end' upstream_recording_holds_what_was_shown
ag_unlike "$(cat "$rec" 2>/dev/null)" 'AKIAIOSFODNN7EXAMPLE' upstream_recording_holds_no_redacted_secret
ag_like "$(cat "$rec" 2>/dev/null)" 'REDACTED PRIVATE KEY' upstream_recording_shows_the_key_masked
ag_unlike "$(cat "$rec" 2>/dev/null)" 'MIIBOgIBAAJB' upstream_recording_holds_no_private_key
ag_is "$(ag_audit_query "[x['target'].get('pty') for x in r if x.get('event')=='command' and x.get('command')=='stty size'][0]")" \
    "100x30" audit_record_has_the_pty_size

# ---- serve: the user name names the target (agent:web1@gw) -------------------------------
sed -e 's|^gateway:$|gateway:\n  server: { host_keys: [@DIR@/hostkey], allow_users: [@USER@] }|' \
    "$AG_DIR/policy.yaml" | ag_write_policy "$AG_DIR/serve.yaml"
if ag_start_serve "$AG_DIR/serve.yaml"; then
	SRV=("${SRV_SSH[@]:0:${#SRV_SSH[@]}-1}")
	out=$("${SRV[@]}" "$AG_USER:web1@127.0.0.1" 'id -un; echo $DEPLOY_ENV' 2>&1)
	ag_is "$out" "$(printf '%s\nstaging' "$UP_USER")" serve_user_colon_target_runs_there
	out=$(printf 'pwd\ncd /tmp\npwd\n' | "${SRV[@]}" "$AG_USER:web1@127.0.0.1" 2>&1)
	ag_is "$out" "$(printf '/home/%s\n/tmp' "$UP_USER")" serve_user_colon_target_session_is_there
	out=$("${SRV[@]}" "$AG_USER:db1@127.0.0.1" true 2>&1)
	ag_like "$? $out" "^126 .*may not reach" serve_target_not_in_profile_refused
	out=$("${SRV[@]}" "$AG_USER@127.0.0.1" '@web1 echo $((6*7))' 2>&1)
	ag_is "$out" 42 serve_at_target_word_runs_there
	# a terminal under serve: the window-change request reaches the upstream PTY
	tm new-session -d -s s -x 90 -y 25 "${SRV[*]} -t $AG_USER:web1@127.0.0.1"
	wait_for s "$UP_USER@web1:~\\$ " || ag_fail serve_pty_prompt "$(screen s)"
	tm send-keys -t s 'stty size' Enter
	wait_for s '^25 90' && ag_pass serve_upstream_pty_has_the_client_size ||
	    ag_fail serve_upstream_pty_has_the_client_size "$(screen s)"
	tm resize-window -t s -x 110 -y 35
	tm send-keys -t s 'stty size' Enter
	wait_for s '^35 110' && ag_pass serve_window_change_reaches_the_upstream ||
	    ag_fail serve_window_change_reaches_the_upstream "$(screen s)"
	kill "$SRV_PID" 2>/dev/null
else
	ag_fail serve_starts "$(tail -5 "$AG_DIR/serve.log")"
fi

# ---- explain and doctor know the upstreams ---------------------------------------------
ex=$("$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --profile ops '@web1 touch /tmp/x' 2>&1)
ag_like "$ex" "decision: deny" explain_judges_a_target_line_by_its_profile "$ex"
ex=$("$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --profile ops '@web1 uptime' 2>&1)
ag_like "$ex" "decision: allow" explain_allows_what_the_target_profile_allows "$ex"
doc() { "$AG_DIR/agentgate" doctor --user "$AG_USER" --config "$AG_DIR/policy.yaml" \
    --sshd "$SSHD" --sshd-config "$AG_DIR/sshd_config" 2>&1 | grep "upstream web1: key"; }
ag_like "$(doc)" "^PASS  upstream web1: key" doctor_accepts_the_installed_upstream_key "$(doc)"
chmod 0644 "$UP/gwkey"
ag_like "$(doc)" "^FAIL  expected: upstream web1: key" doctor_flags_an_upstream_key_others_can_read "$(doc)"
ag_run v "@web1 true"
ag_like "$v_rc $v_err" "^126 .*must be a regular file owned by root" gateway_refuses_a_key_others_can_read
chmod 0640 "$UP/gwkey"

ag_done
