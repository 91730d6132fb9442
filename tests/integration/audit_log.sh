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
ag_is "$(q 'all(x["client"].startswith("127.") for x in r)')" yes "audit_client_address"
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

# agentgate audit show: the policy's log by default, one line a record
AS() { "$AG_DIR/agentgate" audit show --config "$AG_DIR/policy.yaml" "$@"; }
sh_all=$(AS)
ag_is "$(printf '%s\n' "$sh_all" | wc -l)" "$(wc -l < "$AG_AUDIT")" "show_one_line_per_record"
ag_like "$sh_all" "^20[0-9-]{8}T[0-9:]{8}Z  [0-9a-f]{8}  -@$AG_USER +command +deny +rm -rf /tmp/nothing$" \
    "show_time_session_who_event_decision_command" "$sh_all"
ag_like "$sh_all" 'command +deny +rm a\\u202eb \\u009b31m \\u2066c$' "show_escapes_shown_as_text"
ag_unlike "$sh_all" "$(printf '\342\200\256')" "show_passes_no_raw_bidi_control"
ag_is "$(AS --decision deny --event command | awk '{print $4, $5}' | sort | uniq -c | tr -s ' ')" \
    " $(q 'len([x for x in r if x["event"]=="command" and x["decision"]=="deny"])') command deny" \
    "show_decision_and_event_filter"
sess=$(q '[x["session"] for x in r if x["event"]=="command" and x["command"]=="echo audited"][0]')
ag_is "$(AS --session "${sess:0:6}" | awk '{print $4}' | tr '\n' ' ')" \
    "session_start command_start command session_end " "show_session_prefix_filter"
ag_is "$(AS --session "${sess:0:6}" --json)" "$(grep "\"session\":\"$sess\"" "$AG_AUDIT")" "show_json_is_the_records_unchanged"
ag_is "$(AS --user "$AG_USER" | wc -l)" "$(wc -l < "$AG_AUDIT")" "show_user_filter"
ag_is "$(AS --user nobody-such | wc -l)" 0 "show_user_filter_excludes"
ag_is "$(AS --since 1h | wc -l)" "$(wc -l < "$AG_AUDIT")" "show_relative_since"
ag_is "$(AS --until 1h | wc -l)" 0 "show_relative_until"
out=$(AS --since yesterday 2>&1); rc=$?
ag_is "$rc" 2 "show_bad_since_exits_2"
ag_like "$out" "^agentgate: audit show: --since 'yesterday': not a time" "show_bad_since_says_why"
ag_is "$(AS --decision maybe 2>&1; echo "rc=$?")" \
    "agentgate: audit show: --decision 'maybe': give allow, deny, ask-allow, ask-deny or would_deny"$'\n'"rc=2" \
    "show_bad_decision"

# records of other identities and days, in a file given by name: the
# identity filter, absolute times, and an escape in a command as text
"$AG_PYTHON" - "$AG_DIR/other.jsonl" <<'PY'
import json, sys
s = "0123456789abcdef0123456789abcdef"
recs = [
    {"ts": "2026-11-27T09:00:00.000Z", "event": "command", "session": s, "user": "agent",
     "identity": "alice", "command": "printf '\x1b]52;c;eA==\x07'", "decision": "allow", "exit": 0},
    {"ts": "2026-11-28T10:00:00.000Z", "event": "command", "session": "f" + s[1:], "user": "agent",
     "identity": "bob", "command": "rm -rf /", "decision": "deny", "reason": "no"},
    {"ts": "2026-11-28T11:30:00.000Z", "event": "command", "session": "e" + s[1:], "user": "agent",
     "identity": "bob", "command": "ask me", "decision": "ask-allow", "exit": 0},
]
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in recs))
PY
OS() { "$AG_DIR/agentgate" audit show "$@" "$AG_DIR/other.jsonl"; }
ag_is "$(OS --identity bob | awk '{print $3}' | tr '\n' ' ')" "bob@agent bob@agent " "show_identity_filter"
ag_is "$(OS --since 2026-11-28 --until 2026-11-28T11:00 | awk '{print $1}')" "2026-11-28T10:00:00Z" \
    "show_since_until_absolute"
ag_is "$(OS --since 2026-11-28T11:30:00Z | awk '{print $5}')" "ask-allow" "show_since_is_inclusive"
ag_is "$(OS --decision ask-allow --identity bob | wc -l)" 1 "show_filters_combine"
ag_like "$(OS --identity alice)" "printf '\\\\x1b\]52;c;eA==\\\\x07'$" "show_escape_in_command_as_text"
ag_unlike "$(OS --identity alice | od -An -tx1 | tr -d '\n')" ' 1b ' "show_writes_no_escape_byte"

# the log is root's and the audit group's to read; others are told why
ag_setgid_gateway
chgrp "$G" "$AG_AUDIT" && chmod 0640 "$AG_AUDIT"
gid=$(getent group "$G" | cut -d: -f3)
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$AG_DIR/agentgate" audit show "$AG_AUDIT" 2>&1); rc=$?
ag_is "$rc" 2 "show_others_cannot_read_the_log"
ag_like "$out" "$AG_AUDIT: Permission denied" "show_says_permission_denied"
ag_is "$(setpriv --reuid=65534 --regid=65534 --groups="$gid" "$AG_DIR/agentgate" audit show "$AG_AUDIT" | wc -l)" \
    "$(wc -l < "$AG_AUDIT")" "show_the_audit_group_reads_the_log"

ag_done
