#!/bin/bash
# REPL on a terminal (ssh -t): prompt user@host:cwd$, PS2 continuation,
# history in memory only, Ctrl-C reaches the command, exit N ends it.
# The terminal is a pty driven from python (tmux-free, deterministic).
. "$(dirname "$0")/lib.sh"
ag_setup

drive() {	# drive LINE...: type each line once the terminal asks for it, print
	# everything it showed.  Waits are for events (a prompt, a running
	# command, the end), bounded only against a hang.
	"$AG_PYTHON" - "$@" <<'EOF'
import os, pty, re, select, subprocess, sys, time
ssh = os.environ["AG_SSH_CMD"].split("\x1f")
user = os.environ["AG_USER"]
pid, fd = pty.fork()
if pid == 0:
    extra = [os.environ["DRIVE_CMD"]] if os.environ.get("DRIVE_CMD") else []
    os.execvp(ssh[0], ssh[:-1] + ["-tt", ssh[-1]] + extra)
out = b""
eof = False
def pump(until, limit=60):
    """read until until() holds, EOF, or the limit (a hang)"""
    global out, eof
    end = time.time() + limit
    while not eof and not until() and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                d = os.read(fd, 65536)
            except OSError:
                d = b""
            if not d:
                eof = True
            out += d
def prompt_shown():
    tail = out.replace(b"\r", b"")[-200:]
    return re.search(rb"(\$|>) $", tail) is not None
def running(name):
    return lambda: subprocess.run(["pgrep", "-u", user, "-x", name],
                                  stdout=subprocess.DEVNULL).returncode == 0
sleeping = running("sleep")
interactive = not os.environ.get("DRIVE_CMD")
if not interactive:
    pump(running(os.environ["DRIVE_CMD"].split()[0]))   # the command reads now
for line in sys.argv[1:]:
    data = line.encode().decode("unicode_escape").encode("latin-1")
    if data == b"\x03":
        pump(sleeping)          # ^C once the command runs
    elif interactive:
        mark = len(out)
        pump(prompt_shown)      # type at the prompt
    os.write(fd, data)
    if interactive and data != b"\x03":
        # the line was taken: something after it (echo, output, next prompt)
        before = len(out)
        pump(lambda: len(out) > before)
pump(lambda: False)             # to the end
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace").replace("\r", ""))
sys.stdout.write("\nSTATUS=%d\n" % os.waitstatus_to_exitcode(st))
EOF
}
export AG_SSH_CMD=$(IFS=$'\x1f'; echo "${AG_SSH[*]}") AG_USER
host=$(hostname -s)

out=$(drive 'cd /tmp\r' 'pwd\r' "echo 'a\r" "b'\r" 'false\r' 'echo "st=$?"\r' 'exit 4\r')
ag_like "$out" "^$AG_USER@$host:~\\$ " "tty_prompt_user_host_home"
ag_like "$out" "^$AG_USER@$host:/tmp\\$ pwd" "tty_prompt_follows_cwd"
ag_like "$out" "^> b'" "tty_ps2_continuation"
ag_like "$out" "^a$" "tty_continued_command_ran"
ag_like "$out" "^st=1$" "tty_status_carried"
ag_like "$out" "STATUS=4" "tty_bare_exit_status"

out=$(drive 'sleep 300\r' '\x03' 'echo "after=$?"\r' 'exit\r')
ag_like "$out" "^after=130$" "tty_ctrl_c_interrupts_command"
ag_ok "tty_ctrl_c_killed_the_command" ag_wait_until 30 sh -c "! pgrep -u '$AG_USER' -x sleep >/dev/null"

# history stays in memory: nothing new in the account's home
before=$(ls -A "/home/$AG_USER" | sort | tr '\n' ' ')
out=$(drive 'echo one\r' 'echo two\r' 'exit\r')
after=$(ls -A "/home/$AG_USER" | sort | tr '\n' ' ')
ag_is "$after" "$before" "tty_history_not_written_to_home"

# refused commands on a terminal: reason shown, session goes on
out=$(drive 'rm -rf /tmp/x\r' 'echo "st=$?"\r' 'exit\r')
ag_like "$out" "^agentgate: " "tty_denied_reason"
ag_like "$out" "^st=126$" "tty_denied_status"

# exec mode with a terminal (ssh -t host CMD): the command owns the
# terminal's foreground, so it can read from it
out=$(DRIVE_CMD='head -1' drive 'typed\r')
# (once echoed by the terminal, once printed by head)
ag_is "$(printf '%s\n' "$out" | grep -c '^typed$')" 2 "tty_exec_command_reads_terminal"
ag_like "$out" "STATUS=0" "tty_exec_status"

ag_done
