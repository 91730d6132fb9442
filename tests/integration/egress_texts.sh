#!/bin/bash
# egress_texts.sh - what the egress proxy writes down and tells the agent
# (red team 23): a plain-HTTP URL's query string (a token put in a URL)
# is masked in the net record as the command record masks a secret, and
# not in the refusal's reason either (L1); a name under a pattern rule
# that resolves to a private network's address or into the host is
# refused with a true text that does not give the agent the address it
# resolved to (the proxy would be a resolver for internal names), and an
# IPv6 address is written in brackets (L3).  A request the proxy is still
# resolving when the session ends gets its record all the same (L4).
#
# The proxy's resolver is the test's (ag_private_resolver,
# egress/fakedns.py): x.priv.test is 10.255.255.1, z.slow.test is never
# answered, any other name is 127.0.0.1.  Rules "*.test:80" and "GET plain.example/pub/**", the latter
# mapped by gateway.egress.resolve onto a plain-HTTP listener of the
# test's, which logs each request line it gets.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_private_resolver "$@"
ag_setup
ag_shipped_world developer
ag_setgid_gateway

"$AG_PYTHON" - "$AG_DIR/http.port" "$AG_DIR/http.log" <<'PY' &
import os, socket, sys, threading
portfile, logpath = sys.argv[1:3]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
open(portfile + ".tmp", "w").write("%d\n" % s.getsockname()[1])
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = s.accept()
    line = c.makefile("rb").readline().decode(errors="replace").strip()
    with open(logpath, "a") as f:
        f.write(line + "\n")
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
    c.close()
PY
HTTP_PID=$!
ag_fakedns_start "$AG_DIR/never" "$AG_DIR/answered"
trap 'kill $HTTP_PID $AG_FAKEDNS_PID 2>/dev/null; ag_cleanup; rm -rf "$AG_NSDIR"' EXIT
ag_wait_until 30 test -s "$AG_DIR/http.port" || exit 99
sed -i 's|^      presets: \[npm, pypi, crates, go, github\].*|&\n      allow: ["*.test:80", "GET plain.example/pub/**"]|' \
    "$AG_DIR/policy.yaml"
ag_egress_resolve "$AG_DIR/policy.yaml" "plain.example:80=127.0.0.1:$(cat "$AG_DIR/http.port")"
"$AGENTGATE" check --config "$AG_DIR/policy.yaml" >/dev/null || exit 99

# the requests are in the file, not on the command line (which the
# command record masks by its own rules)
install -o "$AG_USER" -g "$AG_USER" -m 0644 /dev/stdin "$W/c.py" <<'PY'
import socket, sys
reqs = [
    "GET http://plain.example/pub/ok?access_token=ghp_SECRETx1 HTTP/1.1\r\nHost: plain.example\r\n\r\n",
    "GET http://plain.example/pub/plain HTTP/1.1\r\nHost: plain.example\r\n\r\n",
    "GET http://plain.example/priv?access_token=ghp_SECRETx2 HTTP/1.1\r\nHost: plain.example\r\n\r\n",
    "CONNECT x.priv.test:80 HTTP/1.1\r\n\r\n",
    "CONNECT y.test:80 HTTP/1.1\r\n\r\n",
    "CONNECT [fd00::9]:443 HTTP/1.1\r\n\r\n",
    "CONNECT z.slow.test:80 HTTP/1.1\r\n\r\n",
]
s = socket.create_connection(("127.0.0.1", 3128), 15)
s.sendall(reqs[int(sys.argv[1])].encode())
if sys.argv[1] == "6":
    print("asked")      # and gone: its name is never answered
    sys.exit(0)
r = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    r += d
head, _, body = r.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode(), "|", body.decode().strip())
PY

out=$( { printf 'cd ~/work\n'; for i in 0 1 2 3 4 5 6; do printf 'python3 c.py %s\n' $i; done; } |
    ag_ssh 2>"$AG_DIR/e")
line() { printf '%s\n' "$out" | sed -n "$1p"; }

# L1: the query reaches the host, and nowhere in the audit
ag_like "$(line 1)" "^HTTP/1.1 200 OK \| ok$" "egress_texts_query_request_served" "$out"
ag_like "$(cat "$AG_DIR/http.log")" "^GET /pub/ok\?access_token=ghp_SECRETx1 HTTP/1.1$" \
    "egress_texts_query_forwarded_whole"
ag_is "$(grep -c 'ghp_SECRET' "$AG_AUDIT")" 0 "egress_texts_query_not_in_the_audit" \
    "$(grep 'ghp_SECRET' "$AG_AUDIT")"
ag_is "$(ag_audit_query "[(x['decision'], x.get('path')) for x in r if x.get('event') == 'net' and x.get('proto') == 'http']")" \
    "[('allow', '/pub/ok?***'), ('allow', '/pub/plain'), ('deny', '/priv?***')]" \
    "egress_texts_query_masked_path_kept"
ag_like "$(line 2)" "^HTTP/1.1 200 OK \| ok$" "egress_texts_plain_path_served"
ag_like "$(line 3)" "^HTTP/1.1 403 .*GET plain.example:80/priv \(allowed" \
    "egress_texts_refusal_names_the_path_not_the_query"

# L3: a private network's address under a pattern rule: a true text, no address
ag_like "$(line 4)" "x.priv.test resolves to a private network's address, which a pattern rule \('\*.test:80'\) does not reach: a network.allow rule naming the host exactly, or the address, does" \
    "egress_texts_private_under_pattern_told_what_reaches_it"
ag_unlike "$(line 4)$(cat "$AG_DIR/e")" "10\.255\.255\.1" "egress_texts_private_address_not_told"
ag_is "$(ag_audit_query "[x['dest'].get('address') for x in r if x.get('event') == 'net' and x['dest'].get('host') == 'x.priv.test']")" \
    "['10.255.255.1:80']" "egress_texts_private_address_recorded"
# ... and loopback: refused whatever the rule, said so without "inside this host"
ag_like "$(line 5)" "y.test resolves to a loopback address, which only a network.allow rule naming that address reaches" \
    "egress_texts_loopback_told"
ag_unlike "$(line 5)" "127\.0\.0\.1|inside this host" "egress_texts_loopback_address_not_told"
ag_like "$(line 6)" "^HTTP/1.1 403 .*blocked connection to \[fd00::9\]:443: " \
    "egress_texts_ipv6_in_brackets"

# L4: a request still resolving when the session ends has its record, as
# its line's (the name is never answered: the proxy stops first)
PENDING="[(x['decision'], x.get('error')) for x in r if x.get('event') == 'net' and x['dest'].get('host') == 'z.slow.test' and x['seq'] == [c['seq'] for c in r if c.get('event') == 'command' and c['command'] == 'python3 c.py 6'][0]]"
ag_wait_until 30 ag_audit_query "len($PENDING) > 0" >/dev/null
ag_like "$(ag_audit_query "$PENDING")" "^\[\('allow', 'the session ended while the proxy was resolving" \
    "egress_texts_pending_at_session_end_recorded"
"$AGENTGATE" audit verify --from-start "$AG_AUDIT" >/dev/null
ag_is "$?" 0 "egress_texts_chain_intact"

ag_done
