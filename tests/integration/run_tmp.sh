#!/bin/bash
# /run and /tmp in a sandboxed session (issue 32): Landlock does not mediate
# connect(2) to a pathname socket, so where daemons keep theirs is not the
# host's in the session, by construction rather than by a list of names.
#   - /run is empty and read-only but for what the profile names beneath it
#     (a socket there is reachable on purpose), /run/utmp and the preload
#   - /tmp is the session's own in the strict tier too: a socket the account
#     left there (tmux, an ssh-agent) is not reachable, host files are not
#     visible, and what the session writes stays in the session
#   - each through python3 and through an allowed shell's redirection
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
ag_setup
ag_need_sandbox_lib

KEEP=/run/agentgate-keep-$$
OTHER=/run/agentgate-other-$$
HOSTTMP=/tmp/agentgate-host-$$
install -d -m 0755 "$KEEP" "$OTHER"
touch "$HOSTTMP.file"
chmod 0644 "$HOSTTMP.file"
# three daemons of the account's or anyone's, each a listening socket open
# to every uid: one in a directory the profile names, one in a directory it
# does not, one in /tmp
SHM=/dev/shm/agentgate-$$.sock
VARTMP=/var/tmp/agentgate-$$.sock
"$AG_PYTHON" - "$KEEP/kept.sock" "$OTHER/other.sock" "$HOSTTMP.sock" "$SHM" "$VARTMP" \
    "$AG_DIR/daemons.up" <<'PY' &
import os, socket, sys, threading
def serve(s):
    while True:
        c, _ = s.accept()
        c.sendall(b"daemon-reached\n")
        c.close()
for p in sys.argv[1:-1]:
    s = socket.socket(socket.AF_UNIX)
    s.bind(p)
    os.chmod(p, 0o777)
    s.listen(8)
    threading.Thread(target=serve, args=(s,), daemon=True).start()
open(sys.argv[-1], "w").close()
threading.Event().wait()
PY
DAEMONS=$!
trap 'kill $DAEMONS 2>/dev/null; rm -rf "$KEEP" "$OTHER" "$HOSTTMP".* "$SHM" "$VARTMP"; ag_cleanup' EXIT
ag_wait_until 60 test -e "$AG_DIR/daemons.up" || { echo "daemons did not start" >&2; exit 99; }

ag_sandboxed_policy strict <<POLICY
  strict:
    allow: [ls, cat, echo, python3, sh, test]
    paths: { read: ["/", "$KEEP"], write: ["~", "/tmp"] }
POLICY

connect() {	# connect PATH: what a python3 client of that socket gets
	printf "python3 -c 'import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(\"%s\"); print(s.recv(64).decode().strip())\nexcept OSError as e: print(\"refused\", e.errno)'\n" "$1"
}

# ---- /run ------------------------------------------------------------------------
out=$(ag_ssh "$(connect "$OTHER/other.sock")" 2>&1)
ag_like "$out" "^refused 2$" "socket_in_an_unnamed_run_dir_is_not_there" "$out"
out=$(ag_ssh "$(connect "$KEEP/kept.sock")" 2>&1)
ag_is "$out" "daemon-reached" "socket_in_a_run_dir_the_profile_names_is_reachable"
out=$(ag_ssh "ls /run" 2>&1)
ag_unlike "$out" "agentgate-other|^user$|^dbus$|^systemd$|^sshd" "run_lists_only_what_is_kept" "$out"
ag_like "$out" "agentgate-keep-$$" "run_lists_the_kept_dir" "$out"
out=$(ag_ssh "sh -c 'echo x > /run/planted' ; test -e /run/planted && echo planted" 2>&1)
ag_unlike "$out" "^planted$" "run_is_read_only" "$out"
if [ -f /run/utmp ]; then
	out=$(ag_ssh "test -f /run/utmp && echo utmp" 2>&1)
	ag_is "$out" "utmp" "run_utmp_is_kept_for_who_and_uptime"
fi
# the preload the sandbox itself needs is kept, wherever it lives: every
# command above ran, and this one's status says so
out=$(ag_ssh "echo preload-ok" 2>&1)
ag_is "$out" "preload-ok" "commands_still_run_with_the_preload_kept"

# ---- a profile path through a link a command made --------------------------------
# ~/work/data is named in paths.read; the agent (home is a write root) makes
# it a link to a /run directory it was not given: the grant and the bind
# are not pointed there, the session is refused and says why
sed -i "s|read: \[\"/\", \"$KEEP\"\]|read: [\"/\", \"$KEEP\", \"~/work/data\"]|" "$AG_DIR/policy.yaml"
out=$(ag_ssh "python3 -c 'import os; os.makedirs(os.path.expanduser(\"~/work\"), exist_ok=True); os.symlink(\"$OTHER\", os.path.expanduser(\"~/work/data\"))'; echo made" 2>&1)
ag_like "$out" "made" "the_agent_made_the_link" "$out"
out=$(ag_ssh "$(connect "$OTHER/other.sock")" 2>&1)
ag_unlike "$out" "daemon-reached" "a_link_beneath_a_write_root_binds_nothing_back" "$out"
ag_like "$out" "symbolic link .*work/data" "the_refusal_names_the_link" "$out"
rm -f "$(getent passwd "$AG_USER" | cut -d: -f6)/work/data"
out=$(ag_ssh "echo back" 2>&1)
ag_is "$out" "back" "without_the_link_sessions_run_again"

# ---- /tmp, strict tier --------------------------------------------------------
out=$(ag_ssh "$(connect "$HOSTTMP.sock")" 2>&1)
ag_like "$out" "^refused 2$" "socket_in_host_tmp_is_not_there" "$out"
for sock in "$SHM" "$VARTMP"; do
	out=$(ag_ssh "$(connect "$sock")" 2>&1)
	ag_like "$out" "^refused 2$" "socket_in_${sock%/*}_is_not_there" "$out"
done
out=$(ag_ssh "cat $HOSTTMP.file && echo visible; ls /tmp" 2>/dev/null)
ag_unlike "$out" "^visible$|^agentgate-host" "host_tmp_files_are_not_visible" "$out"
printf 'echo kept > /tmp/mine\ncat /tmp/mine\n' | ag_ssh > "$AG_DIR/tmp.out" 2>&1
ag_is "$(cat "$AG_DIR/tmp.out")" "kept" "the_session_writes_and_reads_its_own_tmp"
ag_ok "what_it_wrote_is_not_in_host_tmp" test ! -e /tmp/mine
# a profile that does not write /tmp cannot write its private one either
sed -i 's|write: \["~", "/tmp"\]|write: ["~"]|' "$AG_DIR/policy.yaml"
out=$(ag_ssh "python3 -c 'open(\"/tmp/x\", \"w\")' && echo wrote" 2>&1)
ag_unlike "$out" "^wrote$" "tmp_not_in_paths_write_stays_unwritable" "$out"
ag_done
