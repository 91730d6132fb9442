#!/usr/bin/env bash
# bench_pty.sh - what the gateway's PTY relay costs, against sshd's own PTY
# and against tlog's recorder, measured in the same run (needs root: it
# starts two real sshd on 127.0.0.1 and creates throwaway accounts, like
# the integration tests).
#
#   (1) throughput: `ssh -tt host cat FILE` (64 MiB of text lines) four
#       ways, taking turns in each round:
#         gateway: the shipped developer profile as users run it, kernel
#           sandbox on and recordings on (sshd's pty -> agentgate's relay
#           -> the command's pty, the asciicast written as it goes);
#         floor: the gateway with the sandbox off and no recordings;
#         plain: the same sshd without ForceCommand (sshd's pty -> cat);
#         tlog: the same sshd, an account whose ForceCommand is tlog's
#           tlog-rec-session, recording to a file (sshd's pty -> tlog's
#           relay -> the shell's pty): the recorder that does the same job.
#       Goals (issue 38), on the medians of the rounds' ratios: gateway
#       >= 0.75x plain and >= 2x tlog.
#   (2) keystroke echo round trip: one byte typed into `ssh -tt host cat`
#       until its echo comes back, gateway (sandbox and recordings on) and
#       floor vs plain; the difference is what the relay adds (goal
#       <= +0.1 ms, issue 38).
#
#   AGENTGATE=build/src/agentgate bash contrib/bench/bench_pty.sh [MiB] [KEYS]
# MiB: size of the file for (1) (default 64); KEYS: round trips for (2)
# (default 300); BENCH_ROUNDS: interleaved rounds for (1) (default 5);
# BENCH_SUMMARY: a file for bench-all's closing table.  Needs tlog
# (Debian's package `tlog`) for the tlog column; without it the column is
# left out and said so.  Not part of `make check`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
MIB=${1:-64}
KEYS=${2:-300}
ROUNDS=${BENCH_ROUNDS:-5}
: "${AGENTGATE:=$repo/build/src/agentgate}"
export AGENTGATE
. "$repo/tests/integration/lib.sh"

ag_setup
# keys only: with a terminal the token prompt would otherwise come first
ag_write_pam use_key allow_unidentified
# the floor: no output cap and no timeout, the relay alone is measured
ag_write_policy "$AG_DIR/policy-floor.yaml" <<'EOF'
version: 1
gateway:
  sandbox: "off"
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: bench
profiles:
  bench:
    allow: [cat, "true"]
    paths: { read: ["/"], write: ["/tmp"] }
    env:
      set: { PATH: "/usr/local/bin:/usr/bin:/bin" }
EOF
# as users run it: the shipped etc/agentgate.yaml (sandbox required,
# recordings on, the output's secrets redacted), the account mapped to its
# developer profile; only max_output raised past the file's size, which it
# would otherwise cut at 4 MiB
SO=$(dirname "$AGENTGATE")/agsandbox.so
[ -f "$SO" ] || { echo "agsandbox.so not next to $AGENTGATE" >&2; exit 1; }
top_srcdir=$repo ag_shipped_policy developer
install -d -o "$AG_USER" -g "$AG_USER" "/home/$AG_USER/work"
sed -i 's/^      max_output: 4M$/      max_output: 4G/' "$AG_DIR/policy.yaml"
grep -q '^      max_output: 4G$' "$AG_DIR/policy.yaml" ||
    { echo "the shipped developer profile's max_output has moved" >&2; exit 1; }
mv -f "$AG_DIR/policy.yaml" "$AG_DIR/policy-gateway.yaml"
"$AGENTGATE" check --config "$AG_DIR/policy-gateway.yaml" >/dev/null ||
    { echo "the shipped policy does not check" >&2; exit 1; }
REC=$AG_DIR/log/recordings
use_policy() {	# use_policy floor|gateway
	cp -f "$AG_DIR/policy-$1.yaml" "$AG_DIR/policy.yaml.new" &&
	    mv -f "$AG_DIR/policy.yaml.new" "$AG_DIR/policy.yaml"
}
use_policy floor

# tlog: an account of its own in the baseline sshd, whose ForceCommand
# runs tlog-rec-session with its configuration in the environment
# (TLOG_REC_SESSION_CONF_TEXT, as tlog-rec-session.conf(5) allows): the
# file writer, into a file of the world's; everything else tlog's
# defaults (output logged, input not; no rate limit).
TLOG=$(command -v tlog-rec-session || true)
TLOG_USER=${AG_USER}t
TLOG_SSH=()
if [ -n "$TLOG" ]; then
	if ! id "$TLOG_USER" >/dev/null 2>&1; then
		flock /run/agentgate-test.lock \
		    useradd -m -d "/home/$TLOG_USER" -s /bin/bash "$TLOG_USER" || exit 1
	fi
	flock /run/agentgate-test.lock usermod -p '*' "$TLOG_USER" || exit 1
	cp "$AG_DIR/keys/$AG_USER" "$AG_DIR/keys/$TLOG_USER"
	install -d -o "$TLOG_USER" -m 0700 "$AG_DIR/tlog"
	# tlog-rec-session gives up ("Failed setting up the I/O tap") when
	# utempter cannot add the session's utmp record; a machine without
	# systemd-tmpfiles (a container) has no /run/utmp: make it as they do
	[ -e /run/utmp ] || install -m 0664 -g utmp /dev/null /run/utmp
	TLOG_LOG=$AG_DIR/tlog/session.log
	install -o "$TLOG_USER" -m 0600 /dev/null "$TLOG_LOG"	# tlog appends to it
	printf '{"writer": "file", "file": {"path": "%s"}}\n' "$TLOG_LOG" > "$AG_DIR/tlog.json"
	chmod 0644 "$AG_DIR/tlog.json"
	AG_SSHD_PLAIN_EXTRA=$(printf '%s\n' "Match User $TLOG_USER" \
	    "    ForceCommand TLOG_REC_SESSION_CONF_TEXT=\"\$(cat $AG_DIR/tlog.json)\" exec $TLOG -c \"\$SSH_ORIGINAL_COMMAND\"")
fi

ag_start_baseline_sshd "s/^AllowUsers .*/& $TLOG_USER/" || exit 1
trap 'kill $AG_PLAIN_PID 2>/dev/null; pkill -KILL -u "$AG_PLAIN_USER" 2>/dev/null; ag_wait_until 30 ag_userdel "$AG_PLAIN_USER"; [ -n "$TLOG" ] && { pkill -KILL -u "$TLOG_USER" 2>/dev/null; ag_wait_until 30 ag_userdel "$TLOG_USER"; }; ag_cleanup' EXIT
if [ -n "$TLOG" ]; then
	# a Match block ends the file: sshd reads it after every global line
	printf '%s\n' "$AG_SSHD_PLAIN_EXTRA" >> "$AG_DIR/plain_config"
	kill "$AG_PLAIN_PID"; wait "$AG_PLAIN_PID" 2>/dev/null
	"$AG_SSHD_BIN" -D -e -f "$AG_DIR/plain_config" 2>>"$AG_DIR/sshd.log" &
	AG_PLAIN_PID=$!
	ag_wait_until 60 ag_listening "$AG_PLAIN_PID" "$PLAIN_PORT"
	ag_up "$AG_PLAIN_PID" "$PLAIN_PORT" || { echo "the baseline sshd did not restart" >&2; exit 1; }
	TLOG_SSH=("${PLAIN_SSH[@]}")
	for i in "${!TLOG_SSH[@]}"; do
		[ "${TLOG_SSH[$i]}" = "$AG_PLAIN_USER@127.0.0.1" ] && TLOG_SSH[$i]=$TLOG_USER@127.0.0.1
	done
fi

echo "agentgate PTY benchmark, $(nproc) CPUs, $(date -u +%FT%TZ)"

# ---- (1) throughput -----------------------------------------------------------
# text lines, so both paths do the same \n → \r\n work in one line discipline
FILE=$AG_DIR/big.txt
"$AG_PYTHON" - "$FILE" "$MIB" <<'EOF'
import sys
line = (b"0123456789abcdefghijklmnopqrstuvwxyz" * 3)[:99] + b"\n"
with open(sys.argv[1], "wb") as f:
    blk = line * 10486
    for _ in range(int(sys.argv[2])):
        f.write(blk[:1048576])
EOF
chmod 0644 "$FILE"
SIZE=$(stat -c %s "$FILE")

# prints bytes and seconds of one `ssh -tt ... cat FILE` whose stdout is a pipe
through() {
	"$AG_PYTHON" - "$@" <<'EOF'
import subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
n = 0
while True:
    b = p.stdout.read1(1 << 20)
    if not b:
        break
    n += len(b)
p.wait()
print(n, time.perf_counter() - t0)
EOF
}

dusize() { du -sb "$1" 2>/dev/null | cut -f1; }

echo
echo "(1) throughput of $((SIZE / 1048576)) MiB through a PTY ($ROUNDS interleaved rounds;" \
    "gateway = shipped developer profile, sandbox and recordings on)"
kinds="gateway floor plain${TLOG:+ tlog}"
[ -n "$TLOG" ] || echo "  (no tlog-rec-session on this machine: apt-get install tlog; its column is left out)"
if [ -n "$TLOG" ]; then
	# tlog must really record: a probe's output comes back and the file grows
	probe=$("${TLOG_SSH[@]}" -tt "echo tlog-probe-\$((6 * 7))" 2>&1 </dev/null)
	if [[ "$probe" != *tlog-probe-42* ]] || ! grep -q 'tlog-probe-42' "$TLOG_LOG" 2>/dev/null; then
		echo "  tlog-rec-session does not work here (its column is left out); it printed:"
		printf '%s\n' "$probe" | tr -d '\r' | sed 's/^/    /' | head -20
		kinds="gateway floor plain"
	fi
fi
rows=
for _ in $(seq "$ROUNDS"); do
	row=
	for k in $kinds; do
		case $k in
		gateway|floor)
			use_policy "$k"
			rm -rf "${REC:?}"/*
			read -r n t < <(through "${AG_SSH[@]}" -tt "cat $FILE")
			rec=$(dusize "$REC") ;;
		plain)
			read -r n t < <(through "${PLAIN_SSH[@]}" -tt "cat $FILE")
			rec=0 ;;
		tlog)
			: > "$TLOG_LOG"
			read -r n t < <(through "${TLOG_SSH[@]}" -tt "cat $FILE")
			rec=$(dusize "$TLOG_LOG") ;;
		esac
		row="$row $k $n $t $rec"
	done
	rows="$rows$row
"
done
use_policy floor
out=$(printf '%s' "$rows" | "$AG_PYTHON" -c '
import statistics, sys
size = int(sys.argv[1])
runs = []
for line in sys.stdin:
    w = line.split()
    runs.append({w[i]: (int(w[i+1]), float(w[i+2]), int(w[i+3])) for i in range(0, len(w), 4)})
kinds = list(runs[0])
mibs = lambda x: x[0] / x[1] / 1048576
print("  %-8s %12s %14s %15s   (per round)" % ("", "MiB/s median", "bytes received", "recorded MiB"))
for k in kinds:
    print("  %-8s %12.1f %14d %15.1f   (%s)" % (k, statistics.median(mibs(r[k]) for r in runs),
          runs[-1][k][0], runs[-1][k][2] / 1048576, " ".join("%.1f" % mibs(r[k]) for r in runs)))
# a path that delivered less than the file (one that failed) is no rate
short = [k for k in kinds if min(r[k][0] for r in runs) < size]
for k in short:
    print("  %s delivered less than the file in a round: its ratios are not measured" % k)
def ratio(a, b, goal):
    if a not in kinds or b not in kinds:
        return
    if a in short or b in short:
        print("%s\t%s\tnan\tnot measured" % (a, b))
        return
    rs = sorted(mibs(r[a]) / mibs(r[b]) for r in runs)
    print("%s\t%s\t%.3f\t%s" % (a, b, statistics.median(rs), " ".join("%.3f" % x for x in rs)))
ratio("gateway", "plain", ">= 0.75x")
ratio("gateway", "tlog", ">= 2x")
ratio("floor", "plain", "floor")
ratio("tlog", "plain", "")
' "$SIZE")
printf '%s\n' "$out" | grep -v $'\t'
# \r\n: every path turns each \n into \r\n, so each delivers more than SIZE
echo "  (file $SIZE bytes; a recorder that records nothing would show 0 recorded)"
printf '%s\n' "$out" | grep $'\t' | while IFS=$'\t' read -r a b med all; do
	case "$a/$b" in
	gateway/plain) goal=">= 0.75x" label="PTY relay $MIB MiB, recordings and sandbox on, vs plain sshd" ;;
	gateway/tlog) goal=">= 2x" label="PTY relay $MIB MiB, recordings and sandbox on, vs tlog-rec-session" ;;
	floor/plain) goal=floor label="PTY relay $MIB MiB, sandbox off, no recordings, vs plain sshd" ;;
	*) goal="" label="tlog-rec-session vs plain sshd" ;;
	esac
	if [ "$med" = nan ]; then
		printf '  %-8s / %-6s not measured\n' "$a" "$b"
		[ -n "$goal" ] && ag_bench_summary "$label" "$goal" "not measured" "not met"
		continue
	fi
	met=$(ag_bench_judge "$med" "$goal")
	printf '  %-8s / %-6s median %.3fx  (%s)%s\n' "$a" "$b" "$med" "$all" \
	    "${goal:+  goal $goal}$([ "$met" = - ] || echo ": $met")"
	[ -n "$goal" ] && ag_bench_summary "$label" "$goal" "$(printf '%.3fx' "$med")" "$met"
done

# ---- (2) keystroke echo ---------------------------------------------------------
# The driver is the user's terminal: ssh -tt runs on a pty it owns, `cat`
# runs on the far side in canonical mode, so every byte typed comes back as
# the far pty's echo.  Median and 90th percentile of KEYS round trips.
echo_rtt() {
	"$AG_PYTHON" - "$KEYS" "$@" <<'EOF'
import os, pty, select, signal, sys, termios, time
keys = int(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
def wait_for(ch, timeout):
    end = time.perf_counter() + timeout
    while True:
        left = end - time.perf_counter()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                b = os.read(fd, 4096)
            except OSError:
                return False
            if ch in b:
                return True
# Until ssh puts its terminal in raw mode, that terminal's own line
# discipline echoes what is typed: a byte coming back then says nothing
# of the far side (one run measured 300 such local echoes, 0.02 ms each,
# before the connection was up).  So first wait for ssh's raw mode, with
# what ssh prints meanwhile read away
end = time.perf_counter() + 30
while termios.tcgetattr(fd)[3] & termios.ECHO:
    if time.perf_counter() > end:
        sys.exit("ssh never put its terminal in raw mode")
    if select.select([fd], [], [], 0.01)[0]:
        try:
            os.read(fd, 4096)
        except OSError:
            sys.exit("ssh ended before its terminal went raw")
# the far side is ready once a typed byte comes back
for _ in range(50):
    os.write(fd, b"w")
    if wait_for(b"w", 0.5):
        break
else:
    sys.exit("no echo from the far side")
time.sleep(0.2)
while select.select([fd], [], [], 0.05)[0]:
    os.read(fd, 65536)
rt = []
for i in range(keys):
    c = b"abcdefghijklmnopqrstuvwxyz"[i % 26:i % 26 + 1]
    t0 = time.perf_counter_ns()
    os.write(fd, c)
    if not wait_for(c, 5):
        sys.exit("echo lost")
    rt.append((time.perf_counter_ns() - t0) / 1e6)
    if i % 60 == 59:
        os.write(fd, b"\r")   # keep the far line short
        wait_for(b"\n", 5)
os.write(fd, b"\x03")
try:
    os.waitpid(pid, 0)
except ChildProcessError:
    pass
rt.sort()
print("%.4f %.4f" % (rt[len(rt) // 2], rt[int(len(rt) * 0.9)]))
EOF
}

echo
echo "(2) keystroke echo round trip, $KEYS keys into 'ssh -tt host cat' (interleaved, best of 2 each)"
declare -A best
for _ in 1 2; do
	for k in gateway floor plain; do
		case $k in
		plain) v=$(echo_rtt "${PLAIN_SSH[@]}" -tt cat) ;;
		*) use_policy "$k"; v=$(echo_rtt "${AG_SSH[@]}" -tt cat) ;;
		esac
		best[$k]="${best[$k]:-} ${v// /,}"
	done
done
use_policy floor
out=$("$AG_PYTHON" - "${best[gateway]}" "${best[floor]}" "${best[plain]}" <<'EOF'
import sys
def best(a):
    return min((tuple(map(float, x.split(","))) for x in a.split()), key=lambda x: x[0])
g, f, p = (best(a) for a in sys.argv[1:4])
print("  plain   median %.3f ms (p90 %.3f)" % p)
for name, x in (("gateway", g), ("floor", f)):
    print("  %-7s median %.3f ms (p90 %.3f): %+.3f ms over plain (%.2fx)" % (name, x[0], x[1],
          x[0] - p[0], x[0] / p[0]))
print("%.3f %.3f" % (g[0] - p[0], f[0] - p[0]))
EOF
)
printf '%s\n' "${out%$'\n'*}"
read -r add_gw add_floor <<<"${out##*$'\n'}"
met=$(ag_bench_judge "$add_gw" "<= 0.1")
echo "  added by the relay, sandbox and recordings on: ${add_gw} ms (goal <= +0.1 ms: $met)"
ag_bench_summary "keystroke echo added by the relay, recordings and sandbox on" "<= +0.1 ms" "${add_gw} ms" "$met"
ag_bench_summary "keystroke echo added by the relay, sandbox off" "floor" "${add_floor} ms" "-"
