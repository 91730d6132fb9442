#!/usr/bin/env bash
# bench_bastion.sh - what a command on an upstream costs through the
# gateway's bastion mode, as ratios against OpenSSH doing the same hop in
# the same run (needs root: it starts three real sshd's on 127.0.0.1 --
# the gateway, a plain jump host, the upstream -- and two throwaway
# accounts, like the tests).
#
#   1. per command in one session (`@web1` then N lines; the connection to
#      the upstream is reused) vs N times `ssh -J jump upstream CMD`
#      (a ProxyJump: two handshakes each) and vs N times the same through
#      an OpenSSH ControlMaster connection (reused, as ours is).  Each
#      session's own start-up (an empty one) is subtracted.  Goal vs
#      ProxyJump: <= 1.1x.
#   2. a one-shot `ssh gw '@web1 CMD'` (new connections both hops) vs the
#      ProxyJump.
#
#   AGENTGATE=build/src/agentgate PAM_MODULE=build/pam/.libs/pam_agentgate.so \
#       bash contrib/bench/bench_bastion.sh [N]
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
N=${1:-100}
: "${AGENTGATE:=$repo/build/src/agentgate}"
: "${PAM_MODULE:=$repo/build/pam/.libs/pam_agentgate.so}"
export AGENTGATE PAM_MODULE
. "$repo/tests/integration/lib.sh"

ag_setup
ag_setgid_gateway
trap 'ag_stop_upstream; ag_cleanup' EXIT
ag_start_upstream || exit 1
sed -e "s|@UPPORT@|$UP_PORT|g" -e "s|@UPUSER@|$UP_USER|g" <<'EOF' | ag_write_policy "$AG_DIR/policy.yaml"
version: 1
gateway:
  sandbox: "off"
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: ops
upstreams:
  web1:
    host: 127.0.0.1
    port: @UPPORT@
    user: @UPUSER@
    key: @DIR@/up/gwkey
    known_hosts: @DIR@/up/known_hosts
    profile: web
profiles:
  ops:
    targets: [web1]
    allow: ["true"]
  web:
    allow: ["true", echo, ls]
    paths: { read: ["/"], write: ["/tmp"] }
EOF

# the jump host: the gateway's sshd config, forwarding allowed, no ForceCommand
ag_start_baseline_sshd "/^DisableForwarding/d" || exit 1
JP=$PLAIN_PORT
trap 'kill $AG_PLAIN_PID 2>/dev/null; ssh -O exit -S "$AG_DIR/cm" x 2>/dev/null; ag_stop_upstream; ag_cleanup' EXIT

# the baseline logs in with the same key (ssh wants it 0600, the gateway 0640 group)
install -m 0600 "$UP/gwkey" "$AG_DIR/basekey"
O=(-F /dev/null -o BatchMode=yes -o LogLevel=ERROR -o IdentitiesOnly=yes
   -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$UP/known_hosts")
PROXY="ssh -F /dev/null -o BatchMode=yes -o LogLevel=ERROR -o IdentitiesOnly=yes \
-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -i $AG_DIR/client -p $JP \
-W %h:%p $AG_USER@127.0.0.1"
jump() { ssh "${O[@]}" -i "$AG_DIR/basekey" -o ProxyCommand="$PROXY" -p "$UP_PORT" "$UP_USER@127.0.0.1" "$@"; }
muxed() { ssh "${O[@]}" -i "$AG_DIR/basekey" -o ProxyCommand="$PROXY" -o ControlMaster=auto \
    -o ControlPath="$AG_DIR/cm" -o ControlPersist=300 -p "$UP_PORT" "$UP_USER@127.0.0.1" "$@"; }
now() { date +%s.%N; }
calc() { "$AG_PYTHON" -c "print($1)"; }

jump true >/dev/null || { echo "the ProxyJump baseline does not work" >&2; exit 1; }
muxed true >/dev/null
printf '@web1 true\n' | ag_ssh >/dev/null 2>&1 || { echo "the gateway does not reach web1" >&2; exit 1; }

echo "== 1. per command, N=$N, ms (session start-up subtracted)"
printf '  %-10s %10s %10s %10s %9s %9s\n' command gateway proxyjump muxed "vs jump" "vs muxed"
for cmd in true "echo hello" "ls /"; do
	lines=$(printf '@web1\n'; for _ in $(seq 1 "$N"); do printf '%s\n' "$cmd"; done)
	t0=$(now); printf '@web1\n' | ag_ssh >/dev/null 2>&1; t1=$(now)
	t2=$(now); printf '%s\n' "$lines" | ag_ssh >/dev/null 2>&1; t3=$(now)
	gw=$(calc "(($t3 - $t2) - ($t1 - $t0)) / $N * 1000")
	t0=$(now); for _ in $(seq 1 "$N"); do jump "$cmd" >/dev/null; done; t1=$(now)
	jp=$(calc "($t1 - $t0) / $N * 1000")
	t0=$(now); for _ in $(seq 1 "$N"); do muxed "$cmd" >/dev/null; done; t1=$(now)
	mx=$(calc "($t1 - $t0) / $N * 1000")
	printf '  %-10s %10.2f %10.2f %10.2f %8.2fx %8.2fx\n' "$cmd" "$gw" "$jp" "$mx" \
	    "$(calc "$gw / $jp")" "$(calc "$gw / $mx")"
done

M=$((N / 4 > 10 ? N / 4 : 10))
echo "== 2. one-shot, a new connection on both hops, M=$M, ms"
t0=$(now); for _ in $(seq 1 "$M"); do ag_ssh '@web1 true' >/dev/null 2>&1; done; t1=$(now)
gw=$(calc "($t1 - $t0) / $M * 1000")
t0=$(now); for _ in $(seq 1 "$M"); do jump true >/dev/null; done; t1=$(now)
jp=$(calc "($t1 - $t0) / $M * 1000")
printf '  ssh gw "@web1 true" %8.2f   ssh -J jump upstream true %8.2f   ratio %.2fx\n' \
    "$gw" "$jp" "$(calc "$gw / $jp")"
