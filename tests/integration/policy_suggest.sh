#!/bin/bash
# policy_suggest.sh - agentgate policy suggest (issue 39) on the audit of a
# real scripted workload through sshd: a permissive profile runs it, the
# suggestion drawn from its audit passes `agentgate check`, and put in
# place as the account's profile it runs the same workload without a
# refusal and refuses what the workload never ran.
. "$(dirname "$0")/lib.sh"
ag_setup

ag_write_policy "$AG_DIR/policy.yaml" <<'EOF2'
version: 1
gateway:
  runner: /bin/bash
  sandbox: "off"
  audit: { file: @AUDIT@, required: true }
users:
  @USER@: open
profiles:
  open:
    tier: developer
    allow: [ls]
    paths: { read: ["/"], write: ["~", "/tmp"] }
    limits: { timeout: 300 }
    unknown: allow
EOF2

work=(
	'mkdir -p ~/work && cd ~/work && git init -q repo'
	'cd ~/work/repo && git status --short'
	'git -C ~/work/repo rev-parse --git-dir'
	'ls -la ~/work | grep -c repo'
	'cat /etc/hostname'
	'echo data > ~/work/out.txt'
	"bash -c 'echo hi'"
)
declare -a want
for i in "${!work[@]}"; do
	ag_run w "${work[$i]}"
	want[$i]=$w_rc
	[ "$w_rc" = 0 ] || echo "# workload line $i: rc $w_rc: $w_err"
done

out=$("$AGENTGATE" policy suggest --config "$AG_DIR/policy.yaml" --account "$AG_USER" \
    --name job 2>"$AG_DIR/suggest.err")
rc=$?
ag_is "$rc" 0 "policy suggest exits 0" "$(cat "$AG_DIR/suggest.err")"
ag_like "$out" '\{ command: git, subcommands: \[init, rev-parse, status\] \}' \
    "git with the subcommands the workload used" "$out"
ag_like "$out" '# RISK: bash runs whatever code' "bash -c flagged as a risk"
# mkdir ~/work writes in the home itself, which covers ~/work's out.txt
ag_like "$out" '- "~"' "the directory written"
ag_like "$out" '# git: 3 uses, first ' "counts and first use"
ag_unlike "$out" '- rm' "no program the workload did not run"

# no record of the selection: said, exit 1
"$AGENTGATE" policy suggest --config "$AG_DIR/policy.yaml" --identity nobody-here \
    >/dev/null 2>"$AG_DIR/none.err"
ag_is "$?" 1 "no record matched: exit 1"
ag_like "$(cat "$AG_DIR/none.err")" 'no record matched identity nobody-here' \
    "no record matched: said so"
"$AGENTGATE" policy suggest --log "$AG_DIR/nonexistent.jsonl" >/dev/null 2>"$AG_DIR/bad.err"
ag_is "$?" 2 "an unreadable log: exit 2"
ag_like "$(cat "$AG_DIR/bad.err")" 'nonexistent.jsonl: No such file' \
    "an unreadable log: which file and why"

# the suggestion as the account's profile
{
	printf 'version: 1\ngateway:\n  runner: /bin/bash\n  sandbox: "off"\n'
	printf '  audit: { file: @AUDIT@, required: true }\nusers:\n  @USER@: job\n'
	printf '%s\n' "$out"
} | ag_write_policy "$AG_DIR/policy.yaml"
chk=$("$AGENTGATE" check --config "$AG_DIR/policy.yaml" 2>&1)
ag_is "$?" 0 "the suggested profile passes agentgate check" "$chk"

before=$(wc -l < "$AG_AUDIT")
for i in "${!work[@]}"; do
	ag_run r "${work[$i]}"
	ag_is "$r_rc" "${want[$i]}" "replayed under the suggestion: ${work[$i]}" "$r_err"
done
ag_ok "the replay has no refusal in the audit" ag_audit_query \
    "not any(x.get('decision') == 'deny' for x in r[$before:])"

ag_run n 'cd ~/work/repo && git push origin main'
ag_like "$n_err" "'git push' is not allowed in profile 'job'" "git push, never run, is refused"
ag_run n 'rm ~/work/out.txt'
ag_like "$n_err" "'rm' is not allowed" "rm, never run, is refused"
ag_ok "out.txt is still there" test -f "/home/$AG_USER/work/out.txt"

ag_done
