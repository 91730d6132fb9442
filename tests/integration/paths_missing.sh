#!/bin/bash
# A profile path that names nothing on this host (admin trial, item 8):
# Landlock grants only what exists, so a paths.write file config management
# has not made yet cannot be written and the agent meets a bare EACCES.
# check warns at the entry's file:line:col, for "~" in the home of the
# account users: gives the profile; doctor warns too; once the file exists,
# or with the sandbox off, nothing is said.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
ag_setup
H=$(getent passwd "$AG_USER" | cut -d: -f6)

ag_sandboxed_policy deploy <<POLICY
  deploy:
    allow: [echo]
    paths:
      read: ["/"]
      write: ["/tmp", "$AG_DIR/req/f1", "~/missing-data/f1", "$AG_DIR/*.x"]
POLICY
P=$AG_DIR/policy.yaml
out=$("$AGENTGATE" check --config "$P" 2>&1); rc=$?
ag_like "$rc/$out" "^0/.*$P:[0-9]+:[0-9]+: warning: paths\\.write: '$AG_DIR/req/f1' does not exist; the sandbox can grant only what exists: create it, or name its directory" \
    "check_warns_of_a_write_path_that_does_not_exist" "$out"
ag_like "$out" "$P:[0-9]+:[0-9]+: warning: paths\\.write: '~/missing-data/f1' does not exist for account $AG_USER \\($H/missing-data/f1\\)" \
    "check_expands_tilde_in_the_home_of_the_account_users_gives_it" "$out"
ag_unlike "$out" "'/tmp'|'/'|\\*\\.x" "check_says_nothing_of_what_exists_nor_of_a_pattern" "$out"
out=$("$AGENTGATE" doctor --config "$P" --user "$AG_USER" 2>&1)
ag_like "$out" "WARN  profiles\\.deploy\\.paths\\.write: '$AG_DIR/req/f1' does not exist" \
    "doctor_warns_of_it" "$out"

# made: nothing to say
mkdir -p "$AG_DIR/req" "$H/missing-data"
touch "$AG_DIR/req/f1" "$H/missing-data/f1"
out=$("$AGENTGATE" check --config "$P" 2>&1)
ag_unlike "$out" "does not exist" "no_warning_once_the_paths_exist" "$out"
rm -rf "$H/missing-data"

# a "~" entry of a profile no account is given: whose home is not known
sed -i "s/^  $AG_USER: deploy\$/  nosuchaccount-agt: deploy/" "$P"
out=$("$AGENTGATE" check --config "$P" 2>&1)
ag_unlike "$out" "missing-data" "tilde_unsaid_without_a_known_account" "$out"

# the sandbox off grants nothing: nothing to say
rm -f "$AG_DIR/req/f1"
sed -i 's/  sandbox: required/  sandbox: "off"/' "$P"
out=$("$AGENTGATE" check --config "$P" 2>&1)
ag_unlike "$out" "does not exist" "no_warning_with_the_sandbox_off" "$out"
ag_done
