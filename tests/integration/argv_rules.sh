#!/bin/bash
# Exact argument rules (issue 35): a backup account that may run
# `tar -x -C DIR -f -` and nothing else, through the real sshd and PAM.
# The benign restore runs; one word more, a glued option, a wrapper or an
# environment variable that would change what tar does are refused before
# anything starts; the audit names the rule by its own name; `agentgate
# explain` says what the live gateway did for each line.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
ag_setup
ag_need_sandbox_lib

B=$AG_DIR/backup
install -d -o "$AG_USER" "$B"
# an archive whose member, piped to a shell by --to-command=sh, would
# leave a mark
mkdir -p "$AG_DIR/src"
echo "touch $B/pwned" > "$AG_DIR/src/restored.txt"
tar -C "$AG_DIR/src" -cf "$AG_DIR/a.tar" restored.txt

ag_argv_policy "$B"

last() { ag_audit_query "[x.get('$1') for x in r if x.get('event') == 'command'][-1]"; }

# explain LINE: "decision rule" as agentgate explain --user says
explain() {
	"$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --user "$AG_USER" --json \
	    -- "$1" 2>/dev/null | "$AG_PYTHON" -c 'import json,sys; d=json.load(sys.stdin); print(d["decision"], d["rule"])'
}
agrees() {	# agrees LINE NAME: the gateway's last record and explain say the same
	ag_is "$(last decision) $(last rule)" "$(explain "$1")" "explain_agrees_$2"
}

# ---- the one command the account exists for ------------------------------------
ag_run r "tar -x -C $B -f -" < "$AG_DIR/a.tar"
ag_is "$r_rc/$(cat "$B/restored.txt" 2>/dev/null)" "0/touch $B/pwned" "exact_restore_runs" "$r_err"
ag_is "$(last rule)" "profiles.backup.allow.restore" "audit_names_the_rule_by_its_name"
ag_is "$(last rule_label)" "profiles.backup.allow.restore (tar)" "audit_rule_label_shows_the_program"
agrees "tar -x -C $B -f -" restore
rm -f "$B/restored.txt"

# ---- every way around it is refused before tar starts ---------------------------
n=0
for line in "tar -x -C $B -f - --to-command=sh" \
    "tar --to-command=sh -x -C $B -f -" \
    "tar -x -C $B -f - 2>/dev/null --to-command=sh" \
    "tar -xC$B -f - --to-command=sh" \
    "tar -x -C $B -f - -- --to-command=sh" \
    "tar -x '-C $B' -f - --to-command=sh" \
    "env tar -x -C $B -f - --to-command=sh" \
    "nice tar -x -C $B -f - --to-command=sh" \
    "TAR_OPTIONS=--to-command=sh tar -x -C $B -f -" \
    "tar -x -C $B -f - \$(echo --to-command=sh)" \
    "o=--to-command=sh; tar -x -C $B -f - \$o"; do
	n=$((n + 1))
	ag_run r "$line" < "$AG_DIR/a.tar"
	ag_ok "variant_${n}_refused" test "$r_rc" = 126 -a ! -e "$B/pwned" -a ! -e "$B/restored.txt"
	ag_is "$(last decision)" "deny" "variant_${n}_audited_as_deny"
	agrees "$line" "variant_$n"
done
ag_run r "tar -x -C $B -f - --to-command=sh" < "$AG_DIR/a.tar"
ag_like "$r_err" "only with the exact arguments of profiles\.backup\.allow\.restore \(tar\): 'tar -x -C $B -f -'" \
    "refusal_says_the_one_form_allowed" "$r_err"

# ---- argv: [] is no arguments; a deny rule's argv refuses that vector -----------
ag_run r "date"
ag_is "$r_rc" 0 "date_without_arguments_runs" "$r_err"
agrees "date" date
ag_run r "date -s 2020-01-01"
ag_is "$r_rc/$(last rule)/$(last rule_label)" "126/profiles.backup.allow[1]/profiles.backup.allow[1] (date)" \
    "date_with_an_argument_refused" "$r_err"
agrees "date -s 2020-01-01" date_arg
ag_run r "ls /"
ag_is "$r_rc/$(last rule)" "126/profiles.backup.deny.no-root" "deny_argv_refuses_that_vector" "$r_err"
agrees "ls /" deny_argv
ag_run r "ls / /tmp"
ag_is "$r_rc" 0 "deny_argv_leaves_other_vectors" "$r_err"
agrees "ls / /tmp" deny_argv_other

ag_done
