#!/bin/bash
# egress_caps.sh - refused network connections are one "net" record each
# for the first 63 of a command line and 1024 of a session, then counted
# in the command's record (net_unrecorded), as refused execs are: a loop
# of refused connects could write gigabytes of records to the audit's
# file system and bury the real ones (red team 20, M4).  Through the real
# sshd with the shipped developer profile (egress through the session's
# proxy on 127.0.0.1:3128).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_shipped_world developer
ag_setgid_gateway

# refused N: N CONNECTs to an address no rule allows, each refused (403)
refused() {
	printf '%s\n' "python3 -c 'import socket
n = 0
for i in range($1):
    s = socket.create_connection((\"127.0.0.1\", 3128))
    s.sendall(b\"CONNECT 10.255.255.1:443 HTTP/1.1\\r\\nHost: 10.255.255.1:443\\r\\n\\r\\n\")
    n += b\" 403 \" in s.recv(200)
    s.close()
print(\"refused\", n)'"
}

# to HOST... : one refused CONNECT to each HOST (a.b.c.d, or a.b.c.d*N for N)
to() {
	printf '%s\n' "python3 -c 'import socket, sys
n = 0
for h in sys.argv[1:]:
    a, _, k = h.partition(\"*\")
    for i in range(int(k or 1)):
        s = socket.create_connection((\"127.0.0.1\", 3128))
        s.sendall(b\"CONNECT %s:443 HTTP/1.1\\r\\n\\r\\n\" % a.encode())
        n += b\" 403 \" in s.recv(200)
        s.close()
print(\"refused\", n)' $*"
}

# counts: per command line, (its refusals recorded, its net_unrecorded)
counts() {
	ag_audit_query '[(len([n for n in r if n.get("event") == "net" and n.get("seq") == c["seq"]
	    and n.get("decision") == "deny"]), c.get("net_unrecorded", 0))
	    for c in r if c.get("event") == "command" and c["command"].startswith("python3")]'
}

# the attack: 200 refused connections in one command, then 5 in the next
out=$( { refused 200; refused 5; } | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "refused 200
refused 5" "egress_caps_every_connection_refused" "$(tail -3 "$AG_DIR/e")"
ag_is "$(counts)" "[(63, 137), (5, 0)]" "egress_caps_per_command_63_then_a_count"
ag_like "$(cat "$AG_DIR/e")" "10\\.255\\.255\\.1" "egress_caps_agent_told"

# the records of the last session only
LAST='[x for x in r if x.get("session") == [y for y in r if y.get("event") == "session_start"][-1]["session"]]'

# at the 256-connection cap: each refusal counts for its line, recorded one
# a second and the rest in net_unrecorded (red team 23, M3: they were lost)
busy=$(printf '%s\n' "python3 -c 'import socket
held = [socket.create_connection((\"127.0.0.1\", 3128)) for i in range(256)]
closed = 0
for i in range(40):
    s = socket.create_connection((\"127.0.0.1\", 3128))
    s.settimeout(20)
    closed += s.recv(100) == b\"\"
    s.close()
print(\"closed\", closed)'" | ag_ssh 2>"$AG_DIR/e")
ag_is "$busy" "closed 40" "egress_caps_busy_refused" "$(tail -3 "$AG_DIR/e")"
ag_is "$(ag_audit_query "[len([x for x in $LAST if x.get('event') == 'net' and x.get('decision') == 'deny' and x['seq'] == c['seq']]) + c.get('net_unrecorded', 0) for c in $LAST if c.get('event') == 'command']")" \
    "[40]" "egress_caps_busy_each_counted"
ag_like "$(cat "$AG_DIR/e")" "256 connections through the proxy are open already" \
    "egress_caps_busy_agent_told"
# the benign twin: once they are closed, the next line's connections are
# served, each refusal its own record
out=$( { refused 2; } | ag_ssh 2>/dev/null)
ag_is "$out" "refused 2" "egress_caps_after_busy_served"
ag_is "$(ag_audit_query "[x['decision'] for x in $LAST if x.get('event') == 'net']")" \
    "['deny', 'deny']" "egress_caps_after_busy_each_recorded"

# the agent is told of every host refused (red team 23, L2): after 700
# refusals of one host, the next one is still said (a retried host is
# told the gateway once, not 700 times into a pipe it reads at the end)
out=$(to '10.255.255.1*700' 10.255.255.2 | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "refused 701" "egress_caps_told_after_many_ran"
ag_like "$(cat "$AG_DIR/e")" "blocked connection to 10\.255\.255\.2:443" \
    "egress_caps_told_after_many" "$(tail -3 "$AG_DIR/e")"
ag_is "$(grep -c 'blocked connection to 10\.255\.255\.1:443' "$AG_DIR/e")" 1 \
    "egress_caps_told_once_per_host"
# ... and of how many it is not shown: 30 hosts do not fit the note
out=$(to $(seq -f '10.255.0.%g' 30) | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "refused 30" "egress_caps_many_hosts_ran"
ag_is "$(( $(grep -c 'blocked connection to 10\.255\.0\.' "$AG_DIR/e") + \
    $(sed -n 's/^agentgate: and \([0-9]*\) more refused connections not listed here.*/\1/p' "$AG_DIR/e") ))" \
    30 "egress_caps_many_hosts_and_n_more" "$(tail -2 "$AG_DIR/e")"
# the benign twin: two hosts, both said, no "more"
out=$(to 10.255.0.1 10.255.0.2 | ag_ssh 2>"$AG_DIR/e")
ag_is "$(grep -c 'blocked connection to 10\.255\.0\.[12]:443' "$AG_DIR/e"):$(grep -c 'more refused' "$AG_DIR/e")" \
    "2:0" "egress_caps_two_hosts_both_told"

# per session: 17 lines of 63 refusals, 1071; 1024 recorded, the rest counted
for i in $(seq 17); do refused 63; done | ag_ssh >"$AG_DIR/o" 2>/dev/null
ag_is "$(grep -c '^refused 63$' "$AG_DIR/o")" 17 "egress_caps_session_lines_ran"
ag_is "$(ag_audit_query "sum(1 for x in $LAST if x.get('event') == 'net')")" 1024 \
    "egress_caps_per_session_1024_records"
ag_is "$(ag_audit_query "sum(x.get('net_unrecorded', 0) for x in $LAST if x.get('event') == 'command')")" 47 \
    "egress_caps_per_session_the_rest_counted"

# the benign twin: a few refusals are each recorded, with what was asked
out=$(refused 2 | ag_ssh 2>/dev/null)
ag_is "$out" "refused 2" "egress_caps_benign_refused"
ag_is "$(ag_audit_query "[(x['decision'], x['dest'].get('host') or x['dest'].get('address'), x['dest'].get('port')) for x in $LAST if x.get('event') == 'net']")" \
    "[('deny', '10.255.255.1', 443), ('deny', '10.255.255.1', 443)]" "egress_caps_benign_each_recorded"
ag_is "$(ag_audit_query "[x.get('net_unrecorded') for x in $LAST if x.get('event') == 'command']")" \
    "[None]" "egress_caps_benign_no_count"

ag_done
