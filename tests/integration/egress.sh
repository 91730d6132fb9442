#!/bin/bash
# egress.sh - egress by host name (issue 32): real clients through the real
# sshd with the shipped developer profile, against local servers standing
# in for the registries.
#
# A test CA and server certificates for registry.npmjs.org, pypi.org,
# files.pythonhosted.org, github.com and example.org (a host the profile
# does not list); on 127.0.0.1 each: a real npm registry (verdaccio, from
# npm, installed once per machine under /var/cache/agentgate-tests) with a
# package published to it, a PEP 503 index and its wheel
# (egress/server.py static), `git http-backend` serving a bare repository
# (egress/server.py git), and a server for example.org that must never be
# reached.  The names go to those servers through the policy's
# gateway.egress.resolve (the proxy's mapping; the machine's resolver is
# not touched), and the session trusts the CA through the profile's
# env.set.  In the session: npm install, pip install into a venv, git
# clone and fetch, curl to an allowed host succeed; curl to example.org
# fails with the gateway's message; every connection is a `net` record
# with the command line's seq.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

FIX=${top_srcdir:-$(dirname "$0")/../..}/tests/integration/egress
VERDACCIO_VERSION=6.8.0		# the last release that runs on Node.js 20
PKG=agentgate-egress-demo	# the npm package and the Python distribution

ag_setup
ag_need_sandbox_lib
for t in openssl:openssl curl:curl git:git node:nodejs npm:npm; do
	command -v "${t%%:*}" >/dev/null ||
	    { echo "${t%%:*} is needed (apt-get install ${t#*:})" >&2; exit 99; }
done
/usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null ||
    { echo "python3 -m venv is needed (apt-get install python3-venv)" >&2; exit 99; }

trap 'ag_stop_servers; ag_cleanup' EXIT

# ---- the CA and the servers' certificates ----------------------------------------
CA=$AG_DIR/ca/ca.pem
mkdir -p "$AG_DIR/ca"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=agentgate egress test CA" -keyout "$AG_DIR/ca/ca.key" -out "$CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null ||
    { echo "cannot make the test CA" >&2; exit 99; }
chmod 0644 "$CA"
# cert NAME: $AG_DIR/ca/NAME.{key,pem}, for NAME and 127.0.0.1 (the
# fixture checks and the publishing below connect to the address)
cert() {
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -subj "/CN=$1" -keyout "$AG_DIR/ca/$1.key" -out "$AG_DIR/ca/$1.csr" 2>/dev/null &&
	printf '%s\n' "subjectAltName=DNS:$1,IP:127.0.0.1" "basicConstraints=critical,CA:FALSE" \
	    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" \
	    "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid,issuer" > "$AG_DIR/ca/$1.ext" &&
	openssl x509 -req -in "$AG_DIR/ca/$1.csr" -CA "$CA" -CAkey "$AG_DIR/ca/ca.key" \
	    -CAcreateserial -days 2 -extfile "$AG_DIR/ca/$1.ext" -out "$AG_DIR/ca/$1.pem" 2>/dev/null
}
for h in registry.npmjs.org pypi.org files.pythonhosted.org github.com example.org; do
	cert "$h" || { echo "cannot make a certificate for $h" >&2; exit 99; }
done

# start_server NAME MODE DIR: egress/server.py for host NAME; its port in
# PORT_<NAME>, its log in $AG_DIR/NAME.log
start_server() {
	local n=$1 pf=$AG_DIR/$1.port pid
	"$AG_PYTHON" "$FIX/server.py" "$2" "$3" "$AG_DIR/ca/$n.pem" "$AG_DIR/ca/$n.key" \
	    "$pf" "$AG_DIR/$n.log" 2>>"$AG_DIR/$n.err" &
	pid=$!
	AG_SERVER_PIDS+=("$pid")
	ag_wait_until 60 sh -c "test -s '$pf' || ! kill -0 $pid 2>/dev/null"
	[ -s "$pf" ] || { echo "the server for $n did not start:" >&2; cat "$AG_DIR/$n.err" >&2; exit 99; }
	printf -v "PORT_${n//./_}" '%s' "$(cat "$pf")"
}
# hcurl NAME PORT CURL-ARGS... URL: curl on the host to NAME:443 at 127.0.0.1:PORT
hcurl() {
	local n=$1 p=$2
	shift 2
	curl -sS --noproxy '*' --cacert "$CA" --connect-to "$n:443:127.0.0.1:$p" "$@"
}

# ---- pip: a PEP 503 index on pypi.org, the wheel on files.pythonhosted.org -------
PYI=$AG_DIR/pypi
FILES=$AG_DIR/files
WHEEL=agentgate_egress_demo-1.0.0-py3-none-any.whl
mkdir -p "$PYI/simple/$PKG" "$FILES/packages/ag"
# the wheel, written whole here (no build backend, no index needed)
WHEEL_SHA=$("$AG_PYTHON" - "$FILES/packages/ag/$WHEEL" <<'EOF'
import base64, hashlib, sys, zipfile
files = {
    "agentgate_egress_demo.py": 'GREETING = "hello from the local index"\n',
    "agentgate_egress_demo-1.0.0.dist-info/METADATA":
        "Metadata-Version: 2.1\nName: agentgate-egress-demo\nVersion: 1.0.0\n"
        "Summary: a package only the egress test's index has\n",
    "agentgate_egress_demo-1.0.0.dist-info/WHEEL":
        "Wheel-Version: 1.0\nGenerator: egress.sh\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for name, text in files.items():
    d = hashlib.sha256(text.encode()).digest()
    record.append("%s,sha256=%s,%d" % (name, base64.urlsafe_b64encode(d).rstrip(b"=").decode(), len(text.encode())))
record.append("agentgate_egress_demo-1.0.0.dist-info/RECORD,,")
files["agentgate_egress_demo-1.0.0.dist-info/RECORD"] = "\n".join(record) + "\n"
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for name, text in files.items():
        z.writestr(name, text)
print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())
EOF
) || { echo "cannot build the wheel" >&2; exit 99; }
printf '<!DOCTYPE html>\n<html><body><a href="/simple/%s/">%s</a></body></html>\n' "$PKG" "$PKG" \
    > "$PYI/simple/index.html"
printf '<!DOCTYPE html>\n<html><body><a href="https://files.pythonhosted.org/packages/ag/%s#sha256=%s">%s</a></body></html>\n' \
    "$WHEEL" "$WHEEL_SHA" "$WHEEL" > "$PYI/simple/$PKG/index.html"
start_server pypi.org static "$PYI"
start_server files.pythonhosted.org static "$FILES"
out=$(hcurl pypi.org "$PORT_pypi_org" "https://pypi.org/simple/$PKG/" 2>&1)
ag_like "$out" "$WHEEL#sha256=$WHEEL_SHA" "fixture_index_serves_over_tls" "$out"
ag_is "$(hcurl files.pythonhosted.org "$PORT_files_pythonhosted_org" \
    "https://files.pythonhosted.org/packages/ag/$WHEEL" 2>&1 | sha256sum | cut -d' ' -f1)" \
    "$WHEEL_SHA" "fixture_wheel_served_over_tls"

# ---- git: a bare repository behind git http-backend on github.com ----------------
GITROOT=$AG_DIR/git
SRC=$AG_DIR/git-src
mkdir -p "$GITROOT/agentgate-test"
git init -q -b main "$SRC"
git -C "$SRC" -c user.name=Upstream -c user.email=up@localhost commit -q --allow-empty -m "upstream: first"
git clone -q --bare "$SRC" "$GITROOT/agentgate-test/demo.git"
start_server github.com git "$GITROOT"
out=$(hcurl github.com "$PORT_github_com" \
    "https://github.com/agentgate-test/demo.git/info/refs?service=git-upload-pack" 2>&1 | tr -d "\\0")
ag_like "$out" "refs/heads/main" "fixture_git_http_backend_serves_over_tls" "$out"

# ---- example.org: a server that must see no connection at all ----------------------
mkdir -p "$AG_DIR/example"
echo "example.org was reached" > "$AG_DIR/example/index.html"
start_server example.org static "$AG_DIR/example"
ag_like "$(hcurl example.org "$PORT_example_org" https://example.org/ 2>&1)" "was reached" \
    "fixture_example_org_serves_over_tls"
# the fixture check's own connection and request are not the session's
: > "$AG_DIR/example.org.log"

# ---- npm: verdaccio, a real registry server, with one package published ----------
# verdaccio_dir: its install, once per machine (fd 9 held while installing).
# Its dependency verdaccio-audit asks for node-fetch by the dist-tag "cjs",
# which a registry mirror may not carry: the override names the version
# that tag points to.
verdaccio_dir() {
	local dir=/var/cache/agentgate-tests/verdaccio-$VERDACCIO_VERSION
	mkdir -p /var/cache/agentgate-tests
	(
		flock 9
		[ -f "$dir/node_modules/verdaccio/package.json" ] && exit 0
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" &&
		printf '{"name": "agentgate-test-verdaccio", "private": true,
		    "dependencies": {"verdaccio": "%s"},
		    "overrides": {"node-fetch@cjs": "2.7.0"}}\n' "$VERDACCIO_VERSION" > "$dir.tmp/package.json" &&
		(cd "$dir.tmp" && npm install --no-audit --no-fund --loglevel=error >&2) &&
		    rm -rf "$dir" && mv "$dir.tmp" "$dir"
	) 9>/var/cache/agentgate-tests/.lock || return 1
	printf '%s\n' "$dir"
}
t0=$(date +%s)
VD=$(verdaccio_dir) || { echo "cannot install verdaccio $VERDACCIO_VERSION from npm" >&2; exit 99; }
echo "# verdaccio $VERDACCIO_VERSION ready in $(($(date +%s) - t0)) s"
NPMD=$AG_DIR/npm
mkdir -p "$NPMD/storage"
PORT_registry_npmjs_org=
for _ in 1 2 3 4 5; do
	p=$(ag_free_port)
	cat > "$NPMD/config.yaml" <<EOF
storage: $NPMD/storage
auth:
  htpasswd:
    file: $NPMD/htpasswd
    max_users: 1
uplinks: {}
packages:
  '**':
    access: \$all
    publish: \$authenticated
web:
  enable: false
middlewares:
  audit:
    enabled: false
listen: https://127.0.0.1:$p
https:
  key: $AG_DIR/ca/registry.npmjs.org.key
  cert: $AG_DIR/ca/registry.npmjs.org.pem
log: { type: stdout, format: json, level: http }
EOF
	node "$VD/node_modules/verdaccio/bin/verdaccio" -c "$NPMD/config.yaml" \
	    >>"$NPMD/verdaccio.log" 2>&1 &
	pid=$!
	ag_wait_until 60 ag_listening "$pid" "$p"
	if ag_up "$pid" "$p"; then
		AG_SERVER_PIDS+=("$pid")
		PORT_registry_npmjs_org=$p
		break
	fi
	wait "$pid" 2>/dev/null
done
[ -n "$PORT_registry_npmjs_org" ] ||
    { echo "verdaccio did not start:" >&2; tail -n 20 "$NPMD/verdaccio.log" >&2; exit 99; }
ag_like "$(hcurl registry.npmjs.org "$PORT_registry_npmjs_org" https://registry.npmjs.org/-/ping 2>&1)" \
    "^\{" "fixture_verdaccio_serves_over_tls"
# a user (verdaccio's htpasswd), its token, and the package published with npm
NPM_TOKEN=$(hcurl registry.npmjs.org "$PORT_registry_npmjs_org" -X PUT \
    -H 'Content-Type: application/json' \
    -d '{"name": "publisher", "password": "egress-test-only"}' \
    https://registry.npmjs.org/-/user/org.couchdb.user:publisher |
    "$AG_PYTHON" -c 'import json, sys; print(json.load(sys.stdin).get("token", ""))')
mkdir -p "$NPMD/pkg"
printf '{"name": "%s", "version": "1.0.0", "main": "index.js", "license": "MIT",
  "description": "a package only the egress test registry has"}\n' "$PKG" > "$NPMD/pkg/package.json"
printf '%s\n' 'module.exports = "hello from the local registry";' > "$NPMD/pkg/index.js"
printf '%s\n' "registry=https://127.0.0.1:$PORT_registry_npmjs_org/" \
    "//127.0.0.1:$PORT_registry_npmjs_org/:_authToken=$NPM_TOKEN" "cafile=$CA" > "$NPMD/npmrc"
(cd "$NPMD/pkg" && env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy \
    npm publish --userconfig "$NPMD/npmrc" --cache "$NPMD/cache" --loglevel=error) \
    >"$NPMD/publish.log" 2>&1
ag_is "$(test -f "$NPMD/storage/$PKG/package.json" && echo published)" published \
    "fixture_package_published_to_verdaccio" "$(tail -n 5 "$NPMD/publish.log")"
out=$(hcurl registry.npmjs.org "$PORT_registry_npmjs_org" "https://registry.npmjs.org/$PKG" 2>&1)
# the tarball's address is the name the client asked for
ag_like "$out" "\"tarball\": ?\"https://registry.npmjs.org/$PKG/-/$PKG-1.0.0.tgz\"" \
    "fixture_verdaccio_names_the_asked_host" "$(head -c 400 <<<"$out")"

# ---- the policy: the shipped developer profile, the names mapped, the CA -----------
ag_shipped_policy developer
ag_setgid_gateway
PORT_closed=$(ag_free_port)	# nothing listens there: an allowed host that is down
ag_egress_resolve "$AG_DIR/policy.yaml" \
    "registry.npmjs.org:443=127.0.0.1:$PORT_registry_npmjs_org" \
    "pypi.org:443=127.0.0.1:$PORT_pypi_org" \
    "files.pythonhosted.org:443=127.0.0.1:$PORT_files_pythonhosted_org" \
    "github.com:443=127.0.0.1:$PORT_github_com" \
    "example.org:443=127.0.0.1:$PORT_example_org" \
    "api.github.com:443=127.0.0.1:$PORT_closed" || exit 99
"$AG_PYTHON" - "$AG_DIR/policy.yaml" "$CA" "/home/$AG_USER" <<'EOF' || exit 99
import re, sys
path, ca, home = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(path, encoding="utf-8").read().split("\n")

def find(pattern, start=0, stop=None):
    for i in range(start, len(lines) if stop is None else stop):
        if re.match(pattern, lines[i]):
            return i
    return None

# the developer profile's env.set: the clients trust the test CA
d = find(r"  developer:\s*$")
d_end = find(r"  \S", d + 1) or len(lines)
s = find(r"      set:\s*$", d + 1, d_end)
if s is None:
    sys.exit("no env.set block in the developer profile")
lines[s + 1:s + 1] = ["        %s: %s" % (k, ca) for k in (
    "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "PIP_CERT", "REQUESTS_CA_BUNDLE",
    "GIT_SSL_CAINFO", "CURL_CA_BUNDLE", "npm_config_cafile")]
# npm's cache: the home is root's and read-only in this tier, and per-identity
# tool caches are issue 36's; until then the admin points it into ~/work
lines[s + 1:s + 1] = ["        npm_config_cache: %s/work/.npm-cache" % home]
open(path, "w", encoding="utf-8").write("\n".join(lines))
EOF
out=$("$AGENTGATE" check --config "$AG_DIR/policy.yaml" 2>&1)
rc=$?
ag_is "$rc" 0 "policy_with_egress_mapping_checks" "$out"
if [ "$rc" -ne 0 ]; then
	ag_done
fi

H=/home/$AG_USER
W=$H/work
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "$W"

# x CMD: run CMD through the gateway, keep x_out/x_err/x_rc; the programs'
# complaints shown for whoever reads a failure
x() {
	ag_run x "$@"
	[ -n "$x_err" ] && printf '%s\n' "$x_err" | tail -n 8 | sed 's/^/#   stderr: /'
	return 0
}

# net CMD HOST: the `net` records for HOST (dest.host) of the session that
# ran the command line CMD, summed up on one line: "decision=D port=P
# seq=match" (seq=S where a record's seq is not the command line's), and
# for allowed connections "bytes=yes" (data went both ways) and the
# address connected to; a field that differs between records lists each
# value.  "none" and the session's net records when there are none.
net() {
	"$AG_PYTHON" - "$AG_AUDIT" "$1" "$2" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
cmd, host = sys.argv[2], sys.argv[3]
starts = [x for x in recs if x.get("event") == "command_start"
          and (x.get("command") or "").strip() == cmd.strip()]
if not starts:
    sys.exit(print("no command_start record for the command"))
s = starts[-1]
mine = [x for x in recs if x.get("event") == "net" and x.get("session") == s.get("session")]
dest = lambda x: x.get("dest") or {}
hits = [x for x in mine if dest(x).get("host") == host]
if not hits:
    sys.exit(print("none; the session's net records: %s" % json.dumps(mine)[:600]))
def one(f, xs=hits):
    return ",".join(sorted(set(str(f(x)) for x in xs)))
out = "decision=%s port=%s seq=%s" % (one(lambda x: x.get("decision")), one(lambda x: dest(x).get("port")),
    one(lambda x: "match" if x.get("seq") == s.get("seq") else x.get("seq")))
ok = [x for x in hits if x.get("decision") == "allow"]
if ok:
    out += " bytes=%s address=%s" % (
        "yes" if sum(x.get("bytes_up") or 0 for x in ok) > 0 and sum(x.get("bytes_down") or 0 for x in ok) > 0 else "no",
        one(lambda x: dest(x).get("address"), ok))
print(out)
EOF
}
# allowed NAME: what net says of an allowed connection to NAME's server
allowed() {
	local v=PORT_${1//./_}
	echo "decision=allow port=443 seq=match bytes=yes address=127.0.0.1:${!v}"
}

# ---- npm install from the registry -------------------------------------------------
NPM_CMD="mkdir -p ~/work/npmproj && cd ~/work/npmproj && npm init -y >/dev/null && npm install $PKG && node -e 'console.log(require(\"$PKG\"))'"
x "$NPM_CMD"
ag_is "$x_rc" 0 "npm_install_succeeds"
ag_like "$x_out" "hello from the local registry" "npm_installed_package_loads" "$x_out"
ag_ok "npm_package_in_node_modules" test -f "$W/npmproj/node_modules/$PKG/package.json"
ag_is "$(net "$NPM_CMD" registry.npmjs.org)" "$(allowed registry.npmjs.org)" "npm_connections_audited_with_the_seq"

# ---- pip install into a venv from the index ------------------------------------------
x 'python3 -m venv ~/work/venv && echo venv-made'
ag_is "$x_out" "venv-made" "venv_created"
PIP_CMD="$W/venv/bin/pip install --index-url https://pypi.org/simple $PKG && $W/venv/bin/python3 -c 'import agentgate_egress_demo as m; print(m.GREETING)'"
x "$PIP_CMD"
ag_is "$x_rc" 0 "pip_install_succeeds"
ag_like "$x_out" "hello from the local index" "pip_installed_module_imports" "$(tail -n 5 <<<"$x_out")"
ag_like "$(cat "$AG_DIR/pypi.org.log")" "GET /simple/$PKG/ Host: pypi.org" "pip_asked_the_index_by_name"
ag_like "$(cat "$AG_DIR/files.pythonhosted.org.log")" "GET /packages/ag/$WHEEL Host: files.pythonhosted.org" \
    "pip_fetched_the_wheel_by_name"
ag_is "$(net "$PIP_CMD" pypi.org)" "$(allowed pypi.org)" "pip_index_connection_audited_with_the_seq"
ag_is "$(net "$PIP_CMD" files.pythonhosted.org)" "$(allowed files.pythonhosted.org)" "pip_wheel_connection_audited_with_the_seq"

# ---- git clone and fetch over HTTPS ------------------------------------------------
CLONE_CMD='cd ~/work && git clone -q https://github.com/agentgate-test/demo.git && git -C demo log --format=%s'
x "$CLONE_CMD"
ag_is "$x_out" "upstream: first" "git_clone_over_https"
ag_is "$(net "$CLONE_CMD" github.com)" "$(allowed github.com)" "git_clone_connection_audited_with_the_seq"
git -C "$SRC" -c user.name=Upstream -c user.email=up@localhost commit -q --allow-empty -m "upstream: second"
git -C "$SRC" push -q "$GITROOT/agentgate-test/demo.git" main
FETCH_CMD='cd ~/work/demo && git fetch -q && git log -1 --format=%s origin/main'
x "$FETCH_CMD"
ag_is "$x_out" "upstream: second" "git_fetch_over_https"
ag_is "$(net "$FETCH_CMD" github.com)" "$(allowed github.com)" "git_fetch_connection_audited_with_the_seq"
ag_like "$(cat "$AG_DIR/github.com.log")" "POST /agentgate-test/demo.git/git-upload-pack Host: github.com" \
    "git_asked_http_backend_by_name"

# ---- curl, allowed and not -------------------------------------------------------
CURL_CMD="curl -fsS https://registry.npmjs.org/$PKG"
x "$CURL_CMD"
ag_is "$x_rc" 0 "curl_to_an_allowed_host_succeeds"
ag_like "$x_out" "\"name\": ?\"$PKG\"" "curl_reads_the_registry" "$(head -c 300 <<<"$x_out")"
ag_is "$(net "$CURL_CMD" registry.npmjs.org)" "$(allowed registry.npmjs.org)" "curl_connection_audited_with_the_seq"

DENY_CMD="curl -fsS https://example.org/"
x "$DENY_CMD"
ag_unlike "$x_rc" "^0$" "curl_to_an_unlisted_host_fails"
ag_unlike "$x_out" "was reached" "curl_to_an_unlisted_host_reads_nothing"
ag_like "$x_err" "agentgate: blocked connection to example\\.org:443 \\(allowed here: .*registry\\.npmjs\\.org.*github\\.com" \
    "unlisted_host_refusal_says_what_is_allowed"
ag_is "$(grep -c 'agentgate: blocked connection to example\.org:443' <<<"$x_err")" 1 \
    "refusal_said_once_per_host"
ag_is "$(net "$DENY_CMD" example.org)" "decision=deny port=443 seq=match" \
    "refused_connection_audited_with_the_seq"
# an allowed host the gateway cannot reach: the client's own error says
# "502"; the agent is told what happened
x "curl -fsS https://api.github.com/"
ag_unlike "$x_rc" "^0$" "curl_to_an_unreachable_allowed_host_fails"
ag_like "$x_err" "agentgate: api\.github\.com:443 is allowed here, but the gateway could not reach it: .*refused" \
    "unreachable_allowed_host_says_why"
# a client that ignores the proxy variables has no route to the host's
# loopback, where the servers listen
DIRECT_CMD="curl -sS --noproxy '*' --connect-to example.org:443:127.0.0.1:$PORT_example_org https://example.org/"
x "$DIRECT_CMD"
ag_unlike "$x_rc" "^0$" "direct_connection_ignoring_the_proxy_fails"
ag_unlike "$x_out" "was reached" "direct_connection_reads_nothing"
ag_is "$(grep -c . "$AG_DIR/example.org.log")" 0 "unlisted_host_server_saw_no_connection" \
    "$(head -n 3 "$AG_DIR/example.org.log")"

# the audit chain is whole
out=$("$AGENTGATE" audit verify "$AG_AUDIT" 2>&1)
ag_is "$?" 0 "audit_chain_verifies" "$out"

ag_done
