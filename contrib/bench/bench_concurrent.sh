#!/usr/bin/env bash
# bench_concurrent.sh - command latency with many sessions at once (issue
# 14): S sessions (default 200) connect together and each runs C commands
# (default 20) one after the other, each sent when the previous one's output
# came back.  Reports p50, p90, p99 and max of that round trip, and the wall
# time, through the gateway and, in the same run under the same load shape,
# through the same sshd without ForceCommand (the account's bash reading
# the same lines): the ratios are the gateway's cost under load.
# Needs root (two real sshd on 127.0.0.1, a throwaway account), like the
# integration tests.  tests/integration/audit_concurrent.sh asserts what
# must hold under this load (every record, the chain); this only measures.
#
#   AGENTGATE=build/src/agentgate bash contrib/bench/bench_concurrent.sh [S [C]]
# BENCH_SANDBOX=required measures with the kernel sandbox (default off).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
S=${1:-200}
C=${2:-20}
: "${AGENTGATE:=$repo/build/src/agentgate}"
export AGENTGATE
. "$repo/tests/integration/lib.sh"

ag_setup
ag_write_policy "$AG_DIR/policy.yaml" <<EOF
version: 1
gateway:
  sandbox: "${BENCH_SANDBOX:-off}"
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: bench
profiles:
  bench:
    allow: [echo, "true", ls, cat]
    paths: { read: ["/"], write: ["/tmp"] }
    env:
      set: { PATH: "/usr/local/bin:/usr/bin:/bin" }
EOF
ag_start_baseline_sshd || exit 1

drive() {	# drive LABEL SSH-ARGV...: the S x C round trips, one line of results
	"$AG_PYTHON" - "$S" "$C" "$1" "${@:2}" <<'EOF'
import asyncio, sys, time
S, C, label, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
lat, lost = [], 0

async def session(i):
    global lost
    p = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        for j in range(C):
            mark = "m%d-%d" % (i, j)
            t0 = time.monotonic()
            p.stdin.write(("echo %s\n" % mark).encode())
            await p.stdin.drain()
            while True:
                line = await p.stdout.readline()
                if not line:
                    lost += 1
                    return
                if line.decode(errors="replace").strip() == mark:
                    break
            lat.append(time.monotonic() - t0)
        p.stdin.close()
        await p.wait()
    except (BrokenPipeError, ConnectionResetError):
        lost += 1

async def main():
    await asyncio.gather(*(session(i) for i in range(S)))

t0 = time.monotonic()
asyncio.run(main())
wall = time.monotonic() - t0
lat.sort()
q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1000 if lat else float("nan")
print("%s %.3f %.3f %.3f %.3f %.3f %d %d" % (label, q(.5), q(.9), q(.99), q(1), wall,
      len(lat), lost))
EOF
}

echo "agentgate concurrent-session benchmark: $S sessions x $C commands," \
    "sandbox ${BENCH_SANDBOX:-off}, $(nproc) CPUs, $(date -u +%FT%TZ)"
gw=$(drive gateway "${AG_SSH[@]}")
bl=$(drive baseline "${PLAIN_SSH[@]}" bash)
"$AG_PYTHON" - "$gw" "$bl" <<'EOF'
import sys
g, b = (l.split() for l in sys.argv[1:3])
print("  %-10s %9s %9s %9s %9s %8s %9s %5s" % ("", "p50 ms", "p90 ms", "p99 ms", "max ms",
      "wall s", "commands", "lost"))
for r in (g, b):
    print("  %-10s %9.2f %9.2f %9.2f %9.2f %8.2f %9s %5s" % (r[0], *map(float, r[1:6]), r[6], r[7]))
print("  %-10s %8.2fx %8.2fx %8.2fx %8.2fx %7.2fx" % ("ratio", *(float(x) / float(y)
      for x, y in zip(g[1:6], b[1:6]))))
EOF
echo "  (each session connects at once; a round trip is one command sent and its"
echo "   output read back, inside an open session; the audit file holds"
echo "   $(wc -l < "$AG_AUDIT") records and $("$AGENTGATE" audit verify "$AG_AUDIT" >/dev/null 2>&1 && echo "its chain verifies" || echo "its chain does NOT verify"))"
