#!/bin/bash
# session_runner.sh - the session's runner process (issue 38): a sandboxed
# session's commands are forked from one process that entered the boundary
# once.  Through the real sshd, in the developer tier (the exec supervisor
# too): it is used for every command of a session, holds no capability
# and is not dumpable, no command can see or signal it, each runner is the
# gateway's own child in the session's PID namespace, a new boundary (PATH
# changed) gets a new one, one that died is replaced, none outlives its
# session; and commands behave as before (status, signals, stdin, cwd,
# background jobs, a refused exec).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_need_sandbox_lib

W=/home/$AG_USER/work
install -d -o "$AG_USER" -g "$AG_USER" "$W"
ag_sandboxed_policy dev <<'EOF'
  dev:
    tier: developer
    allow: [ls, cat, echo, ps, sh, bash, sleep, "true", head, grep, kill, read, wait, export, cd, exit, printf]
    deny: [python3]
    unknown: allow
    paths: { read: ["/"], write: ["~/work"], exec: ["~/work"] }
    env:
      set: { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: C.UTF-8 }
EOF

runners() {	# the account's session runner processes, one pid a line
	pgrep -u "$AG_USER" -f -- '^agentgate-runner --session-runner$' || true
}

# ---- exec mode: a command, its status, its signal ----------------------------
ag_run x 'echo "in $PWD"; exit 3'
ag_is "$x_rc" 3 "exec: a command's status comes back"
ag_is "$x_out" "in /home/$AG_USER" "exec: the command runs in the account's home"
ag_run x 'sh -c '\''kill -TERM $$'\'''
ag_is "$x_rc" 143 "exec: a command killed by a signal is seen as such"
ag_run x 'printf "a\nb\n" | cat | grep b; true & wait $!; echo "waited $?"'
ag_is "$x_out" "$(printf 'b\nwaited 0')" "exec: pipes and a background job within the command" "$x_err"
x_out=$(printf 'from stdin\n' | ag_ssh 'read -r v; echo "read [$v]"')
ag_is "$x_out" "read [from stdin]" "exec: a command reads the session's stdin"
ag_run x 'python3 -c "print(1)"'
ag_unlike "$x_out" "^1$" "exec: a denied program does not run"
ag_is "$(runners)" "" "exec: no runner process outlives its session"

# System V IPC is the session's own (red team 21, H5): the account's host
# segment is not there, and what a session makes is gone with it
HOSTSHM=$(runuser -u "$AG_USER" -- ipcmk -M 4096 | awk '{ print $NF }')
ag_run x 'ipcs -m | grep -c "^0x"; ipcmk -M 4096 >/dev/null && echo made'
ag_is "$x_out" "0
made" "a session sees none of the host's System V segments and makes its own"
ag_is "$(ipcs -m | awk -v u="$AG_USER" '$3 == u' | wc -l)" 1 \
    "the session's segment is gone with it; the account's host segment stays"
ipcrm -m "$HOSTSHM" 2>/dev/null

# ---- a REPL session, driven line by line ---------------------------------------
IN=$AG_DIR/in.fifo
OUT=$AG_DIR/repl.out
mkfifo -m 0600 "$IN"
mkfifo -m 0666 "$AG_DIR/hold"
ag_ssh <"$IN" >"$OUT" 2>&1 &
REPL=$!
exec 7>"$IN"
line() { printf '%s\n' "$1" >&7; }
seen() { grep -qx -- "$1" "$OUT"; }

line 'echo one'
ag_wait_until 60 seen one || ag_fail "the REPL answers its first line" "$(cat "$OUT")"
Z1=$(runners)
ag_is "$(printf '%s\n' "$Z1" | grep -c .)" 1 "one runner process for the session"
ag_like "$(grep '^CapEff:' /proc/"$Z1"/status)" "0000000000000000$" \
    "the runner process holds no capability"
ag_like "$(grep '^CapPrm:' /proc/"$Z1"/status)" "0000000000000000$" \
    "  not even a permitted one"
ag_is "$(stat -c %u /proc/"$Z1"/mem)" 0 "the runner process is not dumpable (its /proc is root's)"
ag_unlike "$(tr '\0' '\n' < /proc/"$Z1"/environ 2>/dev/null)" "." \
    "its environment is empty"
ag_ok "its children are born in another PID namespace" \
    test "$(readlink /proc/"$Z1"/ns/pid)" != "$(readlink /proc/"$Z1"/ns/pid_for_children)"
GW=$(awk '/^PPid:/ { print $2 }' /proc/"$Z1"/status)

# a command held on a fifo: its runner is the gateway's child, not the
# runner process's, and lives in the session's PID namespace
line "cat $AG_DIR/hold; echo after-hold"
ag_wait_until 60 pgrep -u "$AG_USER" -x cat >/dev/null
CAT=$(pgrep -u "$AG_USER" -x cat | head -1)
RB=$(awk '/^PPid:/ { print $2 }' /proc/"$CAT"/status)
ag_is "$(awk '/^PPid:/ { print $2 }' /proc/"$RB"/status)" "$GW" \
    "a command's runner shell is the gateway's child"
ag_like "$(grep '^NSpid:' /proc/"$RB"/status)" "^NSpid:[[:space:]]+[0-9]+[[:space:]]+[0-9]+$" \
    "  born in the session's PID namespace"
echo released > "$AG_DIR/hold"
ag_wait_until 60 seen after-hold || ag_fail "the held command ends" "$(cat "$OUT")"

# what a command can reach of it: nothing
line "kill -0 $Z1 2>&1 | grep -c 'No such process'; ls /proc/$Z1 >/dev/null 2>&1 || echo no-proc-$Z1"
ag_wait_until 60 seen "no-proc-$Z1" || true
ag_ok "a command cannot name the runner process" seen "no-proc-$Z1"
line "kill -0 $GW 2>&1 | grep -c 'No such process'; echo checked-gw"
ag_wait_until 60 seen checked-gw
line "ps -eo comm= | grep -c agentgate-run; echo ps-done"
ag_wait_until 60 seen ps-done
ag_is "$(grep -B1 -x ps-done "$OUT" | head -1)" 0 \
    "ps in the session does not show the runner process"
line 'kill -0 1 2>/dev/null && echo signalled-init || echo init-refused'
ag_wait_until 60 seen init-refused || ag_fail "a command cannot signal the namespace's init" \
    "$(tail -3 "$OUT")"
ag_ok "  (refused)" seen init-refused

# the same process serves the next commands
line 'echo two; echo three'
ag_wait_until 60 seen three
ag_is "$(runners)" "$Z1" "the next commands are forked from the same runner process"
line 'cd work && echo "now $PWD"'
ag_wait_until 60 seen "now $W"
ag_ok "cd is kept, as in a shell" seen "now $W"

# a new boundary (PATH changed) gets a new runner process; the old one goes
line 'export PATH=/usr/bin:/bin; echo path-set'
ag_wait_until 60 seen path-set
line 'echo four'
ag_wait_until 60 seen four
Z2=$(runners)
ag_is "$(printf '%s\n' "$Z2" | grep -c .)" 1 "after PATH changed: one runner process"
ag_ok "  a new one" test "$Z2" != "$Z1"
ag_ok "  the old one is gone" sh -c "! kill -0 $Z1 2>/dev/null"

# one that died is replaced, and the command still runs
kill -KILL "$Z2"
line 'echo five'
ag_wait_until 60 seen five || ag_fail "a command runs after the runner process died" \
    "$(tail -3 "$OUT")"
ag_ok "a command runs after the runner process was killed" seen five
Z3=$(runners)
ag_ok "  from a new runner process" test -n "$Z3" -a "$Z3" != "$Z2"

line 'exit'
exec 7>&-
wait "$REPL"
ag_wait_until 30 sh -c "[ -z \"\$(pgrep -u $AG_USER -f -- '^agentgate-runner --session-runner$')\" ]"
ag_is "$(runners)" "" "the runner process ends with its session"

# ---- the audit still has every command -------------------------------------------
ag_like "$(grep -c '"event":"command"' "$AG_DIR/log/audit.jsonl")" "^[1-9][0-9]*$" \
    "commands are audited"
out=$("$AG_DIR/agentgate" audit verify "$AG_DIR/log/audit.jsonl" 2>&1)
ag_is "$?" 0 "the audit chain verifies" "$out"

cp "$OUT" /tmp/session_runner.out.debug
ag_done
