#!/bin/bash
# A rule that allows a set-ID program the sandbox disarms (issue 35): under
# no_new_privs sudo, su and passwd run without their privilege, so the
# deploy through sudo an admin wrote cannot work.  check, explain and doctor
# say so beforehand; the program really does fail in the session; with the
# sandbox off nothing is said and it works.  A wrapper the gateway refuses
# in every profile (sudo, pkexec) named in allow is said to be dead.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
ag_setup
ag_need_sandbox_lib
PASSWD=$(command -v passwd)
[ -u "$PASSWD" ] || { echo "# $PASSWD is not set-user-ID here"; exit 77; }

ag_sandboxed_policy deploy <<POLICY
  deploy:
    allow: [echo, passwd]
    paths: { read: ["/"], write: ["~"] }
POLICY
P=$AG_DIR/policy.yaml
out=$("$AGENTGATE" check --config "$P" 2>&1); rc=$?
ag_like "$rc/$out" "^0/.*$P:[0-9]+:[0-9]+: warning: profiles\.deploy\.allow\[1\] allows passwd, but $PASSWD is set-user-ID, and under the sandbox \(gateway\.sandbox: required\) no command gains privileges" \
    "check_warns_of_a_disarmed_set_id_program" "$out"
ag_unlike "$out" "allow\[0\]" "check_says_nothing_of_echo" "$out"
out=$("$AGENTGATE" explain --config "$P" --profile deploy -- "passwd -S $AG_USER" 2>&1)
ag_like "$out" "note: $PASSWD is set-user-ID" "explain_notes_it" "$out"
out=$("$AGENTGATE" explain --json --config "$P" --profile deploy -- "passwd -S $AG_USER" 2>&1)
ag_like "$out" "\"note\":\"$PASSWD is set-user-ID" "explain_json_notes_it" "$out"
out=$("$AGENTGATE" doctor --config "$P" --user "$AG_USER" 2>&1)
ag_like "$out" "WARN  profiles\.deploy\.allow\[1\] allows passwd, but $PASSWD is set-user-ID" \
    "doctor_warns_of_it" "$out"

# what the warning is about: the allowed program fails in the session (the
# sshd ag_setup started reads the new policy at each login)
ag_run a "passwd -S $AG_USER"
ag_unlike "$a_out" "^$AG_USER (P|L|NP) " "set_id_program_disarmed_in_the_sandbox" "$a_out" "$a_err"

# the sandbox off: nothing to say, and the program works
sed -i 's/  sandbox: required/  sandbox: "off"/' "$P"
out=$("$AGENTGATE" check --config "$P" 2>&1)
ag_unlike "$out" "warning" "no_warning_with_the_sandbox_off" "$out"
ag_run b "passwd -S $AG_USER"
ag_like "$b_out" "^$AG_USER (P|L|NP) " "set_id_program_works_without_the_sandbox" "$b_out" "$b_err"

# a wrapper the gateway always refuses (sudo, pkexec): an allow rule naming
# it is dead whatever the sandbox, and check, doctor and explain say so
sed -i 's/allow: \[echo, passwd\]/allow: [echo, passwd, sudo, \/usr\/bin\/pkexec]/' "$P"
out=$("$AGENTGATE" check --config "$P" 2>&1); rc=$?
ag_like "$rc/$out" "^0/.*$P:[0-9]+:[0-9]+: warning: profiles\.deploy\.allow\[2\] allows sudo, but 'sudo' runs other programs with other rights .* the gateway refuses it in every profile \(rule wrapper:sudo\): this rule never matches" \
    "check_warns_of_an_allowed_wrapper_the_gateway_refuses" "$out"
ag_like "$out" "allow\[3\] allows /usr/bin/pkexec, but 'pkexec' runs other programs" \
    "check_warns_of_it_named_by_path" "$out"
ag_unlike "$out" "allow\[1\]" "check_still_quiet_about_passwd_with_the_sandbox_off" "$out"
out=$("$AGENTGATE" doctor --config "$P" --user "$AG_USER" 2>&1)
ag_like "$out" "WARN  profiles\.deploy\.allow\[2\] allows sudo, but 'sudo' runs other programs" \
    "doctor_warns_of_the_wrapper" "$out"
out=$("$AGENTGATE" explain --config "$P" --profile deploy -- "sudo ls" 2>&1)
ag_like "$out" "refuses it in every profile, 'deploy' too, even where allow lists it" \
    "explain_says_a_listed_wrapper_is_refused_anyway" "$out"
ag_done
