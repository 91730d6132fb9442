#!/bin/bash
# sandbox.sh - the kernel sandbox through the real sshd (issue 7).
#
# A profile that deliberately allows escape-prone programs (awk, find
# without deny_args, less, git without subcommand rules, python3, cp, tee)
# so the policy lets the escapes through and only the kernel can stop them.
# Each escape tries to create a canary inside the writable directory (so
# only the execute rule stands in the way) and must leave no canary and a
# non-zero status.  Also: writes outside paths.write, TCP ports, a fork
# bomb, ABI 0 simulated through the hidden --test-landlock-abi option,
# and sftp/scp with the real clients.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup

ag_need_sandbox_lib

W=$AG_DIR/w
mkdir -p "$W"
chown "$AG_USER" "$W"
touch "$AG_DIR/outside"
chmod 0666 "$AG_DIR/outside"	# DAC would allow it: only the sandbox says no

PORTS_FILE=$AG_DIR/ports
"$AG_PYTHON" - "$PORTS_FILE" <<'EOF' &
import socket, sys, time
ls = []
for _ in range(2):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    ls.append(s)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d %d\n" % (ls[0].getsockname()[1], ls[1].getsockname()[1]))
import os, signal
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:         # until the test ends it
    signal.pause()
EOF
LISTENER=$!
trap 'kill $LISTENER 2>/dev/null; ag_cleanup' EXIT
ag_wait_until 60 test -s "$PORTS_FILE" || { echo "listener did not start" >&2; exit 99; }
read -r P_OK P_BAD < "$PORTS_FILE"

# a second key, identified as "bomber": the same profile with a short
# timeout, for the fork bomb (which only the timeout ends); the account's
# own profile has a limit far beyond anything the test runs
ssh-keygen -q -t ed25519 -N '' -f "$AG_DIR/bomber" -C agentgate-bomber || exit 99
cat "$AG_DIR/bomber.pub" >> "$AG_DIR/keys/$AG_USER"
BOMBER_KEY=$(cut -d' ' -f1,2 "$AG_DIR/bomber.pub")
BOMBER_SSH=()
for a in "${AG_SSH[@]}"; do
	[ "$a" = "$AG_DIR/client" ] && a=$AG_DIR/bomber
	BOMBER_SSH+=("$a")
done

policy() {	# policy MODE READ-LIST SFTP
	profile() {	# profile NAME TIMEOUT
		cat <<EOF
  $1:
    allow: [ls, cat, echo, printf, "true", "false", touch, awk, find, less, git, python3,
            cp, tee, sed, mkdir, rm, sleep, cd, export, exit, test]
    features: { functions: allow, background: allow }
    paths:
      read: $2
      write: ["@DIR@/w"]
    network: { allow: ["127.0.0.1:$P_OK"] }
    file_transfer: { sftp: $3, scp: true }
    env:
      set: { PATH: "/usr/bin:/bin", LANG: C.UTF-8, HOME: "@DIR@/w" }
    limits: { timeout: $4, processes: 40 }
    unknown: deny
EOF
	}
	{
		cat <<EOF
version: 1
gateway:
  runner: /bin/bash
  sandbox: $1
  audit:
    file: @AUDIT@
    required: true
identities:
  - { name: bomber, keys: ["$BOMBER_KEY"], profile: bomb }
users:
  @USER@: esc
profiles:
EOF
		profile esc "$2" "$3" 300
		profile bomb "$2" "$3" 6
	} | ag_write_policy "$AG_DIR/policy.yaml"
}

policy required '["/"]' write

# escape NAME COMMAND: no canary $W/c-NAME afterwards, non-zero status
escape() {
	local name=$1 cmd=$2
	rm -f "$W/c-$name"
	ag_run e "$cmd"
	if [ ! -e "$W/c-$name" ] && [ "$e_rc" -ne 0 ]; then
		ag_pass "escape $name fails (status $e_rc)"
	else
		ag_fail "escape $name fails" \
		    "canary $( [ -e "$W/c-$name" ] && echo created || echo absent), status $e_rc" \
		    "stderr: $e_err"
	fi
}

# ---- benign twins first: the sandbox lets the profile work -------------------
ag_run b "touch $W/benign && ls $W && echo hi | tee $W/tee-ok >/dev/null && cat $W/tee-ok"
ag_is "$b_rc" 0 "allowed programs run and write inside paths.write"
ag_like "$b_out" "benign" "ls sees the file"
ag_run b "find $W -maxdepth 0 -exec touch $W/find-ok \\;"
ag_ok "find -exec of an allowed program works" test -e "$W/find-ok"
ag_run b "awk 'BEGIN { print 1 + 1 }'"
ag_is "$b_out" 2 "awk runs"
ag_run b 'echo "${LD_PRELOAD-unset} ${AGENTGATE_SANDBOX_FD-unset}"'
ag_is "$b_out" "unset unset" "the preload leaves no trace in the command's environment"

# a command too long for one argv string (128 KiB) comes to the runner on a
# memfd and runs in the same sandbox; the REPL carries on after it
long=$(head -c 200000 /dev/zero | tr '\0' a)
out=$(printf "x='%s'; echo \${#x} | tee $W/long.txt\necho next\n" "$long" | ag_ssh 2>&1)
ag_is "$out" "$(printf '200000\nnext')" "a command longer than argv runs under the sandbox"

# ---- protected paths beneath a write root are read-only for every program -----
# (the policy cannot see inside an awk or python3 program; the kernel can)
git init -q "$W/repo" && chown -R "$AG_USER" "$W/repo"
cfg_before=$(md5sum < "$W/repo/.git/config")
ag_run p "awk 'BEGIN { print \"[core]\\n\\tfsmonitor = touch $W/c-fsmon\" >> \"$W/repo/.git/config\"; exit 0 }'; echo rc=\$?"
ag_is "$(md5sum < "$W/repo/.git/config")" "$cfg_before" "strict tier: awk cannot write a repository's config"
ag_run p "python3 -c 'open(\"$W/repo/.git/hooks/post-checkout\", \"w\").write(\"#!/bin/sh\\n\")'"
ag_ok "strict tier: python3 cannot plant a hook" test ! -e "$W/repo/.git/hooks/post-checkout"
ag_run p "awk 'BEGIN { print \"ok\" > \"$W/repo/notes.txt\" }' && cat $W/repo/notes.txt"
ag_is "$p_out" "ok" "strict tier: the rest of the work tree stays writable"

# ---- a command reaches its own terminal only ------------------------------------
# another terminal on the host (a tmux pane: someone else's session), which
# DAC would let the account open; and the command's own, by path
if command -v tmux >/dev/null; then
	TMS="tmux -S $AG_DIR/tmux.sock"
	$TMS new-session -d -x 80 -y 10 "cat > $AG_DIR/keys-typed"
	other=$($TMS display -p '#{pane_tty}')
	chmod 0666 "$other"
	# (the policy refuses the redirection itself; python3 asks the kernel)
	ag_run t "python3 -c 'import os
for m in (os.O_RDONLY, os.O_WRONLY):
    try:
        os.close(os.open(\"$other\", m | os.O_NOCTTY)); print(\"opened\")
    except OSError as e:
        print(\"refused\", e.errno)'"
	ag_is "$t_out" "refused 13
refused 13" "another session's terminal cannot be opened, to read or to write"
	$TMS kill-server 2>/dev/null
	r_out=$(ag_ssh -tt "python3 -c 'import os; f = open(os.ttyname(0), \"w\"); f.write(\"mine\\n\"); f.close()'; echo rc=\$?" </dev/null 2>&1 | tr -d '\r')
	ag_like "$r_out" "rc=0" "a command opens its own terminal by path"
	ag_like "$r_out" "mine" "and what it writes there arrives"
fi

# ---- the execute rule --------------------------------------------------------
# (the loader and touch wherever this host has them: no /lib64 or /usr/bin assumed)
LDSO=$(ag_ldso)
TOUCH=$(command -v touch)
[ -x "$LDSO" ] && [ -x "$TOUCH" ] || { echo "no loader ($LDSO) or touch ($TOUCH)" >&2; exit 99; }
escape awk "awk 'BEGIN { exit system(\"touch $W/c-awk\") }'"
escape awkpipe "awk 'BEGIN { \"touch $W/c-awkpipe\" | getline; exit 1 }'"
escape find "find $W -maxdepth 0 -exec python3 -c 'import os, sys; sys.exit(os.system(\"touch $W/c-find\") >> 8)' {} +"
escape pysystem "python3 -c 'import os, sys; sys.exit(os.system(\"touch $W/c-pysystem\") >> 8)'"
escape popen "python3 -c 'import subprocess; subprocess.run(\"touch $W/c-popen\", shell=True, check=True)'"
escape ldso "python3 -c 'import os; os.execv(\"$LDSO\", [\"ld.so\", \"/bin/bash\", \"-c\", \"touch $W/c-ldso\"])'"
escape ldsodash "python3 -c 'import os; os.execv(\"$LDSO\", [\"ld.so\", \"/bin/sh\", \"-c\", \"touch $W/c-ldsodash\"])'"
escape procexe "python3 -c 'import os; os.execv(\"/proc/%d/exe\" % os.getppid(), [\"bash\", \"-c\", \"touch $W/c-procexe\"])'"
escape devfd "python3 -c 'import os; fd = os.open(\"/bin/bash\", os.O_RDONLY); os.execv(\"/dev/fd/%d\" % fd, [\"bash\", \"-c\", \"touch $W/c-devfd\"])'"
escape opath "python3 -c 'import os; fd = os.open(\"/bin/bash\", os.O_PATH); os.execve(fd, [\"bash\", \"-c\", \"touch $W/c-opath\"], {})'"
escape memfd "python3 -c 'import os; fd = os.memfd_create(\"x\", 8); os.write(fd, open(\"$TOUCH\", \"rb\").read()); os.execve(fd, [\"touch\", \"$W/c-memfd\"], {})'"
escape copybash "cp /bin/bash $W/b && python3 -c 'import os; os.execv(\"$W/b\", [\"b\", \"-c\", \"touch $W/c-copybash\"])'"
escape copytouch "cp $TOUCH $W/t; python3 -c 'import os; os.execv(\"$W/t\", [\"t\", \"$W/c-copytouch\"])'"
escape ldsocopy "cp $TOUCH $W/t2; python3 -c 'import os; os.execv(\"$LDSO\", [\"ld.so\", \"$W/t2\", \"$W/c-ldsocopy\"])'"

# a readable ELF file outside the program directories (sftp-server here, a
# JVM or git's helpers elsewhere) does not run through the loader either:
# the exec supervisor judges the loader's operand like a typed command
ELF=/usr/lib/openssh/sftp-server
if [ -f "$ELF" ]; then
	ag_run l "python3 -c 'import os; os.execv(\"$LDSO\", [\"ld.so\", \"$ELF\", \"-h\"])'"
	ag_unlike "$l_out$l_err" "usage: sftp-server" "strict tier: the loader does not run a readable program the profile does not list"
	ag_like "$(ag_audit_query '[x.get("rule") for x in r if x.get("event") == "exec_denied"]')" \
	    "exec:loader" "strict tier: the loader's refusal is audited"
fi
ag_run l "python3 -c 'import os; os.execv(\"$LDSO\", [\"ld.so\", \"--preload\", \"$LDSO\", \"$(command -v ls)\", \"-d\", \"/\"])'"
ag_unlike "$l_out" "^/$" "strict tier: the loader loads nothing beside the program"
ag_run l "python3 -c 'import os; os.execv(\"$LDSO\", [\"ld.so\", \"$(command -v ls)\", \"-d\", \"/\"])'"
ag_is "$l_out" "/" "strict tier: the loader still runs an allowed program"

# git: a planted repository (as a clone would bring) whose configuration runs programs
rm -rf "$W/repo"
su -s /bin/bash "$AG_USER" -c "set -e; cd $W; git init -q repo; cd repo; echo a > f;
    git add f; git -c user.name=a -c user.email=a@b commit -qm init;
    git config core.pager 'touch $W/c-gitpager; cat';
    git config core.fsmonitor 'touch $W/c-gitfsmon; false';
    git config diff.external 'touch $W/c-gitdiff';
    git config alias.st '!touch $W/c-gitalias';
    git config pager.log 'touch $W/c-gitpagerlog; cat';
    printf '#!/bin/sh\ntouch $W/c-githook\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit;
    echo b >> f" || { echo "cannot plant the repo" >&2; exit 99; }
ag_run g "cd $W/repo && git status --short && git log --oneline"
ag_is "$g_rc" 0 "git works in the planted repository"
# diff.external cannot be defused (any value means "external"): the planted
# one needs sh, which is not executable, so git diff fails and runs nothing
ag_run g "cd $W/repo && git diff"
ag_unlike "$g_rc" '^0$' "git diff with a planted diff.external fails"
ag_run g "cd $W/repo && git -c user.name=a -c user.email=a@b commit -qam two"
ag_run g "cd $W/repo && git st"
ag_unlike "$g_rc" '^0$' "git alias with ! fails"
for c in gitpager gitfsmon gitdiff gitalias gitpagerlog githook; do
	ag_ok "planted git setting $c ran nothing" test ! -e "$W/c-$c"
done

# less: LESSSECURE, and no shell behind it anyway (through a PTY)
rm -f "$W/c-less"
printf '!touch %s/c-less\nq' "$W" | timeout 120 "${AG_SSH[@]}" -tt "less /etc/hostname" >/dev/null 2>&1
ag_ok "less ! ran nothing" test ! -e "$W/c-less"

# ---- writes ------------------------------------------------------------------
escape awkwrite "awk 'BEGIN { print \"x\" > \"$AG_DIR/outside\"; close(\"$AG_DIR/outside\"); print 1 > \"$W/c-awkwrite\"; exit 1 }'"
ag_run w "python3 -c 'open(\"$AG_DIR/new\", \"w\")'"
ag_ok "python3 cannot create a file outside paths.write" test "$w_rc" -ne 0 -a ! -e "$AG_DIR/new"
ag_run w "echo x | tee $AG_DIR/outside"
ag_ok "tee cannot write outside paths.write" test "$w_rc" -ne 0 -a ! -s "$AG_DIR/outside"
ag_run w "cp $W/tee-ok $AG_DIR/cp-outside"
ag_ok "cp cannot write outside paths.write" test "$w_rc" -ne 0 -a ! -e "$AG_DIR/cp-outside"
ag_run w "python3 -c 'import os; os.unlink(\"$AG_DIR/outside\")'"
ag_ok "nothing outside paths.write can be removed" test "$w_rc" -ne 0 -a -e "$AG_DIR/outside"

# ---- network -----------------------------------------------------------------
# The session's network namespace has only its own loopback; the one way out
# is the egress proxy on 127.0.0.1:3128, which allows what network.allow names
# (here one address and port of the host) and nothing else.
ag_run n "python3 -c \"$AG_PY_VIA\" $P_OK"
ag_like "$n_out" "^proxy=HTTP/1.1 200" "the proxy reaches what network.allow names" "$n_out" "$n_err"
ag_run n "python3 -c \"$AG_PY_VIA\" $P_BAD"
ag_like "$n_out" "^proxy=HTTP/1.1 403" "the proxy refuses what it does not name" "$n_out"
ag_like "$n_err" "agentgate: blocked connection to 127\\.0\\.0\\.1:$P_BAD" \
    "the refusal is told after the command" "$n_err"
ag_is "$(ag_audit_query "[x['decision'] for x in r if x['event'] == 'net' and x['dest']['port'] == $P_BAD]")" \
    "['deny']" "the refused connection is audited"
ag_run n "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $P_OK), timeout=5)'"
ag_unlike "$n_rc" '^0$' "TCP straight to the host fails, even to the listed port"
ag_run n "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $P_BAD), timeout=5)'"
ag_unlike "$n_rc" '^0$' "TCP connect to an unlisted port fails"
ag_run n "python3 -c 'import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)'"
ag_like "$n_err" "PermissionError" "no VSOCK socket (it would reach the hypervisor)"
ag_run n "python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'"
ag_like "$n_err" "PermissionError" "no packet socket"
ag_run n "python3 -c 'import ctypes, os; r = ctypes.CDLL(None, use_errno=True).syscall(425, 8, ctypes.create_string_buffer(120)); print(r, ctypes.get_errno())'"
ag_is "$n_out" "-1 38" "io_uring_setup is refused (ENOSYS)"

# ---- fork bomb -------------------------------------------------------------------
# (in the "bomb" profile: its 6 s timeout ends the bomb, as nothing else would;
# the test's own bound only fires if that never happens)
bomb_out=$(printf ':(){ :|:& };:\necho alive-after-bomb\n' | timeout 120 "${BOMBER_SSH[@]}" 2>/dev/null)
ag_like "$bomb_out" "alive-after-bomb" "fork bomb contained, the REPL continues"
ag_run f "echo next-session"
ag_is "$f_out" "next-session" "a new session works after the bomb"

# ---- signals ---------------------------------------------------------------------
ag_run s "kill -0 \$PPID"
ag_unlike "$s_rc" '^0$' "the gateway cannot be signalled from inside"

# ---- sftp and scp ------------------------------------------------------------------
policy required '["@DIR@/w"]' write
echo put-me > "$AG_DIR/local-put"
SFTP=(sftp -F /dev/null -i "$AG_DIR/client" -P "$AG_PORT" -o StrictHostKeyChecking=no
    -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o IdentitiesOnly=yes)
SCP=(scp -F /dev/null -i "$AG_DIR/client" -P "$AG_PORT" -o StrictHostKeyChecking=no
    -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o IdentitiesOnly=yes)
echo "sftp-data" > "$W/get-me"
chown "$AG_USER" "$W/get-me"
rm -f "$AG_DIR/got"
printf 'put %s %s/put-in\nget %s/get-me %s/got\n' "$AG_DIR/local-put" "$W" "$W" "$AG_DIR" |
    "${SFTP[@]}" -b - "$AG_USER@127.0.0.1" >/dev/null 2>&1
ag_is "$(cat "$W/put-in" 2>/dev/null)" "put-me" "sftp put inside paths.write"
ag_is "$(cat "$AG_DIR/got" 2>/dev/null)" "sftp-data" "sftp get inside paths.read"
ag_is "$(ag_audit_query 'any(x.get("rule") == "file_transfer" and x.get("exit") == 0 for x in r)')" yes \
    "an sftp session is audited with its exit status"
printf 'get /etc/hostname %s/stolen\n' "$AG_DIR" | "${SFTP[@]}" -b - "$AG_USER@127.0.0.1" >/dev/null 2>&1
ag_ok "sftp cannot read outside paths.read" test ! -e "$AG_DIR/stolen"
printf 'put %s /tmp/agsbx-sftp-out\n' "$AG_DIR/local-put" | "${SFTP[@]}" -b - "$AG_USER@127.0.0.1" >/dev/null 2>&1
ag_ok "sftp cannot write outside paths.write" test ! -e /tmp/agsbx-sftp-out
rm -f /tmp/agsbx-sftp-out
"${SCP[@]}" "$AG_DIR/local-put" "$AG_USER@127.0.0.1:$W/scp-in" >/dev/null 2>&1
ag_is "$(cat "$W/scp-in" 2>/dev/null)" "put-me" "scp put inside paths.write"
"${SCP[@]}" "$AG_USER@127.0.0.1:/etc/hostname" "$AG_DIR/scp-stolen" >/dev/null 2>&1
ag_ok "scp cannot read outside paths.read" test ! -e "$AG_DIR/scp-stolen"
# legacy scp (scp -O): allowed by file_transfer.scp, confined the same way
rm -f "$W/scpO-in"
"${SCP[@]}" -O "$AG_DIR/local-put" "$AG_USER@127.0.0.1:$W/scpO-in" >/dev/null 2>&1
ag_is "$(cat "$W/scpO-in" 2>/dev/null)" "put-me" "legacy scp put inside paths.write"
"${SCP[@]}" -O "$AG_USER@127.0.0.1:/etc/hostname" "$AG_DIR/scpO-stolen" >/dev/null 2>&1
ag_ok "legacy scp cannot read outside paths.read" test ! -e "$AG_DIR/scpO-stolen"
"${SCP[@]}" -O "$AG_DIR/local-put" "$AG_USER@127.0.0.1:/tmp/agsbx-scpO-out" >/dev/null 2>&1
ag_ok "legacy scp cannot write outside paths.write" test ! -e /tmp/agsbx-scpO-out
rm -f /tmp/agsbx-scpO-out
ag_run q "scp -t $W/q; touch $W/c-scpinj"
ag_ok "a legacy scp request with shell syntax is refused" test "$q_rc" -eq 126 -a ! -e "$W/c-scpinj"
policy required '["@DIR@/w"]' read
rm -f "$W/put-ro"
printf 'put %s %s/put-ro\n' "$AG_DIR/local-put" "$W" | "${SFTP[@]}" -b - "$AG_USER@127.0.0.1" >/dev/null 2>&1
ag_ok "sftp: read mode refuses uploads" test ! -e "$W/put-ro"
policy required '["@DIR@/w"]' '"off"'
printf 'ls\n' | "${SFTP[@]}" -b - "$AG_USER@127.0.0.1" >/dev/null 2>&1
ag_unlike "$?" '^0$' "sftp off: the sftp client fails"
# sshd discards a subsystem's stderr, so the message lives in the audit log
ag_run t -s sftp < /dev/null
ag_is "$t_rc" 126 "sftp off: the request is refused"
ag_like "$(ag_audit_query 'r[-2].get("reason")')" "sftp is off for profile esc" \
    "sftp off: refused with a message"
ag_is "$(ag_audit_query 'r[-2].get("rule") == "file_transfer" and r[-2].get("decision") == "deny"')" yes \
    "sftp off: audited"
# ... and in syslog, where sshd logs too.  Only where the machine has no
# syslog daemon of its own (CI's): a listener on /dev/log for this check.
if [ ! -e /dev/log ]; then
	"$AG_PYTHON" - "$AG_DIR/syslog" <<'EOF' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
os.chmod("/dev/log", 0o666)
out = open(sys.argv[1] + ".tmp", "ab", buffering=0)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    out.write(s.recv(65536) + b"\n")
EOF
	SYSLOG_PID=$!
	trap 'kill $LISTENER $SYSLOG_PID 2>/dev/null; rm -f /dev/log; ag_cleanup' EXIT
	ag_wait_until 30 test -e "$AG_DIR/syslog"
	ag_run t -s sftp < /dev/null
	ag_wait_until 30 grep -q 'refused sftp for' "$AG_DIR/syslog"
	# <85>: facility authpriv (10), severity notice (5)
	ag_like "$(grep -a 'refused sftp for' "$AG_DIR/syslog")" \
	    "^<85>.*refused sftp for user=$AG_USER profile=esc: sftp is off for profile esc" \
	    "sftp off: the reason is in syslog, facility authpriv"
	kill "$SYSLOG_PID" 2>/dev/null
	rm -f /dev/log
	SYSLOG_PID=
else
	echo "# /dev/log belongs to this machine's syslog daemon: its log is not read here"
fi

# ---- kernel without Landlock (simulated) ---------------------------------------------
policy required '["/"]' '"off"'
kill "$AG_SSHD_PID" 2>/dev/null
wait "$AG_SSHD_PID" 2>/dev/null
AG_SSHD_PID= AG_PORT=
AG_FORCE_COMMAND="$AG_DIR/agentgate --config $AG_DIR/policy.yaml --test-landlock-abi 0" ag_start_sshd || exit 99
ag_ssh_argv
ag_run a "touch $W/abi0"
ag_is "$a_rc" 126 "required + no Landlock: the command is refused"
ag_like "$a_err" "sandbox" "with a message about the sandbox"
ag_ok "and it did not run" test ! -e "$W/abi0"
ag_is "$(ag_audit_query 'any(x.get("event") == "command" and x.get("decision") == "deny" and "sandbox" in (x.get("reason") or "") for x in r)')" yes \
    "the refusal is audited"
policy best_effort '["/"]' '"off"'
printf 'touch %s/abi0-be\ntouch %s/abi0-be2\n' "$W" "$W" | "${AG_SSH[@]}" >/dev/null 2>&1
ag_ok "best_effort + no Landlock: commands run" test -e "$W/abi0-be" -a -e "$W/abi0-be2"
ag_is "$(ag_audit_query 'sum(1 for x in r if x.get("event") == "sandbox")')" 1 \
    "best_effort says so once per session in the audit log"

ag_done
