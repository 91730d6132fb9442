#!/usr/bin/env bash
# bench_concurrent.sh - many sessions open at once (issues 14 and 38): S
# sessions (default 1,000), half through OpenSSH's sshd with the gateway as
# ForceCommand and half through `agentgate serve`, all open at the same
# time, each running C commands (default 20) in its REPL with the kernel
# sandbox on (sandbox: required, the shipped default).  Needs root (an
# sshd and a serve on 127.0.0.1, a throwaway account), like the
# integration tests.
#
# How it goes:
#   1. the single-session median: one session through each server runs C
#      commands back to back on the otherwise idle world;
#   2. the ramp: sessions are started BENCH_RAMP a second (default 15),
#      taking turns between sshd and serve; each is up when its first
#      command (`echo ready-I`) came back, and stays open to the end;
#   3. the peak, with all of them up and none closed yet: the driver's own
#      count of open sessions, the gateway processes counted in /proc
#      (sshd's session processes running the gateway, serve's connection
#      processes) and the established TCP connections to each server
#      (`ss`); the gateway's memory is the sum of the PSS of every process
#      running the world's agentgate binary (serve's listener and
#      connections, every session, runners not yet exec'd), here and every
#      10 s of step 4, the highest reported;
#   4. the commands: each session runs C commands (`echo MARK`), each sent
#      when the previous one's output came back and after a think time
#      (uniform between 0.5 and 1.5 times BENCH_THINK seconds, default
#      20, the first one uniform in 0..BENCH_THINK), as an agent waits for
#      its model between commands: the offered load is S / BENCH_THINK
#      commands a second.  BENCH_THINK=0 sends them back to back (a closed
#      loop: on 2 cores 1,000 sessions then queue behind each other and
#      the latency is the queue's, not the gateway's);
#   5. the audit log: every command's records are there (command_start and
#      command, found by their marks), every session's session_start and
#      session_end, and `agentgate audit verify` holds for the chain.
# Goals (issue 38): no record lost, the chain intact, p99 per-command
# latency <= 3x the single-session median, gateway memory <= 1 GiB.
#
#   AGENTGATE=build/src/agentgate PAM_MODULE=build/pam/.libs/pam_agentgate.so \
#       bash contrib/bench/bench_concurrent.sh [S [C]]
# BENCH_SANDBOX=off measures with the kernel sandbox off; BENCH_SUMMARY: a
# file for bench-all's closing table.  Not part of `make check`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
S=${1:-1000}
C=${2:-20}
RAMP=${BENCH_RAMP:-15}
THINK=${BENCH_THINK:-20}
SANDBOX=${BENCH_SANDBOX:-required}
: "${AGENTGATE:=$repo/build/src/agentgate}"
export AGENTGATE
. "$repo/tests/integration/lib.sh"

# the driver holds two pipes and a pidfd per session
ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((4 * S + 100)) ] ||
    { echo "open files limited to $(ulimit -n): $((4 * S + 100)) needed" >&2; exit 1; }
ag_setup
[ "$SANDBOX" = off ] || ag_need_sandbox_lib
# one audit log for both servers, laid out as make install does
ag_setgid_gateway
install -d -o "$AG_USER" -g "$AG_USER" "$AG_DIR/work"
policy_text() {
	cat <<EOF
version: 1
gateway:
  sandbox: $SANDBOX
$1
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: bench
profiles:
  bench:
    allow: [echo, "true", ls, cat]
    paths: { read: ["/"], write: ["@DIR@/work"] }
    env:
      set: { PATH: "/usr/local/bin:/usr/bin:/bin" }
EOF
}
[ "$SANDBOX" = off ] && SANDBOX='"off"'
policy_text "" | ag_write_policy "$AG_DIR/policy.yaml"
# serve: PAM lets every user in (the key was checked by serve itself)
install -d -m 0755 "$AG_DIR/spam"
printf 'auth required pam_permit.so\naccount required pam_permit.so\nsession required pam_permit.so\n' \
    > "$AG_DIR/spam/agentgate"
chmod 0644 "$AG_DIR/spam/agentgate"
policy_text "  pam_confdir: @DIR@/spam
  server:
    host_keys: [@DIR@/hostkey]
    allow_users: [@USER@]
    max_connections: $((S + 50))
    max_per_source: $((S + 50))
    max_startups: 200
    login_grace_time: 120" | ag_write_policy "$AG_DIR/serve.yaml"

# sshd: as many unauthenticated connections as the ramp may have at once,
# restarted on its port with the new limits
sed -i -e "s/^MaxStartups .*/MaxStartups $((S + 50))/" -e "s/^MaxSessions .*/MaxSessions 10/" \
    "$AG_DIR/sshd_config"
kill "$AG_SSHD_PID"; wait "$AG_SSHD_PID" 2>/dev/null
"$AG_SSHD_BIN" -D -e -f "$AG_DIR/sshd_config" 2>>"$AG_DIR/sshd.log" &
AG_SSHD_PID=$!
ag_wait_until 60 ag_listening "$AG_SSHD_PID" "$AG_PORT"
ag_up "$AG_SSHD_PID" "$AG_PORT" || { echo "sshd did not restart" >&2; cat "$AG_DIR/sshd.log" >&2; exit 1; }
ag_start_serve "$AG_DIR/serve.yaml" || { echo "cannot start agentgate serve" >&2; exit 1; }
trap 'kill $SRV_PID 2>/dev/null; wait $SRV_PID 2>/dev/null; ag_cleanup' EXIT
ag_ssh "echo up" >/dev/null && "${SRV_SSH[@]}" "echo up" >/dev/null ||
    { echo "a command does not run through both servers" >&2; tail -5 "$AG_DIR/serve.log" >&2; exit 1; }
: > "$AG_DIR/expected"

echo "agentgate concurrent-session benchmark: $S sessions ($((S - S / 2)) through sshd," \
    "$((S / 2)) through serve) x $C commands, sandbox $SANDBOX, ramp $RAMP/s, think" \
    "${THINK}s, $(nproc) CPUs, $(date -u +%FT%TZ)"
# the driver's lines as they come (the ramp's progress), its result kept
"$AG_PYTHON" - "$S" "$C" "$RAMP" "$THINK" "$AG_DIR" "$AG_USER" "$AG_PORT" "$SRV_PORT" \
    "$SRV_PID" "$AG_SSHD_PID" "$(printf '%s\x1f' "${AG_SSH[@]}")" \
    "$(printf '%s\x1f' "${SRV_SSH[@]}")" <<'EOF' | tee "$AG_DIR/driver.out" | grep --line-buffered -v '^RESULT '
import asyncio, collections, os, pwd, random, re, statistics, subprocess, sys, time
S, C, RAMP, THINK = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
wdir, user, sshd_port, srv_port, srv_pid, sshd_pid = sys.argv[5:11]
argv = {"sshd": sys.argv[11].split("\x1f")[:-1], "serve": sys.argv[12].split("\x1f")[:-1]}
exe = os.path.join(wdir, "agentgate")
uid = pwd.getpwnam(user).pw_uid
errf = open(os.path.join(wdir, "driver.err"), "ab")
expected = open(os.path.join(wdir, "expected"), "w")	# every mark sent, a line each
try:
    asyncio.set_child_watcher(asyncio.PidfdChildWatcher())
except (AttributeError, OSError):
    pass

def procs():
    """(pid, ppid, uid, comm) of every process running the world's gateway"""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.readlink("/proc/%s/exe" % d) != exe:
                continue
            st = open("/proc/%s/stat" % d).read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
            out.append((int(d), ppid, os.stat("/proc/" + d).st_uid))
        except OSError:
            pass
    return out

def comm(pid):
    try:
        return open("/proc/%d/comm" % pid).read().strip()
    except OSError:
        return ""

def pss_mib(ps):
    kb = 0
    for p in ps:
        try:
            for line in open("/proc/%d/smaps_rollup" % p[0]):
                if line.startswith("Pss:"):
                    kb += int(line.split()[1])
                    break
        except OSError:
            pass
    return kb / 1024

def established(port):
    # the server's own end: a client bound to another loopback address
    # may have the same number as its port
    r = subprocess.run(["ss", "-Htn", "state", "established", "src", "127.0.0.1:%s" % port],
                       capture_output=True, text=True)
    return len(r.stdout.splitlines())

class Session:
    def __init__(self, i, kind):
        self.i, self.kind, self.p, self.lat, self.up, self.err = i, kind, None, [], False, None

    async def run_one(self, mark):
        expected.write(mark + "\n")
        t0 = time.monotonic()
        self.p.stdin.write(("echo %s\n" % mark).encode())
        await self.p.stdin.drain()
        while True:
            line = await self.p.stdout.readline()
            if not line:
                raise EOFError("session ended before '%s' came back" % mark)
            if line.decode(errors="replace").strip() == mark:
                return time.monotonic() - t0

    async def start(self):
        try:
            self.p = await asyncio.create_subprocess_exec(*argv[self.kind],
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=errf)
            await self.run_one("ready-%d" % self.i)
            self.up = True
        except Exception as e:
            self.err = "%s: %s" % (type(e).__name__, e)

    async def commands(self, think, first):
        if not self.up:
            return
        try:
            if first:
                await asyncio.sleep(first)
            for j in range(C):
                if j and think:
                    await asyncio.sleep(random.uniform(0.5, 1.5) * think)
                self.lat.append(await self.run_one("m%d-%d" % (self.i, j)))
        except Exception as e:
            self.err = "%s: %s" % (type(e).__name__, e)

    async def close(self):
        if self.p is None:
            return
        try:
            self.p.stdin.close()
        except Exception:
            pass
        try:
            await asyncio.wait_for(self.p.wait(), 120)
        except asyncio.TimeoutError:
            self.p.kill()
            await self.p.wait()

def q(v, f):
    v = sorted(v)
    return v[min(len(v) - 1, int(f * len(v)))] * 1000 if v else float("nan")

async def main():
    # 1. one session alone through each server
    single = {}
    for kind in ("sshd", "serve"):
        s = Session(-1 if kind == "sshd" else -2, kind)
        await s.start()
        await s.commands(0, 0)
        await s.close()
        if not s.up or len(s.lat) != C:
            print("single %s session failed: %s" % (kind, s.err), flush=True)
            return
        single[kind] = s.lat
    base = statistics.median(single["sshd"] + single["serve"]) * 1000
    print("  single session: median %.2f ms through sshd, %.2f ms through serve; both: %.2f ms"
          % (statistics.median(single["sshd"]) * 1000, statistics.median(single["serve"]) * 1000, base),
          flush=True)
    # 2. the ramp
    sessions = [Session(i, "sshd" if i % 2 == 0 else "serve") for i in range(S)]
    t0 = time.monotonic()
    starts = []
    for n, s in enumerate(sessions):
        await asyncio.sleep(max(0, t0 + n / RAMP - time.monotonic()))
        starts.append(asyncio.ensure_future(s.start()))
        if n % 100 == 99:
            up = sum(x.up for x in sessions)
            print("  ramp: %d started, %d up, %d failed, %.0f s" % (n + 1, up,
                  sum(x.err is not None for x in sessions), time.monotonic() - t0), flush=True)
    await asyncio.gather(*starts)
    ramp = time.monotonic() - t0
    # 3. the peak: every session up is open; none has been closed
    up = [s for s in sessions if s.up]
    ps = procs()
    pids = {p[0] for p in ps}
    gw_sshd = sum(1 for p in ps if p[2] == uid and comm(p[1]).startswith("sshd"))
    serve_conns = sum(1 for p in ps if str(p[1]) == srv_pid)
    alive = sum(1 for s in up if s.p.returncode is None)
    mem = pss_mib(ps)
    peak = {"open": alive, "gw_sshd": gw_sshd, "serve_conns": serve_conns,
            "tcp_sshd": established(sshd_port), "tcp_serve": established(srv_port),
            "procs": len(ps), "mem": mem}
    print("  peak, after the ramp (%.0f s): %d of %d sessions up and open (%d through sshd, %d"
          " through serve), %d failed to start" % (ramp, alive, S,
          sum(s.kind == "sshd" for s in up), sum(s.kind == "serve" for s in up), S - len(up)))
    print("    counted in /proc: %d gateways under sshd, %d serve connection processes;"
          " established TCP connections: %d to sshd, %d to serve" % (gw_sshd, serve_conns,
          peak["tcp_sshd"], peak["tcp_serve"]))
    print("    gateway memory: %d processes running %s, PSS %.1f MiB (%.2f MiB a session)"
          % (len(ps), exe, mem, mem / max(1, alive)))
    # by what each process is (its title, ids and numbers left out)
    kinds = collections.defaultdict(lambda: [0, 0.0])
    for p in ps:
        try:
            t = open("/proc/%d/cmdline" % p[0], "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        t = re.sub(r"\[[^]]*\]|[0-9a-f]{8,}|\d+", "#", t.replace(wdir, "")).strip()[:70]
        t = "%s %s (parent %s)" % ("root" if p[2] == 0 else "user", t, comm(p[1])[:4])
        kinds[t][0] += 1
        kinds[t][1] += pss_mib([p])
    for t, (n, m) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        print("      %5d x %-78s PSS %7.1f MiB (%.2f each)" % (n, t, m, m / n))
    sys.stdout.flush()
    # 4. the commands, memory sampled meanwhile
    maxmem = [mem]
    async def sample():
        while True:
            await asyncio.sleep(10)
            maxmem.append(pss_mib(procs()))
    sampler = asyncio.ensure_future(sample())
    t1 = time.monotonic()
    await asyncio.gather(*(s.commands(THINK, random.uniform(0, THINK)) for s in up))
    run = time.monotonic() - t1
    still = sum(1 for s in up if s.p.returncode is None)
    sampler.cancel()
    await asyncio.gather(*(s.close() for s in sessions))
    lat = [x for s in up for x in s.lat]
    lat_k = {k: [x for s in up if s.kind == k for x in s.lat] for k in ("sshd", "serve")}
    failed = [s for s in sessions if s.err]
    print("  commands: %d of %d came back in %.0f s (%.1f a second); sessions still open when"
          " the last came back: %d" % (len(lat), S * C, run, len(lat) / run if run else 0, still))
    print("  %-8s %9s %9s %9s %9s %9s" % ("latency", "p50 ms", "p90 ms", "p99 ms", "max ms", "commands"))
    for k, v in (("sshd", lat_k["sshd"]), ("serve", lat_k["serve"]), ("all", lat)):
        print("  %-8s %9.2f %9.2f %9.2f %9.2f %9d" % (k, q(v, .5), q(v, .9), q(v, .99), q(v, 1), len(v)))
    for s in failed[:5]:
        print("  session %d (%s) failed: %s" % (s.i, s.kind, s.err))
    if len(failed) > 5:
        print("  ... %d sessions failed in all" % len(failed))
    print("RESULT %d %d %d %d %d %d %d %.3f %.3f %.1f %.1f %d" % (S, len(up), alive, gw_sshd,
          serve_conns, peak["tcp_sshd"], peak["tcp_serve"], base, q(lat, .99), mem,
          max(maxmem), len(lat)))

asyncio.run(main())
expected.close()
EOF
res=$(sed -n 's/^RESULT //p' "$AG_DIR/driver.out")
[ -n "$res" ] || { echo "  the driver gave no result; serve's log:"; tail -5 "$AG_DIR/serve.log"; exit 1; }
read -r _ _ n_open n_gw n_conn n_tcp1 n_tcp2 base p99 _ mem lat_n <<<"$res"

# 5. the audit log: every mark's command_start and command record, every
# session's start and end, the chain
echo "  audit: $(wc -l < "$AG_AUDIT") records in $AG_AUDIT"
audit=$("$AG_PYTHON" - "$AG_AUDIT" "$AG_DIR/expected" <<'EOF'
import collections, json, sys
marks = set(open(sys.argv[2]).read().split())
ev = collections.Counter()
seen = collections.Counter()
sess = collections.defaultdict(collections.Counter)
bad = 0
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        bad += 1
        continue
    e = r.get("event")
    ev[e] += 1
    sess[r.get("session")][e] += 1
    if e in ("command", "command_start"):
        w = str(r.get("command", "")).split()
        if len(w) == 2 and w[0] == "echo" and w[1] in marks:
            seen[(e, w[1])] += 1
lost = sum(1 for m in marks for e in ("command_start", "command") if seen[(e, m)] != 1)
started = [s for s, c in sess.items() if c["session_start"]]
unended = sum(1 for s in started if sess[s]["session_end"] != 1)
print("    %d marks sent, %d of their %d command_start/command records missing or doubled;"
      " %d sessions started, %d without exactly one session_end; %d lines not JSON"
      % (len(marks), lost, 2 * len(marks), len(started), unended, bad))
print("    events: " + ", ".join("%s %d" % kv for kv in sorted(ev.items())))
print("LOST %d" % (lost + unended + bad))
EOF
)
printf '%s\n' "$audit" | grep -v '^LOST '
lost=$(printf '%s\n' "$audit" | sed -n 's/^LOST //p')
if "$AGENTGATE" audit verify "$AG_AUDIT" > "$AG_DIR/verify.out" 2>&1; then chain=intact; else chain=BROKEN; fi
echo "    agentgate audit verify: $chain ($(tail -1 "$AG_DIR/verify.out"))"

j() { ag_bench_judge "$1" "$2"; }
all_open=$([ "$n_open" -eq "$S" ] && [ "$n_gw" -eq $((S - S / 2)) ] && [ "$n_conn" -eq $((S / 2)) ] &&
    [ "$n_tcp1" -eq $((S - S / 2)) ] && [ "$n_tcp2" -eq $((S / 2)) ] && echo met || echo "not met")
lost_met=$([ "${lost:-1}" -eq 0 ] && [ "$lat_n" -eq $((S * C)) ] && echo met || echo "not met")
ratio=$("$AG_PYTHON" -c "print('%.2f' % ($p99 / $base))")
echo
printf '  %-52s %-14s %-24s %s\n' "what" goal measured ""
printf '  %-52s %-14s %-24s %s\n' "sessions open at once (driver; /proc; TCP)" "$S" \
    "$n_open; $n_gw+$n_conn; $n_tcp1+$n_tcp2" "$all_open"
printf '  %-52s %-14s %-24s %s\n' "audit records lost" 0 \
    "${lost:-?}, $lat_n/$((S * C)) came back" "$lost_met"
printf '  %-52s %-14s %-24s %s\n' "hash chain" intact "$chain" "$([ "$chain" = intact ] && echo met || echo "not met")"
printf '  %-52s %-14s %-24s %s\n' "p99 per command vs single-session median ($(printf %.2f "$base") ms)" \
    "<= 3x" "${ratio}x ($(printf %.1f "$p99") ms)" "$(j "$ratio" "<= 3")"
printf '  %-52s %-14s %-24s %s\n' "gateway memory, PSS of all its processes (highest)" "<= 1024 MiB" \
    "$(printf %.0f "$mem") MiB" "$(j "$mem" "<= 1024")"
row="$S concurrent sessions (sshd+serve), sandbox $SANDBOX"
ag_bench_summary "$row: all open at once" "$S" "$n_open" "$all_open"
ag_bench_summary "$row: audit records lost" "0" "${lost:-?}" "$lost_met"
ag_bench_summary "$row: hash chain" "intact" "$chain" "$([ "$chain" = intact ] && echo met || echo "not met")"
ag_bench_summary "$row: p99 per command / single-session median" "<= 3x" "${ratio}x" "$(j "$ratio" "<= 3")"
ag_bench_summary "$row: gateway memory (PSS, all processes)" "<= 1 GiB" "$(printf %.0f "$mem") MiB" \
    "$(j "$mem" "<= 1024")"
