#!/bin/bash
# The audit records reach a central collector through rsyslog, with the
# drop-in the project ships (contrib/rsyslog/agentgate-rsyslog.conf): two real
# rsyslogd on loopback, the gateway host's (imfile on the audit log,
# omrelp with a disk-assisted queue) and a central one (imrelp into a
# file).  The central one is stopped and started again while sessions go
# on; every record arrives, once, in order, and the chain verifies there,
# also across the rotation of the gateway's log and the collector's file.
. "$(dirname "$0")/lib.sh"
RSYSLOGD=$(command -v rsyslogd || echo /usr/sbin/rsyslogd)
if [ ! -x "$RSYSLOGD" ] || [ ! -f /etc/rsyslog.conf ] || ! ls /usr/lib/*/rsyslog/omrelp.so >/dev/null 2>&1; then
	echo "rsyslogd or rsyslog-relp not installed (contrib/deps.sh --tests installs them)" >&2
	exit 99
fi
ag_setup
DROPIN=$top_srcdir/contrib/rsyslog/agentgate-rsyslog.conf
R=$AG_DIR/rsyslog
mkdir -p "$R/local" "$R/central"
CPORT=$(ag_free_port)
CENTRAL_OUT=$R/central/fleet.jsonl
LOCAL_PID=
CENTRAL_PID=

stop_rsyslogd() {	# stop_rsyslogd PID: TERM, and wait until it is gone
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}
rsyslog_cleanup() {
	stop_rsyslogd "$LOCAL_PID"
	stop_rsyslogd "$CENTRAL_PID"
	ag_cleanup
}
trap rsyslog_cleanup EXIT

# the collector, as the drop-in's comment shows it
cat > "$R/central.conf" <<CONF
global(workDirectory="$R/central" maxMessageSize="8m")
module(load="imrelp")
input(type="imrelp" address="127.0.0.1" port="$CPORT" ruleset="agentgate")
template(name="agentgate-line" type="string" string="%msg%\n")
ruleset(name="agentgate") {
    action(type="omfile" file="$CENTRAL_OUT" template="agentgate-line")
}
CONF
# the gateway host's: Debian's own /etc/rsyslog.conf, with only its paths
# moved into the test (and no /dev/log or kernel log, which are the
# host's), including the shipped drop-in, in which an admin puts the
# collector's address (and here the audit log's path)
mkdir -p "$R/local.d" "$R/local/log"
sed -e 's|^module(load="imuxsock").*|module(load="imuxsock" SysSock.Use="off")|' \
    -e '/^module(load="imklog")/d' -e '/omusrmsg/d' \
    -e "s|^\\\$WorkDirectory .*|\\\$WorkDirectory $R/local|" \
    -e "s|^\\\$IncludeConfig .*|\\\$IncludeConfig $R/local.d/*.conf|" \
    -e "s|/var/log/|$R/local/log/|g" /etc/rsyslog.conf > "$R/local.conf"
sed -e "s|target=\"logs.example.org\" port=\"2514\"|target=\"127.0.0.1\" port=\"$CPORT\"|" \
    -e "s|File=\"/var/log/agentgate/audit.jsonl\"|File=\"$AG_AUDIT\"|" "$DROPIN" \
    > "$R/local.d/60-agentgate.conf"
ag_is "$(grep -c "^\\\$WorkDirectory $R/local\$\|^\\\$IncludeConfig $R/local.d/\*.conf\$" "$R/local.conf")" 2 \
    "Debian's rsyslog.conf, its paths moved"
ag_is "$(grep -c "127.0.0.1\" port=\"$CPORT\"\|File=\"$AG_AUDIT\"" "$R/local.d/60-agentgate.conf")" 2 \
    "the drop-in names the collector and the audit log in one place each"

start_central() {
	"$RSYSLOGD" -n -f "$R/central.conf" -i "$R/central.pid" >>"$R/central.log" 2>&1 &
	CENTRAL_PID=$!
	ag_wait_until 30 ag_listening "$CENTRAL_PID" "$CPORT"
	ag_up "$CENTRAL_PID" "$CPORT"
}
arrived() {	# every line of the audit log is at the collector
	[ -f "$CENTRAL_OUT" ] && [ "$(wc -l < "$CENTRAL_OUT")" -ge "$(wc -l < "$AG_AUDIT")" ]
}

ag_ok "rsyslogd accepts the shipped drop-in" "$RSYSLOGD" -N1 -f "$R/local.conf"
ag_ok "the central rsyslogd is listening" start_central
for i in 1 2 3; do ag_ssh "echo first $i" >/dev/null 2>&1; done
"$RSYSLOGD" -n -f "$R/local.conf" -i "$R/local.pid" >>"$R/local.log" 2>&1 &
LOCAL_PID=$!
ag_ssh 'rm -rf /tmp/nothing' >/dev/null 2>&1
ag_ok "the first sessions' records arrive" ag_wait_until 60 arrived

# the gateway host's rsyslog restarts: what was written while it was down
# is read from where it stopped (imfile's position, in its work directory)
stop_rsyslogd "$LOCAL_PID"
ag_ssh 'echo while the forwarder is down' >/dev/null 2>&1
"$RSYSLOGD" -n -f "$R/local.conf" -i "$R/local.pid" >>"$R/local.log" 2>&1 &
LOCAL_PID=$!
ag_ok "records written while the forwarder was down arrive" ag_wait_until 60 arrived
first=$(wc -l < "$AG_AUDIT")

# the collector goes away; the gateway goes on (its audit log is the file)
stop_rsyslogd "$CENTRAL_PID"
CENTRAL_PID=
for i in 1 2 3 4 5; do ag_run d "echo while down $i"; done
ag_is "$d_out" "while down 5" "sessions go on while the collector is down" "$d_err"
# a command line longer than rsyslog's default 8 KiB message
long=$(printf 'x%.0s' $(seq 1 9000))
ag_run l "echo $long"
ag_is "${#l_out}" 9000 "a 9000-byte command runs" "$l_err"
# and a REPL line past 256 KiB (exec requests stop at the kernel's 128 KiB
# for one argument; a REPL line may be 1 MiB)
huge=$(head -c 300000 /dev/zero | tr '\0' y)
printf 'echo %s\n' "$huge" | ag_ssh >/dev/null 2>&1
ag_is "$(wc -l < "$CENTRAL_OUT")" "$first" "nothing reached the stopped collector"

ag_ok "the central rsyslogd is back" start_central
ag_ok "the records made while it was down arrive" ag_wait_until 120 arrived

ag_is "$(wc -l < "$CENTRAL_OUT")" "$(wc -l < "$AG_AUDIT")" "every record arrived once" \
    "$(diff "$AG_AUDIT" "$CENTRAL_OUT" | cut -c1-200 | head -6)"
ag_ok "each record arrived byte for byte, in order" cmp -s "$AG_AUDIT" "$CENTRAL_OUT"
ag_ok "the chain verifies at the collector" "$AG_DIR/agentgate" audit verify "$CENTRAL_OUT"
ag_like "$(grep -c "\"command\":\"echo $long\"" "$CENTRAL_OUT")" '^2$' \
    "the long command's records arrived whole"
printf '"command":"echo %s"\n' "$huge" > "$R/huge.pattern"
ag_like "$(grep -c -F -f "$R/huge.pattern" "$CENTRAL_OUT")" '^2$' "and the 300 KB line's"
# (the local one does say that the collector went away and came back)

# rotation at both ends (issue 35): the gateway's log renamed (the gateway
# goes on in a new file, its chain going on from the rotated one), the
# collector's moved and rsyslogd HUPed to reopen it.  Both series verify
# as one chain, and the collector's new file alone as one that starts
# mid-way, though no record was lost.
mv "$AG_AUDIT" "$AG_AUDIT.1"
mv "$CENTRAL_OUT" "$CENTRAL_OUT.1"
kill -HUP "$CENTRAL_PID"
ag_ssh 'echo after rotation' >/dev/null 2>&1
rotated_arrived() {	# each new record at the collector, some in its new file
	ag_ssh 'echo one more' >/dev/null 2>&1
	[ -s "$CENTRAL_OUT" ] && [ "$(cat "$CENTRAL_OUT.1" "$CENTRAL_OUT" | wc -l)" -ge \
	    "$(cat "$AG_AUDIT.1" "$AG_AUDIT" | wc -l)" ]
}
ag_ok "records after rotation arrive in the collector's new file" ag_wait_until 120 rotated_arrived
ag_ok "both ends hold the same records, in order" \
    cmp -s <(cat "$AG_AUDIT.1" "$AG_AUDIT") <(cat "$CENTRAL_OUT.1" "$CENTRAL_OUT")
ag_ok "the gateway's rotated series verifies as one chain" \
    "$AG_DIR/agentgate" audit verify "$AG_AUDIT.1" "$AG_AUDIT"
ag_ok "the collector's rotated series verifies as one chain" \
    "$AG_DIR/agentgate" audit verify "$CENTRAL_OUT.1" "$CENTRAL_OUT"
out=$("$AG_DIR/agentgate" audit verify "$CENTRAL_OUT" 2>&1)
ag_is "$?" 0 "the collector's new file alone verifies" "$out"
ag_like "$out" "it starts mid-chain" "and says it starts mid-chain"

ag_unlike "$(cat "$R/local.log" "$R/central.log")" 'oversize|truncat|discard|drop|error during parsing' \
    "rsyslogd cut or dropped nothing" "$(cut -c1-300 "$R/local.log" "$R/central.log")"
ag_done
