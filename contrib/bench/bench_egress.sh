#!/usr/bin/env bash
# bench_egress.sh - what the egress proxy (issue 32) costs a sandboxed
# session's connections, against the same connections made directly in the
# same run (needs root: it starts a real sshd on 127.0.0.1 and creates a
# throwaway account, like the integration tests).
#
# The shipped policy's developer profile (sandbox: required), one plain-HTTP
# rule added to its network.allow, and gateway.egress.resolve mapping the
# names to local servers on 127.0.0.1 (plain HTTP, and TLS with a
# self-signed certificate); nothing leaves the loopback.
#
#   (1) per-connection latency: N sequential requests, one connection each,
#       from one python3 process inside ONE command through the proxy
#       (absolute-form GET, CONNECT, SOCKS5, CONNECT + TLS), against the
#       same client run directly against the same server by the same
#       account outside the gateway; the client times its own loop, so
#       neither side counts a session's or a process's start.  Goal: at
#       most 1 ms added per connection (median of the pairs).
#   (2) throughput of one download (default 100 MiB) with curl,
#       through the proxy (plain http://, and https:// through CONNECT with
#       curl -k) against the same curl direct; curl's own time_total.
#       Goal: >= 0.9x (median of the pairs' ratios).
#
#   AGENTGATE=build/src/agentgate PAM_MODULE=build/pam/.libs/pam_agentgate.so \
#       bash contrib/bench/bench_egress.sh [N] [MiB]
# N: connections per latency run (default 200); MiB: size of the download
# (default 100); BENCH_PAIRS: interleaved proxy/direct pairs per row
# (default 5).  Not part of `make check`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
N=${1:-200}
MIB=${2:-100}
PAIRS=${BENCH_PAIRS:-5}
WARM=5		# connections each latency run makes before it starts timing
: "${AGENTGATE:=$repo/build/src/agentgate}"
export AGENTGATE
top_srcdir=$repo
. "$repo/tests/integration/lib.sh"

ag_setup
ag_need_sandbox_lib
for t in curl openssl; do
	command -v "$t" >/dev/null || { echo "$t is needed (apt-get install $t)" >&2; exit 99; }
done

trap 'ag_stop_servers; ag_cleanup' EXIT

# ---- the servers ----------------------------------------------------------------
# One process per port, on 127.0.0.1.  A path with "/big" in it is answered
# with the download (a sparse file sent with sendfile(2), or in 256 KiB
# writes over TLS) in a thread of its own; any other path with 3 bytes, in
# the accepting thread (the clients are sequential).  Connection: close,
# TCP_NODELAY (as curl and most servers set it).
cat > "$AG_DIR/bench_server.py" <<'EOF'
import os, socket, ssl, sys, threading
mode, portfile, big = sys.argv[1], sys.argv[2], sys.argv[3]
size = os.stat(big).st_size
ctx = None
if mode == "tls":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[4], sys.argv[5])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(256)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % ls.getsockname()[1])
os.rename(portfile + ".tmp", portfile)

def head(s):
    buf = b""
    while b"\r\n\r\n" not in buf and len(buf) < 16384:
        b = s.recv(16384)
        if not b:
            return None
        buf += b
    return buf.split(b"\r\n", 1)[0].split(b" ")

def send_big(s):
    try:
        s.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n" % size)
        if ctx is None:
            s.settimeout(None)      # sendfile(2) on a blocking socket
            with open(big, "rb") as f:
                off = 0
                while off < size:
                    n = os.sendfile(s.fileno(), f.fileno(), off, size - off)
                    if n <= 0:
                        break
                    off += n
        else:
            chunk = memoryview(bytes(256 * 1024))
            left = size
            while left > 0:
                n = min(left, len(chunk))
                s.sendall(chunk[:n])
                left -= n
    except OSError:
        pass
    finally:
        s.close()

while True:
    c, _ = ls.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.settimeout(30)
    try:
        if ctx is not None:
            c = ctx.wrap_socket(c, server_side=True)
        line = head(c)
    except (OSError, ssl.SSLError):
        c.close()
        continue
    if line is None or len(line) < 2:
        c.close()
        continue
    if b"/big" in line[1]:
        threading.Thread(target=send_big, args=(c,), daemon=True).start()
        continue
    try:
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
                  b"Connection: close\r\n\r\nok\n")
    except OSError:
        pass
    c.close()
EOF

# ---- the latency client -------------------------------------------------------------
# bench_client.py MODE N WARM [PORT]: N requests (after WARM untimed ones),
# one connection each, a new TLS handshake each for the TLS modes, read to
# the end of the response (Content-Length), then closed.  Prints the
# loop's seconds and the median, 90th percentile and slowest request (ms).
# The proxy modes take the proxy from the variables the gateway sets.
cat > "$AG_DIR/bench_client.py" <<'EOF'
import os, socket, ssl, statistics, sys, time
mode, n, warm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
port = int(sys.argv[4]) if len(sys.argv) > 4 else 0

def addr(var):
    v = os.environ.get(var) or os.environ.get(var.lower())
    if not v:
        sys.exit("no %s in the environment" % var)
    h, p = v.split("://", 1)[1].rstrip("/").rsplit(":", 1)
    return h.strip("[]"), int(p)

PLAIN_HOST, TLS_HOST = "deb.debian.org", "registry.npmjs.org"
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
tls.check_hostname = False
tls.verify_mode = ssl.CERT_NONE

def conn(a):
    s = socket.create_connection(a, timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s

def head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = s.recv(65536)
        if not b:
            sys.exit("%s: the connection ended before a whole answer: %r" % (mode, buf[:200]))
        buf += b
    h, rest = buf.split(b"\r\n\r\n", 1)
    if h.split(b" ", 2)[1] != b"200":
        sys.exit("%s: %r" % (mode, h[:300]))
    return h, rest

def answer(s):
    h, body = head(s)
    cl = 0
    for l in h.split(b"\r\n")[1:]:
        k, _, v = l.partition(b":")
        if k.strip().lower() == b"content-length":
            cl = int(v)
    while len(body) < cl:
        b = s.recv(65536)
        if not b:
            sys.exit("%s: short body" % mode)
        body += b

def get(s, host, path):
    s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"
              % (path.encode(), host.encode()))

def connect_tunnel(host, p):
    s = conn(addr("HTTPS_PROXY"))
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), p, host.encode(), p))
    h, rest = head(s)
    if rest:
        sys.exit("bytes after the CONNECT answer")
    return s

def socks_tunnel(host, p):
    s = conn(addr("ALL_PROXY"))
    s.sendall(b"\x05\x01\x00")
    if s.recv(2) != b"\x05\x00":
        sys.exit("socks5: no method accepted")
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode() + p.to_bytes(2, "big"))
    r = b""
    while len(r) < 10:
        b = s.recv(10 - len(r))
        if not b:
            sys.exit("socks5: no reply")
        r += b
    if r[1] != 0:
        sys.exit("socks5: reply %d" % r[1])
    return s

def one():
    if mode == "direct":
        s = conn(("127.0.0.1", port))
        get(s, PLAIN_HOST, "/debian/small")
    elif mode == "direct-tls":
        s = tls.wrap_socket(conn(("127.0.0.1", port)), server_hostname=TLS_HOST)
        get(s, TLS_HOST, "/small")
    elif mode == "http":
        s = conn(addr("HTTP_PROXY"))
        s.sendall(b"GET http://%s/debian/small HTTP/1.1\r\nHost: %s\r\nUser-Agent: bench\r\n"
                  b"Accept: */*\r\nProxy-Connection: Keep-Alive\r\n\r\n"
                  % (PLAIN_HOST.encode(), PLAIN_HOST.encode()))
    elif mode == "connect":
        s = connect_tunnel("github.com", 443)
        get(s, "github.com", "/small")
    elif mode == "socks5":
        s = socks_tunnel("github.com", 443)
        get(s, "github.com", "/small")
    elif mode == "connect-tls":
        s = tls.wrap_socket(connect_tunnel(TLS_HOST, 443), server_hostname=TLS_HOST)
        get(s, TLS_HOST, "/small")
    else:
        sys.exit("unknown mode " + mode)
    answer(s)
    s.close()

for _ in range(warm):
    one()
t = []
t0 = time.perf_counter()
for _ in range(n):
    a = time.perf_counter()
    one()
    t.append(time.perf_counter() - a)
total = time.perf_counter() - t0
t.sort()
print("%.6f %.4f %.4f %.4f" % (total, statistics.median(t) * 1e3, t[int(len(t) * 0.9)] * 1e3,
                               t[-1] * 1e3))
EOF
chmod 0644 "$AG_DIR/bench_server.py" "$AG_DIR/bench_client.py"

# the download, sparse; a certificate for the TLS server
BIG=$AG_DIR/big.bin
truncate -s "$((MIB * 1048576))" "$BIG"
chmod 0644 "$BIG"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=registry.npmjs.org" -addext "subjectAltName=DNS:registry.npmjs.org" \
    -keyout "$AG_DIR/tls.key" -out "$AG_DIR/tls.pem" 2>/dev/null ||
    { echo "cannot make the server's certificate" >&2; exit 99; }

# start_server MODE: its port in PORT
start_server() {
	local pf=$AG_DIR/server.$1.port pid
	"$AG_PYTHON" "$AG_DIR/bench_server.py" "$1" "$pf" "$BIG" "$AG_DIR/tls.pem" "$AG_DIR/tls.key" \
	    2>>"$AG_DIR/server.$1.err" &
	pid=$!
	AG_SERVER_PIDS+=("$pid")
	ag_wait_until 30 sh -c "test -s '$pf' || ! kill -0 $pid 2>/dev/null"
	[ -s "$pf" ] || { echo "the $1 server did not start:" >&2; cat "$AG_DIR/server.$1.err" >&2; exit 99; }
	PORT=$(cat "$pf")
}
start_server plain; PLAIN_PORT=$PORT
start_server tls; TLS_PORT=$PORT

# ---- the policy: the shipped developer profile, one plain-HTTP rule, the names mapped
ag_shipped_policy developer
ag_setgid_gateway
ag_egress_resolve "$AG_DIR/policy.yaml" \
    "deb.debian.org:80=127.0.0.1:$PLAIN_PORT" \
    "github.com:443=127.0.0.1:$PLAIN_PORT" \
    "registry.npmjs.org:443=127.0.0.1:$TLS_PORT" || exit 99
"$AG_PYTHON" - "$AG_DIR/policy.yaml" <<'EOF' || exit 99
import re, sys
path = sys.argv[1]
lines = open(path, encoding="utf-8").read().split("\n")

def find(pattern, start=0, stop=None):
    for i in range(start, len(lines) if stop is None else stop):
        if re.match(pattern, lines[i]):
            return i
    return None

# the developer profile's network: its presets, and plain HTTP to one host
d = find(r"  developer:\s*$")
d_end = find(r"  \S", d + 1) or len(lines)
nw = find(r"    network:\s*$", d + 1, d_end)
if nw is None or find(r"      allow:", nw + 1, d_end) is not None:
    sys.exit("the developer profile has no network: block, or one with allow: already")
lines[nw + 1:nw + 1] = ['      allow: ["GET,HEAD deb.debian.org/debian/**"]']
open(path, "w", encoding="utf-8").write("\n".join(lines))
EOF
out=$("$AGENTGATE" check --config "$AG_DIR/policy.yaml" 2>&1) ||
    { echo "the benchmark's policy does not check:" >&2; echo "$out" >&2; exit 99; }
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "/home/$AG_USER/work"

# The direct side: the same account, outside the gateway, with the
# environment the gateway gives a command (read through it) less the proxy
# variables, and the same python3 and curl the session finds on its PATH.
mapfile -d '' cenv < <(ag_ssh 'env -0' 2>/dev/null)
denv=()
for v in "${cenv[@]}"; do
	case ${v%%=*} in
	HTTP_PROXY|HTTPS_PROXY|http_proxy|https_proxy|ALL_PROXY|all_proxy|NO_PROXY|no_proxy|NODE_USE_ENV_PROXY) ;;
	*) denv+=("$v") ;;
	esac
done
[ "${#cenv[@]}" -gt "${#denv[@]}" ] ||
    { echo "the session's environment has no proxy variables: is the sandbox on?" >&2; exit 99; }
direct() { runuser -u "$AG_USER" -- env -i "${denv[@]}" "$@"; }
PY=$(ag_ssh 'command -v python3' 2>/dev/null)
CURL=$(ag_ssh 'command -v curl' 2>/dev/null)
[ -n "$PY" ] && [ -n "$CURL" ] || { echo "python3 or curl not found in the session" >&2; exit 99; }

echo "agentgate egress benchmark (N=$N, $MIB MiB, $PAIRS pairs), $(nproc) CPUs, $(date -u +%FT%TZ)"
echo "  shipped developer profile, sandbox: required; servers on 127.0.0.1 (python3, plain and TLS)"

# a quick check that each path works before anything is timed
for m in http connect socks5 connect-tls; do
	out=$(ag_ssh "$PY $AG_DIR/bench_client.py $m 1 0" 2>&1) ||
	    { echo "the $m client fails through the proxy: $out" >&2; exit 99; }
done
out=$(direct "$PY" "$AG_DIR/bench_client.py" direct 1 0 "$PLAIN_PORT" 2>&1) ||
    { echo "the direct client fails: $out" >&2; exit 99; }

# ---- (1) latency per connection -------------------------------------------------------
echo
echo "(1) per-connection latency: $N sequential requests (one connection each) from one python3 in one"
echo "    command, through the proxy vs the same client direct, same account outside the gateway ($PAIRS pairs)"
rows=
for _ in $(seq "$PAIRS"); do
	for m in http connect socks5 connect-tls; do
		if [ "$m" = connect-tls ]; then dm=direct-tls dp=$TLS_PORT; else dm=direct dp=$PLAIN_PORT; fi
		p=$(ag_ssh "$PY $AG_DIR/bench_client.py $m $N $WARM" 2>>"$AG_DIR/client.err")
		d=$(direct "$PY" "$AG_DIR/bench_client.py" "$dm" "$N" "$WARM" "$dp" 2>>"$AG_DIR/client.err")
		[ -n "$p" ] && [ -n "$d" ] ||
		    { echo "a latency run failed:" >&2; tail -n 5 "$AG_DIR/client.err" >&2; exit 1; }
		rows="$rows$m $p $d
"
	done
done
printf '%s' "$rows" | "$AG_PYTHON" -c '
import statistics, sys
n = int(sys.argv[1])
by = {}
for line in sys.stdin:
    f = line.split()
    by.setdefault(f[0], []).append([float(x) for x in f[1:]])
names = {"http": "GET http://", "connect": "CONNECT", "socks5": "SOCKS5", "connect-tls": "CONNECT + TLS"}
print("  %-14s %9s %9s %9s %7s   %-34s %s" % ("path", "proxy ms", "direct ms", "added ms", "ratio",
      "added ms, each pair", "per request: proxy / direct p50, p90 ms"))
for m in ("http", "connect", "socks5", "connect-tls"):
    r = by[m]
    added = [(p[0] - d[0]) / n * 1e3 for p, d in ((x[0:4], x[4:8]) for x in r)]
    ratio = [p[0] / d[0] for p, d in ((x[0:4], x[4:8]) for x in r)]
    px = statistics.median(x[0] for x in r) / n * 1e3
    dx = statistics.median(x[4] for x in r) / n * 1e3
    p50 = statistics.median(x[1] for x in r); d50 = statistics.median(x[5] for x in r)
    p90 = statistics.median(x[2] for x in r); d90 = statistics.median(x[6] for x in r)
    print("  %-14s %9.3f %9.3f %9.3f %6.2fx   %-34s %.3f / %.3f, %.3f / %.3f" % (
        names[m], px, dx, statistics.median(added), statistics.median(ratio),
        " ".join("%.3f" % a for a in sorted(added)), p50, d50, p90, d90))
slow = max(x[3] for v in by.values() for x in v)
print("  goal: <= 1 ms added per connection (median of the pairs); slowest single proxied request %.1f ms" % slow)
' "$N"

# ---- (2) throughput ----------------------------------------------------------------------
CW='%{size_download} %{time_total}\n'
# mib_s OUT: MiB/s from curl's "bytes seconds" (the whole size, or fail)
mib_s() {
	"$AG_PYTHON" -c '
import sys
f = sys.argv[1].split()
if len(f) != 2 or int(f[0]) != int(sys.argv[2]):
    sys.exit("incomplete download: %r" % sys.argv[1])
print(int(f[0]) / 1048576 / float(f[1]))' "$1" "$((MIB * 1048576))"
}
for scheme in http https; do
	echo
	if [ "$scheme" = http ]; then
		url=http://deb.debian.org/debian/big
		to=deb.debian.org:80:127.0.0.1:$PLAIN_PORT
		echo "(2) throughput of a $MIB MiB download, curl $url: through the proxy (absolute-form GET) vs direct ($PAIRS pairs)"
	else
		url=https://registry.npmjs.org/big
		to=registry.npmjs.org:443:127.0.0.1:$TLS_PORT
		echo "    the same over TLS, curl -k $url: through the proxy (CONNECT) vs direct ($PAIRS pairs)"
	fi
	runs=()
	for _ in $(seq "$PAIRS"); do
		p=$(ag_ssh "$CURL -k -sS -m 120 -o /dev/null -w '$CW' $url" 2>>"$AG_DIR/curl.err")
		d=$(direct "$CURL" -k --noproxy '*' --connect-to "$to" -sS -m 120 -o /dev/null -w "$CW" "$url" 2>>"$AG_DIR/curl.err")
		p=$(mib_s "$p") && d=$(mib_s "$d") ||
		    { echo "a download failed:" >&2; tail -n 5 "$AG_DIR/curl.err" >&2; exit 1; }
		runs+=("$p" "$d")
	done
	"$AG_PYTHON" - "${runs[@]}" <<'EOF'
import statistics, sys
v = [float(x) for x in sys.argv[1:]]
px, dx = v[0::2], v[1::2]
r = [p / d for p, d in zip(px, dx)]
print("  each pair (proxy/direct MiB/s): " + ", ".join("%.0f/%.0f" % (p, d) for p, d in zip(px, dx)))
print("  ratios: " + " ".join("%.3f" % x for x in sorted(r)))
print("  median: proxy %.0f MiB/s, direct %.0f MiB/s; median of pairs %.3fx (goal >= 0.9x)" % (
    statistics.median(px), statistics.median(dx), statistics.median(r)))
EOF
done
