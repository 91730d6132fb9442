#!/bin/bash
# The audit log says what happened: one JSON object per line (checked with
# python's json), a command record per decision with its result, and for
# each command that runs a write-ahead command_start before it.
. "$(dirname "$0")/lib.sh"
ag_setup

ag_run a 'echo audited'
ag_run b 'rm -rf /tmp/nothing'
printf 'cd /tmp\nfalse\nexport X=1; cd /usr\nexit 3\n' | ag_ssh >/dev/null 2>&1

q() { ag_audit_query "$1"; }
ag_is "$(q 'len(r)')" 17 "audit_record_count"
ag_is "$(q '[x["event"] for x in r]')" \
    "['session_start', 'command_start', 'command', 'session_end', 'session_start', 'command', 'session_end', 'session_start', 'command_start', 'command', 'command_start', 'command', 'command_start', 'command', 'command_start', 'command', 'session_end']" \
    "audit_event_sequence"
# the write-ahead record and the result share the session's seq and the verdict
ag_is "$(q '[(x["seq"], x["command"], x["decision"]) for x in r if x["event"]=="command_start"] == [(x["seq"], x["command"], x["decision"]) for x in r if x["event"]=="command" and "seq" in x]')" \
    yes "audit_command_start_matches_its_command"
ag_is "$(q '[x.get("seq") for x in r if x["event"]=="command"]')" "[1, None, 1, 2, 3, 4]" "audit_seq_per_session"
ag_is "$(q 'all(x["user"] == "'"$AG_USER"'" and x["profile"] == "test" for x in r)')" yes "audit_user_and_profile"
ag_is "$(q 'all(x["client"].startswith("127.0.0.1:") for x in r)')" yes "audit_client_address"
ag_is "$(q 'all(len(x["session"]) == 32 for x in r)')" yes "audit_session_id"
ag_is "$(q 'len({x["session"] for x in r})')" 3 "audit_one_id_per_session"
ag_is "$(q 'all(x["ts"].endswith("Z") and len(x["ts"]) == 24 for x in r)')" yes "audit_rfc3339_ms_timestamps"
ag_is "$(q '[(x["mode"]) for x in r if x["event"]=="session_start"]')" "['exec', 'exec', 'repl']" "audit_modes"

ag_is "$(q '[ (x["command"], x["decision"], x.get("exit")) for x in r if x["event"]=="command"]')" \
    "[('echo audited', 'allow', 0), ('rm -rf /tmp/nothing', 'deny', None), ('cd /tmp', 'allow', 0), ('false', 'allow', 1), ('export X=1; cd /usr', 'allow', 0), ('exit 3', 'allow', 3)]" \
    "audit_commands_decisions_and_exits"
ag_is "$(q '[x for x in r if x["event"]=="command"][1]["reason"] != ""')" yes "audit_deny_has_reason"
ag_is "$(q '[x for x in r if x["event"]=="command"][1].get("rule") is not None')" yes "audit_deny_has_rule"
ag_is "$(q '[(x["cwd"], x["cwd_after"]) for x in r if x["event"]=="command" and x["decision"]=="allow"][1:]')" \
    "[('/home/$AG_USER', '/tmp'), ('/tmp', '/tmp'), ('/tmp', '/usr'), ('/usr', '/usr')]" "audit_cwd_and_cwd_after"
ag_is "$(q '[x["bytes_out"] for x in r if x["event"]=="command" and x["decision"]=="allow"][0]')" 8 "audit_bytes_out"
ag_is "$(q 'all(isinstance(x["duration_ms"], int) for x in r if x.get("exit") is not None)')" yes "audit_duration"
ag_is "$(q '[x["exit"] for x in r if x["event"]=="session_end"]')" "[0, 126, 3]" "audit_session_end_status"

# the file is the account's, 0600, in a directory no one else can write
ag_is "$(stat -c '%a %U' "$AG_AUDIT")" "600 $AG_USER" "audit_file_mode"

# a command with bytes that are not UTF-8 still gives valid JSON
ag_run u $'echo \xff\xfe'
ag_is "$(q '"\ufffd" in [x for x in r if x["event"]=="command"][-1]["command"]')" yes "audit_invalid_utf8_replaced"

# C1 and bidirectional controls in a command are escapes in the file (a
# terminal showing the log shows them, not obeys them), the same string to
# a JSON reader; the refusal message escapes them too
ag_run z $'rm a\u202eb \u009b31m \u2066c'
ag_ok "audit_bidi_and_c1_escaped_in_the_file" grep -qF 'rm a\u202eb \u009b31m \u2066c' "$AG_AUDIT"
ag_ok "audit_bidi_and_c1_not_raw_in_the_file" sh -c "! grep -q \"\$(printf '\342\200\256\|\302\233\|\342\201\246')\" '$AG_AUDIT'"
ag_is "$(q '[x["command"] for x in r if x["event"]=="command"][-1] == "rm a\u202eb \u009b31m \u2066c"')" yes \
    "audit_bidi_and_c1_decode_to_the_command"
ag_run z $'echo x > /etc/a\u202eb'
ag_like "$z_err" "writing to '/etc/a\\\\u202eb'" "refusal_message_escapes_bidi"

# signal deaths are recorded
ag_run k 'kill -9 $$'
ag_is "$(q '[(x.get("exit"), x.get("signal")) for x in r if x["event"]=="command"][-1]')" "(137, 9)" "audit_signal"

ag_done
