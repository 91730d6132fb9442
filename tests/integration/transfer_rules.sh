#!/bin/bash
# File transfers obey deny rules (issue 35): a backup key meant to be
# push-only (`deny: [{command: rsync, args: ["--sender"]}]`) cannot pull,
# through the real rsync, scp and sftp clients and sshd; the audit names
# the rule; `agentgate explain` says what the live gateway does; the
# benign direction still works.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
ag_setup
ag_need_sandbox_lib
command -v rsync >/dev/null || { echo "SKIP: rsync is not installed"; exit 77; }

W=$AG_DIR/w
install -d -o "$AG_USER" "$W"
echo secret-on-host > "$W/held"
chown "$AG_USER" "$W/held"
echo pushed > "$AG_DIR/local"

policy() {	# policy DENY-LIST
	ag_sandboxed_policy backup <<POLICY
  backup:
    allow: [ls]
    deny: $1
    file_transfer: { sftp: write, scp: true, rsync: true }
    paths: { read: ["/"], write: ["$W"] }
POLICY
}
policy '[{ command: rsync, args: ["--sender"] }, { command: scp, args: ["-f"] }]'

SSHCMD="ssh -F /dev/null -i $AG_DIR/client -p $AG_PORT -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
last_rule() { ag_audit_query "[x.get('rule') for x in r if x.get('event') == 'command'][-1]"; }

# ---- rsync -------------------------------------------------------------------
out=$(rsync -e "$SSHCMD" "$AG_DIR/local" "$AG_USER@127.0.0.1:$W/pushed" 2>&1)
ag_is "$?/$(cat "$W/pushed" 2>/dev/null)" "0/pushed" "rsync_push_runs" "$out"
out=$(rsync -e "$SSHCMD" "$AG_USER@127.0.0.1:$W/held" "$AG_DIR/pulled" 2>&1)
ag_ok "rsync_pull_is_refused" test ! -e "$AG_DIR/pulled"
ag_like "$out" "denied by profiles.backup.deny\[0\]" "rsync_pull_refusal_names_the_rule" "$out"
ag_is "$(last_rule)" "profiles.backup.deny[0]" "rsync_pull_audited_with_the_rule"
# explain judges the request as the gateway does, both ways
REQ_PULL=$(ag_audit_query "[x.get('command') for x in r if x.get('event') == 'command'][-1]")
REQ_PUSH=$(ag_audit_query "[x.get('command') for x in r if x.get('event') == 'command' and x.get('decision') == 'allow'][-1]")
out=$("$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --profile backup -- "$REQ_PULL" 2>&1)
ag_like "$out" "deny" "explain_says_the_pull_is_denied" "$out"
ag_like "$out" "deny\[0\]" "explain_names_the_same_rule" "$out"
out=$("$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --profile backup -- "$REQ_PUSH" 2>&1)
ag_like "$out" "allow" "explain_says_the_push_runs" "$out"

# rsync's daemon mode over ssh (host::module): the pull happens inside its
# protocol, so it is refused whole, with or without a config of the agent's
printf '[m]\npath = %s\nread only = yes\nuse chroot = no\n' "$W" > "$W/rsyncd.conf"
chown "$AG_USER" "$W/rsyncd.conf"
out=$(rsync -e "$SSHCMD" --rsync-path="rsync --config=$W/rsyncd.conf" \
    "$AG_USER@127.0.0.1::m/held" "$AG_DIR/daemon-pulled" 2>&1)
ag_ok "rsync_daemon_mode_pull_is_refused" test ! -e "$AG_DIR/daemon-pulled"
ag_like "$(ag_audit_query "[x.get('reason') for x in r if x.get('event') == 'command'][-1]")" \
    "daemon mode" "rsync_daemon_mode_refusal_says_why"
out=$("$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --profile backup -- \
    "rsync --server --daemon ." 2>&1)
ag_like "$out" "deny" "explain_refuses_rsync_daemon_mode" "$out"

# ---- legacy scp (-O): a download is `scp -f` -----------------------------------------
SCP=(scp -F /dev/null -O -i "$AG_DIR/client" -P "$AG_PORT" -o StrictHostKeyChecking=no
    -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR)
"${SCP[@]}" "$AG_DIR/local" "$AG_USER@127.0.0.1:$W/scp-pushed" >/dev/null 2>&1
ag_is "$(cat "$W/scp-pushed" 2>/dev/null)" "pushed" "scp_upload_runs"
"${SCP[@]}" "$AG_USER@127.0.0.1:$W/held" "$AG_DIR/scp-pulled" >/dev/null 2>&1
ag_ok "scp_download_is_refused" test ! -e "$AG_DIR/scp-pulled"
ag_is "$(last_rule)" "profiles.backup.deny[1]" "scp_download_audited_with_the_rule"
# the same download with its options bundled, as scp's getopt reads them
for req in "scp -pf $W/held" "scp -rf $W/held" "scp -fd $W/held" "scp -v -pf $W/held"; do
	out=$("${AG_SSH[@]}" "$req" </dev/null 2>&1 | head -c 200)
	ag_unlike "$out" "secret-on-host" "scp_bundled_download_refused: $req" "$out"
	out=$("$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --profile backup -- "$req" 2>&1)
	ag_like "$out" "deny" "explain_refuses: $req" "$out"
done
out=$("$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --profile backup -- "scp -pt $W/in" 2>&1)
ag_like "$out" "allow" "explain_allows_a_bundled_upload" "$out"

# ---- sftp: a deny rule on the server refuses it whole ----------------------------------
SFTP=(sftp -F /dev/null -i "$AG_DIR/client" -P "$AG_PORT" -o StrictHostKeyChecking=no
    -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -b -)
echo "get $W/held $AG_DIR/sftp-pulled" | "${SFTP[@]}" "$AG_USER@127.0.0.1" >/dev/null 2>&1
ag_is "$(cat "$AG_DIR/sftp-pulled" 2>/dev/null)" "secret-on-host" "sftp_runs_without_a_deny_rule"
policy '[{ command: sftp-server }]'
rm -f "$AG_DIR/sftp-pulled"
echo "get $W/held $AG_DIR/sftp-pulled" | "${SFTP[@]}" "$AG_USER@127.0.0.1" >/dev/null 2>&1
ag_ok "sftp_refused_by_a_deny_rule_on_sftp_server" test ! -e "$AG_DIR/sftp-pulled"
ag_is "$(last_rule)" "profiles.backup.deny[0]" "sftp_refusal_audited_with_the_rule"

# ---- rsync pinned to one exact request (argv), as authorized_keys command= would --------
# the push request this client sends, word for word, is the only one allowed
ARGV=$("$AG_PYTHON" -c 'import json,sys; print(json.dumps(sys.argv[1].split()[1:]))' "$REQ_PUSH")
ag_sandboxed_policy backup <<POLICY
  backup:
    allow:
      - ls
      - { name: push-only, command: rsync, argv: $ARGV }
    file_transfer: { rsync: true }
    paths: { read: ["/"], write: ["$W"] }
POLICY
rm -f "$W/pushed" "$AG_DIR/pulled"
out=$(rsync -e "$SSHCMD" "$AG_DIR/local" "$AG_USER@127.0.0.1:$W/pushed" 2>&1)
ag_is "$?/$(cat "$W/pushed" 2>/dev/null)" "0/pushed" "rsync_exact_push_runs" "$out"
ag_is "$(last_rule)" "profiles.backup.allow.push-only" "rsync_exact_push_audited_with_its_rule"
out=$(rsync -e "$SSHCMD" "$AG_USER@127.0.0.1:$W/held" "$AG_DIR/pulled" 2>&1)
ag_ok "rsync_pull_refused_by_the_exact_rule" test ! -e "$AG_DIR/pulled"
ag_is "$(last_rule)" "profiles.backup.allow.push-only" "rsync_pull_audited_with_the_exact_rule"
out=$(rsync -e "$SSHCMD" "$AG_DIR/local" "$AG_USER@127.0.0.1:$W/elsewhere" 2>&1)
ag_ok "rsync_push_elsewhere_refused" test ! -e "$W/elsewhere"
# explain judges the requests as the gateway just did
for pair in "allow:$REQ_PUSH" "deny:$REQ_PULL" "deny:$REQ_PUSH --delete"; do
	out=$("$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --profile backup -- \
	    "${pair#*:}" 2>&1)
	ag_like "$out" "decision: ${pair%%:*}" "explain_on_exact_rsync: $pair" "$out"
	ag_like "$out" "rule: profiles\.backup\.allow\.push-only \(rsync\)" \
	    "explain_names_the_exact_rule: $pair" "$out"
done
ag_done
