# tests/integration/lib.sh - shared helper for the integration tests.
#
# Sourced (not run).  Sourcing only defines things: a script that needs no
# world (explain.sh) or builds its own (doctor.sh, pam_module.sh) uses the
# assertions, ag_wait_until and ag_done and never calls ag_setup.
# As root, ag_setup gives each test its own world:
#   - a throwaway account ($AG_USER, home under /home, login shell /bin/bash),
#   - a root-owned 0755 work directory under /run ($AG_DIR) holding a copy of
#     the gateway, the test policy, the keys and the audit log directory,
#   - the real OpenSSH sshd on 127.0.0.1:$AG_PORT with the gateway as
#     ForceCommand, and ag_ssh, a wrapper for the real ssh client,
# and removes all of it on exit, also when the test fails.
# A tiny TAP-like assertion library prints "ok N - name" / "not ok N - name"
# and a final "N passed, N failed" line; the test exits 1 if anything failed.
# Without root the test is skipped (exit 77).
#
# Environment: AGENTGATE (the built binary), SSHD (default /usr/sbin/sshd).

set -u

AG_PASS=0
AG_FAIL=0
AG_N=0
AG_DIR=
AG_SSHD_PID=
AG_SSHD_SERVICE=
AG_DEFAULT_LINK=
AG_USER=
AG_USER_CREATED=0
AG_PORT=
SSHD=${SSHD:-/usr/sbin/sshd}
# root's run-time directory the build was configured with (sshd's
# connection records live below it)
AG_RUNDIR=$(sed -n 's/^#define AG_RUNDIR "\(.*\)"$/\1/p' \
    "$(dirname "${AGENTGATE:-/nonexistent}")/../agconfig.h" 2>/dev/null)
AG_RUNDIR=${AG_RUNDIR:-/run/agentgate}
# and its state directory, where root keeps the last policy that loaded
AG_STATEDIR=$(sed -n 's/^#define AG_STATEDIR "\(.*\)"$/\1/p' \
    "$(dirname "${AGENTGATE:-/nonexistent}")/../agconfig.h" 2>/dev/null)
AG_STATEDIR=${AG_STATEDIR:-/var/lib/agentgate}
AG_PYTHON=${AG_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}

ag_require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: integration tests start sshd and create an account: run as root"
		exit 77
	fi
	if [ -z "${AGENTGATE:-}" ] || [ ! -x "$AGENTGATE" ]; then
		echo "AGENTGATE is not set to the built gateway binary" >&2
		exit 99
	fi
	if [ ! -x "$SSHD" ]; then
		echo "SKIP: $SSHD not found (apt-get install openssh-server)"
		exit 77
	fi
}

# ---- assertions --------------------------------------------------------------

# The two outcomes every assertion ends in; the other helpers call these.
ag_pass() {	# ag_pass NAME
	AG_N=$((AG_N + 1))
	AG_PASS=$((AG_PASS + 1))
	echo "ok $AG_N - $1"
}

ag_fail() {	# ag_fail NAME [DETAIL-LINE...]
	local l
	AG_N=$((AG_N + 1))
	AG_FAIL=$((AG_FAIL + 1))
	echo "not ok $AG_N - $1"
	shift
	for l in "$@"; do echo "#   $l"; done
}

ag_ok() {	# ag_ok NAME CMD...: passes when CMD succeeds
	local name=$1
	shift
	if "$@"; then ag_pass "$name"; else ag_fail "$name"; fi
}

# ag_is, ag_like, ag_unlike: DETAIL lines after the name are shown only
# when the assertion fails (what a command printed, say).
ag_is() {	# ag_is GOT EXPECTED NAME [DETAIL...]
	if [ "$1" == "$2" ]; then
		ag_pass "$3"
	else
		ag_fail "$3" "$(printf 'got:      %q' "$1")" "$(printf 'expected: %q' "$2")" "${@:4}"
	fi
}

ag_like() {	# ag_like GOT EXTENDED-REGEX NAME [DETAIL...]
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		ag_pass "$3"
	else
		ag_fail "$3" "$(printf 'got:      %q' "$1")" "expected to match: $2" "${@:4}"
	fi
}

ag_unlike() {	# ag_unlike GOT EXTENDED-REGEX NAME [DETAIL...]
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		ag_fail "$3" "$(printf 'got:      %q' "$1")" "expected not to match: $2" "${@:4}"
	else
		ag_pass "$3"
	fi
}

ag_done() {
	echo "$AG_PASS passed, $AG_FAIL failed"
	if [ "$AG_FAIL" -ne 0 ]; then
		echo "--- sshd log (last lines) ---"
		[ -n "$AG_DIR" ] && tail -n 20 "$AG_DIR/sshd.log" 2>/dev/null | sed 's/^/# /'
		exit 1
	fi
	exit 0
}

# ---- waiting for events --------------------------------------------------------

# ag_wait_until SECONDS CMD...: 0 as soon as CMD succeeds, 1 when it still
# has not after SECONDS.  The bound only fires when the event never comes;
# a test decides by the event, never by how long it took.
# (Its pause between two looks is the only sleep the harness has.)
ag_wait_until() {
	local limit=$1 i
	shift
	for i in $(seq 1 $((limit * 10))); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# ag_listening PID PORT: PID is gone (no use waiting longer) or something
# accepts connections on 127.0.0.1:PORT; with ag_wait_until it waits for a
# daemon to listen.  ag_up PID PORT: it is alive and listening.
ag_listening() {
	kill -0 "$1" 2>/dev/null || return 0
	(exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null
}
ag_up() {
	kill -0 "$1" 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null || return 1
	# and the listener is PID's, not another world's that took the port
	# between ag_free_port and the bind
	command -v ss >/dev/null || return 0
	ss -Hltnp "sport = :$2" 2>/dev/null | grep -q "pid=$1,"
}

# ag_ldso: the dynamic loader this host's programs run with, read from the
# program header of bash (neither the architecture nor the /lib layout is
# assumed).
ag_ldso() {
	"$AG_PYTHON" - "$(command -v bash)" <<'EOF'
import struct, sys
f = open(sys.argv[1], "rb")
h = f.read(64)
is64, e = h[4] == 2, "<" if h[5] == 1 else ">"
if is64:
    phoff, = struct.unpack(e + "Q", h[32:40])
    phentsize, phnum = struct.unpack(e + "HH", h[54:58])
else:
    phoff, = struct.unpack(e + "I", h[28:32])
    phentsize, phnum = struct.unpack(e + "HH", h[42:46])
for i in range(phnum):
    f.seek(phoff + i * phentsize)
    ph = f.read(phentsize)
    if struct.unpack(e + "I", ph[:4])[0] == 3:     # PT_INTERP
        if is64:
            off, size = struct.unpack(e + "Q16xQ", ph[8:40])
        else:
            off, size = struct.unpack(e + "I8xI", ph[4:20])
        f.seek(off)
        print(f.read(size).rstrip(b"\0").decode())
EOF
}

# ---- the world ---------------------------------------------------------------

ag_cleanup() {
	local pids
	set +e
	if [ -n "$AG_SSHD_PID" ]; then
		kill "$AG_SSHD_PID" 2>/dev/null
		wait "$AG_SSHD_PID" 2>/dev/null
	fi
	# any sshd of this world's config that outlived its pid variable
	[ -n "$AG_DIR" ] && pkill -f -- "-f $AG_DIR/sshd_config" 2>/dev/null
	if [ -n "$AG_USER" ] && id "$AG_USER" >/dev/null 2>&1; then
		# whatever the test account still runs is ours to end
		pids=$(pgrep -u "$AG_USER")
		[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
		# its sandbox scans, kept by a set-group-ID gateway (the uid is reused)
		rm -f "$AG_RUNDIR/scans/$(id -u "$AG_USER")-"* "$AG_RUNDIR/scans/$(id -u "$AG_USER")."* 2>/dev/null
		# (userdel refuses until the killed processes are gone)
		[ "$AG_USER_CREATED" -eq 1 ] && ag_wait_until 30 ag_userdel "$AG_USER"
	fi
	[ -n "$AG_SSHD_SERVICE" ] && rm -f "/etc/pam.d/$AG_SSHD_SERVICE"
	# the copies root kept of the world's policies as the last good ones
	if [ -n "$AG_DIR" ] && [ -d "$AG_DIR" ]; then
		find "$AG_DIR" -name '*.yaml' -print 2>/dev/null | while read -r f; do
			rm -f "$(ag_last_good "$f")"
		done
	fi
	[ -n "$AG_DEFAULT_LINK" ] && rm -f "$(ag_last_good "$AG_DEFAULT_LINK")"
	[ -n "$AG_DEFAULT_LINK" ] && [ -L "$AG_DEFAULT_LINK" ] && rm -f "$AG_DEFAULT_LINK"
	[ -n "$AG_DIR" ] && [ -d "$AG_DIR" ] && rm -rf -- "$AG_DIR"
}

# ag_last_good POLICY-PATH: where root keeps the last good copy of that
# policy (common/lastgood.h)
ag_last_good() {
	echo "$AG_STATEDIR/last-good/$(printf '%s' "$1" | sha256sum | cut -d' ' -f1).yaml"
}

ag_userdel() {	# ag_userdel USER: the account and its home are gone
	flock /run/agentgate-test.lock userdel -r "$1" >/dev/null 2>&1 || ! id "$1" >/dev/null 2>&1
}

# A free TCP port on 127.0.0.1 (sshd retries below cover a lost race).
ag_free_port() {
	"$AG_PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# ag_write_policy FILE: the test policy, with @DIR@, @USER@ and @AUDIT@
# replaced, read from stdin.  root-owned 0644 like a real one.  Every
# session runs the PAM service, so a policy whose gateway: section names no
# pam_confdir gets the world's test PAM directory (ag_write_pam).
ag_write_policy() {
	sed -e "s|@DIR@|$AG_DIR|g" -e "s|@USER@|$AG_USER|g" \
	    -e "s|@AUDIT@|$AG_DIR/log/audit.jsonl|g" > "$1.tmp"
	if ! grep -q 'pam_confdir' "$1.tmp"; then
		sed -i "/^gateway:[[:space:]]*\$/a\\  pam_confdir: $AG_DIR/pam.d" "$1.tmp"
	fi
	chmod 0644 "$1.tmp"
	mv -f "$1.tmp" "$1"
}

# ag_sandboxed_policy PROFILE: the world's policy with the sandbox required,
# a required audit log and the account mapped to PROFILE, whose definition
# (indented as under profiles:, starting with "  PROFILE:") is stdin.
ag_sandboxed_policy() {
	{
		printf 'version: 1\ngateway:\n  sandbox: required\n'
		printf '  audit: { file: @AUDIT@, required: true }\n'
		printf 'users:\n  %s: %s\nprofiles:\n' "$AG_USER" "$1"
		cat
	} | ag_write_policy "$AG_DIR/policy.yaml"
}

# ag_argv_policy DIR: ag_sandboxed_policy with a backup account of exact
# argument rules (agentgate.yaml(5), "Rules"): `tar -x -C DIR -f -` (the
# rule named restore), date without arguments, ls but never `ls /` (the
# deny rule named no-root); writes beneath DIR.
ag_argv_policy() {
	ag_sandboxed_policy backup <<POLICY
  backup:
    allow:
      - { name: restore, command: tar, argv: ["-x", "-C", "$1", "-f", "-"] }
      - { command: date, argv: [] }
      - ls
    deny:
      - { name: no-root, command: ls, argv: [/] }
    paths: { read: ["/"], write: ["$1"] }
    unknown: deny
POLICY
}

# ag_write_pam [MODULE-ARGS...]: the PAM service "agentgate" in
# $AG_DIR/pam.d, built on a copy of the built pam_agentgate.so (the agent
# account may not reach the build tree).  Default: identities from keys and
# tokens, callers without one fall through to users:/default_profile.
# AG_POLICY: the policy file the module reads (default $AG_DIR/policy.yaml).
ag_write_pam() {
	local args=${*:-allow_unidentified} cfg=${AG_POLICY:-$AG_DIR/policy.yaml}
	mkdir -p "$AG_DIR/pam.d"
	chmod 0755 "$AG_DIR/pam.d"
	cat > "$AG_DIR/pam.d/agentgate" <<EOF
auth     required  $AG_DIR/pam_agentgate.so config=$cfg $args
auth     required  pam_permit.so
account  required  $AG_DIR/pam_agentgate.so config=$cfg $args
account  required  pam_permit.so
session  required  $AG_DIR/pam_agentgate.so config=$cfg
EOF
	# what Linux-PAM falls back to in a confdir, as /etc/pam.d/other does
	printf '%s\n' 'auth required pam_deny.so' 'account required pam_deny.so' \
	    'password required pam_deny.so' 'session required pam_deny.so' > "$AG_DIR/pam.d/other"
	chmod 0644 "$AG_DIR/pam.d/agentgate" "$AG_DIR/pam.d/other"
}

# The default test policy: what the tests run is allowed, little else.
# Its time limits are far beyond anything a test runs, so that no result
# depends on how busy the machine is (limits.sh sets a short one to test it).
ag_default_policy() {
	ag_write_policy "$AG_DIR/policy.yaml" <<'EOF'
version: 1
gateway:
  runner: /bin/bash
  sandbox: "off"
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: test
profiles:
  test:
    allow: [ls, pwd, echo, printf, cat, "true", "false", sleep, env, kill, head,
            seq, yes, test, mkdir, touch, wc, grep, id, cd, pushd, popd, dirs,
            export, unset, exit, wait, trap]
    deny:
      - { command: cat, args: ["/etc/shadow*"] }
    features:
      background: allow
    paths:
      read: ["/"]
      write: ["/tmp", "~"]
    env:
      deny: ["SECRET_*"]
      set: { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: C.UTF-8 }
    limits:
      timeout: 300
      max_output: 100000
      idle_timeout: 600
    unknown: deny
EOF
}

ag_create_user() {
	AG_USER=${AG_USER_NAME:-agt$$}
	if ! id "$AG_USER" >/dev/null 2>&1; then
		flock /run/agentgate-test.lock \
		    useradd -m -d "/home/$AG_USER" -s /bin/bash "$AG_USER" || return 1
		AG_USER_CREATED=1
	fi
	# '*': no password, yet not "locked" (sshd refuses locked accounts without PAM)
	flock /run/agentgate-test.lock usermod -p '*' "$AG_USER" || return 1
}

# ag_sshd_pam: sshd's own PAM service for this world, as an admin sets up
# /etc/pam.d/sshd: pam_agentgate.so bind records which key each connection
# used (the gateway reads nothing else).  sshd names its PAM service after
# the name it was started by, so the world's sshd is a symlink with a name
# of its own (AG_SSHD_BIN; sshd lowercases it) and its service lives in /etc/pam.d only while
# the test runs; the bind line names it (sshd_service=, as an admin names a
# service that is not "sshd").  AG_SSHD_PAM_EXTRA: more lines for that service.
# sshd is not built with AddressSanitizer and cannot load a module that is:
# a sanitizer build's tests name a plain build's module in SSHD_PAM_MODULE
# (contrib/quickstart-test.sh does).
ag_sshd_pam() {
	local mod=${SSHD_PAM_MODULE:-$PAM_MODULE}
	if ldd "$mod" 2>/dev/null | grep -q 'libasan'; then
		echo "sshd cannot load $mod (built with AddressSanitizer): set" \
		    "SSHD_PAM_MODULE to a plain build's pam_agentgate.so" >&2
		exit 99
	fi
	# named as installed, so that doctor finds it in the service
	mkdir -p "$AG_DIR/sshd-pam" || exit 99
	cp "$mod" "$AG_DIR/sshd-pam/pam_agentgate.so.new" &&
	    mv -f "$AG_DIR/sshd-pam/pam_agentgate.so.new" "$AG_DIR/sshd-pam/pam_agentgate.so" || exit 99
	chmod 0644 "$AG_DIR/sshd-pam/pam_agentgate.so"
	AG_SSHD_SERVICE=sshd-$(basename "$AG_DIR" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' -)
	AG_SSHD_BIN=$AG_DIR/$AG_SSHD_SERVICE
	ln -sfn "$SSHD" "$AG_SSHD_BIN"
	cat > "/etc/pam.d/$AG_SSHD_SERVICE.new" <<EOF
# agentgate test world $AG_DIR (removed when the test ends)
auth     required  pam_deny.so
account  required  pam_permit.so
${AG_SSHD_PAM_EXTRA:-}
session  required  $AG_DIR/sshd-pam/pam_agentgate.so bind sshd_service=$AG_SSHD_SERVICE
EOF
	mv -f "/etc/pam.d/$AG_SSHD_SERVICE.new" "/etc/pam.d/$AG_SSHD_SERVICE"
}

# ag_start_sshd: writes the sshd config and starts sshd in the foreground
# (-D -e) in the background; retries on another port if one was taken.
# AG_PORT preset: use that port, no retry.  AG_SSHD_DETACH=1: own session
# (the demo leaves it running).  AG_FORCE_COMMAND: the ForceCommand line
# (@DIR@ in it is the world's directory, for a test that sets it before
# ag_setup).
# AG_SSHD_EXTRA: more sshd_config lines (before ForceCommand; sshd keeps the
# first value of an option).  AG_SSHD_AUTHKEYS_FILE: AuthorizedKeysFile.
ag_start_sshd() {
	local fc=${AG_FORCE_COMMAND:-$AG_DIR/agentgate --config $AG_DIR/policy.yaml}
	local try fixed=${AG_PORT:-}
	mkdir -p /run/sshd
	chmod 0755 /run/sshd
	ag_sshd_pam
	for try in 1 2 3 4 5; do
		[ -n "$fixed" ] && AG_PORT=$fixed || AG_PORT=$(ag_free_port)
		cat > "$AG_DIR/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $AG_PORT
HostKey $AG_DIR/hostkey
PidFile none
AuthorizedKeysFile ${AG_SSHD_AUTHKEYS_FILE:-$AG_DIR/keys/%u}
StrictModes no
UsePAM yes
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers $AG_USER
PermitUserRC no
PermitUserEnvironment no
DisableForwarding yes
MaxStartups 200
MaxSessions 200
LoginGraceTime 120
LogLevel ERROR
Subsystem sftp internal-sftp
Subsystem mcp $AG_DIR/agentgate mcp
Subsystem agentgate-json $AG_DIR/agentgate json
${AG_SSHD_EXTRA:-}
ForceCommand ${fc//@DIR@/$AG_DIR}
EOF
		if [ "${AG_SSHD_DETACH:-0}" = 1 ]; then
			setsid "$AG_SSHD_BIN" -D -e -f "$AG_DIR/sshd_config" </dev/null >>"$AG_DIR/sshd.log" 2>&1 &
		else
			"$AG_SSHD_BIN" -D -e -f "$AG_DIR/sshd_config" 2>>"$AG_DIR/sshd.log" &
		fi
		AG_SSHD_PID=$!
		# listening, or dead (the port was taken: another one)
		ag_wait_until 60 ag_listening "$AG_SSHD_PID" "$AG_PORT"
		ag_up "$AG_SSHD_PID" "$AG_PORT" && return 0
		kill "$AG_SSHD_PID" 2>/dev/null
		wait "$AG_SSHD_PID" 2>/dev/null
		AG_SSHD_PID=
		[ -n "$fixed" ] && break
	done
	echo "could not start sshd; log:" >&2
	cat "$AG_DIR/sshd.log" >&2
	return 1
}

# ag_start_baseline_sshd [SED-EXPR...]: for benchmarks, a second sshd with
# the same config but no ForceCommand (the baseline), edited further by the
# sed expressions given.  Sets PLAIN_PORT, AG_PLAIN_PID and PLAIN_SSH
# (AG_SSH pointed at it) and stops it on exit.  The world's account has the
# gateway as its login shell, so the baseline logs in as an account of its
# own (AG_PLAIN_USER, the same key) whose shell is bash: plain sshd as
# people run it.
ag_start_baseline_sshd() {
	local p e edits=(-e "/^ForceCommand/d")
	AG_PLAIN_USER=${AG_USER}p
	if ! id "$AG_PLAIN_USER" >/dev/null 2>&1; then
		flock /run/agentgate-test.lock \
		    useradd -m -d "/home/$AG_PLAIN_USER" -s /bin/bash "$AG_PLAIN_USER" || return 1
	fi
	flock /run/agentgate-test.lock usermod -p '*' "$AG_PLAIN_USER" || return 1
	cp "$AG_DIR/keys/$AG_USER" "$AG_DIR/keys/$AG_PLAIN_USER" || return 1
	edits+=(-e "s/^AllowUsers .*/AllowUsers $AG_PLAIN_USER/")
	for e in "$@"; do edits+=(-e "$e"); done
	sed "${edits[@]}" "$AG_DIR/sshd_config" > "$AG_DIR/plain_config"
	PLAIN_PORT=
	for _ in 1 2 3 4 5; do
		p=$(ag_free_port)
		sed -i "s/^Port .*/Port $p/" "$AG_DIR/plain_config"
		"$AG_SSHD_BIN" -D -e -f "$AG_DIR/plain_config" 2>>"$AG_DIR/sshd.log" &
		AG_PLAIN_PID=$!
		ag_wait_until 60 ag_listening "$AG_PLAIN_PID" "$p"
		ag_up "$AG_PLAIN_PID" "$p" && { PLAIN_PORT=$p; break; }
		kill "$AG_PLAIN_PID" 2>/dev/null
	done
	[ -n "$PLAIN_PORT" ] || { echo "cannot start the baseline sshd" >&2; return 1; }
	trap 'kill $AG_PLAIN_PID 2>/dev/null; pkill -KILL -u "$AG_PLAIN_USER" 2>/dev/null; ag_wait_until 30 ag_userdel "$AG_PLAIN_USER"; ag_cleanup' EXIT
	PLAIN_SSH=("${AG_SSH[@]}")
	for i in "${!PLAIN_SSH[@]}"; do
		[ "${PLAIN_SSH[$i]}" = "$AG_PORT" ] && PLAIN_SSH[$i]=$PLAIN_PORT
		[ "${PLAIN_SSH[$i]}" = "$AG_USER@127.0.0.1" ] && PLAIN_SSH[$i]=$AG_PLAIN_USER@127.0.0.1
	done
	return 0
}

# ag_bench_per_command N COMMAND...: for benchmarks, the cost of each
# COMMAND inside one REPL session through the gateway against the same
# account running `bash -c COMMAND` N times, as a table with the ratio.
# A session's own start-up (an empty session, measured in the same round)
# is subtracted.  BENCH_ROUNDS (default 5) interleaved rounds per command;
# the table shows the median round, since one busy moment on a shared
# machine moves a single round by a third.  The baseline runs with the
# environment the gateway gives the command (a login's LANG and the
# profile's PATH), not the benchmark's own: bash starts 0.4 ms slower
# under LANG=C.UTF-8 than without a locale, which is not the gateway's.
# BENCH_ROW (a label) and BENCH_GOAL (the highest ratio that meets the
# goal, or "floor" for a row kept as the floor, judged against nothing):
# each command's median is printed with its goal and given to
# ag_bench_summary as "BENCH_ROW: COMMAND".
ag_bench_per_command() {
	local n=$1 cmd script r rounds=${BENCH_ROUNDS:-5} rows cenv=()
	shift
	mapfile -d '' cenv < <(printf 'env -0\n' | ag_ssh 2>/dev/null)
	if [ "${#cenv[@]}" -eq 0 ]; then
		echo "  cannot read the command's environment through the gateway" \
		    "(the benchmark's profile must allow env)" >&2
		return 1
	fi
	printf '  %-14s %12s %12s %8s %-16s (median of %d rounds; all ratios)\n' command \
	    "gateway ms" "bash -c ms" ratio "  goal" "$rounds"
	for cmd in "$@"; do
		script=$(for _ in $(seq 1 "$n"); do printf '%s\n' "$cmd"; done)
		rows=
		for r in $(seq 1 "$rounds"); do
			local t0 t1 t2 t3 t4
			t0=$(date +%s.%N); printf '' | ag_ssh >/dev/null
			t1=$(date +%s.%N); printf '%s\n' "$script" | ag_ssh >/dev/null
			t2=$(date +%s.%N)
			runuser -u "$AG_USER" -- env -i "${cenv[@]}" bash -c \
			    'for i in $(seq 1 '"$n"'); do bash -c "$1" >/dev/null; done' _ "$cmd"
			t3=$(date +%s.%N)
			rows="$rows$t0 $t1 $t2 $t3
"
		done
		local line g m met
		line=$(printf '%s' "$rows" | "$AG_PYTHON" -c '
import sys
n, cmd, goal = int(sys.argv[1]), sys.argv[2], sys.argv[3]
r = []
for line in sys.stdin:
    t0, t1, t2, t3 = map(float, line.split())
    gw = (t2 - t1 - (t1 - t0)) / n * 1000
    bl = (t3 - t2) / n * 1000
    r.append((gw / bl, gw, bl))
r.sort()
m = r[len(r) // 2]
if goal == "floor":
    g, met = "floor", "-"
else:
    g, met = "<= %sx" % goal, "met" if m[0] <= float(goal) else "not met"
print("  %-14s %12.3f %12.3f %7.2fx   %-16s (%s)" % (cmd, m[1], m[2], m[0],
    g + ("" if met == "-" else " " + met), " ".join("%.2f" % x[0] for x in r)))
print("\t".join((g, "%.2fx" % m[0], met)))' "$n" "$cmd" "${BENCH_GOAL:-1.3}")
		printf '%s\n' "${line%$'\n'*}"
		IFS=$'\t' read -r g m met <<<"${line##*$'\n'}"
		ag_bench_summary "${BENCH_ROW:-per command vs bash -c}: $cmd" "$g" "$m" "$met"
	done
}

# ag_bench_summary ROW GOAL MEASURED MET: one row of `make bench-all`'s
# closing table (contrib/bench/bench_summary.sh prints it), appended to the
# file $BENCH_SUMMARY when it is set; nothing otherwise.
ag_bench_summary() {
	[ -n "${BENCH_SUMMARY:-}" ] || return 0
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$BENCH_SUMMARY"
}

# ag_bench_judge VALUE GOAL: "met" or "not met", GOAL being ">= X" or
# "<= X" (an "x" or unit after X is ignored), "-" for anything else
# ("floor").
ag_bench_judge() {
	"$AG_PYTHON" - "$1" "$2" <<'EOF'
import re, sys
v, g = sys.argv[1], sys.argv[2]
m = re.match(r"\s*(<=|>=)\s*\+?([0-9.]+)", g)
if not m:
    print("-")
else:
    x, y = float(re.match(r"[-+]?[0-9.]+", v).group()), float(m.group(2))
    print("met" if (x <= y if m.group(1) == "<=" else x >= y) else "not met")
EOF
}

# ag_median X...: the median of the numbers.
ag_median() {
	"$AG_PYTHON" -c 'import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))' "$@"
}

# ag_bench_pairs GOAL GW PL [GW PL...]: the throughput rows' report, from
# interleaved gateway/plain pairs (MiB/s each): every pair's ratio, the
# best run of each side, and the median of the pairs' ratios, on which
# GOAL (">= 0.95x") is judged: a slow spell of the machine weighs on both
# sides of one pair instead of deciding a best-of on one side alone.
# BENCH_ROW: the label under which the median goes to ag_bench_summary.
ag_bench_pairs() {
	local goal=$1 out med met
	shift
	out=$("$AG_PYTHON" - "$goal" "$@" <<'EOF'
import statistics, sys
goal, v = sys.argv[1], [float(x) for x in sys.argv[2:]]
gw, pl = v[0::2], v[1::2]
r = sorted(g / p for g, p in zip(gw, pl))
print("  pairs (gateway/plain): " + ", ".join("%.3f" % x for x in r))
print("  best: gateway %.0f MiB/s, plain %.0f MiB/s (%.3fx)" % (max(gw), max(pl), max(gw) / max(pl)))
print("%.3f" % statistics.median(r))
EOF
)
	med=${out##*$'\n'}
	met=$(ag_bench_judge "$med" "$goal")
	printf '%s\n' "${out%$'\n'*}"
	printf '  median of pairs: %.3fx of plain (goal %s: %s)\n' "$med" "$goal" "$met"
	ag_bench_summary "${BENCH_ROW:-relay vs plain}" "$goal" "${med}x" "$met"
}

# ag_make_world [DIR]: the work directory (DIR, else a fresh one under
# /run), a copy of the gateway, host and client keys, the audit directory.
ag_make_world() {
	if [ -n "${1:-}" ]; then
		AG_DIR=$1
		mkdir -p "$AG_DIR" || return 1
	else
		# not /run or /tmp: a sandboxed session sees its own of each,
		# and commands read the world's files
		AG_DIR=$(mktemp -d /var/lib/agentgate-test.XXXXXX) || return 1
	fi
	chmod 0755 "$AG_DIR"
	cp "$AGENTGATE" "$AG_DIR/agentgate.new" && mv -f "$AG_DIR/agentgate.new" "$AG_DIR/agentgate"
	chmod 0755 "$AG_DIR/agentgate"
	# the gateway is the account's login shell, as agentgate(8) SECURITY
	# has it: sshd executes it directly, and no shell of the account's
	# ever holds a connection before it does
	flock /run/agentgate-test.lock usermod -s "$AG_DIR/agentgate" "$AG_USER" || return 1
	if [ -z "${PAM_MODULE:-}" ] || [ ! -f "$PAM_MODULE" ]; then
		echo "PAM_MODULE is not set to the built pam_agentgate.so" >&2
		return 1
	fi
	cp "$PAM_MODULE" "$AG_DIR/pam_agentgate.so.new" &&
	    mv -f "$AG_DIR/pam_agentgate.so.new" "$AG_DIR/pam_agentgate.so"
	chmod 0644 "$AG_DIR/pam_agentgate.so"
	[ -f "$AG_DIR/pam.d/agentgate" ] || ag_write_pam
	# the sandbox's preload library is looked for next to the binary
	if [ -f "$(dirname "$AGENTGATE")/agsandbox.so" ]; then
		install -m 0644 "$(dirname "$AGENTGATE")/agsandbox.so" "$AG_DIR/agsandbox.so"
	fi
	mkdir -p "$AG_DIR/keys" "$AG_DIR/log"
	# the gateway runs as the account, so the account creates the log
	chown "$AG_USER" "$AG_DIR/log"
	chmod 0755 "$AG_DIR/log"
	[ -f "$AG_DIR/hostkey" ] ||
	    ssh-keygen -q -t ed25519 -N '' -f "$AG_DIR/hostkey" -C agentgate-host || return 1
	[ -f "$AG_DIR/client" ] ||
	    ssh-keygen -q -t ed25519 -N '' -f "$AG_DIR/client" -C agentgate-client || return 1
	cp "$AG_DIR/client.pub" "$AG_DIR/keys/$AG_USER"
	chmod 0644 "$AG_DIR/keys/$AG_USER"
	AG_AUDIT=$AG_DIR/log/audit.jsonl
}

# ag_setup: everything; the policy is ag_default_policy unless the test
# writes its own afterwards (sessions read it when they start).
ag_setup() {
	ag_require_root
	trap ag_cleanup EXIT
	trap 'exit 1' INT TERM HUP
	touch /run/agentgate-test.lock
	ag_create_user || { echo "cannot create the test account" >&2; exit 99; }
	ag_make_world || exit 99
	ag_default_policy
	ag_start_sshd || exit 99
	ag_ssh_argv
}

# ag_world_identities NAME...: a world (account, gateway copy, PAM service)
# whose callers must be identities of the policy, with an ssh key per NAME
# at $AG_DIR/NAME; the test writes its policy and sshd options and starts
# sshd itself.  ag_key NAME: that key as a policy names it.  ag_as NAME
# SSH-ARGS...: ssh to the world's sshd with that key and no other (the
# destination is the caller's: $AG_USER@127.0.0.1).
ag_world_identities() {
	ag_require_root
	trap ag_cleanup EXIT
	trap 'exit 1' INT TERM HUP
	touch /run/agentgate-test.lock
	ag_create_user || exit 99
	ag_make_world || exit 99
	ag_write_pam use_key use_token
	for k in "$@"; do
		ssh-keygen -q -t ed25519 -N '' -f "$AG_DIR/$k" -C "$k@test" || exit 99
	done
}
ag_key() { cut -d' ' -f1-2 "$AG_DIR/$1.pub"; }
# ag_identities_policy PROFILE NAME...: each NAME an identity of the
# world's policy with its key and PROFILE, and the key in the account's
# authorized keys
ag_identities_policy() {
	local prof=$1 k
	shift
	for k in "$@"; do
		printf '%s %s\n' "$k" "$(ag_key "$k")"
	done | "$AG_PYTHON" -c '
import sys
p, prof = sys.argv[1:]
ids = "".join("  - { name: %s, keys: [\"%s\"], profile: %s }\n" % (l.split(" ", 1)[0], l.split(" ", 1)[1].strip(), prof)
    for l in sys.stdin)
s = open(p).read().replace("identities:", ("identities:\n" + ids).rstrip("\n"), 1)
open(p, "w").write(s)' "$AG_DIR/policy.yaml" "$prof"
	for k in "$@"; do
		cat "$AG_DIR/$k.pub" >> "$AG_DIR/keys/$AG_USER"
	done
}
ag_as() {
	local k=$1
	shift
	ssh -F /dev/null -i "$AG_DIR/$k" -p "$AG_PORT" -b "$AG_SRC" -o StrictHostKeyChecking=no \
	    -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR \
	    -o IdentitiesOnly=yes "$@"
}

# ag_gateway_pids: the gateways of the account's live sessions (sshd's
# session process is their parent), one pid a line; the helpers they fork
# share their name and title but not that parent.  (The title is
# "agentgate: IDENTITY@USER [SESSION] MODE", not the command line.)
ag_gateway_pids() {
	local p pp
	for p in $(pgrep -u "$AG_USER" -x agentgate); do
		pp=$(ps -o ppid= -p "$p" | tr -d ' ')
		[ -n "$pp" ] && [[ "$(ps -o comm= -p "$pp")" == sshd* ]] && echo "$p"
	done
}

# ag_setgid_gateway: the world's gateway and log directory as make install
# leaves them: set-group-ID to $AG_GROUP (created if missing, and left in
# place: other tests may use it), the log directory (and recordings, if
# made already) root:$AG_GROUP 2770.
# Sets G.
ag_setgid_gateway() {
	G=${AG_GROUP:-agentgate}
	flock /run/agentgate-test.lock sh -c "getent group '$G' >/dev/null || groupadd --system '$G'" ||
	    { echo "cannot create group $G" >&2; exit 99; }
	chown root:"$G" "$AG_DIR/agentgate" "$AG_DIR/log"
	chmod 2755 "$AG_DIR/agentgate"
	chmod 2770 "$AG_DIR/log"
	# ag_shipped_policy's recordings directory, as make install makes it
	if [ -d "$AG_DIR/log/recordings" ]; then
		chown root:"$G" "$AG_DIR/log/recordings"
		chmod 2770 "$AG_DIR/log/recordings"
	fi
}

# ag_own_mount_ns "$@": the first thing a test does whose gateway reads
# the build's default policy path (or which runs the demo, which links its
# policy there): the test starts again in a mount namespace of its own,
# where ag_default_policy_path's link and the last good copy of the policy
# at that path (keyed by the path, common/lastgood.h) are on tmpfs mounts
# that no other process sees.  So such tests run side by side, and beside
# a demo or an installed gateway, whose policy at that path they neither
# replace nor remove; sshd and every gateway the test starts are in the
# namespace with it.
ag_own_mount_ns() {
	ag_require_root
	[ "${AG_OWN_MNTNS:-}" = "$$" ] && return 0
	command -v unshare >/dev/null || { echo "unshare (util-linux) is needed" >&2; exit 99; }
	AG_OWN_MNTNS=$$ exec unshare --mount --propagation private -- "$BASH" "$0" "$@"
}

# ag_private_dir DIR: DIR, made if need be, an empty tmpfs of root's
# (mode 0755) in this test's mount namespace (ag_own_mount_ns)
ag_private_dir() {
	mkdir -p "$1" && mount -t tmpfs -o mode=0755,size=4m agentgate-test "$1" ||
	    { echo "cannot mount a private $1" >&2; exit 99; }
}

# ag_private_sysconf DEFAULT: the directory of the default policy path and
# root's last good copies, private to this test (ag_own_mount_ns); once
ag_private_sysconf() {
	[ -n "${AG_PRIVATE_SYSCONF:-}" ] && return 0
	if [ "${AG_OWN_MNTNS:-}" != "$$" ]; then
		echo "call ag_own_mount_ns \"\$@\" first: the default policy path is the host's" >&2
		exit 99
	fi
	ag_private_dir "$(dirname "$1")"
	ag_private_dir "$AG_STATEDIR/last-good"
	AG_PRIVATE_SYSCONF=1
}

# ag_default_policy_path: the build's default policy path (DEFAULT) made a
# link to the world's policy, for a gateway whose ForceCommand names no
# --config (a policy on the command line is the caller's word, read as
# the caller).  Only in the test's own mount namespace (ag_own_mount_ns):
# the host's file at that path, if any, is neither seen nor touched.
ag_default_policy_path() {
	DEFAULT=$("$AG_DIR/agentgate" --help | sed -n 's/.*policy file (default \(.*\)).*/\1/p' | head -1)
	[ -n "$DEFAULT" ] || { echo "cannot find the default policy path" >&2; exit 99; }
	ag_private_sysconf "$DEFAULT"
	ln -sfn "$AG_DIR/policy.yaml" "$DEFAULT"
	AG_DEFAULT_LINK=$DEFAULT
}

# ag_need_sandbox_lib: exit 99 (a hard error) unless ag_setup found the
# sandbox's preload library next to the gateway; tests of the sandbox need it.
ag_need_sandbox_lib() {
	[ -f "$AG_DIR/agsandbox.so" ] && return 0
	echo "agsandbox.so not built next to $AGENTGATE" >&2
	exit 99
}

# ag_shipped_world PROFILE: ag_shipped_policy PROFILE under the kernel
# sandbox, checked, and ~/work made for the account, as its admin would;
# H and W name the home and ~/work.
ag_shipped_world() {
	ag_need_sandbox_lib
	ag_shipped_policy "$1"
	"$AGENTGATE" check --config "$AG_DIR/policy.yaml" >/dev/null ||
	    { echo "the shipped policy does not check" >&2; exit 99; }
	H=/home/$AG_USER
	W=$H/work
	install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "$W"
}

# ag_shipped_policy PROFILE: the shipped etc/agentgate.yaml as the world's
# policy, only its log locations moved into the world and the test account
# mapped to PROFILE (as an admin would for the account `agent`).
ag_shipped_policy() {
	mkdir -p "$AG_DIR/log/recordings"
	chown "$AG_USER" "$AG_DIR/log/recordings"
	sed -e "s|/var/log/agentgate/audit.jsonl|@AUDIT@|" \
	    -e "s|/var/log/agentgate/recordings|$AG_DIR/log/recordings|" \
	    -e '/pam_confdir/d' \
	    -e "s|^  agent: readonly|  @USER@: $1|" \
	    "${top_srcdir:-$(dirname "$0")/../..}/etc/agentgate.yaml" |
	    ag_write_policy "$AG_DIR/policy.yaml"
}

# ag_start_serve CONFIG: the world's `agentgate serve` with CONFIG on a free
# port of 127.0.0.1, the client key in the account's authorized_keys.  Sets
# SRV_PID, SRV_PORT and SRV_SSH (AG_SSH pointed at it); returns 1, with the
# server's log on stderr, if it never listens.
# AG_SERVE_PREFIX: a command (one word, or words split on spaces) to start
# it through, for example "setpriv --no-new-privs" as systemd's unit does.
ag_start_serve() {
	local h i
	h=$(getent passwd "$AG_USER" | cut -d: -f6)
	install -d -o "$AG_USER" -m 0700 "$h/.ssh"
	install -o "$AG_USER" -m 0600 "$AG_DIR/client.pub" "$h/.ssh/authorized_keys"
	SRV_PID=
	for _ in 1 2 3 4 5; do
		SRV_PORT=$(ag_free_port)
		${AG_SERVE_PREFIX:+$AG_SERVE_PREFIX} "$AG_DIR/agentgate" serve --config "$1" \
		    --listen "127.0.0.1:$SRV_PORT" --foreground -e 2>>"$AG_DIR/serve.log" &
		SRV_PID=$!
		ag_wait_until 60 ag_listening "$SRV_PID" "$SRV_PORT"
		ag_up "$SRV_PID" "$SRV_PORT" && break
		kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; SRV_PID=
	done
	[ -n "$SRV_PID" ] || { cat "$AG_DIR/serve.log" >&2; return 1; }
	SRV_SSH=("${AG_SSH[@]}")
	for i in "${!SRV_SSH[@]}"; do
		[ "${SRV_SSH[$i]}" = "$AG_PORT" ] && SRV_SSH[$i]=$SRV_PORT
	done
	return 0
}

# ag_start_upstream: a host behind the gateway, for bastion mode: an
# account ($UP_USER, login shell /bin/sh), a second real sshd on 127.0.0.1
# ($UP_PORT, its own host key, LogLevel VERBOSE into $UP/sshd.log) whose
# authorized_keys holds only the gateway's key ($UP/gwkey, root:$G 0640
# as an admin installs it; restricted to the loopback address), and pinned
# host key files: $UP/known_hosts (right), $UP/wrong_hosts (another key),
# $UP/empty_hosts.  Sets UP, UP_USER, UP_PORT, UP_PID, UP_FP and GW_FP
# (SHA256 fingerprints of the host key and the gateway key).  Needs G
# (ag_setgid_gateway).  ag_stop_upstream undoes it.
ag_start_upstream() {
	UP_USER=agu$$
	UP=$AG_DIR/up
	mkdir -p "$UP/keys"
	flock /run/agentgate-test.lock useradd -m -d "/home/$UP_USER" -s /bin/sh "$UP_USER" || return 1
	flock /run/agentgate-test.lock usermod -p '*' "$UP_USER" || return 1
	ssh-keygen -q -t ed25519 -N '' -f "$UP/hostkey" -C upstream-host || return 1
	ssh-keygen -q -t ed25519 -N '' -f "$UP/other_hostkey" -C not-the-upstream || return 1
	ssh-keygen -q -t ed25519 -N '' -f "$UP/gwkey" -C agentgate-gateway || return 1
	chown root:"$G" "$UP/gwkey"
	chmod 0640 "$UP/gwkey"
	printf 'restrict,pty,from="127.0.0.1" %s\n' "$(cat "$UP/gwkey.pub")" > "$UP/keys/$UP_USER"
	chmod 0644 "$UP/keys/$UP_USER"
	UP_PID=
	for _ in 1 2 3 4 5; do
		UP_PORT=$(ag_free_port)
		cat > "$UP/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $UP_PORT
HostKey $UP/hostkey
PidFile none
AuthorizedKeysFile $UP/keys/%u
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers $UP_USER
MaxStartups 200
MaxSessions 200
LogLevel VERBOSE
EOF
		"$SSHD" -D -e -f "$UP/sshd_config" 2>>"$UP/sshd.log" &
		UP_PID=$!
		ag_wait_until 60 ag_listening "$UP_PID" "$UP_PORT"
		ag_up "$UP_PID" "$UP_PORT" && break
		kill "$UP_PID" 2>/dev/null; wait "$UP_PID" 2>/dev/null; UP_PID=
	done
	[ -n "$UP_PID" ] || { echo "cannot start the upstream sshd" >&2; cat "$UP/sshd.log" >&2; return 1; }
	printf '[127.0.0.1]:%s %s\n' "$UP_PORT" "$(cut -d' ' -f1,2 "$UP/hostkey.pub")" > "$UP/known_hosts"
	printf '[127.0.0.1]:%s %s\n' "$UP_PORT" "$(cut -d' ' -f1,2 "$UP/other_hostkey.pub")" > "$UP/wrong_hosts"
	: > "$UP/empty_hosts"
	chmod 0644 "$UP/known_hosts" "$UP/wrong_hosts" "$UP/empty_hosts"
	UP_FP=$(ssh-keygen -lf "$UP/hostkey.pub" | cut -d' ' -f2)
	GW_FP=$(ssh-keygen -lf "$UP/gwkey.pub" | cut -d' ' -f2)
}
ag_stop_upstream() {
	[ -n "${UP_PID:-}" ] && kill "$UP_PID" 2>/dev/null
	if [ -n "${UP_USER:-}" ] && id "$UP_USER" >/dev/null 2>&1; then
		pkill -KILL -u "$UP_USER" 2>/dev/null
		ag_wait_until 30 ag_userdel "$UP_USER"
	fi
}

# ag_npm_cached NAME VERSION: the directory where the npm package
# NAME@VERSION (from the npm registry) is installed, once per machine, for
# node to load or a test to copy; 1 (and why, on stderr) when node or the
# registry is not there.
ag_npm_cached() {
	local dir=/var/cache/agentgate-tests/${1//[@\/]/_}-$2
	command -v node >/dev/null && command -v npm >/dev/null ||
	    { echo "node and npm are needed for $1" >&2; return 1; }
	mkdir -p /var/cache/agentgate-tests
	(
		flock 9
		[ -f "$dir/node_modules/$1/package.json" ] && exit 0
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" &&
		    npm install --prefix "$dir.tmp" --no-audit --no-fund --silent \
		    "$1@$2" >&2 &&
		    rm -rf "$dir" && mv "$dir.tmp" "$dir"
	) 9>/var/cache/agentgate-tests/.lock || return 1
	printf '%s\n' "$dir"
}

# ag_mcp_sdk: the official MCP TypeScript SDK (@modelcontextprotocol/sdk).
AG_MCP_SDK_VERSION=1.32.2
ag_mcp_sdk() {
	ag_npm_cached @modelcontextprotocol/sdk "$AG_MCP_SDK_VERSION"
}

# The ssh command line as an array: "${AG_SSH[@]}" cmd & gives $! = ssh's pid.
# Each test connects from a loopback address of its own: the token limiter
# counts failures per source address across accounts, so one test's wrong
# tokens must not slow another's logins (tests run two at a time).
AG_SRC=127.$(( ($$ >> 16) % 254 + 1 )).$(( ($$ >> 8) & 255 )).$(( ($$ & 255) | 1 ))

ag_ssh_argv() {
	AG_SSH=(ssh -F /dev/null -i "$AG_DIR/client" -p "$AG_PORT" -b "$AG_SRC"
	    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
	    -o BatchMode=yes -o LogLevel=ERROR -o IdentitiesOnly=yes
	    -o ConnectTimeout=120 "$AG_USER@127.0.0.1")
}

ag_ssh() {
	"${AG_SSH[@]}" "$@"
}

# ag_run VAR_PREFIX ARGS...: run ag_ssh, keeping stdout, stderr and status in
# ${P}_out ${P}_err ${P}_rc (stdin from the caller).
ag_run() {
	local p=$1 errf
	shift
	errf=$(mktemp "$AG_DIR/err.XXXXXX")
	local out rc
	out=$(ag_ssh "$@" 2>"$errf")
	rc=$?
	printf -v "${p}_out" '%s' "$out"
	printf -v "${p}_rc" '%s' "$rc"
	printf -v "${p}_err" '%s' "$(cat "$errf")"
	rm -f "$errf"
}

# Servers a test starts in the background: their pids in AG_SERVER_PIDS;
# ag_stop_servers (in the test's EXIT trap, before ag_cleanup) stops and
# reaps them.
AG_SERVER_PIDS=()
ag_stop_servers() {
	local p
	for p in "${AG_SERVER_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${AG_SERVER_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	AG_SERVER_PIDS=()
}

# ag_egress_resolve POLICY HOST:PORT=ADDR:PORT...: gateway.egress.resolve
# in POLICY maps each name for the proxy only (the machine's resolver is
# left alone), as the tests' local registries need.
ag_egress_resolve() {
	"$AG_PYTHON" - "$@" <<'EOF'
import re, sys
path, maps = sys.argv[1], sys.argv[2:]
lines = open(path, encoding="utf-8").read().split("\n")
resolve = ["    resolve:"] + ['      "%s": "%s"' % tuple(m.split("=", 1)) for m in maps]
g = next(i for i, l in enumerate(lines) if re.match(r"gateway:\s*$", l))
e = next((i for i in range(g + 1, len(lines)) if re.match(r"\S", lines[i])), len(lines))
k = next((i for i in range(g + 1, e) if re.match(r"  egress:\s*$", lines[i])), None)
if k is None:
    lines[g + 1:g + 1] = ["  egress:"] + resolve
elif any(re.match(r"    resolve:", l) for l in lines[k + 1:e]):
    sys.exit("the policy has gateway.egress.resolve already")
else:
    lines[k + 1:k + 1] = resolve
open(path, "w", encoding="utf-8").write("\n".join(lines))
EOF
}

# ag_private_resolver "$@" (before ag_setup): the test runs again in a
# mount namespace of its own (`unshare --mount --propagation private`),
# which sshd, the gateway and its proxy then inherit, and there the
# machine's resolver is egress/fakedns.py on a loopback address of the
# test's (resolv.conf and nsswitch.conf bind-mounted).  ag_fakedns_start
# RELEASE ANSWERED (after ag_setup) starts it, waits until it listens, and
# sets AG_FAKEDNS_PID for the test's EXIT trap; see fakedns.py for what it
# answers.
ag_private_resolver() {
	if [ "${AG_PRIVATE_MNTNS:-}" != 1 ]; then
		AG_PRIVATE_MNTNS=1 exec unshare --mount --propagation private -- bash "$0" "$@"
	fi
	AG_FAKEDNS_ADDR=127.0.53.$((2 + $$ % 250))
	AG_NSDIR=$(mktemp -d)
	printf 'nameserver %s\noptions timeout:30 attempts:1\n' "$AG_FAKEDNS_ADDR" \
	    >"$AG_NSDIR/resolv.conf"
	sed -e '/^hosts:/d' /etc/nsswitch.conf >"$AG_NSDIR/nsswitch.conf"
	printf 'hosts: files dns\n' >>"$AG_NSDIR/nsswitch.conf"
	chmod 0755 "$AG_NSDIR"
	chmod 0644 "$AG_NSDIR"/*
	mount --bind "$AG_NSDIR/resolv.conf" /etc/resolv.conf || exit 77
	mount --bind "$AG_NSDIR/nsswitch.conf" /etc/nsswitch.conf || exit 77
}

ag_fakedns_start() {
	"$AG_PYTHON" "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/egress/fakedns.py" \
	    "$AG_FAKEDNS_ADDR" "$AG_DIR/dns.up" "$1" "$2" &
	AG_FAKEDNS_PID=$!
	ag_wait_until 30 test -s "$AG_DIR/dns.up" || exit 99
}

# AG_PY_VIA: python3 code that asks the session's egress proxy (127.0.0.1:
# 3128) for a tunnel to 127.0.0.1:PORT (its argument) and prints the
# answer's status line as "proxy=LINE" and, when the tunnel opened, the
# first line the far end sent as "payload=LINE".
AG_PY_VIA="import socket, sys
s = socket.create_connection(('127.0.0.1', 3128), timeout=30)
s.sendall(('CONNECT 127.0.0.1:%s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' % sys.argv[1]).encode())
r = b''
while b'\\r\\n\\r\\n' not in r:
    d = s.recv(4096)
    if not d:
        break
    r += d
head, _, rest = r.partition(b'\\r\\n\\r\\n')
print('proxy=' + head.split(b'\\r\\n')[0].decode())
if b' 200 ' in head.split(b'\\r\\n')[0]:
    s.settimeout(3)
    try:
        print('payload=' + (rest or s.recv(64)).decode().strip())
    except OSError:
        print('payload=')"

# ag_audit_query PYTHON-EXPR: evaluate an expression over the parsed audit
# records (a list named r); every line must be valid JSON or this fails.
# A boolean prints yes or no and is also the exit status (ag_ok NAME
# ag_audit_query EXPR asserts it).
ag_audit_query() {
	"$AG_PYTHON" - "$AG_AUDIT" "$1" <<'EOF'
import json, sys
r = []
with open(sys.argv[1], encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        try:
            r.append(json.loads(line))
        except ValueError as e:
            print("line %d is not JSON: %s: %r" % (n, e, line[:200]), file=sys.stderr)
            sys.exit(2)
v = eval(sys.argv[2])
print(v if not isinstance(v, bool) else ("yes" if v else "no"))
sys.exit(1 if v is False else 0)
EOF
}
