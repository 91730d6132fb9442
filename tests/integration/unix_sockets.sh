#!/bin/bash
# unix_sockets.sh - connecting to a pathname UNIX socket (issue 32), through
# the real sshd with the shipped developer profile.  Landlock does not
# mediate connect(2) to one and the network namespace does not hold one, so
# the exec supervisor makes every AF_UNIX connect for the process
# (src/exec/sockconnect.c): a socket on the session's own mounts (its /tmp,
# the write roots) or one network.unix names is connected, any other is
# refused, said and recorded as a `net` event.
#   - a host daemon's socket beneath a readable directory: refused from
#     python3, a freshly built C program, a Makefile recipe, perl; through a
#     link the agent made beneath ~/work, /proc/self/root, a relative name
#   - a C program whose second thread flips the address between its own
#     socket's name and the daemon's while it connects: never the daemon
#   - AF_UNIX datagram sockets (sendto names any socket): refused
#   - a host abstract socket: not in the session's network namespace
#   - an IPv4 address outside the namespace tried directly: it fails there,
#     said and recorded (the way out is the egress proxy)
#   - the benign side: servers and clients of the session's own sockets in
#     ~/work and /tmp (absolute, relative, non-blocking), abstract ones,
#     socketpairs; and the daemon once network.unix names it
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_shipped_world developer
ag_setgid_gateway

# the host's daemons: a socket beneath /var/lib (readable, connectable by
# any uid), one in the account's home outside the write roots, and an
# abstract one; each says who reached it in its log
D=/var/lib/agentgate-test-$$
install -d -m 0755 "$D"
HOSTSOCK=$D/daemon.sock
HOMESOCK=$H/.daemon.sock
ABSTRACT=agentgate-test-$$
"$AG_PYTHON" - "$HOSTSOCK" "$HOMESOCK" "$ABSTRACT" "$AG_DIR/reached" "$AG_DIR/daemons.up" <<'PY' &
import os, socket, sys, threading
log = open(sys.argv[4], "a", buffering=1)
def serve(s, tag):
    while True:
        c, _ = s.accept()
        log.write(tag + "\n")
        try:
            c.sendall(b"daemon-reached\n")
        except OSError:
            pass
        c.close()
for p, tag in ((sys.argv[1], "host"), (sys.argv[2], "home")):
    s = socket.socket(socket.AF_UNIX)
    s.bind(p)
    os.chmod(p, 0o777)
    s.listen(64)
    threading.Thread(target=serve, args=(s, tag), daemon=True).start()
a = socket.socket(socket.AF_UNIX)
a.bind("\0" + sys.argv[3])
a.listen(64)
threading.Thread(target=serve, args=(a, "abstract"), daemon=True).start()
open(sys.argv[5], "w").close()
threading.Event().wait()
PY
DAEMONS=$!
trap 'kill $DAEMONS 2>/dev/null; rm -rf "$D" "$HOMESOCK"; ag_cleanup' EXIT
ag_wait_until 60 test -e "$AG_DIR/daemons.up" || { echo "daemons did not start" >&2; exit 99; }
: > "$AG_DIR/reached"

x() {
	ag_run x "$@"
	[ -n "$x_err" ] && printf '%s\n' "$x_err" | head -n 5 | sed 's/^/#   stderr: /'
	return 0
}
reached() { wc -l < "$AG_DIR/reached" | tr -d ' '; }
net_denials() {	# net_denials PATH: the `net` deny records naming PATH
	ag_audit_query "sum(1 for e in r if e.get('event') == 'net' and e.get('proto') == 'unix' and e.get('decision') == 'deny' and e.get('dest', {}).get('address') == '$1')"
}

# the clients and servers commands run, in python3 ("@NAME": abstract)
install -d -o "$AG_USER" -g "$AG_USER" "$W/u"
cat > "$W/u/client.py" <<'PY'
import socket, sys
name = sys.argv[1].replace("@", "\0", 1) if sys.argv[1].startswith("@") else sys.argv[1]
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(name)
    print(s.recv(64).decode().strip())
except OSError as e:
    print("refused", e.errno)
PY
cat > "$W/u/pair.py" <<'PY'
import os, socket, sys, threading
def addr(a):
    return a.replace("@", "\0", 1) if a.startswith("@") else a
p, name = sys.argv[1], sys.argv[2]
if not p.startswith("@") and os.path.exists(p):
    os.unlink(p)
l = socket.socket(socket.AF_UNIX)
l.bind(addr(p))
l.listen(4)
def srv():
    c, _ = l.accept()
    c.sendall(b"own-reached")
    c.close()
threading.Thread(target=srv).start()
s = socket.socket(socket.AF_UNIX)
s.connect(addr(name))
print(s.recv(64).decode())
PY
chown "$AG_USER" "$W/u/client.py" "$W/u/pair.py"
py_connect() { printf 'python3 ~/work/u/client.py %s' "$1"; }
own_pair() { printf 'python3 ~/work/u/pair.py %s %s' "$1" "$2"; }

# ---- a host daemon's socket -----------------------------------------------------
x "$(py_connect "$HOSTSOCK")"
ag_is "$x_out" "refused 13" "python3_cannot_reach_a_host_daemon"
ag_like "$x_err" "agentgate: blocked connection to the UNIX socket $HOSTSOCK: not the session's own .*network.unix of profile 'developer' does not name it" \
    "the_refusal_says_why_and_what_to_do" "$x_err"
ag_is "$(net_denials "$HOSTSOCK")" 1 "the_refusal_is_a_net_record"
ag_is "$(ag_audit_query "[e for e in r if e.get('event') == 'net' and e.get('proto') == 'unix'][-1].get('seq') == [e for e in r if e.get('event') == 'command'][-1].get('seq')")" yes \
    "the_record_names_the_command_line"
x "$(py_connect "$HOMESOCK")"
ag_is "$x_out" "refused 13" "a_socket_in_the_home_outside_the_write_roots_is_refused"

# a freshly built C program, and a Makefile recipe running it and perl
x "cd ~/work/u && cat > c.c <<'EOF'
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[64] = \"\";
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	strncpy(a.sun_path, argv[1], sizeof(a.sun_path) - 1);
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror(\"connect\");
		return 1;
	}
	read(s, buf, sizeof(buf) - 1);
	printf(\"%s\", buf);
	return 0;
}
EOF
cc -o c c.c && ./c $HOSTSOCK; echo rc=\$?"
ag_like "$x_out" "^rc=1$" "a_fresh_c_program_cannot_reach_it" "$x_out" "$x_err"
ag_like "$x_err" "connect: Permission denied" "the_c_program_sees_permission_denied" "$x_err"
x "cd ~/work/u && printf 'all:\n\t./c $HOSTSOCK; echo c=\$\$?\n\tperl -MIO::Socket::UNIX -e '\''print IO::Socket::UNIX->new(Peer => \"$HOSTSOCK\") ? \"perl-reached\\\\n\" : \"perl-refused\\\\n\"'\''\n' > Makefile && make -s"
ag_like "$x_out" "c=1" "a_makefile_recipe_cannot_reach_it" "$x_out" "$x_err"
ag_like "$x_out" "perl-refused" "perl_in_a_recipe_cannot_reach_it" "$x_out"

# names that lead to it: a link the agent made beneath ~/work, the
# process's own root through /proc, a relative name from its directory
x "ln -sf $HOSTSOCK ~/work/u/link.sock && $(py_connect "$H/work/u/link.sock")"
ag_is "$x_out" "refused 13" "a_link_beneath_the_write_root_leads_to_the_host_socket_refused"
x "$(py_connect "/proc/self/root$HOSTSOCK")"
ag_like "$x_out" "^refused (13|2)$" "proc_self_root_does_not_lead_there" "$x_out"
x "cd $D && $(py_connect daemon.sock)"
ag_is "$x_out" "refused 13" "a_relative_name_is_judged_from_the_cwd"
ag_is "$(reached)" 0 "the_daemon_was_never_reached" "$(cat "$AG_DIR/reached")"

# a thread flips the address between the program's own socket and the
# daemon's while connect(2) runs: the supervisor connects the copy it judged
x "cd ~/work/u && cat > race.c <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static struct sockaddr_un a = { .sun_family = AF_UNIX };
static const char *mine, *theirs;
static volatile int stop;
static void *flip(void *x)
{
	(void)x;
	while (!stop) {
		strcpy(a.sun_path, theirs);
		strcpy(a.sun_path, mine);
	}
	return NULL;
}
int main(int argc, char **argv)
{
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0), i, other = 0, own = 0;
	struct sockaddr_un b = { .sun_family = AF_UNIX };
	pthread_t t;

	mine = argv[1];
	theirs = argv[2];
	strcpy(b.sun_path, mine);
	unlink(mine);
	if (bind(l, (struct sockaddr *)&b, sizeof(b)) < 0 || listen(l, 4096) < 0)
		return perror(\"listen\"), 2;
	strcpy(a.sun_path, mine);
	pthread_create(&t, NULL, flip, NULL);
	for (i = 0; i < 3000; i++) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0), c;

		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0) {
			char buf[16] = \"\";
			/* the daemon writes at once; our own listener does not */
			if ((c = accept(l, NULL, NULL)) >= 0) {
				own++;
				close(c);
			} else if (read(s, buf, sizeof(buf) - 1) > 0)
				other++;
		}
		close(s);
	}
	stop = 1;
	pthread_join(t, NULL);
	printf(\"own=%d daemon=%d\\n\", own > 0, other);
	return 0;
}
EOF
cc -pthread -o race race.c && ./race /tmp/race.sock $HOSTSOCK"
ag_is "$x_out" "own=1 daemon=0" "a_racing_thread_never_reaches_the_daemon" "$x_out" "$x_err"
ag_is "$(reached)" 0 "nothing_reached_the_daemon_in_the_race"

# another thread swaps a UNIX socket and an INET one on the descriptor
# connect(2) names: the socket the supervisor takes is the one it judges
x "cd ~/work/u && cat > swap.c <<'EOF'
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static int fd = 50, in, un;
static volatile int stop;
static void *swap(void *x)
{
	(void)x;
	while (!stop) {
		dup2(in, fd);
		dup2(un, fd);
	}
	return NULL;
}
int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int i, reached = 0;
	pthread_t t;

	strncpy(a.sun_path, argv[1], sizeof(a.sun_path) - 1);
	for (i = 0; i < 2000; i++) {
		char buf[16];

		in = socket(AF_INET, SOCK_STREAM, 0);
		un = socket(AF_UNIX, SOCK_STREAM, 0);
		dup2(un, fd);
		stop = 0;
		pthread_create(&t, NULL, swap, NULL);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		    read(un, buf, sizeof(buf)) > 0)
			reached++;
		stop = 1;
		pthread_join(t, NULL);
		close(in);
		close(un);
	}
	printf(\"reached=%d\\n\", reached);
	return 0;
}
EOF
cc -pthread -o swap swap.c && ./swap $HOSTSOCK"
ag_is "$x_out" "reached=0" "swapping_the_descriptor_under_connect_never_reaches_the_daemon" "$x_out" "$x_err"
ag_is "$(reached)" 0 "nothing_reached_the_daemon_in_the_swap"

# ---- datagrams, abstract names ----------------------------------------------------
x "python3 -c '
import socket
D, R = socket.SOCK_DGRAM, socket.SOCK_RAW
for how in (lambda: socket.socket(socket.AF_UNIX, D), lambda: socket.socketpair(socket.AF_UNIX, D),
            lambda: socket.socket(socket.AF_UNIX, D | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK),
            lambda: socket.socket(socket.AF_UNIX, R), lambda: socket.socketpair(socket.AF_UNIX, R)):
    try:
        how(); print(\"made\")
    except OSError as e:
        print(\"refused\", e.errno)
'"
ag_is "$x_out" "refused 13
refused 13
refused 13
refused 13
refused 13" "unix_datagram_and_raw_sockets_are_refused" "$x_out"
x "$(py_connect "@$ABSTRACT")"
ag_is "$x_out" "refused 111" "a_host_abstract_socket_is_not_in_the_session" "$x_out"
ag_is "$(reached)" 0 "no_daemon_was_reached"

# ---- the session's own sockets work --------------------------------------------------
x "cd ~/work/u && $(own_pair "$H/work/u/own.sock" "$H/work/u/own.sock")"
ag_is "$x_out" "own-reached" "a_socket_beneath_a_write_root_is_reachable" "$x_out" "$x_err"
x "cd /tmp && $(own_pair /tmp/own.sock own.sock)"
ag_is "$x_out" "own-reached" "a_socket_in_the_session_tmp_by_relative_name" "$x_out" "$x_err"
x "cd ~/work/u && $(own_pair /tmp/own2.sock "$H/work/u/../../../../tmp/own2.sock")"
ag_is "$x_out" "own-reached" "a_name_with_dotdot_to_the_session_tmp" "$x_out" "$x_err"
x "$(own_pair @agentgate-own @agentgate-own)"
ag_is "$x_out" "own-reached" "the_session_own_abstract_socket_is_reachable" "$x_out" "$x_err"
x "python3 -c '
import multiprocessing as m
l = m.Lock(); q = m.Queue(); q.put(\"queue-ok\"); print(q.get())
with m.Pool(2) as p: print(\"pool\", p.map(abs, [-1, -2]))
a, b = m.Pipe(); a.send(\"pipe-ok\"); print(b.recv())
import socket
x, y = socket.socketpair(); x.sendall(b\"pair-ok\"); print(y.recv(16).decode())'"
ag_is "$x_out" "queue-ok
pool [1, 2]
pipe-ok
pair-ok" "multiprocessing_locks_queues_pools_pipes_and_socketpairs_work" "$x_out" "$x_err"
# a connect from a second thread (Go, thread pools), TCP and UDP to the
# session's own loopback: the supervisor makes them all
cat > "$W/u/thr.py" <<'PY'
import socket, threading
l = socket.socket(socket.AF_UNIX); l.bind("th.sock"); l.listen(1)
def cli():
    s = socket.socket(socket.AF_UNIX); s.connect("th.sock"); s.sendall(b"thread-ok")
t = threading.Thread(target=cli); t.start()
c, _ = l.accept(); print(c.recv(16).decode()); t.join()
tl = socket.socket(); tl.bind(("127.0.0.1", 0)); tl.listen(1)
tc = socket.create_connection(tl.getsockname()); a, _ = tl.accept(); a.sendall(b"tcp-ok"); print(tc.recv(16).decode())
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); v.connect(u.getsockname()); v.send(b"udp-ok"); print(u.recv(16).decode())
PY
chown "$AG_USER" "$W/u/thr.py"
x "cd ~/work/u && rm -f th.sock && python3 thr.py"
ag_is "$x_out" "thread-ok
tcp-ok
udp-ok" "connects_from_threads_tcp_and_udp_work" "$x_out" "$x_err"
# non-blocking connect (event loops): the answer is the kernel's own
x "cd ~/work/u && python3 -c '
import os, socket
l = socket.socket(socket.AF_UNIX); l.bind(\"nb.sock\"); l.listen(1)
s = socket.socket(socket.AF_UNIX); s.setblocking(False)
s.connect(\"nb.sock\"); c, _ = l.accept(); c.sendall(b\"nb-ok\")
import select; select.select([s], [], [])
print(s.recv(16).decode())'"
ag_is "$x_out" "nb-ok" "a_non_blocking_connect_works" "$x_out" "$x_err"
# a missing socket and a file that is no socket: the kernel's own answers
x "$(py_connect /tmp/none.sock); touch /tmp/file; $(py_connect /tmp/file)"
ag_is "$x_out" "refused 2
refused 111" "missing_and_non_socket_names_fail_as_the_kernel_says" "$x_out"
ag_is "$(net_denials /tmp/none.sock)" 0 "a_missing_socket_is_no_refusal"

# a listener that never accepts, its queue full, and another thread that
# keeps the socket blocking while the supervisor connects it: the connect
# ends (EAGAIN, as a non-blocking one's) and the command goes on
cat > "$W/u/full.py" <<'PY'
import fcntl, os, socket, threading
if os.path.exists("full.sock"):
    os.unlink("full.sock")
l = socket.socket(socket.AF_UNIX); l.bind("full.sock"); l.listen(0)
held, errs = [], []
for i in range(8):
    s = socket.socket(socket.AF_UNIX)
    stop = False
    def flip(fd=s.fileno()):
        while not stop:
            fl = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, fl & ~os.O_NONBLOCK)
    t = threading.Thread(target=flip); t.start()
    try:
        s.connect("full.sock"); held.append(s)
    except OSError as e:
        errs.append(e.errno)
    stop = True; t.join()
print("held" if held else "none", sorted(set(errs)))
PY
chown "$AG_USER" "$W/u/full.py"
x "cd ~/work/u && python3 full.py && echo went-on"
ag_is "$x_out" "held [11]
went-on" "a_full_listener_queue_ends_the_connect_with_eagain" "$x_out" "$x_err"

# ---- an address outside the namespace, tried directly --------------------------------
# (a client that ignores HTTPS_PROXY): it fails there, and the agent hears why
x "python3 -c '
import socket
s = socket.socket()
try:
    s.connect((\"192.0.2.7\", 443)); print(\"reached\")
except OSError as e:
    print(\"refused\", e.errno)'"
ag_is "$x_out" "refused 101" "a_direct_connection_fails_in_the_namespace" "$x_out"
ag_like "$x_err" "agentgate: blocked direct connection to 192\.0\.2\.7:443 \(tcp\): the session reaches the network only through the egress proxy" \
    "the_direct_attempt_is_explained" "$x_err"
ag_is "$(ag_audit_query "[(e.get('proto'), e.get('decision'), e.get('rule')) for e in r if e.get('event') == 'net' and e.get('dest', {}).get('address') == '192.0.2.7:443']")" \
    "[('tcp', 'deny', 'network.proxy')]" "the_direct_attempt_is_a_net_record"

# ---- network.unix names the daemon --------------------------------------------------
sed -i "/^  developer:/,/^  [a-z]/ s|^    network:|    network:\n      unix: [\"$D\"]|" "$AG_DIR/policy.yaml"
"$AGENTGATE" check --config "$AG_DIR/policy.yaml" >/dev/null || { echo "policy does not check" >&2; exit 99; }
out=$("$AGENTGATE" doctor --config "$AG_DIR/policy.yaml" --user "$AG_USER" 2>&1)
ag_like "$out" "profile developer: UNIX sockets: the session's own \(its /tmp, the write roots\) and $D" \
    "doctor_says_which_sockets_the_profile_reaches" "$(printf '%s\n' "$out" | grep -i 'unix' | head -3)"
ag_like "$out" "UNIX sockets only the session's own and network.unix's, each connect made by the gateway" \
    "doctor_checks_the_connect_supervisor" "$(printf '%s\n' "$out" | grep -i 'unix' | head -3)"
x "$(py_connect "$HOSTSOCK")"
ag_is "$x_out" "daemon-reached" "a_socket_network_unix_names_is_reachable" "$x_out" "$x_err"
ag_is "$(ag_audit_query "[e for e in r if e.get('event') == 'net' and e.get('proto') == 'unix'][-1].get('decision')")" allow \
    "the_named_socket_connection_is_recorded"
x "$(py_connect "$HOMESOCK")"
ag_is "$x_out" "refused 13" "other_sockets_stay_refused" "$x_out"
# a command that fills its record's list of connections with refusals
# cannot then reach a named socket unrecorded: it is refused, and said so
cat > "$W/u/many.py" <<'PY'
import os, socket, sys
home, named = sys.argv[1], sys.argv[2]
for i in range(70):
    if not os.path.lexists("l%d" % i):
        os.symlink(home, "l%d" % i)
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("l%d" % i)
    except OSError:
        pass
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(named); print(s.recv(64).decode().strip())
except OSError as e:
    print("refused", e.errno)
PY
chown "$AG_USER" "$W/u/many.py"
: > "$AG_DIR/reached"
x "cd ~/work/u && python3 many.py $HOMESOCK $HOSTSOCK"
ag_is "$x_out" "refused 13" "past_the_record_s_room_a_named_socket_is_refused_not_unrecorded" "$x_out"
ag_like "$x_err" "past them a socket network.unix names is refused too.*run such a command in a line of its own" \
    "the_refusal_says_what_to_do" "$(printf '%s\n' "$x_err" | tail -n 3)"
ag_like "$x_err" "agentgate: [0-9]+ more connections in this command were refused" \
    "the_count_of_unlisted_refusals_is_said" "$(printf '%s\n' "$x_err" | tail -n 3)"
ag_is "$(ag_audit_query "[e.get('rule') for e in r if e.get('event') == 'net'][-1]")" "network.more" \
    "the_count_is_a_net_record"
ag_is "$(reached)" 0 "the_named_daemon_was_not_reached_unrecorded"

ag_done
