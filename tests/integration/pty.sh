#!/bin/bash
# PTY sessions through the real sshd, with tmux as the terminal: the
# command's PTY has the client's size, window changes reach a running
# command and the next one, ^C ends the command and not the REPL, a crash or
# a timeout leaves the terminal cooked, exec mode with -t uses a PTY too,
# and the session is recorded as asciicast v2 (header, output, resize).
# Every step waits for what the terminal shows or for a process to appear
# or go; the main session's limits are far beyond the test, and the timeout
# is tested in a session of its own (a second key, a profile with 4 s).
. "$(dirname "$0")/lib.sh"
if ! command -v tmux >/dev/null; then
	echo "SKIP: tmux not installed"
	exit 77
fi
ag_setup
# keys only: with a terminal the token prompt would otherwise come first
ag_write_pam use_key allow_unidentified
# a second key, identified as "short": the profile with a 4 s timeout
ssh-keygen -q -t ed25519 -N '' -f "$AG_DIR/short" -C agentgate-short || exit 99
cat "$AG_DIR/short.pub" >> "$AG_DIR/keys/$AG_USER"
SHORT_KEY=$(cut -d' ' -f1,2 "$AG_DIR/short.pub")

mkdir -p "$AG_DIR/rec"
chown "$AG_USER" "$AG_DIR/rec"
chmod 0700 "$AG_DIR/rec"
sed "s|@SHORT_KEY@|$SHORT_KEY|" <<'EOF' | ag_write_policy "$AG_DIR/policy.yaml"
version: 1
gateway:
  runner: /bin/bash
  sandbox: "off"
  audit:
    file: @AUDIT@
    required: true
  recordings: @DIR@/rec
identities:
  - { name: short, keys: ["@SHORT_KEY@"], profile: short }
users:
  @USER@: test
profiles:
  test:
    allow: [echo, stty, sleep, seq, kill, trap, "true", cat, tty, exit, printf]
    paths:
      read: ["/"]
      write: ["/tmp", "~"]
    limits:
      timeout: 300
      idle_timeout: 600
    output: { redact: true }
    unknown: deny
  short:
    allow: [echo, stty, sleep, seq, kill, trap, "true", cat, tty, exit]
    paths:
      read: ["/"]
      write: ["/tmp", "~"]
    limits:
      timeout: 4
      idle_timeout: 600
    unknown: deny
EOF

TMUX_SOCK=$AG_DIR/tmux.sock
# a pane stays (dead) when its program ends, so what it showed can still be
# read, for as long as the test needs, not for a fixed while
printf 'set-option -g remain-on-exit on\n' > "$AG_DIR/tmux.conf"
tm() { tmux -f "$AG_DIR/tmux.conf" -S "$TMUX_SOCK" "$@"; }
cleanup_tmux() { tm kill-server >/dev/null 2>&1; }
trap 'cleanup_tmux; ag_cleanup' EXIT

# screen: the pane's text, wrapped lines joined
screen() { tm capture-pane -p -J -t "$1" -S -200 2>/dev/null; }

# wait_for TARGET EXTENDED-REGEX [SECONDS]: 0 once the pane shows a match
# (the bound, 30 s by default, only fires when the text never comes)
pane_matches() { screen "$1" | grep -Eq -- "$2"; }
wait_for() { ag_wait_until "${3:-30}" pane_matches "$1" "$2"; }

# count TARGET EXTENDED-REGEX: how many lines of the pane match
count() { screen "$1" | grep -Ec -- "$2"; }

# prompts TARGET: how many prompts the pane has shown; more_prompts TARGET N
prompts() { screen "$1" | grep -Ec '@[^ ]*:~\$'; }
more_prompts() { [ "$(prompts "$1")" -gt "$2" ]; }

# modes TARGET: the local modes line of the latest `stty -a` ("isig icanon
# iexten echo ...")
modes() { screen "$1" | grep -E '(^| )-?iexten( |$)' | tail -n 1; }

ssh_cmd=$(printf '%q ' "${AG_SSH[@]}")
tm new-session -d -s repl -x 100 -y 30 "$ssh_cmd -tt"

ag_ok "prompt_appears" wait_for repl '@[^ ]*:~\$ ?$'

tm send-keys -t repl 'stty size' Enter
ag_ok "stty_size_is_the_client_size" wait_for repl '^30 100\s*$'

# the command runs until it sees the new size itself: no window to miss
tm send-keys -t repl "trap 'stty size' WINCH; echo re''ady; while [ \"\$(stty size)\" = '30 100' ]; do sleep 0.1; done; echo fin''ished" Enter
ag_ok "winch_command_started" wait_for repl '^ready'
tm resize-window -t repl -x 120 -y 40
ag_ok "running_command_sees_the_new_size" wait_for repl '^40 120\s*$'
ag_ok "winch_command_ends" wait_for repl '^finished'
tm send-keys -t repl 'stty size' Enter
ag_ok "stty_size_after_resize" wait_for repl '\$ stty size'
two_sizes() { [ "$(count repl '^40 120\s*$')" -ge 2 ]; }
ag_ok "next_command_has_the_new_size" ag_wait_until 30 two_sizes

# typeahead: a line typed while a command runs, which the command never
# reads, is the next command once it ends (as in a shell).  The command
# waits on a fifo the test opens only once the terminal has echoed the line.
mkfifo -m 0666 "$AG_DIR/ta.fifo"
chmod 0666 "$AG_DIR/ta.fifo"
tm send-keys -t repl "cat $AG_DIR/ta.fifo; echo ta''-done" Enter
ag_wait_until 30 pgrep -u "$AG_USER" -x cat >/dev/null
tm send-keys -t repl 'echo typed-$((6*7))' Enter
wait_for repl '^echo typed-\$\(\(6\*7\)\)'
timeout 60 sh -c 'echo released > "$1"' _ "$AG_DIR/ta.fifo"
ag_ok "typeahead_command_ends" wait_for repl '^ta-done'
ag_ok "typeahead_runs_at_the_next_prompt" wait_for repl '^typed-42'
# lines typed in quick succession: each arrives while the one before it
# runs or ends, and none is lost between a command's end and the prompt
for i in $(seq 1 20); do tm send-keys -t repl "echo b''urst-$i" Enter; done
ag_ok "typeahead_burst_last_line_runs" wait_for repl '^burst-20\s*$'
ag_is "$(count repl '^burst-([1-9]|1[0-9]|20)\s*$')" 20 "typeahead_burst_every_line_runs_once"

# output.redact in a terminal: the token is put together by the command
# (the typed line shows only its pieces), the screen shows the mark
tm send-keys -t repl "printf 'tok=%s%s\\n' ghp_0123456789abcdefghij ABCDEFGHIJ012345" Enter
ag_ok "pty_output_redacted" wait_for repl '^tok=\[REDACTED\]'
ag_ok "pty_token_never_on_screen" sh -c "! tmux -f '$AG_DIR/tmux.conf' -S '$TMUX_SOCK' capture-pane -p -J -t repl -S -200 | grep -q ghp_0123456789abcdefghijABCDEFGHIJ012345"
# a prompt without a newline still shows while the program waits
tm send-keys -t repl "printf 'name? '; cat $AG_DIR/ta.fifo; echo" Enter
ag_ok "pty_partial_line_shown_while_waiting" wait_for repl '^name\? *$'
timeout 60 sh -c 'echo answered > "$1"' _ "$AG_DIR/ta.fifo"
ag_ok "pty_prompted_command_ends" wait_for repl '^name\? answered'

# ^C goes to the command, the REPL lives on (the command would run 100 s,
# against a 300 s limit: only the ^C ends it)
tm send-keys -t repl 'sleep 100' Enter
ag_wait_until 30 pgrep -u "$AG_USER" -x sleep >/dev/null	# running, not starting
tm send-keys -t repl C-c
# typed right after ^C: must reach the prompt, not the dying command
tm send-keys -t repl 'echo alive-$((6*7))' Enter
ag_ok "ctrl_c_interrupts_sleep_and_repl_survives" wait_for repl '^alive-42'
ag_ok "ctrl_c_killed_the_command" ag_wait_until 30 sh -c "! pgrep -u '$AG_USER' -x sleep >/dev/null"

# ^Z is a byte, not SIGTSTP: the command is not stopped.  It runs a sleep
# the test ends once the terminal has taken the ^Z; a stopped command would
# never go on to its echo.
tm send-keys -t repl 'sleep 100; echo z''-done' Enter
ag_wait_until 30 pgrep -u "$AG_USER" -x sleep >/dev/null
tm send-keys -t repl C-z
# (the line discipline echoes the byte as "^Z")
ag_ok "ctrl_z_reaches_the_terminal" wait_for repl '^\^Z'
not_stopped() {
	local p
	p=$(pgrep -u "$AG_USER" -x sleep) || return 1
	! ps -o stat= -p "$p" | grep -q T
}
ag_ok "ctrl_z_does_not_stop_the_command" not_stopped
pkill -TERM -u "$AG_USER" -x sleep
ag_ok "ctrl_z_leaves_the_command_running" wait_for repl '^(\^Z)?z-done'

# a command that makes its terminal raw and then crashes
n=$(prompts repl)
tm send-keys -t repl 'stty raw -echo; kill -SEGV $$' Enter
ag_wait_until 30 more_prompts repl "$n"	# the REPL is back after the crash
tm send-keys -t repl 'stty -a; echo after''crash' Enter
ag_ok "repl_usable_after_crash" wait_for repl '^aftercrash'
ag_like "$(modes repl)" '(^| )icanon( |$)' "terminal_cooked_after_crash_icanon"
ag_like "$(modes repl)" '(^| )echo( |$)' "terminal_cooked_after_crash_echo"

screen repl > "$AG_DIR/screen.txt"
tm send-keys -t repl 'exit' Enter
# the recording is complete once the session has ended
ended() { [ "$(ag_audit_query 'len([x for x in r if x["event"]=="session_end" and x.get("recording")])')" -ge 1 ]; }
ag_wait_until 30 ended

# ---- the recording ----------------------------------------------------------
rec=$(ls "$AG_DIR"/rec/*.cast 2>/dev/null | head -n 1)
ag_ok "recording_file_exists" test -n "$rec"
ag_is "$(stat -c %a "$rec" 2>/dev/null)" 600 "recording_mode_0600"
ag_ok "recording_holds_the_mark_not_the_token" sh -c \
    "grep -q 'REDACTED' '$rec' && ! grep -q ghp_0123456789abcdefghijABCDEFGHIJ012345 '$rec'"
verdict=$("$AG_PYTHON" - "$rec" <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
h = json.loads(lines[0])
ev = [json.loads(l) for l in lines[1:]]
out = "".join(e[2] for e in ev if e[1] == "o")
checks = [
    h.get("version") == 2,
    (h.get("width"), h.get("height")) == (100, 30),
    isinstance(h.get("timestamp"), int),
    "TERM" in h.get("env", {}),
    len(h.get("agentgate_session", "")) > 0,
    any(e[1] == "r" and e[2] == "120x40" for e in ev),
    "ready" in out and "40 120" in out,
    all(isinstance(e[0], float) for e in ev),
    [e[0] for e in ev] == sorted(e[0] for e in ev),
    not any(e[1] == "i" for e in ev),
]
print("".join("1" if c else "0" for c in checks))
EOF
)
ag_is "$verdict" "1111111111" "recording_replays_with_header_output_and_resize"
ag_is "$(ag_audit_query '[x.get("recording") for x in r if x["event"]=="session_end"][:1]')" \
    "['$rec']" "session_end_names_the_recording"

# ---- the timeout inside a PTY: killed, message, terminal cooked again ----------
# (the "short" profile: 4 s against a command that would run 300 s)
short_cmd=$(printf '%q ' "${AG_SSH[@]}" | sed "s|$(printf '%q' "$AG_DIR/client")|$(printf '%q' "$AG_DIR/short")|")
tm new-session -d -s tmo -x 100 -y 30 "$short_cmd -tt"
ag_ok "short_profile_prompt_appears" wait_for tmo '@[^ ]*:~\$ ?$'
n=$(prompts tmo)
tm send-keys -t tmo 'stty raw -echo; sleep 300' Enter
ag_ok "pty_timeout_message" wait_for tmo 'timed out after 4 s' 60
ag_wait_until 30 more_prompts tmo "$n"	# the REPL is back after the timeout
tm send-keys -t tmo 'echo rc=$?; stty -a; echo after''timeout' Enter
ag_ok "repl_usable_after_timeout" wait_for tmo '^aftertimeout'
ag_ok "timeout_status_124" wait_for tmo '^rc=124'
ag_like "$(modes tmo)" '(^| )icanon( |$)' "terminal_cooked_after_timeout"
ag_like "$(modes tmo)" '(^| )echo( |$)' "terminal_echo_after_timeout"
ag_ok "timeout_killed_the_command" ag_wait_until 30 sh -c "! pgrep -u '$AG_USER' -x sleep >/dev/null"
screen tmo > "$AG_DIR/screen-tmo.txt"

# ---- exec mode with a terminal ------------------------------------------------
tm new-session -d -s exec -x 90 -y 20 "$ssh_cmd -tt 'stty size; tty'"
ag_ok "exec_with_tty_has_the_client_size" wait_for exec '^20 90\s*$'
ag_ok "exec_with_tty_runs_in_a_pty" wait_for exec '^/dev/pts/'

if [ "$AG_FAIL" -ne 0 ]; then
	sed 's/^/# screen: /' "$AG_DIR/screen.txt"
	sed 's/^/# timeout screen: /' "$AG_DIR/screen-tmo.txt"
fi
ag_done
