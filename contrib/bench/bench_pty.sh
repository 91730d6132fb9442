#!/usr/bin/env bash
# bench_pty.sh - what the gateway's PTY relay costs, against sshd's own PTY
# measured in the same run (needs root: it starts two real sshd on 127.0.0.1
# and creates a throwaway account, like the integration tests).
#
#   (1) throughput: `ssh -tt host cat FILE` through the gateway (sshd's pty →
#       agentgate's relay → the command's pty) vs the same sshd without
#       ForceCommand (sshd's pty → cat); goal >= 0.90x (median of pairs)
#   (2) keystroke echo round trip: one byte typed into `ssh -tt host cat`
#       until its echo comes back, through the gateway vs plain; the
#       difference is what the relay adds (goal < 1 ms)
#
#   AGENTGATE=build/src/agentgate bash contrib/bench/bench_pty.sh [MiB] [KEYS]
# MiB: size of the file for (1) (default 256); KEYS: round trips for (2)
# (default 300); BENCH_PAIRS: interleaved gateway/plain pairs for (1)
# (default 5; the goal is judged on the median of their ratios).  Not part
# of `make check`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
MIB=${1:-256}
KEYS=${2:-300}
PAIRS=${BENCH_PAIRS:-5}
: "${AGENTGATE:=$repo/build/src/agentgate}"
export AGENTGATE
. "$repo/tests/integration/lib.sh"

ag_setup
# keys only: with a terminal the token prompt would otherwise come first
ag_write_pam use_key allow_unidentified
# no output cap and no timeout: the relay itself is what is measured
ag_write_policy "$AG_DIR/policy.yaml" <<'EOF'
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

ag_start_baseline_sshd || exit 1

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

echo
echo "(1) throughput of $((SIZE / 1048576)) MiB through a PTY: gateway relay vs sshd's PTY alone ($PAIRS interleaved pairs)"
runs=()
for _ in $(seq "$PAIRS"); do
	read -r n_gw t_gw < <(through "${AG_SSH[@]}" -tt "cat $FILE")
	read -r n_pl t_pl < <(through "${PLAIN_SSH[@]}" -tt "cat $FILE")
	runs+=("$("$AG_PYTHON" -c "print($n_gw / $t_gw / 1048576)")" \
	    "$("$AG_PYTHON" -c "print($n_pl / $t_pl / 1048576)")")
done
# \r\n: both paths turn each \n into \r\n, so both deliver more than SIZE
printf '  bytes received: gateway %s, plain %s (file %s)\n' "$n_gw" "$n_pl" "$SIZE"
ag_bench_pairs ">= 0.90x" "${runs[@]}"

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
echo "(2) keystroke echo round trip, $KEYS keys into 'ssh -tt host cat' (interleaved, best of 2)"
g1=$(echo_rtt "${AG_SSH[@]}" -tt cat); p1=$(echo_rtt "${PLAIN_SSH[@]}" -tt cat)
g2=$(echo_rtt "${AG_SSH[@]}" -tt cat); p2=$(echo_rtt "${PLAIN_SSH[@]}" -tt cat)
"$AG_PYTHON" - "$g1" "$g2" "$p1" "$p2" <<'EOF'
import sys
g = min((tuple(map(float, a.split())) for a in sys.argv[1:3]), key=lambda x: x[0])
p = min((tuple(map(float, a.split())) for a in sys.argv[3:5]), key=lambda x: x[0])
print("  gateway median %.3f ms (p90 %.3f), plain median %.3f ms (p90 %.3f)" % (g[0], g[1], p[0], p[1]))
print("  added by the gateway: %.3f ms median (%.2fx of plain; goal < 1 ms)" % (g[0] - p[0], g[0] / p[0]))
EOF
