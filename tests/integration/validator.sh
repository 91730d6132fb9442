#!/bin/bash
# validator.sh - `unknown: ask` through the real sshd, with the gateway
# installed set-group-ID as make install leaves it and a local validator
# speaking the Chat Completions protocol (fake_validator.py: it allows a
# command whose first word is on its list).
#
#   - an ask-allowed program runs, under the kernel sandbox; in the strict
#     tier it may execute for that command only (a later command cannot
#     exec it through python3);
#   - an ask-denied one is refused (126) with the validator's reason and
#     what the profile allows, and does not run;
#   - the API key is readable by no command (cat, python3, /proc of the
#     gateway) in either tier, and is in no environment, output or record;
#   - the same command twice in a session is asked once (cache);
#   - max_per_minute refuses the asks past it;
#   - a validator that is down refuses, naming the class;
#   - the audit record of each: decision, validator name/kind/model,
#     reason, verdict, latency, cache, http status, prompt hash.
. "$(dirname "$0")/lib.sh"
ag_own_mount_ns "$@"
# sshd's ForceCommand names no --config: a policy on the command line is
# the caller's word and its secrets are read as the caller, so the key is
# only the gateway's to read from the default policy path
AG_FORCE_COMMAND="@DIR@/agentgate" ag_setup
ag_need_sandbox_lib
ag_default_policy_path
ag_setgid_gateway
KEY=sk-test-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$KEY" > "$AG_DIR/validator.key"
chown root:"$G" "$AG_DIR/validator.key"
chmod 0640 "$AG_DIR/validator.key"

SRV=$AG_DIR/srv
mkdir -p "$SRV"
JUDGE_ALLOW=tac,uname,rev "$AG_PYTHON" "$(dirname "$0")/fake_validator.py" "$SRV" &
VAL_PID=$!
trap 'kill $VAL_PID ${SRV_PID:-} 2>/dev/null; ag_cleanup' EXIT
ag_wait_until 60 test -s "$SRV/port" || { echo "the fake validator did not start" >&2; exit 99; }
P=$(cat "$SRV/port")
CLOSED=$(ag_free_port)
W=/home/$AG_USER/work
mkdir -p "$W"
printf 'one\ntwo\nthree\n' > "$W/lines.txt"
chown -R "$AG_USER" "$W"

policy() {	# policy TIER URL-PORT MAX-PER-MINUTE [SANDBOX]
	sed -e "s|@TIER@|$1|" -e "s|@PORT@|$2|" -e "s|@RATE@|$3|" -e "s|@SANDBOX@|${4:-required}|" <<'EOF' | ag_write_policy "$AG_DIR/policy.yaml"
version: 1
gateway:
  runner: /bin/bash
  sandbox: "@SANDBOX@"
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: agent
profiles:
  agent:
    tier: @TIER@
    allow: [ls, cat, echo, env, python3, "true"]
    paths: { read: ["/"], write: ["~/work", "/tmp"] }
    env: { set: { PATH: "/usr/local/bin:/usr/bin:/bin" } }
    limits: { timeout: 300 }
    unknown: ask
    validator:
      name: judge
      url: http://127.0.0.1:@PORT@/judge/v1/chat/completions
      model: test-model
      api_key_file: @DIR@/validator.key
      timeout_ms: 3000
      max_per_minute: @RATE@
EOF
}
nreq() { if [ -f "$SRV/requests.jsonl" ]; then wc -l < "$SRV/requests.jsonl"; else echo 0; fi; }
# the last command record of the audit log, one field (python expression on c)
lastrec() { ag_audit_query "[x for x in r if x.get('event') == 'command'][-1]$1"; }

policy strict "$P" 100

# ---- an ask-allowed program runs, under the sandbox -------------------------------
n0=$(nreq)
ag_run a "tac ~/work/lines.txt"
ag_is "$a_out/$a_rc" "$(printf 'three\ntwo\none')/0" "an ask-allowed program runs" "$a_err"
ag_is "$(( $(nreq) - n0 ))" "1" "the validator was asked once"
ag_is "$(lastrec "['decision']")" "ask-allow" "audit: decision ask-allow"
ag_is "$(lastrec "['rule']")" "validator:judge" "audit: the rule names the validator"
ag_is "$(ag_audit_query "(lambda v: (v['name'], v['kind'], v['model']))([x for x in r if x.get('event') == 'command'][-1]['validator'])")" \
    "('judge', 'openai', 'test-model')" "audit: validator name, kind and model"
ag_is "$(ag_audit_query "(lambda v: (v['verdict'], v['cache'], v['http_status'], v['reason']))([x for x in r if x.get('event') == 'command'][-1]['validator'])")" \
    "('allow', 'miss', 200, \"tac is on the judge's list\")" "audit: verdict, cache miss, status and reason"
ag_ok "audit: latency recorded" test "$(lastrec "['validator']['latency_ms']")" -ge 0
sent_sha=$(tail -n 1 "$SRV/requests.jsonl" | "$AG_PYTHON" -c 'import json,sys,hashlib
r=json.loads(sys.stdin.read()); print(hashlib.sha256(r["body"]["messages"][0]["content"].encode()).hexdigest())')
ag_is "$(lastrec "['validator']['prompt_sha256']")" "$sent_sha" \
    "audit: prompt_sha256 is the SHA-256 of the system prompt sent"
doc=$(tail -n 1 "$SRV/requests.jsonl" | "$AG_PYTHON" -c 'import json,sys
r=json.loads(sys.stdin.read()); d=json.loads(r["body"]["messages"][1]["content"])
print(d["user"], d["profile"], d["tier"], d["cwd"], bool(d.get("session")), d["client"].split(":")[0])')
ag_is "$doc" "$AG_USER agent strict /home/$AG_USER True $AG_SRC" \
    "the request document names user, profile, tier, cwd, session and client"
ag_like "$(tail -n 1 "$SRV/requests.jsonl")" "\"authorization\": \"Bearer $KEY\"" \
    "the key reaches the validator in its header"

# the grant was for that command only
ag_run b "python3 -c 'import os; os.execv(\"/usr/bin/tac\", [\"tac\", \"/etc/hostname\"])'"
ag_unlike "$b_rc" '^0$' "strict: an ask-allowed program is not executable by a later command" "$b_out $b_err"
ag_like "$b_err" "Permission denied" "strict: the kernel refused that exec" "$b_err"
# and the grant names only what the validator judged
ag_run c "tac ~/work/lines.txt | python3 -c 'import os; os.execv(\"/usr/bin/rev\", [\"rev\", \"/etc/hostname\"])'"
ag_like "$c_err" "Permission denied" "strict: within the allowed line, other programs stay closed" "$c_out $c_err"

# ---- an ask-denied program is refused and does not run --------------------------------
ag_run d "touch ~/work/canary"
ag_is "$d_rc" "126" "an ask-denied command is refused with 126" "$d_err"
ag_like "$d_err" "refused by validator 'judge': touch is not on the judge's list" \
    "the validator's reason is shown" "$d_err"
ag_like "$d_err" "allowed here: .*cat" "with what the profile allows" "$d_err"
ag_ok "the refused command did not run" test ! -e "$W/canary"
ag_is "$(lastrec "['decision']")" "ask-deny" "audit: decision ask-deny"
ag_is "$(lastrec "['validator']['verdict']")" "deny" "audit: the validator's verdict"

# ---- the key: no command can read it ---------------------------------------------
key_probes() {	# key_probes TIER
	ag_run k "cat $AG_DIR/validator.key"
	ag_unlike "$k_out$k_err" "$KEY" "$1: cat cannot read the key"
	ag_like "$k_err" "Permission denied" "$1: cat is refused by the kernel or the file's mode" "$k_err"
	ag_run k "python3 -c 'print(open(\"$AG_DIR/validator.key\").read())'"
	ag_unlike "$k_out$k_err" "$KEY" "$1: python3 cannot read the key"
	# the gateway holds it in memory: its /proc files are not the agent's
	ag_run k "python3 -c '
import os
p = os.getppid()
for n in range(6):
    for f in (\"environ\", \"mem\", \"cmdline\"):
        try:
            print(open(\"/proc/%d/%s\" % (p, f), \"rb\").read(65536))
        except Exception as e:
            print(\"no\", f, type(e).__name__)
    p = int(open(\"/proc/%d/stat\" % p).read().split(\")\")[1].split()[1])
    if p <= 1: break
'"
	ag_unlike "$k_out" "$KEY" "$1: no process above the command shows the key"
	ag_run k "env"
	ag_unlike "$k_out" "$KEY|validator.key" "$1: the key is not in a command's environment"
}
key_probes strict
# a key file whose mode is wrong is still hidden from every command by the
# sandbox (doctor fails such a mode)
chmod 0644 "$AG_DIR/validator.key"
ag_run k "cat $AG_DIR/validator.key"
ag_unlike "$k_out" "$KEY" "strict: a world-readable key file is still unreadable to a command" "$k_err"
ag_run k "python3 -c 'print(open(\"$AG_DIR/validator.key\").read())'"
ag_unlike "$k_out" "$KEY" "strict: python3 cannot read it either" "$k_err"
chmod 0640 "$AG_DIR/validator.key"

# ---- the same command twice in one session: asked once ------------------------------
n0=$(nreq)
ag_run r <<< "$(printf 'uname -s\nuname -s\nuname -r\n')"
ag_is "$r_rc" "0" "a REPL session of asks" "$r_err"
ag_is "$(( $(nreq) - n0 ))" "2" "an identical command in the same session is not sent twice"
ag_is "$(ag_audit_query "[x['validator']['cache'] for x in r if x.get('event') == 'command' and 'validator' in x][-3:]")" \
    "['miss', 'hit', 'miss']" "audit: cache miss, hit, miss"

# ---- rate limit ------------------------------------------------------------------
policy strict "$P" 2
ag_run r <<< "$(printf 'uname -s\nuname -r\nuname -m\n')"
ag_like "$r_err" "rate-limit" "the ask past max_per_minute is refused, naming the class" "$r_err"
ag_is "$(ag_audit_query "[x['validator'].get('error_class') for x in r if x.get('event') == 'command' and 'validator' in x][-3:]")" \
    "[None, None, 'rate-limit']" "audit: the third ask is the one refused"

# ---- the validator is down ----------------------------------------------------------
policy strict "$CLOSED" 100
ag_run x "uname -a"
ag_is "$x_rc" "126" "a validator that cannot be reached refuses (126)" "$x_err"
ag_like "$x_err" "validator 'judge' gave no usable answer \(connect:" \
    "the message names the class" "$x_err"
ag_is "$(lastrec "['validator']['error_class']")" "connect" "audit: error_class connect"
ag_is "$(lastrec "['decision']")" "ask-deny" "audit: a failure is an ask-deny"

# ---- developer tier: the same, and the key still unreadable ------------------------
policy developer "$P" 100
ag_run v "uname -s"
ag_is "$v_out/$v_rc" "Linux/0" "developer: an ask-allowed program runs" "$v_err"
ag_run v "touch ~/work/canary2"
ag_is "$v_rc" "126" "developer: an ask-denied program is refused" "$v_err"
ag_ok "developer: it did not run" test ! -e "$W/canary2"
key_probes developer
chmod 0644 "$AG_DIR/validator.key"
ag_run k "cat $AG_DIR/validator.key"
ag_unlike "$k_out" "$KEY" "developer: a world-readable key file is still unreadable to a command" "$k_err"
ag_run k "python3 -c 'print(open(\"$AG_DIR/validator.key\").read())'"
ag_unlike "$k_out" "$KEY" "developer: python3 cannot read it either" "$k_err"
chmod 0640 "$AG_DIR/validator.key"

# ---- with the sandbox off, only the gateway's own protections stand ----------------
# A command that can see every process of the account looks for the key in
# the memory of each (the gateway that read it, its helpers, the runner);
# it is given the key reversed, so that the command line (recorded) holds
# no copy.
policy strict "$P" 100 off
PROBE="uname -s; python3 -c '
import os, subprocess, sys, time
key = sys.argv[1][::-1].encode()
# the control: a child holding a marker, which the scan must find
mark = (\"MARK-\" + str(os.getpid()) + \"-\" + sys.argv[1][:6]).encode()
c = subprocess.Popen([sys.executable, \"-c\",
    \"import sys, time; print(len(sys.argv[1]), flush=True); time.sleep(600)\", mark],
    stdout=subprocess.PIPE)
c.stdout.readline()
def scan(p, needle):
    try:
        maps = open(\"/proc/%s/maps\" % p).read().splitlines()
        mem = open(\"/proc/%s/mem\" % p, \"rb\")
    except OSError:
        return None
    for l in maps:
        f = l.split()
        a, b = (int(x, 16) for x in f[0].split(\"-\"))
        if \"r\" not in f[1] or b - a > (1 << 28):
            continue
        try:
            for off in range(a, b, 1 << 20):
                mem.seek(off)
                if needle in mem.read(min((1 << 20) + len(needle), b - off)):
                    return True
        except (OSError, ValueError, OverflowError):
            pass
    return False
found = [p for p in os.listdir(\"/proc\") if p.isdigit() and int(p) != os.getpid()
         and scan(p, key)]
print(\"control\", scan(str(c.pid), mark), \"found\", found)
c.kill()
' $(printf '%s' "$KEY" | rev)"
ag_run m "$PROBE"
ag_like "$m_out" "^Linux" "sandbox off: the ask still runs the command" "$m_err"
ag_like "$m_out" "control True" "sandbox off: the scan finds what a process it may read holds" "$m_out $m_err"
ag_like "$m_out" "found \[\]" "sandbox off: no process the agent can read holds the key" "$m_out $m_err"
# the helper that asks is the agent's uid's to signal (with the sandbox off):
# killing it costs the session nothing but a new one
KILLER="python3 -c 'import os
for p in os.listdir(\"/proc\"):
    try:
        if open(\"/proc/%s/comm\" % p).read().strip() == \"agentgate-ask\":
            os.kill(int(p), 9); print(\"killed\")
    except (OSError, ValueError):
        pass'"
ag_run k <<< "$(printf 'uname -s\n%s\nuname -r\n' "$KILLER")"
ag_is "$(printf '%s\n' "$k_out" | sed -n '2p;3p' | tr '\n' ' ')" "killed $(uname -r) " \
    "a killed helper is started again at the next ask" "$k_out $k_err"
ag_run m "cat $AG_DIR/validator.key"
ag_unlike "$m_out" "$KEY" "sandbox off: the key file's mode still keeps cat out" "$m_err"

# ---- only the helper that asks holds the key, seen by root -------------------------
# While a command of a session that has asked waits, root reads the memory
# of every process of the account (the gateway, the helpers that hold the
# sandbox's namespaces, the runner shell, the command): the key is in one,
# the helper that makes the exchanges (agentgate-ask), which no command
# can read (above); the gateway, whose memory its children inherit, never
# holds it.
policy strict "$P" 100
mkfifo -m 0644 "$AG_DIR/gate"
printf 'uname -s\ncat %s/gate\n' "$AG_DIR" | ag_ssh > "$AG_DIR/held.out" 2>&1 &
HELD=$!
ag_wait_until 120 pgrep -u "$AG_USER" -x cat >/dev/null ||
    { echo "the held command did not start: $(cat "$AG_DIR/held.out")" >&2; exit 99; }
scan=$("$AG_PYTHON" - "$AG_USER" "$KEY" <<'EOF'
import os, pwd, sys
uid = pwd.getpwnam(sys.argv[1]).pw_uid
key = sys.argv[2].encode()
seen, found = 0, []
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        if os.stat("/proc/" + p).st_uid != uid:
            continue
        maps = open("/proc/%s/maps" % p).read().splitlines()
        mem = open("/proc/%s/mem" % p, "rb")
    except OSError:
        continue
    seen += 1
    hit = False
    for l in maps:
        f = l.split()
        a, b = (int(x, 16) for x in f[0].split("-"))
        # a sanitizer's shadow is terabytes of nothing: what a key could be
        # in is the heap, the stack and the data of the program and libraries
        if "r" not in f[1] or b - a > (1 << 28):
            continue
        try:
            for off in range(a, b, 1 << 20):
                mem.seek(off)
                if key in mem.read(min((1 << 20) + len(key), b - off)):
                    hit = True
        except (OSError, ValueError, OverflowError):
            pass
    if hit:
        found.append(open("/proc/%s/comm" % p).read().strip())
print("scanned", seen, "found", found)
EOF
)
echo released > "$AG_DIR/gate"
wait "$HELD"
ag_like "$(cat "$AG_DIR/held.out")" "^Linux" "the session asked before it was held" "$(cat "$AG_DIR/held.out")"
ag_like "$scan" "scanned ([3-9]|[1-9][0-9])" "root read the memory of the session's processes" "$scan"
ag_like "$scan" "found \['agentgate-ask'\]$" "of the session's processes, only the helper that asks holds the key" "$scan"

# ---- agentgate serve: the same stage behind the built-in server ---------------------
policy strict "$P" 100
sed -e 's|^gateway:$|gateway:\n  server: { host_keys: [@DIR@/hostkey], allow_users: [@USER@] }|' \
    "$AG_DIR/policy.yaml" > "$AG_DIR/serve.in"
ag_write_policy "$AG_DIR/serve.yaml" < "$AG_DIR/serve.in"
if ag_start_serve "$AG_DIR/serve.yaml"; then
	out=$("${SRV_SSH[@]}" 'uname -s' 2>&1)
	ag_is "$out" "Linux" "serve: an ask-allowed program runs" "$out"
	out=$("${SRV_SSH[@]}" 'touch ~/work/canary3' 2>&1)
	ag_like "$out" "refused by validator 'judge': touch is not on the judge's list" \
	    "serve: an ask-denied one is refused with the validator's reason" "$out"
	ag_ok "serve: it did not run" test ! -e "$W/canary3"
	ag_is "$(ag_audit_query "[(x['mode'], x['decision']) for x in r if x.get('event') == 'command'][-2:]")" \
	    "[('server', 'ask-allow'), ('server', 'ask-deny')]" "serve: both recorded as asks"
	kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null
else
	ag_fail "serve started" "$(cat "$AG_DIR/serve.log")"
fi

# ---- the key appears in no record ---------------------------------------------------
ag_unlike "$(cat "$AG_AUDIT")" "$KEY" "the key is in no audit record"
ag_unlike "$(cat "$AG_DIR/sshd.log" 2>/dev/null)" "$KEY" "the key is in no log line"
ag_ok "audit chain still verifies" "$AGENTGATE" audit verify "$AG_AUDIT"

ag_done
