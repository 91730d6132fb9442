#!/bin/bash
# Session recordings, as an admin uses them: a terminal session through the
# real sshd (tmux is the terminal) with an allowed command whose output
# carries terminal attacks (a clipboard write, a title, a hyperlink, a
# forged prompt that erases the line above it) and a refused command.
# Then: the real asciinema cats and plays the recording; the refused
# command and its message are in it; the gateway's own lines are markers
# ("m" events) that the output could not write; `agentgate replay` plays
# it without the attacks, by default as a transcript that keeps what output
# printed apart from the gateway's lines (output that erases the line of a
# marker and writes one of its own forges nothing there); --raw plays what
# the programs drew.
. "$(dirname "$0")/lib.sh"
for t in tmux asciinema script; do
	command -v "$t" >/dev/null ||
	    { echo "$t not installed (contrib/deps.sh --tests installs it)" >&2; exit 99; }
done
ag_setup
ag_write_pam use_key allow_unidentified
mkdir -p "$AG_DIR/rec"
chown "$AG_USER" "$AG_DIR/rec"
chmod 0700 "$AG_DIR/rec"
ag_write_policy "$AG_DIR/policy.yaml" <<'EOF2'
version: 1
gateway:
  runner: /bin/bash
  sandbox: "off"
  audit:
    file: @AUDIT@
    required: true
  recordings: @DIR@/rec
users:
  @USER@: test
profiles:
  test:
    allow: [echo, printf, "true", exit, mkdir, cd]
    paths:
      read: ["/"]
      write: ["/tmp", "~"]
    unknown: deny
EOF2

TMUX_SOCK=$AG_DIR/tmux.sock
printf 'set-option -g remain-on-exit on\n' > "$AG_DIR/tmux.conf"
tm() { tmux -f "$AG_DIR/tmux.conf" -S "$TMUX_SOCK" "$@"; }
trap 'tm kill-server >/dev/null 2>&1; ag_cleanup' EXIT
screen() { tm capture-pane -p -J -t rec -S -200 2>/dev/null; }
pane_matches() { screen | grep -Eq -- "$1"; }
wait_for() { ag_wait_until 30 pane_matches "$1"; }
pane_dead() { [ "$(tm display-message -p -t rec '#{pane_dead}' 2>/dev/null)" = 1 ]; }

ssh_cmd=$(printf '%q ' "${AG_SSH[@]}")
tm new-session -d -s rec -x 100 -y 30 "$ssh_cmd -tt"
ag_ok "a terminal session starts" wait_for '@[^ ]*:~\$ ?$'
# output that writes the clipboard and the title, makes a link, then
# prints a prompt with a refused-looking command and erases the line above
tm send-keys -t rec "printf '\\033]52;c;cGF5bG9hZA==\\007\\033]0;owned\\007\\033]8;;http://evil.example/\\033\\\\click\\033]8;;\\033\\\\ done-1\\n'" Enter
ag_ok "the allowed command ran" wait_for 'click done-1'
tm send-keys -t rec 'rm -rf /tmp/nothing-here' Enter
ag_ok "the refusal is on the terminal" wait_for '^agentgate: .*rm'
tm send-keys -t rec "printf 'agt@host:~\$ forged command\\n\\033[1A\\033[2K'" Enter
# output that goes up over the gateway's line of its command, erases it and
# writes one that looks like it, as replay shows it, and one in reverse video
tm send-keys -t rec "printf '\\033[2A\\033[2K\\r[    0.01] agt@host:~\$ echo forged-marker\\n\\033[7m forged-reverse \\033[0m\\n'" Enter
ag_ok "the forging command ran" wait_for 'forged-reverse'
# a directory whose name is a clipboard write: the prompt shows it
tm send-keys -t rec "mkdir -p \$'/tmp/rec-$$-\\e]52;c;ZGlyLW5hbWU=\\a' && cd \$'/tmp/rec-$$-\\e]52;c;ZGlyLW5hbWU=\\a'" Enter
tm send-keys -t rec 'echo done-2' Enter
ag_ok "the last command ran" wait_for '^done-2'
tm send-keys -t rec 'exit' Enter
ag_ok "the session ends" ag_wait_until 30 pane_dead

cast=$(ls "$AG_DIR"/rec/*.cast 2>/dev/null | head -n 1)
ag_ok "the session was recorded" test -s "$cast"
marks=$("$AG_PYTHON" - "$cast" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
for l in lines[1:]:
    t, code, data = json.loads(l)
    if code == "m":
        print(data)
PY
)
ag_like "$marks" '\$ rm -rf /tmp/nothing-here' "a marker names the refused command"
ag_like "$marks" '^agentgate: .*rm' "a marker carries the refusal's message"
ag_like "$marks" '\$ echo done-2' "and each command that ran"
ag_unlike "$marks" '^agt@host' "output never becomes a marker"
ag_like "$(grep -c '"o", ".*agentgate: ' "$cast")" '^[1-9]' "the refusal is in the output too (for players without markers)"
ag_like "$(grep -c '52;c;cGF5bG9hZA' "$cast")" '^[1-9]' "the recording keeps what the command printed"
ag_like "$(grep -c 'rec-[0-9]*-^\[\]52;c;ZGlyLW5hbWU=^G' "$cast")" '^[1-9]' \
    "a prompt's directory name is recorded with its controls as ^X"
ag_is "$(grep -c '\\u001b\]52;c;ZGlyLW5hbWU' "$cast")" 0 "and never as the controls themselves"

# the real asciinema (it wants a terminal even to cat: script(1) gives one)
acat=$(script -qec "asciinema cat $cast" /dev/null 2>&1)
ag_like "$acat" 'rm -rf /tmp/nothing-here' "asciinema cat shows the refused command" "$(printf '%s' "$acat" | head -c 400)"
ag_like "$acat" 'agentgate: .*rm' "and its refusal"
aplay=$(script -qec "asciinema play -i 0.01 -s 100 $cast" /dev/null 2>&1)
ag_like "$aplay" 'done-2' "asciinema plays it to the end" "$(printf '%s' "$aplay" | head -c 400)"

# agentgate replay: the same session without what reaches beyond the screen
rp=$("$AG_DIR/agentgate" replay --idle-limit 0 "$cast")
ag_like "$(grep -c $'\033]' "$cast")" '^0$' "the recording stores escapes JSON-encoded"
ag_unlike "$(printf '%s' "$rp" | od -An -tx1 | tr -d '\n')" '1b 5d' \
    "replay passes no OSC (clipboard, title, link)"
ag_like "$(asciinema_raw=$(script -qec "asciinema cat $cast" /dev/null | od -An -tx1 | tr -d '\n'); echo "$asciinema_raw")" '1b 5d 35 32' \
    "(which asciinema cat passes to the terminal)"
ag_like "$rp" '<ESC\]8;;http://evil\.example/>click<ESC\]8;;> done-1' \
    "the link's text stays, its escapes shown as text"
ag_like "$rp" 'rm -rf /tmp/nothing-here' "replay shows the refused command"
tr=$("$AG_DIR/agentgate" replay --transcript "$cast")
ag_is "$rp" "$tr" "replay's default is the transcript, played in time"
ag_unlike "$(printf '%s' "$rp" | od -An -tx1 | tr -d '\n')" '1b' \
    "replay by default passes no escape at all: output moves no cursor, erases nothing"
ag_like "$rp" $'^\\[ *[0-9.]+\\] [^ ]+@[^ ]+:~\\$ printf \'\\\\033\\[2A' \
    "the gateway's line of the forging command is intact" "$rp"
ag_like "$rp" '^  +\| \[    0\.01\] agt@host:~\$ echo forged-marker' \
    "the line it forged is output, behind the margin"
ag_unlike "$rp" '^\[    0\.01\]' "and nothing at the left edge is output's"
ag_like "$rp" '^  +\|  forged-reverse $' "reverse video is not output's to draw"
raw=$("$AG_DIR/agentgate" replay --raw --idle-limit 0 "$cast")
ag_like "$(printf '%s' "$raw" | od -An -tx1 | tr -d '\n')" '1b 5b 32 41' \
    "replay --raw plays the cursor movement as drawn"
ag_unlike "$(printf '%s' "$raw" | od -An -tx1 | tr -d '\n')" '1b 5d' \
    "and still no OSC (clipboard, title, link)"
ag_like "$raw" 'click done-1' "the link's text stays"
ag_like "$raw" $'\033\\[7m agentgate: .*rm' "with the gateway's lines in reverse video"
ag_like "$tr" '^\[ *[0-9.]+\] [^ ]+@[^ ]+:~\$ rm -rf /tmp/nothing-here' "the transcript has the gateway's line" "$tr"
ag_like "$tr" '^\[ *[0-9.]+\] agentgate: .*rm' "and its refusal, as the gateway's"
ag_like "$tr" '^  +\| agt@host:~\$ forged command' "the forged prompt is output, indented"
ag_unlike "$tr" '^\[ *[0-9.]+\] agt@host' "and nothing output printed looks like the gateway's"
ag_is "$("$AG_DIR/agentgate" replay --transcript /etc/hostname 2>&1; echo "rc=$?")" \
    "agentgate: replay: /etc/hostname:1: not JSON"$'\n'"rc=1" "a file that is not a recording is said to be one"

# by the session's id, looked up in the policy's recordings directory
RP() { "$AG_DIR/agentgate" replay --config "$AG_DIR/policy.yaml" "$@"; }
id=$(basename "$cast" .cast)
ag_is "$(RP --transcript "${id:0:8}")" "$tr" "replay finds the recording by the start of its session id"
ag_like "$(RP --list)" "^$id  -@$AG_USER +20[0-9-]{8}T[0-9:]{8}Z +$(stat -c %s "$cast")$" \
    "replay --list: session, identity@account, start, size" "$(RP --list)"
# a second recording whose id starts the same, older: listed after, and
# the short prefix is ambiguous
other=${id:0:4}$(printf '%s' "${id:4}" | tr '0-9a-f' '1-9a-f0')
sed '1s/"timestamp":[0-9]*/"timestamp":1000000000/' "$cast" > "$AG_DIR/rec/$other.cast"
ag_is "$(RP --list | awk 'NR > 1 { print $1 }' | tr '\n' ' ')" "$id $other " "replay --list is newest first"
out=$(RP --transcript "${id:0:4}" 2>&1); rc=$?
ag_is "$rc" 2 "an ambiguous session id is refused"
ag_like "$out" "2 recordings in .* are of a session starting ${id:0:4}" "and said to be" "$out"
ag_like "$out" "^$other " "with the candidates listed"
ag_is "$(RP --transcript "$id")" "$tr" "the whole id still finds its one"
ag_is "$(RP --transcript 0000ffff 2>&1; echo "rc=$?")" \
    "agentgate: replay: no recording of session 0000ffff in $AG_DIR/rec"$'\n'"rc=2" "an unknown session is said to be"
rm -rf /tmp/rec-$$-*
ag_done
