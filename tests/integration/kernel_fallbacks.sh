#!/bin/bash
# kernel_fallbacks.sh - `sandbox: required` on the kernels people run
# (issue 14): through the real sshd, at every Landlock ABI from 1 to 6
# (simulated with the hidden --test-landlock-abi), each guarantee a profile
# states holds by Landlock or by its fallback, or the profile's commands
# are refused with a message naming the profile key and the kernel feature.
#
#   a profile without network: TCP, abstract UNIX sockets (network
#     namespace), truncate(2) outside the write roots (seccomp below ABI 3),
#     signals to processes outside (PID namespace), writes outside;
#   a profile with network.allow: nothing straight out, the named address
#     through the egress proxy, at every ABI (the network namespace holds).
. "$(dirname "$0")/lib.sh"
ag_setup
ag_need_sandbox_lib

W=$AG_DIR/w
install -d -o "$AG_USER" -m 0755 "$W"
# a file the account may write by its mode, outside the write roots: only
# the sandbox stops a truncate
VICTIM=$AG_DIR/victim
printf 'intact\n' > "$VICTIM"
chown "$AG_USER" "$VICTIM"

# listeners outside the session: TCP on two ports (one the "net" profile
# lists) and an abstract UNIX socket
PORTS_FILE=$AG_DIR/ports
ABSTRACT=agentgate-test-$$
"$AG_PYTHON" - "$PORTS_FILE" "$ABSTRACT" <<'EOF' &
import os, socket, sys, threading
def serve(s):
    while True:
        c, _ = s.accept()
        c.sendall(b"connected\n")
        c.close()
tcp = []
for _ in range(2):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    tcp.append(s)
u = socket.socket(socket.AF_UNIX)
u.bind("\0" + sys.argv[2])
u.listen(16)
for s in tcp + [u]:
    threading.Thread(target=serve, args=(s,), daemon=True).start()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d %d\n" % (tcp[0].getsockname()[1], tcp[1].getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Event().wait()
EOF
LISTENER=$!
# a process of the account outside the gateway, to signal
runuser -u "$AG_USER" -- sleep 100000 &
OUTSIDE=$!
trap 'kill $LISTENER $OUTSIDE 2>/dev/null; ag_cleanup' EXIT
ag_wait_until 60 test -s "$PORTS_FILE" || { echo "listener did not start" >&2; exit 99; }
read -r P_OK P_BAD < "$PORTS_FILE"
ag_wait_until 60 pgrep -u "$AG_USER" -x sleep >/dev/null || { echo "no outside process" >&2; exit 99; }
OUTSIDE_PID=$(pgrep -u "$AG_USER" -x sleep | head -n 1)

# policy PROFILE: the account gets PROFILE ("nonet" or "net")
policy() {
	ag_write_policy "$AG_DIR/policy.yaml" <<EOF
version: 1
gateway:
  runner: /bin/bash
  sandbox: required
  audit: { file: @AUDIT@, required: true }
users:
  @USER@: $1
profiles:
  nonet:
    allow: [touch, python3, kill, echo, cat]
    paths: { read: ["/"], write: ["$W"] }
    env: { set: { PATH: "/usr/bin:/bin", LANG: C.UTF-8 } }
    limits: { timeout: 300 }
  net:
    allow: [touch, python3, kill, echo, cat]
    paths: { read: ["/"], write: ["$W"] }
    network: { allow: ["127.0.0.1:$P_OK"] }
    env: { set: { PATH: "/usr/bin:/bin", LANG: C.UTF-8 } }
    limits: { timeout: 300 }
EOF
}

# connect HOST PORT / abstract NAME, printed as a word the test matches
PY_TCP="import socket, sys
try:
    s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=30)
    print('tcp=' + s.recv(64).decode().strip())
except OSError as e:
    print('tcp=refused', e.errno)"
PY_UNIX="import socket, sys
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect('\0' + sys.argv[1])
    print('unix=' + s.recv(64).decode().strip())
except OSError as e:
    print('unix=refused', e.errno)"

restart() {	# restart ABI
	kill "$AG_SSHD_PID" 2>/dev/null
	wait "$AG_SSHD_PID" 2>/dev/null
	AG_SSHD_PID= AG_PORT=
	AG_FORCE_COMMAND="$AG_DIR/agentgate --config $AG_DIR/policy.yaml --test-landlock-abi $1" \
	    ag_start_sshd || exit 99
	ag_ssh_argv
}

for abi in 1 2 3 4 5 6; do
	restart "$abi"

	policy nonet
	ag_run a "touch $W/abi$abi && echo ran"
	ag_is "$a_out" "ran" "ABI $abi, no network: commands run"
	ag_run a "touch $AG_DIR/outside$abi; echo rc=\$?"
	ag_ok "ABI $abi, no network: no write outside paths.write" test ! -e "$AG_DIR/outside$abi"
	ag_run a "python3 -c 'import os; os.truncate(\"$VICTIM\", 0)'; echo rc=\$?"
	ag_is "$(cat "$VICTIM")" "intact" "ABI $abi, no network: no truncate outside paths.write"
	ag_run a "python3 -c \"$PY_TCP\" $P_OK"
	ag_like "$a_out" "^tcp=refused" "ABI $abi, no network: no TCP connection"
	ag_run a "python3 -c \"$PY_UNIX\" $ABSTRACT"
	ag_like "$a_out" "^unix=refused" "ABI $abi, no network: no abstract UNIX socket outside"
	ag_run a "kill -0 $OUTSIDE_PID; echo rc=\$?"
	ag_like "$a_out" "rc=[1-9]" "ABI $abi, no network: no signal to a process outside"

	# the network namespace holds at every ABI: straight out nothing, through
	# the proxy what network.allow names
	policy net
	ag_run a "python3 -c \"$PY_TCP\" $P_OK"
	ag_like "$a_out" "^tcp=refused" "ABI $abi, network.allow: nothing straight to the host"
	ag_run a "python3 -c \"$AG_PY_VIA\" $P_OK"
	ag_like "$a_out" "payload=connected" "ABI $abi, network.allow: the named address through the proxy"
	ag_run a "python3 -c \"$AG_PY_VIA\" $P_BAD"
	ag_like "$a_out" "^proxy=HTTP/1.1 403" "ABI $abi, network.allow: nothing else through it"
done

# doctor says the same, profile by profile
out=$("$AGENTGATE" doctor --config "$AG_DIR/policy.yaml" --user "$AG_USER" \
    --sshd-config "$AG_DIR/sshd_config" --test-landlock-abi 2 2>&1)
ag_like "$out" "PASS  profile nonet: no network: only the session's own loopback \\(network namespace" \
    "doctor: the mechanism that holds is named"
ag_like "$out" "PASS  profile nonet: no truncation outside paths.write \\(seccomp" \
    "doctor: truncate by seccomp below ABI 3"
ag_like "$out" "PASS  profile net: network only to network.allow's hosts, through the gateway's egress proxy" \
    "doctor: the proxy holds at every ABI"
ag_unlike "$out" "FAIL  (expected: )?profile" "doctor: nothing fails at ABI 2"
out=$("$AGENTGATE" doctor --config "$AG_DIR/policy.yaml" --user "$AG_USER" \
    --sshd-config "$AG_DIR/sshd_config" --test-landlock-abi 6 2>&1)
ag_unlike "$out" "FAIL  (expected: )?profile" "doctor: nothing fails at ABI 6"

ag_done
