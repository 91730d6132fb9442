#!/bin/bash
# admin_ops.sh - what an admin does with several agents on one account,
# through the real sshd and the gateway installed set-group-ID as make
# install sets it up:
#   - token guessing slowed per source address; keys unaffected
#   - the policy readable by the gateway's group alone: the gateway works,
#     the agent cannot read keys or token hashes (cat through the gateway,
#     runuser, agentgate explain run by the agent)
#   - agentgate edit: a good edit is installed (owner, group, mode kept)
#     and used at the next login; a broken one is refused and changes
#     nothing; a second editor is told the file is being edited
#   - agentgate sessions lists a live session (identity, command running
#     now); ps shows identity and session, never the command
#   - agentgate terminate, by identity and by session id: the session
#     ends, its command with it, and the audit says who ended it
. "$(dirname "$0")/lib.sh"
ag_own_mount_ns "$@"
# identities only: the account lets no unidentified caller in
# transport: a key of no identity, that a token identity logs in with
ag_world_identities alice bob carol transport

ag_setgid_gateway
TOKEN_SHA=$(printf 'tok-%s' "$$" | sha256sum | cut -d' ' -f1)
ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
version: 1
gateway:
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
identities:
  - { name: alice, keys: ["$(ag_key alice)"], profile: dev }
  - { name: bob, keys: ["$(ag_key bob)"], profile: dev, token_sha256: $TOKEN_SHA }
profiles:
  dev:
    allow: [echo, cat, sleep, "true", ls]
    paths: { read: ["/"], write: ["/tmp", "~"] }
    limits: { timeout: 600 }
POLICY
# keys and token hashes: the gateway's group reads them, nobody else
chown root:"$G" "$AG_DIR/policy.yaml"
chmod 0640 "$AG_DIR/policy.yaml"
# sshd takes the identities' keys from the policy, and from one file the
# key agents with tokens come in with (the admin's explicit choice)
cp "$AG_DIR/transport.pub" "$AG_DIR/transport_keys"
AG_SSHD_AUTHKEYS_FILE=$AG_DIR/transport_keys
AG_SSHD_EXTRA="AuthorizedKeysCommand $AG_DIR/agentgate authorized-keys --config $AG_DIR/policy.yaml %u
AuthorizedKeysCommandUser root
AcceptEnv AGENTGATE_TOKEN"
# the gateway reads the policy named on its command line as the caller
# would: as installed it names none and reads the default with its group
AG_FORCE_COMMAND="$AG_DIR/agentgate"
ag_start_sshd || exit 99
# (the default policy path of this build, pointed at the world's policy)
ag_default_policy_path

T="$AG_USER@127.0.0.1"

# ---- secrets apart -----------------------------------------------------------
out=$(ag_as alice "$T" 'echo in' 2>&1)
ag_is "$out" in "gateway_reads_a_policy_only_its_group_can_read" "$out"
out=$(ag_as alice "$T" "cat $AG_DIR/policy.yaml" 2>&1)
ag_unlike "$out" "ssh-ed25519|$TOKEN_SHA" "cat_of_the_policy_through_the_gateway_fails" "$out"
out=$(runuser -u "$AG_USER" -- cat "$AG_DIR/policy.yaml" 2>&1)
ag_unlike "$out" "ssh-ed25519|$TOKEN_SHA" "cat_of_the_policy_with_runuser_fails" "$out"
out=$(runuser -u "$AG_USER" -- "$AG_DIR/agentgate" explain -- true 2>&1)
ag_unlike "$out" "ssh-ed25519|$TOKEN_SHA|allow" "agentgate_explain_as_the_agent_reads_nothing" "$out"
out=$(runuser -u "$AG_USER" -- "$AG_DIR/agentgate" authorized-keys "$AG_USER" 2>&1)
ag_unlike "$out" "ssh-ed25519" "authorized_keys_as_the_agent_prints_no_key" "$out"

# ---- token guessing, slowed per source -----------------------------------------
# from an address of its own (the counts are per address, and other tests
# connect from 127.0.0.1 at the same time)
SRC=127.0.0.77
tok() { AGENTGATE_TOKEN=$1 ag_as transport -b "$SRC" -o SendEnv=AGENTGATE_TOKEN "$T" "${@:2}"; }
rm -f "$AG_RUNDIR/failures/$SRC"	# what an earlier run may have left
out=$(tok "tok-$$" 'echo token-in' 2>&1)
ag_is "$out" token-in "token_identity_logs_in_over_the_transport_key" "$out"
out=$(ag_as transport "$T" 'echo in' 2>&1); rc=$?
ag_like "$rc/$out" "^1/" "transport_key_without_token_is_refused" "$out"
# no token is read from a terminal the account owns: another identity's
# process could read what is typed there before the gateway does
out=$(ag_as transport -b "$SRC" -tt "$T" 'echo typed' < /dev/null 2>&1 | tr -d '\r')
ag_unlike "$out" "Agent token" "shared_account_asks_no_token_at_the_terminal" "$out"
ag_like "$out" "no token is read from the terminal.*SendEnv=AGENTGATE_TOKEN" \
    "shared_account_says_how_to_send_the_token" "$out"
out=$(AGENTGATE_TOKEN=tok-$$ ag_as transport -b "$SRC" -tt -o SendEnv=AGENTGATE_TOKEN "$T" \
    'echo token-tty' < /dev/null 2>&1 | tr -d '\r')
ag_like "$out" "token-tty" "token_in_the_environment_still_works_with_a_terminal" "$out"
rm -f "$AG_RUNDIR/failures/$SRC"
# a guesser's own valid token between its guesses forgives none of them
for i in 1 2 3 4; do tok "wrong-a$i" true >/dev/null 2>&1; done
out=$(tok "tok-$$" 'echo own-token' 2>&1)
ag_is "$out" own-token "own_token_still_logs_in_below_the_limit" "$out"
ag_like "$(cat "$AG_RUNDIR/failures/$SRC" 2>&1)" "^4 [0-9]+$" \
    "a_valid_token_does_not_reset_the_failures" "$(cat "$AG_RUNDIR/failures/$SRC" 2>&1)"
rm -f "$AG_RUNDIR/failures/$SRC"
# sixteen: the wait is then the longest (15 minutes), so no machine is slow
# enough for the right token to arrive after it
for i in $(seq 1 16); do tok "wrong-$i" true >/dev/null 2>&1; done
out=$(tok "tok-$$" 'echo token-in' 2>&1); rc=$?
ag_like "$rc/$out" "^1/.*[Tt]oo many failed token attempts" \
    "after_sixteen_wrong_tokens_even_the_right_one_waits" "$out"
ag_like "$(cat "$AG_RUNDIR/failures/$SRC" 2>&1)" "^17 [0-9]+$" \
    "failures_counted_for_the_source" "$(ls -la "$AG_RUNDIR/failures" 2>&1)"
ag_is "$(stat -c %a "$AG_RUNDIR/failures/$SRC")" 660 \
    "failures_file_writable_by_every_accounts_gateway" "$(ls -la "$AG_RUNDIR/failures" 2>&1)"
out=$(ag_as alice "$T" 'echo key-in' 2>&1)
ag_is "$out" key-in "keys_are_not_slowed_by_token_guessing" "$out"
rm -f "$AG_RUNDIR/failures/$SRC"	# the admin's reset
# a count this account's gateway may not update (another account's, left
# without the group's write bit by an older gateway): the attempt waits,
# it is not let through uncounted
printf '1 %s\n' "$(date +%s)" > "$AG_RUNDIR/failures/$SRC"
chown nobody:"${AG_GROUP:-agentgate}" "$AG_RUNDIR/failures/$SRC"
chmod 0640 "$AG_RUNDIR/failures/$SRC"
out=$(tok "tok-$$" 'echo token-in' 2>&1)
ag_like "$out" "[Tt]oo many failed token attempts" \
    "unwritable_failures_file_slows_rather_than_lets_through" "$out"
rm -f "$AG_RUNDIR/failures/$SRC"

# ---- agentgate edit ------------------------------------------------------------
cat > "$AG_DIR/add-carol" <<EOF
#!/bin/sh
sed -i '/^identities:/a\\  - { name: carol, keys: ["$(ag_key carol)"], profile: dev }' "\$1"
EOF
printf '#!/bin/sh\nsed -i "s/^profiles:/profile:/" "$1"\n' > "$AG_DIR/break"
chmod 755 "$AG_DIR/add-carol" "$AG_DIR/break"
before=$(sha256sum < "$AG_DIR/policy.yaml")
out=$(EDITOR="$AG_DIR/break" "$AG_DIR/agentgate" edit </dev/null 2>&1); rc=$?
ag_is "$rc" 1 "edit_refuses_a_broken_policy" "$out"
ag_like "$out" "policy\.yaml:[0-9]+:[0-9]+: " "edit_names_the_error_at_file_line_col" "$out"
ag_is "$(sha256sum < "$AG_DIR/policy.yaml")" "$before" "broken_edit_changes_nothing"
ag_is "$(ls -A "$AG_DIR" | grep -c '^\.policy\.yaml\.edit')" 0 "broken_edit_leaves_no_copy"
out=$(flock "$AG_DIR/policy.yaml" env EDITOR="$AG_DIR/add-carol" "$AG_DIR/agentgate" edit </dev/null 2>&1); rc=$?
ag_like "$rc/$out" "^1/.*being edited" "second_editor_is_told" "$out"
out=$(EDITOR="$AG_DIR/add-carol" "$AG_DIR/agentgate" edit </dev/null 2>&1); rc=$?
ag_is "$rc" 0 "good_edit_installed" "$out"
ag_is "$(stat -c '%U:%G %a' "$AG_DIR/policy.yaml")" "root:$G 640" "edit_keeps_owner_group_and_mode"
out=$(ag_as carol "$T" 'echo carol-in' 2>&1)
ag_is "$out" carol-in "identity_added_by_edit_logs_in" "$out"

# ---- sessions and terminate -----------------------------------------------------
ag_as alice "$T" 'sleep 3141' >/dev/null 2>&1 &
client=$!
ag_wait_until 60 sh -c "'$AG_DIR/agentgate' sessions | grep -q 'sleep 3141'"
out=$("$AG_DIR/agentgate" sessions 2>&1)
ag_like "$out" "alice +$AG_USER +127\.[0-9.]+:[0-9]+ .* sleep 3141" "sessions_lists_identity_and_command" "$out"
sid=$(awk '/sleep 3141/ {print $1}' <<<"$out")
gwpid=$(awk '/sleep 3141/ {print $(NF-2)}' <<<"$out")
title=$(ps -o args= -p "$gwpid" 2>/dev/null)
ag_like "$title" "^agentgate: alice@$AG_USER \[$sid\] exec" "process_title_shows_identity_and_session" "$title"
ag_unlike "$title" "sleep" "process_title_never_shows_the_command" "$title"
out=$(runuser -u "$AG_USER" -- "$AG_DIR/agentgate" sessions 2>&1); rc=$?
ag_is "$rc" 1 "sessions_is_roots" "$out"
# (--wait: the bound a loaded machine never reaches; the event is the exit)
# (--user too: other tests' worlds have an alice of their own)
out=$("$AG_DIR/agentgate" terminate --wait 600 --identity alice --user "$AG_USER" 2>&1); rc=$?
ag_like "$rc/$out" "^0/session $sid \(alice@$AG_USER, pid $gwpid\) ended" "terminate_by_identity_ends_it" "$out"
wait "$client"
ag_ok "its_command_is_gone" sh -c "! pgrep -u '$AG_USER' -f 'sleep 3141'"
ag_ok "termination_audited_with_who_and_which" ag_audit_query \
    "any(x['event'] == 'session_terminate' and x.get('identity') == 'alice' and (x.get('request') or '').startswith('$sid') and 'agentgate terminate' in x.get('reason', '') for x in r)"
ag_ok "the_session_recorded_its_end" ag_audit_query \
    "any(x['event'] == 'session_end' and x['session'].startswith('$sid') for x in r)"
# audit show --session shows why it ended: the admin's session_terminate,
# which has the admin's own session id and this one as its request
out=$("$AG_DIR/agentgate" audit show --session "$sid" "$AG_AUDIT" 2>&1)
ag_like "$out" "session_terminate +deny +ended by [a-z]+ with agentgate terminate" \
    "audit_show_session_includes_the_termination_that_ended_it" "$out"
ag_like "$out" "session_end" "audit_show_session_includes_its_end" "$out"
# (other tests' sessions may be live on the machine: only this account's count)
ag_is "$("$AG_DIR/agentgate" sessions | awk -v u="$AG_USER" '$3 == u' | wc -l)" 0 \
    "terminated_session_no_longer_listed" "$("$AG_DIR/agentgate" sessions)"

# what an agent chose never reaches root's terminal raw (issue 34): an OSC 52
# clipboard write, a title and a line erase in the command line are shown
# as escapes by sessions and terminate
ag_as alice "$T" "sleep 2718 # $(printf '\033]52;c;cm0gLXJmIH4=\a\033]0;pwned\a\033[2K')" >/dev/null 2>&1 &
client=$!
ag_wait_until 60 sh -c "'$AG_DIR/agentgate' sessions | grep -q 'sleep 2718'"
out=$("$AG_DIR/agentgate" sessions 2>&1)
ag_unlike "$out" "$(printf '\033')" "sessions_shows_no_raw_escape" "$(printf '%s' "$out" | od -c | head -5)"
ag_like "$out" 'sleep 2718 # \\x1b]52;c;' "sessions_shows_the_escape_as_text" "$out"
out=$("$AG_DIR/agentgate" terminate --wait 600 --identity alice --user "$AG_USER" 2>&1)
ag_unlike "$out" "$(printf '\033')" "terminate_shows_no_raw_escape" "$out"
wait "$client"
# ... nor by audit show (its table and its JSON), which has the command line
out=$("$AG_DIR/agentgate" audit show --identity alice "$AG_AUDIT" 2>&1)
ag_unlike "$out" "$(printf '\033')" "audit_show_shows_no_raw_escape" "$(printf '%s' "$out" | od -c | head -5)"
ag_like "$out" 'sleep 2718 # \\x1b]52;c;' "audit_show_shows_the_escape_as_text" "$out"
out=$("$AG_DIR/agentgate" audit show --json --identity alice "$AG_AUDIT" 2>&1)
ag_unlike "$out" "$(printf '\033')" "audit_show_json_has_no_raw_escape" "$out"
ag_like "$out" 'sleep 2718 # \\u001b]52;c;' "audit_show_json_has_it_as_a_json_escape" "$out"
# a line planted with raw controls (not the gateway's) is re-encoded
printf '{"ts":"2026-11-28T10:00:00.000Z","event":"command","identity":"alice","command":"x \033]52;c;cm0=\a\302\233"}\n' \
    > "$AG_DIR/planted.jsonl"
out=$("$AG_DIR/agentgate" audit show --json "$AG_DIR/planted.jsonl" 2>&1)
ag_unlike "$out" "$(printf '\033|\302\233')" "audit_show_json_re_encodes_a_planted_raw_line" "$(printf '%s' "$out" | od -c | head -5)"
ag_like "$out" '\\u001b]52;c;cm0=\\u0007\\u009b' "and_keeps_what_it_says" "$out"
# ... nor by explain: a program whose name is the sequences, as the agent
# would run it, in the program path and in the reason that quotes it
evil="/tmp/x$(printf '\033]52;c;cm0gLXJmIH4=\a\033]0;pwned\a\033[2K')"
for fmt in "" --json; do
	out=$("$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --profile dev $fmt -- "$evil arg" 2>&1)
	ag_unlike "$out" "$(printf '\033|\a')" "explain${fmt:+_json}_shows_no_raw_escape" "$(printf '%s' "$out" | od -c | head -8)"
	ag_like "$out" '/tmp/x\\(x1b|u001b)]52' "explain${fmt:+_json}_shows_the_escape_as_text" "$out"
	ag_like "$out" 'pwned\\(x07|u0007)\\(x1b|u001b)\[2K' "explain${fmt:+_json}_shows_the_erase_as_text" "$out"
done
# ... nor by doctor, whose report quotes the policy (the agent's text, when
# a check finds the agent can write it): a profile's path that is missing
# (reported with a sandbox; no "[", which makes it a pattern)
sed -e "s|read: \[\"/\"\]|read: [\"/\", \"/nonexistent/\\\\e]52;c;cm0=\\\\a\\\\e]0;pwned\\\\a\"]|" \
    -e 's|sandbox: "off"|sandbox: best_effort|' "$AG_DIR/policy.yaml" > "$AG_DIR/doctor.yaml"
chmod 0640 "$AG_DIR/doctor.yaml"
out=$("$AG_DIR/agentgate" doctor --config "$AG_DIR/doctor.yaml" --user "$AG_USER" 2>&1)
ag_like "$out" '/nonexistent/\\x1b]52;c;' "doctor_shows_the_escape_as_text" "$out"
ag_unlike "$out" "$(printf '\033')" "doctor_shows_no_raw_escape" "$(printf '%s' "$out" | od -c | head -8)"
# ... nor by check, whose warnings quote the policy, or a fragment given to it
out=$("$AG_DIR/agentgate" check --config "$AG_DIR/doctor.yaml" 2>&1)
ag_like "$out" '/nonexistent/\\x1b]52;c;' "check_shows_the_escape_as_text" "$out"
ag_unlike "$out" "$(printf '\033')" "check_shows_no_raw_escape" "$(printf '%s' "$out" | od -c | head -8)"

# a REPL session, ended by its id
mkfifo "$AG_DIR/repl.in"
ag_as bob "$T" < "$AG_DIR/repl.in" > "$AG_DIR/repl.out" 2>&1 &
client=$!
exec 7>"$AG_DIR/repl.in"
echo "echo bob-ready" >&7
ag_wait_until 60 grep -q bob-ready "$AG_DIR/repl.out"
sid=$("$AG_DIR/agentgate" sessions | awk -v u="$AG_USER" '$2 == "bob" && $3 == u {print $1}')
ag_like "$sid" "^[0-9a-f]{8}$" "repl_session_listed" "$("$AG_DIR/agentgate" sessions)"
out=$("$AG_DIR/agentgate" terminate --wait 600 "${sid:0:6}" 2>&1); rc=$?
ag_is "$rc" 0 "terminate_by_session_prefix" "$out"
wait "$client"
exec 7>&-
ag_is "$("$AG_DIR/agentgate" terminate "${sid:0:6}" 2>&1; echo "rc=$?")" \
    "agentgate: terminate: no live session ${sid:0:6}
rc=1" "terminate_of_an_ended_session_says_so"
ag_done
