#!/bin/bash
# rollout.sh - issue 39 item 1: a profile in rollout (enforce: audit) runs,
# through the real sshd and under the same kernel sandbox, the lines its
# rules would refuse, and records each as would_deny with the rule and
# reason it would have met; the agent sees the command's own output and
# nothing else.  What guards the gateway itself (a protected path, a line
# that does not parse, a dangerous variable) is refused all the same, what
# the kernel holds stays held, and the same profile enforced refuses.
# One rule in rollout relaxes that rule alone.  explain says what each does.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
ag_setup
ag_need_sandbox_lib
H=/home/$AG_USER
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "$H/work"

# policy ENFORCE-OF-PROFILE ENFORCE-OF-THE-CAT-RULE
policy() {
	cat <<EOF2 | ag_write_policy "$AG_DIR/policy.yaml"
version: 1
gateway:
  runner: /bin/bash
  audit: { file: @AUDIT@, required: true }
users:
  @USER@: job
profiles:
  job:
    enforce: $1
    allow:
      - echo
      - ls
      - cat
      - { command: tee, args: ["-a", "out*"] }
      - { command: timeout, args: ["5"] }
    deny:
      - { command: cat, args: ["/etc/hostname"], enforce: $2 }
      - { command: cp, args: ["/etc/*"] }
      - { command: export }
    paths: { read: ["/"], write: ["~/work"] }
    unknown: deny
EOF2
}

last() { ag_audit_query "[x.get('$1') for x in r if x.get('event') == 'command'][-1]"; }
explain() {
	"$AG_DIR/agentgate" explain --config "$AG_DIR/policy.yaml" --user "$AG_USER" -- "$1" 2>&1
}

# ---- the profile in rollout ------------------------------------------------------
policy audit enforce
ag_run r 'id -u'
ag_is "$r_rc/$r_out" "0/$(id -u "$AG_USER")" "unlisted_program_runs_in_rollout" "$r_err"
ag_is "$r_err" "" "the_agent_sees_nothing_different"
ag_is "$(last decision)" "would_deny" "recorded_as_would_deny"
ag_is "$(last rule)" "unknown" "would_deny_names_the_rule"
ag_like "$(last reason)" "not allowed" "would_deny_says_why"
ag_is "$(last exit)" "0" "would_deny_record_has_the_outcome"
ag_is "$(ag_audit_query "[x.get('enforce') for x in r if x.get('event') == 'session_start'][-1]")" \
    "audit" "session_start_says_rollout"
ag_like "$(explain 'id -u')" "rollout: enforce: audit lets it run" "explain_says_it_would_run"

# the strict tier never executes a shell, rollout or not (the kernel)
ag_run r 'bash -c id'
ag_like "$r_err" "Permission denied" "strict_kernel_still_holds_shells" "$r_err"

# the gateway's own checks are not the rules: a write outside paths.write
# is refused as ever (and the kernel would hold it)
ag_run r "touch $AG_DIR/outside"
ag_ok "outside_write_not_made" test ! -e "$AG_DIR/outside"
ag_is "$(last decision)" "deny" "outside_write_still_refused"

# what guards the gateway is refused in rollout too
ag_run r 'echo x > ~/.bashrc'
ag_is "$r_rc" 126 "protected_path_refused_in_rollout" "$r_err"
ag_like "$r_err" "protected path" "protected_path_says_why"
ag_is "$(last decision)" "deny" "protected_path_recorded_as_deny"
ag_like "$(explain 'echo x > ~/.bashrc')" "rollout: refused even so" "explain_says_refused_even_so"
# ... also where the line does not show the path or the name (red team):
# what the gateway cannot see is never relaxed
ag_run r 'cd ~/work && f=$(printf .envrc) && echo pwned > "$f"'
ag_is "$r_rc" 126 "hidden_protected_path_refused_in_rollout" "$r_err"
ag_ok "hidden_protected_path_not_written" test ! -e "$H/work/.envrc"
ag_run r 'declare -n v=LD_PRELOAD; export v=/nonexist.so; ls'
ag_is "$r_rc" 126 "declare_n_dangerous_variable_refused_in_rollout" "$r_err"
ag_run r 'env -S "LD_PRELOAD=/nonexist.so ls"'
ag_is "$r_rc" 126 "env_split_dangerous_variable_refused_in_rollout" "$r_err"
# ... and a rule rollout relaxes does not let the rest of its command go
# unjudged (red team round 2): what it writes, what a wrapper runs, what
# a denied builtin sets
ag_run r 'cd ~/work && echo pwned | tee .envrc'
ag_is "$r_rc" 126 "relaxed_allow_rule_still_checks_writes" "$r_err"
ag_run r 'cd ~/work && cp /etc/hostname .envrc'
ag_is "$r_rc" 126 "relaxed_deny_rule_still_checks_writes" "$r_err"
ag_ok "relaxed_rules_wrote_no_protected_file" test ! -e "$H/work/.envrc"
ag_run r 'export LD_PRELOAD=/nonexist.so; ls'
ag_is "$r_rc" 126 "relaxed_builtin_deny_still_checks_variables" "$r_err"
ag_run r 'timeout 10 env LD_PRELOAD=/nonexist.so ls'
ag_is "$r_rc" 126 "relaxed_wrapper_rule_still_walks_its_command" "$r_err"
ag_run r 'cd ~/work && echo ok | tee -a out.txt >/dev/null && cat out.txt'
ag_is "$r_rc/$r_out" "0/ok" "relaxed_rules_let_the_benign_line_run" "$r_err"
ag_run r 'echo $('
ag_is "$r_rc" 126 "parse_error_refused_in_rollout" "$r_err"
ag_run r 'LD_PRELOAD=/tmp/x.so ls'
ag_is "$r_rc" 126 "dangerous_variable_refused_in_rollout" "$r_err"

# ---- the same profile enforced ---------------------------------------------------
policy enforce enforce
ag_run r 'id -u'
ag_is "$r_rc" 126 "enforced_profile_refuses" "$r_err"
ag_is "$(last decision)" "deny" "enforced_refusal_recorded_as_deny"
ag_is "$(ag_audit_query "[x.get('enforce') for x in r if x.get('event') == 'session_start'][-1]")" \
    "None" "enforced_session_start_says_nothing"

# ---- one rule in rollout -----------------------------------------------------------
policy enforce audit
ag_run r 'cat /etc/hostname'
ag_is "$r_rc/$r_out" "0/$(cat /etc/hostname)" "rule_in_rollout_runs" "$r_err"
ag_is "$(last decision)/$(last rule)" "would_deny/profiles.job.deny[0]" "rule_rollout_recorded"
# the deny rule holds at every exec too: there the exec goes on, recorded
ag_is "$(ag_audit_query "[(x.get('decision'), x.get('rule')) for x in r if x.get('event') == 'exec_denied'][-1]")" \
    "('would_deny', 'profiles.job.deny[0]')" "exec_in_rollout_recorded_as_would_deny"
ag_run r 'id -u'
ag_is "$r_rc" 126 "other_refusals_still_enforced" "$r_err"
ag_is "$(ag_audit_query "[x.get('enforce') for x in r if x.get('event') == 'session_start'][-1]")" \
    "audit" "session_start_says_a_rule_is_in_rollout"

# ---- a function's body is judged where it is called ---------------------------
cat <<EOF2 | ag_write_policy "$AG_DIR/policy.yaml"
version: 1
gateway:
  runner: /bin/bash
  audit: { file: @AUDIT@, required: true }
users:
  @USER@: fn
profiles:
  fn:
    allow: [echo]
    features: { functions: allow }
    paths: { read: ["/"], write: ["~"] }
EOF2
ag_run r 'cd ~/work && f() { echo pwned > .bash_login; } && cd ~ && f'
ag_is "$r_rc" 126 "function_body_judged_where_called" "$r_err"
ag_ok "function_wrote_no_startup_file" test ! -e "$H/.bash_login"
ag_run r 'f() { echo called; }; f; f'
ag_is "$r_out" "called
called" "benign_function_calls_run" "$r_err"
ag_run r 'f() { f; }; f'
ag_like "$r_err" "nest more than" "recursive_function_refused" "$r_err"

ag_done
