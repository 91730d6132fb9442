#!/bin/bash
# egress_adversary.sh - the ways around the session's egress (issue 32),
# through the real sshd with the shipped developer profile.
#
# A sandboxed session has a network namespace of its own with only its
# loopback; the one way out is the gateway's proxy on 127.0.0.1:3128,
# which judges host names.  The test runs listeners OUTSIDE the namespace
# (TCP and UDP on 0.0.0.0 and ::, an abstract and a pathname Unix socket)
# that write down whatever reaches them, and then tries every way out it
# knows of, as an agent would, three ways: a C program the agent uploads
# and builds with cc in ~/work (egress/netprobe.c), python3
# (egress/probe.py) and Makefile recipes (egress/probe.mk: the compiler,
# the built program, python3, bash's /dev/tcp and /dev/udp, curl).
#
# The probes: plain TCP to 127.0.0.1, ::1 and the host's own addresses;
# TCP Fast Open (sendto and sendmsg with MSG_FASTOPEN); listen() without
# bind() (the test then knocks from outside); request_key and add_key
# (the upcall runs in the host's namespaces); io_uring (setup, and the
# UDP, TCP and MPTCP sockets made through it); raw, ping, packet and vsock
# sockets; UDP; MPTCP; DNS straight to resolvers; the sockets of other
# processes (pidfd_getfd) and inherited ones; and through the proxy:
# CONNECT and SOCKS5 to addresses and names no rule allows, a name that
# resolves to loopback, the cloud metadata address, SOCKS5 BIND and UDP
# ASSOCIATE, SOCKS4, a Host header other than the request's, a tunnel to a
# host whose rule is for plain HTTP with a method and path, dot segments,
# requests smuggled behind a refusal, in a body or a pipeline.  With a
# rule "*:PORT" (any name): the spellings of loopback and of this host.
#
# Each must fail (NAME=refused:...), nothing may reach a listener outside,
# the proxy's refusals must each be a "net" audit record with decision
# deny, and the agent is told on stderr.  The benign side: a host the
# rules allow (mapped by gateway.egress.resolve onto a listener the test
# runs on 127.0.0.1) is reached through CONNECT and SOCKS5, and a plain
# HTTP GET its rule allows goes through.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

EG_SRC=${top_srcdir:-$(dirname "$0")/../..}/tests/integration/egress

ag_setup
ag_need_sandbox_lib
ag_shipped_policy developer
ag_setgid_gateway

H=/home/$AG_USER
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "$H/work"

# ---- the host as seen from outside the session ------------------------------------
H4=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
H6=$(ip -6 -o addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
if [ -z "$H4" ]; then
	for a in $(hostname -I 2>/dev/null); do
		case $a in *:*) [ -z "$H6" ] && H6=$a ;; *) [ -z "$H4" ] && H4=$a ;; esac
	done
fi
NETNS=$(stat -L -c %i /proc/self/ns/net)
# names the wild rule tries: only those /etc/hosts resolves (any other
# would make the proxy ask the machine's DNS)
WILDNAMES=
for n in localhost LOCALHOST "$(hostname)"; do
	getent -s files hosts "$n" >/dev/null 2>&1 && WILDNAMES=${WILDNAMES:+$WILDNAMES,}$n
done

# ---- the listeners outside the namespace -----------------------------------------
OUT=$AG_DIR/outside
install -d -m 0755 "$OUT"
PUB=$AG_DIR/pub
install -d -m 1777 "$PUB"
ABSTRACT=agentgate-egress-$$
# a pathname socket where the account's own daemons listen (the systemd
# user manager's bus lives here): hidden in the session's mount namespace
RTDIR=/run/user/$(id -u "$AG_USER")
RT_MADE=
if [ ! -d "$RTDIR" ]; then
	install -d -o "$AG_USER" -m 0700 "$RTDIR" && RT_MADE=$RTDIR
fi
# and where other daemons keep theirs, by construction rather than by a
# list: a directory of /run no list names (a database's), and /tmp (a tmux
# server's, an ssh-agent's), both open to every uid
DAEMONDIR=/run/agentgate-egress-$$
install -d -m 0755 "$DAEMONDIR"
UNIXPATH=$RTDIR/agentgate-outside.sock,$DAEMONDIR/daemon.sock,/tmp/agentgate-egress-$$.sock
: > "$OUT/hits"
"$AG_PYTHON" - "$OUT" "$ABSTRACT" "$UNIXPATH" <<'OUTSIDE' &
# hits: whatever reaches the outside listeners, one line each.
# allowed.log: connections to the allowed host's stand-in (127.0.0.1).
# http.log: requests the plain-HTTP stand-in got, as a lenient server
# reads them (whitespace before a colon forgiven, the last Content-Length,
# chunked bodies), with what a strict one would have refused.
import os, socket, sys, threading
d, abstract, upath = sys.argv[1:4]
lock = threading.Lock()

def log(fn, line):
    with lock:
        with open(os.path.join(d, fn), "a") as f:
            f.write(line + "\n")

def serve(s, handler):
    def loop():
        while True:
            try:
                c, peer = s.accept()
            except OSError:
                continue
            threading.Thread(target=handler, args=(c, peer), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()

def peer_of(peer):
    return peer[0] if isinstance(peer, tuple) else "unix"

def outside(tag):
    def h(c, peer):
        log("hits", "%s %s" % (tag, peer_of(peer)))
        try:
            c.sendall(b"agentgate-outside\n")
            c.settimeout(2)
            c.recv(4096)
        except OSError:
            pass
        c.close()
    return h

def allowed(c, peer):
    log("allowed.log", "connection from %s" % peer_of(peer))
    try:
        c.sendall(b"agentgate-allowed\n")
        c.settimeout(10)
        while c.recv(4096):
            pass
    except OSError:
        pass
    c.close()

def plain(c, peer):
    f = c.makefile("rb")
    try:
        while True:
            line = f.readline(8192)
            if not line:
                break
            req = line.decode("latin-1").rstrip("\r\n")
            hosts, cls, te, close, flags = [], [], False, False, []
            while True:
                h = f.readline(8192).decode("latin-1")
                if h in ("\r\n", "\n", ""):
                    break
                name, _, value = h.partition(":")
                if name != name.strip():
                    flags.append("space-before-colon")
                name, value = name.strip().lower(), value.strip()
                if name == "host":
                    hosts.append(value)
                elif name == "content-length":
                    cls.append(value)
                elif name == "transfer-encoding" and "chunked" in value.lower():
                    te = True
                elif name == "connection" and value.lower() == "close":
                    close = True
            if len(hosts) > 1:
                flags.append("two-hosts")
            if len(set(cls)) > 1:
                flags.append("two-lengths")
            if te and cls:
                flags.append("length-and-chunked")
            if te:
                while True:
                    n = int(f.readline().strip() or b"0", 16)
                    f.read(n + 2) if n else f.readline()
                    if n == 0:
                        break
            elif cls:
                f.read(int(cls[-1]))
            w = req.split(" ")
            log("http.log", "%s %s host=%s flags=%s" % (w[0], w[1] if len(w) > 1 else "",
                ",".join(hosts), ",".join(flags)))
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nplain-ok\n")
            if close:
                break
    except (OSError, ValueError):
        pass
    c.close()

def bind_pair(kind):
    """the same port on 0.0.0.0 and :: (v6 only)"""
    for _ in range(50):
        a = socket.socket(socket.AF_INET, kind)
        a.bind(("0.0.0.0", 0))
        port = a.getsockname()[1]
        b = socket.socket(socket.AF_INET6, kind)
        b.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            b.bind(("::", port))
            return a, b, port
        except OSError:
            a.close()
            b.close()
    sys.exit("no port free on both 0.0.0.0 and ::")

t4, t6, port = bind_pair(socket.SOCK_STREAM)
for s, tag in ((t4, "tcp4"), (t6, "tcp6")):
    s.listen(64)
    serve(s, outside(tag))
# UDP on the same port number where it is free
u4 = u6 = None
for p in (port, 0):
    try:
        u4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u4.bind(("0.0.0.0", p))
        u6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        u6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        u6.bind(("::", u4.getsockname()[1]))
        break
    except OSError:
        u4 = u6 = None
if u4 is None:
    u4, u6, _ = bind_pair(socket.SOCK_DGRAM)
uport = u4.getsockname()[1]
def udp(s, tag):
    def loop():
        while True:
            data, peer = s.recvfrom(4096)
            log("hits", "%s %s" % (tag, peer[0]))
            s.sendto(data, peer)
    threading.Thread(target=loop, daemon=True).start()
udp(u4, "udp4")
udp(u6, "udp6")
ua = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ua.bind("\0" + abstract)
ua.listen(8)
serve(ua, outside("unix-abstract"))
for p in upath.split(","):
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    up.bind(p)
    os.chmod(p, 0o777)
    up.listen(8)
    serve(up, outside("unix-path"))
al = socket.socket()
al.bind(("127.0.0.1", 0))
al.listen(64)
serve(al, allowed)
hl = socket.socket()
hl.bind(("127.0.0.1", 0))
hl.listen(64)
serve(hl, plain)
with open(os.path.join(d, "ports.tmp"), "w") as f:
    f.write("%d %d %d %d\n" % (port, uport, al.getsockname()[1], hl.getsockname()[1]))
os.rename(os.path.join(d, "ports.tmp"), os.path.join(d, "ports"))
threading.Event().wait()
OUTSIDE
OUTSIDE_PID=$!
trap 'kill $OUTSIDE_PID 2>/dev/null; wait $OUTSIDE_PID 2>/dev/null; rm -f ${UNIXPATH//,/ }; rm -rf "$DAEMONDIR"; [ -n "$RT_MADE" ] && rm -rf "$RT_MADE"; ag_cleanup' EXIT
ag_wait_until 30 test -s "$OUT/ports" || { echo "the outside listeners did not start" >&2; exit 99; }
read -r P U LP HP < "$OUT/ports"

# the listeners answer from outside (then their record starts empty)
got=$("$AG_PYTHON" -c 'import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5); print(s.recv(64).decode().strip())' "$P" 2>&1)
ag_is "$got" "agentgate-outside" "outside_listener_answers_from_outside"
ag_wait_until 10 grep -q . "$OUT/hits"
: > "$OUT/hits"

# ---- the policy: the shipped developer profile, the stand-ins mapped ------------------
# The allowed host (registry.npmjs.org, from the npm preset) is mapped onto
# the test's listener; so is plain.test, whose one rule allows GET and
# HEAD below /pub/ over plain HTTP.  Every other port of both names goes to
# 127.0.0.1 too, where the outside listener waits: a rule that let one
# through would show there.  "localhost:P" is named by a rule, and still
# refused: it resolves to loopback.  eg_policy "*:P" adds a rule for any
# name on the outside listener's port.
eg_policy() {
	ag_shipped_policy developer
	# (which hands the recordings directory to the account again)
	ag_setgid_gateway
	"$AG_PYTHON" - "$AG_DIR/policy.yaml" "$LP" "$HP" "$P" "$@" <<'EOF' || exit 99
import re, sys
path, lp, hp, p, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
lines = open(path).read().split("\n")
resolve = ['"registry.npmjs.org:443": "127.0.0.1:%s"' % lp, '"registry.npmjs.org": "127.0.0.1"',
           '"plain.test:80": "127.0.0.1:%s"' % hp, '"plain.test": "127.0.0.1"']
rules = ['"GET,HEAD plain.test/pub/**"', '"localhost:%s"' % p] + ['"%s"' % e for e in extra]

def section_end(start, indent):
    i = start + 1
    while i < len(lines) and (lines[i].strip() == "" or lines[i].lstrip().startswith("#") or
                              len(lines[i]) - len(lines[i].lstrip()) > indent):
        i += 1
    return i

g = lines.index("gateway:")
ge = section_end(g, 0)
eg = next((i for i in range(g, ge) if re.match(r"^  egress:\s*(#.*)?$", lines[i])), None)
if eg is None:
    lines[g + 1:g + 1] = ["  egress:", "    resolve:"] + ["      " + r for r in resolve]
else:
    rs = next((i for i in range(eg, section_end(eg, 2)) if re.match(r"^    resolve:\s*(#.*)?$", lines[i])), None)
    if rs is None:
        lines[eg + 1:eg + 1] = ["    resolve:"] + ["      " + r for r in resolve]
    else:
        lines[rs + 1:rs + 1] = ["      " + r for r in resolve]

d = lines.index("  developer:")
de = section_end(d, 2)
nw = next((i for i in range(d, de) if re.match(r"^    network:", lines[i])), None)
if nw is None:
    lines[d + 1:d + 1] = ["    network:", "      allow: [%s]" % ", ".join(rules)]
elif re.match(r"^    network:\s*\{", lines[nw]):
    # flow style on one line
    l = lines[nw]
    if "allow: [" in l:
        lines[nw] = l.replace("allow: [", "allow: [%s, " % ", ".join(rules), 1)
    else:
        lines[nw] = re.sub(r"\}\s*(#.*)?$", ", allow: [%s] }" % ", ".join(rules), l)
else:
    ne = section_end(nw, 4)
    al = next((i for i in range(nw, ne) if re.match(r"^      allow:", lines[i])), None)
    if al is None:
        lines[nw + 1:nw + 1] = ["      allow: [%s]" % ", ".join(rules)]
    elif "[" in lines[al]:
        lines[al] = lines[al].replace("[", "[%s, " % ", ".join(rules), 1)
    else:
        lines[al + 1:al + 1] = ["        - " + r for r in rules]
open(path, "w").write("\n".join(lines))
EOF
	"$AGENTGATE" check --config "$AG_DIR/policy.yaml" >/dev/null ||
	    { echo "the test's policy does not check:" >&2; "$AGENTGATE" check --config "$AG_DIR/policy.yaml" >&2; exit 99; }
}
eg_policy

# explain agrees with what the proxy will do
eg_explain() {	# eg_explain HOST:PORT: explain's exit status
	"$AGENTGATE" explain --host "$1" --profile developer --config "$AG_DIR/policy.yaml" >/dev/null 2>&1
	echo $?
}
ag_is "$(eg_explain registry.npmjs.org:443)" 0 "explain_allowed_host_reachable"
ag_is "$(eg_explain "127.0.0.1:$P")" 1 "explain_ip_literal_refused"
ag_is "$(eg_explain 169.254.169.254:80)" 1 "explain_metadata_refused"
ag_is "$(eg_explain plain.test:80)" 1 "explain_tunnel_to_a_method_rule_host_refused"
ag_is "$(eg_explain "registry.npmjs.org:$P")" 1 "explain_allowed_host_other_port_refused"

# x CMD: run CMD through the gateway, keep x_out/x_err/x_rc
x() {
	ag_run x "$@"
	[ -n "$x_err" ] && printf '%s\n' "$x_err" | head -n 8 | sed 's/^/#   stderr: /'
	return 0
}

# ---- the agent uploads the probes and builds the C one --------------------------------
x 'mkdir -p ~/work/egress && echo made'
ag_is "$x_out" "made" "work_directory_made"
for f in netprobe.c probe.py probe.mk; do
	x "cat > ~/work/egress/$f" < "$EG_SRC/$f"
	ag_ok "uploaded_$f" cmp -s "$EG_SRC/$f" "$H/work/egress/$f"
done
x 'cd ~/work/egress && cc -Wall -Wextra -O1 -o netprobe netprobe.c && echo built'
ag_is "$x_out" "built" "netprobe_builds_in_the_session"

# the premise first: a namespace of its own, with only its loopback
x "cd ~/work/egress && ./netprobe netns=$NETNS netns packet"
ag_like "$x_out" "^netns=refused:private$" "session_has_its_own_network_namespace"
ag_like "$x_out" "^ifaces=refused:only-lo$" "session_namespace_has_only_lo"
PRIVATE=0
case $x_out in *netns=refused:private*) PRIVATE=1 ;; esac

# Resolvers and 8.8.8.8 only once the namespace is known to be private:
# outside it a query would leave the machine.
DNS=127.0.0.53
[ "$PRIVATE" = 1 ] && DNS=resolv,127.0.0.53,8.8.8.8
ARGS="port=$P uport=$U ${H4:+host4=$H4} ${H6:+host6=$H6} proxy6=::1 allowed=registry.npmjs.org:443 http_host=plain.test dns=$DNS abstract=$ABSTRACT unixpath=$UNIXPATH netns=$NETNS timeout=2000"

# ---- what a probe says, judged ------------------------------------------------------
NL=$'\n'
# eg_expect DRIVER OUTPUT: each probe line refused, but the benign ones reached
eg_expect() {
	local drv=$1 out=$2 line name res bare
	while IFS= read -r line; do
		case $line in '#'* | '') continue ;; esac
		[[ $line == [A-Za-z]*=* ]] || continue
		name=${line%%=*}
		res=${line#*=}
		bare=${name#mk.c.}
		bare=${bare#mk.py.}
		bare=${bare#mk.sh.}
		case $bare in
		http_connect_allowed | socks_connect_allowed | socks_connect_allowed_via_proxy6 | http_get_allowed)
			ag_like "$res" '^reached' "${drv}_${name}_benign_reaches" ;;
		vsock_*)
			ag_like "$res" '^refused:socket:' "${drv}_${name}_socket_refused" ;;
		uring_setup | keyring_*)
			ag_like "$res" '^refused:(ENOSYS|EPERM|EACCES)' "${drv}_${name}_refused" ;;
		netns)
			ag_is "$res" "refused:private" "${drv}_${name}_private" ;;
		*)
			ag_like "$res" '^refused' "${drv}_${name}_refused" ;;
		esac
	done <<< "$out"
}
# eg_show DRIVER OUTPUT: what each probe said, for whoever reads the log
eg_show() {
	printf '%s\n' "$2" | grep -E '^#?[A-Za-z][A-Za-z0-9_.]*=' | sed "s/^/# $1: /"
}
# eg_present DRIVER OUTPUT NAME...: every named probe ran
eg_present() {
	local drv=$1 out=$2 n missing=
	shift 2
	for n in "$@"; do
		printf '%s\n' "$out" | grep -q "^$n=" || missing="$missing $n"
	done
	ag_is "${missing# }" "" "${drv}_every_probe_ran" "$(printf '%s' "$out" | head -n 5)"
}

CORE="tcp_lo4 tcp_lo6 tfo_sendto_lo4 tfo_sendmsg_lo4 tfo_sendto_lo6 tfo_sendmsg_lo6
    udp_lo4 udp_lo6 mptcp_lo4 uring_setup keyring_request_key raw_icmp_lo4 raw_udp_lo4 packet_lo4
    vsock_stream vsock_dgram unix_abstract unix_path unix_path_2 unix_path_3 dns_udp_127_0_0_53 dns_tcp_127_0_0_53
    http_connect_lo4 http_connect_localhost http_connect_allowed http_get_allowed
    http_host_header_differs socks_connect_lo4 socks_connect_localhost socks_bind
    socks_udp_associate socks_connect_allowed"
[ -n "$H4" ] && CORE="$CORE tcp_host4 tfo_sendto_host4 tfo_sendmsg_host4 udp_host4 http_connect_host4"
[ -n "$H6" ] && CORE="$CORE tcp_host6 tfo_sendto_host6 tfo_sendmsg_host6 udp_host6"
C_ONLY="ifaces keyring_add_key steal_fd inherited_fd http_smuggle_after_refusal http_connect_http_rule_host
    http_path_dotdot http_path_fragment_dotdot http_duplicate_host http_cl_te_smuggle
    http_pipeline_second_refused socks4_connect_lo4 meta_http_connect meta_socks_connect"

# ---- the freshly built C program ----------------------------------------------------
x "cd ~/work/egress && ./netprobe $ARGS all meta"
C_OUT=$x_out
C_ERR=$x_err
eg_show c "$C_OUT"
eg_present c "$C_OUT" $CORE $C_ONLY
eg_expect c "$C_OUT"
# the agent is told what was refused, after the line
ag_like "$C_ERR" "agentgate: blocked connection to 127\\.0\\.0\\.1:$P" "c_refusal_told_on_stderr"
ag_like "$C_ERR" "agentgate: blocked connection to localhost:$P" "c_loopback_name_refusal_told_on_stderr"

# ---- python3 -------------------------------------------------------------------------
x "cd ~/work/egress && python3 probe.py $ARGS all"
PY_OUT=$x_out
eg_show py "$PY_OUT"
eg_present py "$PY_OUT" $CORE
eg_expect py "$PY_OUT"

# ---- Makefile recipes ------------------------------------------------------------------
x "cd ~/work/egress && make -s -f probe.mk probe ARGS='$ARGS'"
MK_OUT=$x_out
eg_show mk "$MK_OUT"
eg_present mk "$MK_OUT" $(for n in $CORE; do printf 'mk.c.%s mk.py.%s ' "$n" "$n"; done) \
    mk.sh.devtcp_lo4 mk.sh.devudp_lo4
eg_expect mk "$MK_OUT"

# ---- the other ways in: the REPL and JSON Lines ------------------------------
# the same namespace and proxy whichever front end runs the command
FEW="port=$P uport=$U ${H4:+host4=$H4} netns=$NETNS timeout=2000 netns tcp tfo udp socks"
REPL_OUT=$(printf '%s\n' 'cd ~/work/egress' "./netprobe $FEW" | ag_ssh 2>/dev/null)
eg_show repl "$REPL_OUT"
eg_present repl "$REPL_OUT" netns tcp_lo4 tfo_sendto_lo4 udp_lo4 socks_connect_lo4
eg_expect repl "$REPL_OUT"
# (a terminal session runs commands through the same core: pty.sh drives
# one through tmux; here the REPL and JSON Lines stand for the other ways in)
JSON_OUT=$(printf '{"id": 1, "command": "cd ~/work/egress && ./netprobe %s"}\n' "$FEW" |
    "${AG_SSH[@]:0:${#AG_SSH[@]}-1}" -s "${AG_SSH[-1]}" agentgate-json 2>/dev/null |
    "$AG_PYTHON" -c 'import json, sys
for l in sys.stdin:
    print(json.loads(l).get("stdout", ""), end="")')
eg_show json "$JSON_OUT"
eg_present json "$JSON_OUT" netns tcp_lo4 tfo_sendto_lo4 udp_lo4 socks_connect_lo4
eg_expect json "$JSON_OUT"

# ---- listen() without bind(): knocked on from outside --------------------------------
# eg_knock PORT: connect from outside to every address of this host on
# PORT; "ADDR reached" for each that answered as the probe does
eg_knock() {
	"$AG_PYTHON" - "$1" 127.0.0.1 ::1 $H4 $H6 <<'EOF'
import socket, sys
port = int(sys.argv[1])
for a in sys.argv[2:]:
    try:
        s = socket.create_connection((a, port), 2)
        s.settimeout(2)
        if s.recv(64).startswith(b"agentgate-probe"):
            print("%s reached" % a)
        s.close()
    except OSError:
        pass
EOF
}
# eg_autobind DRIVER CMD: run CMD through the gateway; at each
# "#...autobind=waiting" knock on every port it announced, then let it go on
eg_autobind() {
	local drv=$1 line out='' knocked='' ports=() p
	local pid in outfd
	coproc AB { ag_ssh "$2" 2>/dev/null; }
	# copies: bash closes the coprocess's own descriptors when it exits
	pid=$AB_PID
	exec {outfd}<&"${AB[0]}" {in}>&"${AB[1]}"
	while IFS= read -r -t 120 line <&"$outfd"; do
		out+="$line$NL"
		case $line in
		'#'*autobind4=[0-9]* | '#'*autobind6=[0-9]*)
			ports+=("${line##*=}") ;;
		'#'*autobind=waiting)
			for p in "${ports[@]}"; do
				knocked+=$(eg_knock "$p")
			done
			ports=()
			echo go >&"$in" ;;
		esac
	done
	exec {outfd}<&- {in}>&-
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	eg_show "${drv}_autobind" "$out"
	ag_like "$out" "autobind=waiting" "${drv}_autobind_listened" "$out"
	ag_is "$knocked" "" "${drv}_autobind_listener_unreachable_from_outside"
	eg_expect "${drv}_autobind" "$out"
}
eg_autobind c "cd ~/work/egress && ./netprobe $ARGS autobind"
eg_autobind py "cd ~/work/egress && python3 probe.py $ARGS autobind"
eg_autobind mk "cd ~/work/egress && make -s -f probe.mk autobind ARGS='$ARGS'"

# ---- any name on the outside port: loopback and this host, however spelled -------------
eg_policy "*:$P"
x "cd ~/work/egress && ./netprobe $ARGS wildnames=$WILDNAMES wild"
W_OUT=$x_out
eg_show wild "$W_OUT"
eg_present wild "$W_OUT" wild_http_127_1 wild_http_decimal wild_http_hex wild_http_zeros \
    wild_http_v4mapped wild_socks_127_1 wild_socks_v4mapped \
    $(for n in ${WILDNAMES//,/ }; do printf 'wild_http_name_%s ' "${n//[!A-Za-z0-9]/_}"; done)
eg_expect wild "$W_OUT"
eg_policy

# ---- the audit: every refusal at the proxy is a record --------------------------------
# eg_net DECISION PROTO HOST PORT [PYTHON-COND]: such a net record exists
eg_net() {
	ag_audit_query "any(x.get('event') == 'net' and x.get('decision') == '$1' and
	    x.get('proto') == '$2' and (x.get('dest') or {}).get('host') == '$3' and
	    str((x.get('dest') or {}).get('port')) == '$4' and (${5:-True}) for x in r)"
}
ag_is "$(eg_net deny connect 127.0.0.1 "$P")" yes "audit_connect_ip_literal_denied"
ag_is "$(eg_net deny connect ::1 "$P")" yes "audit_connect_v6_literal_denied"
[ -n "$H4" ] && ag_is "$(eg_net deny connect "$H4" "$P")" yes "audit_connect_host_address_denied"
ag_is "$(eg_net deny connect localhost "$P")" yes "audit_connect_name_resolving_to_loopback_denied"
ag_is "$(eg_net deny connect 169.254.169.254 80)" yes "audit_connect_metadata_denied"
ag_is "$(eg_net deny connect plain.test 80)" yes "audit_tunnel_to_a_method_rule_host_denied"
ag_is "$(eg_net deny connect registry.npmjs.org "$P")" yes "audit_allowed_host_other_port_denied"
ag_is "$(eg_net deny socks5 127.0.0.1 "$P")" yes "audit_socks_ip_literal_denied"
ag_is "$(eg_net deny socks5 localhost "$P")" yes "audit_socks_name_resolving_to_loopback_denied"
ag_is "$(eg_net deny socks5 169.254.169.254 80)" yes "audit_socks_metadata_denied"
ag_is "$(eg_net deny http plain.test 80 "x.get('method') == 'POST'")" yes "audit_http_method_not_in_rule_denied"
ag_is "$(eg_net deny http plain.test 80 "'Host' in (x.get('reason') or '')")" yes "audit_http_host_header_mismatch_denied"
ag_is "$(ag_audit_query "any(x.get('event') == 'net' and x.get('decision') == 'deny' and 'BIND' in (x.get('reason') or '') for x in r)")" \
    yes "audit_socks_bind_denied"
ag_is "$(ag_audit_query "any(x.get('event') == 'net' and x.get('decision') == 'deny' and 'UDP ASSOCIATE' in (x.get('reason') or '') for x in r)")" \
    yes "audit_socks_udp_associate_denied"
# the allowed connection: its bytes, and the command line that made it
ag_is "$(eg_net allow connect registry.npmjs.org 443 "x.get('bytes_down', 0) > 0")" yes "audit_allowed_connection_with_bytes"
ag_is "$(ag_audit_query "any(n.get('event') == 'net' and n.get('decision') == 'allow' and
    (n.get('dest') or {}).get('host') == 'registry.npmjs.org' and
    any(c.get('event') == 'command' and c.get('session') == n.get('session') and
        c.get('seq') == n.get('seq') and './netprobe' in (c.get('command') or '') for c in r)
    for n in r)")" yes "audit_allowed_connection_names_its_command_line"
# the C program's line: a deny record (same session, same seq) for each of
# its probes the proxy refused (each probe is one connection)
n_refused=$(printf '%s\n' "$C_OUT" | grep -cE '^(http|socks|meta)[a-z0-9_]*=refused:(4[0-9][0-9]|socks)')
n_denied=$(ag_audit_query "(lambda c: len([x for x in r if x.get('event') == 'net' and
    x.get('decision') == 'deny' and x.get('session') == c.get('session') and
    x.get('seq') == c.get('seq')]))(next(c for c in r if c.get('event') == 'command' and
    (c.get('command') or '').endswith(' all meta')))")
ag_ok "audit_every_proxy_refusal_recorded ($n_denied records, $n_refused refusals)" \
    test "$n_denied" -ge "$n_refused" -a "$n_refused" -gt 20

# ---- nothing reached outside; the plain-HTTP host saw only what its rule allows -----------
ag_is "$(cat "$OUT/hits")" "" "nothing_reached_the_outside_listeners"
ag_like "$(cat "$OUT/allowed.log" 2>/dev/null)" "connection from" "the_allowed_host_was_reached"
http_bad=$("$AG_PYTHON" - "$OUT/http.log" <<'EOF'
import posixpath, re, sys, urllib.parse
bad = []
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
for l in lines:
    m = re.match(r"(\S+) (\S*) host=(\S*) flags=(\S*)$", l)
    if not m:
        bad.append(l)
        continue
    method, target, hosts, flags = m.groups()
    if re.match(r"(?i)https?://", target):
        target = "/" + target.split("/", 3)[3] if target.count("/") >= 3 else "/"
    path = urllib.parse.unquote(target.split("?")[0])
    # what servers may read: '#' literally, ";params" dropped from a segment
    norm = posixpath.normpath("/".join(seg.split(";")[0] for seg in path.split("/")))
    if (method not in ("GET", "HEAD") or not norm.startswith("/pub/") and norm != "/pub" or
            hosts not in ("plain.test", "plain.test:80") or flags):
        bad.append(l)
print("\n".join(bad))
EOF
)
ag_is "$http_bad" "" "plain_http_host_got_only_what_its_rule_allows" "$(cat "$OUT/http.log" 2>/dev/null)"
ag_like "$(cat "$OUT/http.log" 2>/dev/null)" "^GET /pub/ok host=plain.test" "plain_http_allowed_get_forwarded"

ag_done
