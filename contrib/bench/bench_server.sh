#!/usr/bin/env bash
# bench_server.sh - what the built-in SSH server (`agentgate serve`) costs,
# as ratios against OpenSSH's sshd with the gateway as ForceCommand, both
# started in the same run on 127.0.0.1 (needs root, like the integration
# tests: a throwaway account, two daemons).
#
#   (1) connection + auth + `true`, sequentially:  serve  vs  sshd+ForceCommand
#   (2) memory per held connection: RSS and PSS of serve's processes / sessions
#   (3) 200 concurrent sessions (`echo; sleep 2`) through serve: all must succeed
#
#   AGENTGATE=build/src/agentgate bash contrib/bench/bench_server.sh [N] [HELD] [CONC]
# N: sequential connections per side (default 100); HELD: connections held
# for the memory figure (default 50); CONC: concurrent sessions (default 200).
# Not part of `make check`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
N=${1:-100}
HELD=${2:-50}
CONC=${3:-200}
: "${AGENTGATE:=$repo/build/src/agentgate}"
: "${PAM_MODULE:=$(dirname "$(dirname "$AGENTGATE")")/pam/.libs/pam_agentgate.so}"
export AGENTGATE PAM_MODULE
. "$repo/tests/integration/lib.sh"

ag_setup	# also starts sshd with the gateway as ForceCommand: the baseline
chown root "$AG_DIR/log"
chmod 0755 "$AG_DIR/log"
: > "$AG_DIR/log/audit.jsonl"
chown "$AG_USER" "$AG_DIR/log/audit.jsonl"	# the ForceCommand side runs as the user
chmod 0600 "$AG_DIR/log/audit.jsonl"
mkdir -p "$AG_DIR/pam"
printf 'auth required pam_permit.so\naccount required pam_permit.so\nsession required pam_permit.so\n' \
    > "$AG_DIR/pam/agentgate"
chmod 0644 "$AG_DIR/pam/agentgate"
ag_write_policy "$AG_DIR/policy.yaml" <<'EOF'
version: 1
gateway:
  sandbox: "off"
  pam_confdir: @DIR@/pam
  audit:
    file: @AUDIT@
    required: true
  server:
    host_keys: [@DIR@/hostkey]
    authorized_keys: "@DIR@/keys/%u"
    max_connections: 1000
    max_per_source: 1000
    login_grace_time: 60
users:
  @USER@: bench
profiles:
  bench:
    allow: [echo, "true", sleep]
    paths: { read: ["/"], write: ["/tmp"] }
EOF

SERVE_PORT=
for _ in 1 2 3 4 5; do
	p=$(ag_free_port)
	"$AG_DIR/agentgate" serve --config "$AG_DIR/policy.yaml" --listen "127.0.0.1:$p" \
	    --foreground -e 2>>"$AG_DIR/serve.log" &
	serve_pid=$!
	for _ in $(seq 1 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && { SERVE_PORT=$p; break; }
		kill -0 "$serve_pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$SERVE_PORT" ] && break
	kill "$serve_pid" 2>/dev/null
done
[ -n "$SERVE_PORT" ] || { echo "cannot start agentgate serve" >&2; cat "$AG_DIR/serve.log" >&2; exit 1; }
trap 'kill $serve_pid 2>/dev/null; ag_cleanup' EXIT
SERVE_SSH=("${AG_SSH[@]}")
for i in "${!SERVE_SSH[@]}"; do
	[ "${SERVE_SSH[$i]}" = "$AG_PORT" ] && SERVE_SSH[$i]=$SERVE_PORT
done

now() { date +%s.%N; }

# (1) sequential connection + auth + true
"${AG_SSH[@]}" true && "${SERVE_SSH[@]}" true || { echo "warm-up failed" >&2; exit 1; }
t0=$(now)
for _ in $(seq 1 "$N"); do "${AG_SSH[@]}" true; done
t1=$(now)
for _ in $(seq 1 "$N"); do "${SERVE_SSH[@]}" true; done
t2=$(now)
base=$(echo "($t1 - $t0) * 1000 / $N" | bc -l)
serve=$(echo "($t2 - $t1) * 1000 / $N" | bc -l)
printf '(1) ssh host true, %d sequential connections\n' "$N"
printf '    sshd + ForceCommand agentgate: %7.1f ms/connection (baseline)\n' "$base"
printf '    agentgate serve:               %7.1f ms/connection  (%.2fx the baseline)\n' \
    "$serve" "$(echo "$serve / $base" | bc -l)"

# (2) memory per held connection: every process serve has for them
pids=()
for i in $(seq 1 "$HELD"); do
	"${SERVE_SSH[@]}" "sleep 8" >/dev/null 2>&1 &
	pids+=($!)
done
for _ in $(seq 1 100); do
	started=$(pgrep -c -u "$AG_USER" -x sleep)
	[ "$started" -ge "$HELD" ] && break
	sleep 0.1
done
rss=0 pss=0 nproc=0
for p in $(pgrep -f "agentgate serve --config $AG_DIR/policy.yaml"); do
	[ "$p" = "$serve_pid" ] && continue	# the listener is shared by all
	r=$(awk '/^Rss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null)
	s=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null)
	rss=$((rss + ${r:-0}))
	pss=$((pss + ${s:-0}))
	nproc=$((nproc + 1))
done
lrss=$(awk '/^Rss:/ {print $2}' "/proc/$serve_pid/smaps_rollup")
printf '(2) %d connections held (sleep 8), %d serve processes (privileged parent, connection, session)\n' \
    "$HELD" "$nproc"
printf '    listener RSS: %d KiB (shared by all)\n' "$lrss"
printf '    per connection: RSS %.0f KiB, PSS %.0f KiB  (goal: <= 4096 KiB)\n' \
    "$(echo "$rss / $HELD" | bc -l)" "$(echo "$pss / $HELD" | bc -l)"
wait "${pids[@]}"

# (3) CONC concurrent sessions
pids=()
t0=$(now)
for i in $(seq 1 "$CONC"); do
	"${SERVE_SSH[@]}" "echo ok-$i; sleep 2" > "$AG_DIR/conc.$i" 2>&1 &
	pids+=($!)
done
wait "${pids[@]}"
t1=$(now)
ok=0
for i in $(seq 1 "$CONC"); do
	[ "$(cat "$AG_DIR/conc.$i")" = "ok-$i" ] && ok=$((ok + 1))
done
printf '(3) %d concurrent sessions through serve: %d succeeded in %.1f s (%d cores)\n' \
    "$CONC" "$ok" "$(echo "$t1 - $t0" | bc -l)" "$(nproc)"
[ "$ok" -eq "$CONC" ]
