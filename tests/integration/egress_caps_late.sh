#!/bin/bash
# egress_caps_late.sh - a refusal that lands after its line has ended (the
# proxy was still resolving the name when the line's settle gave up on it)
# counts against the session's cap only: it neither resets the running
# line's per-line counts nor is taken for one of its refusals (red team 23,
# M2: such a straggler reset them, and the running line's refusals past 63
# were then neither recorded nor counted).
#
# A name server of the test's own is the proxy's resolver
# (ag_private_resolver, egress/fakedns.py): it answers a name under
# .slow.test only once the agent's next line has made
# ~/work/release (when 70 of the next line's refusals are made), and
# then writes ~/work/answered.  Rule "*.test:80"; every
# name resolves to 127.0.0.1, which a pattern rule never reaches.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# the resolver, before sshd starts (the gateway and its proxy inherit it)
ag_private_resolver "$@"

ag_setup
ag_shipped_world developer
ag_setgid_gateway
sed -i 's|^      presets: \[npm, pypi, crates, go, github\].*|&\n      allow: ["*.test:80"]|' \
    "$AG_DIR/policy.yaml"
"$AGENTGATE" check --config "$AG_DIR/policy.yaml" >/dev/null || exit 99

ag_fakedns_start "$W/release" "$W/answered"
trap 'kill $AG_FAKEDNS_PID 2>/dev/null; ag_cleanup; rm -rf "$AG_NSDIR"' EXIT

install -o "$AG_USER" -g "$AG_USER" -m 0644 /dev/stdin "$W/c.py" <<'PY'
import os, socket, sys, time
def req(name):
    s = socket.create_connection(("127.0.0.1", 3128), 15)
    s.sendall(b"CONNECT %s:80 HTTP/1.1\r\n\r\n" % name.encode())
    return s
if sys.argv[1] == "straggle":
    # asked, then gone: the proxy is still resolving when the line ends
    req("a.slow.test")
    print("asked")
else:
    # "release N": N refusals, the straggler let go once 70 are made (past
    # the line's cap of 63), so that it lands among them
    got = 0
    for i in range(int(sys.argv[2])):
        if i == 70 and sys.argv[1] == "release":
            open("release", "w").close()
            while not os.path.exists("answered"):
                time.sleep(0.05)
        s = req("x%d.fast.test" % i)
        got += s.recv(100).startswith(b"HTTP/1.1 403")
        s.close()
    print("refused", got)
PY

# line 1 leaves a.slow.test resolving; line 2 refuses 100 and lets it be
# answered among them; line 3 (the benign twin) refuses one
out=$(printf '%s\n' 'cd ~/work' 'python3 c.py straggle' 'python3 c.py release 100' \
    'python3 c.py flood 1' | ag_ssh 2>"$AG_DIR/e")
ag_is "$out" "asked
refused 100
refused 1" "egress_caps_late_lines_ran" "$(tail -3 "$AG_DIR/e")"
# per line: (its deny records, its net_unrecorded)
ag_is "$(ag_audit_query '[(c["command"], len([n for n in r if n.get("event") == "net" and
    n.get("seq") == c["seq"] and n.get("decision") == "deny"]), c.get("net_unrecorded", 0))
    for c in r if c.get("event") == "command" and c["command"].startswith("python3")]')" \
    "[('python3 c.py straggle', 1, 0), ('python3 c.py release 100', 63, 37), ('python3 c.py flood 1', 1, 0)]" \
    "egress_caps_late_running_line_counted"
# the straggler: recorded, as its own line's (refused: loopback)
ag_like "$(ag_audit_query '[(n["seq"], n["dest"].get("host"), n.get("reason")) for n in r
    if n.get("event") == "net" and "slow" in str(n.get("dest"))]')" \
    "a.slow.test.*loopback" "egress_caps_late_straggler_recorded"
"$AGENTGATE" audit verify --from-start "$AG_AUDIT" >/dev/null
ag_is "$?" 0 "egress_caps_late_chain_intact"

ag_done
