#!/bin/bash
# repl_forged_state.sh - the REPL's kept state is what the line's shell
# reported on fd 3, which the line can write itself and whose trap it can
# remove (red team 24, H3): it is read as untrusted text.  Through the
# real sshd with the shipped developer profile: a forged indexed array
# whose key is `$(..)` (written by a line to fd 3 with `trap - EXIT`, and
# typed inline) runs nothing at the next line's start and is said and
# recorded; malformed records are left out; the benign twin, arrays kept
# as bash prints them (indexed and associative, keys with `$(` and `]`
# in an associative one), still holds for the lines after.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_shipped_world developer
install -d -o "$AG_USER" -g "$AG_USER" "$W"

# ---- typed in the REPL: the line writes its own report and drops the trap -------------
out=$(printf '%s\n' \
    'printf '"'"'\0=<\0=aaQQ\0=k\x24(touch ~/work/FORGED_1)\0=e1\0=k2\0=etwo\0=f\0=\0'"'"' >&3; trap - EXIT; echo forged' \
    'echo next; declare -p QQ' \
    'echo again' | ag_ssh 2>&1)
ag_ok "forged_index_key_did_not_run" test ! -e "$W/FORGED_1"
ag_like "$out" "^forged" "forged_line_ran" "$out"
ag_like "$out" "not kept for the next lines: QQ \\(an indexed array's key that is not a number" \
    "forged_index_key_said" "$out"
# the rest of the array is kept, as bash prints it
ag_like "$out" "declare -a QQ=\\(\\[2\\]=\"two\"\\)" "forged_array_rest_kept" "$out"
ag_is "$(ag_audit_query '[x.get("request") for x in r if x.get("event") == "sandbox" and x.get("request") == "state_forged"]')" \
    "['state_forged']" "forged_state_recorded"

# ---- from a file the line copies to fd 3 (written any earlier way) ------------------
install -d -o "$AG_USER" -g "$AG_USER" "$W"
printf '\0=<\0=aaQQ\0=k$(touch %s/FORGED_2)\0=e1\0=aaARR\0=k0\0=e0\0=k010\0=eoct\0=k-1\0=eneg\0=eorphan\0=aAM\0=k$(touch %s/FORGED_3)\0=ev\0=k\0=eempty\0=a\0=zjunk\0=v1x=2\0=f\0=\0' \
    "$W" "$W" > "$W/blob"
chown "$AG_USER" "$W/blob"
out=$(printf '%s\n' 'cat ~/work/blob >&3; trap - EXIT; echo copied' \
    'declare -p QQ ARR M 2>&1' | ag_ssh 2>&1)
ag_ok "forged_file_index_key_did_not_run" test ! -e "$W/FORGED_2"
ag_ok "forged_file_assoc_key_did_not_run" test ! -e "$W/FORGED_3"
# an associative array's key is a quoted word: kept as text
ag_like "$out" "^declare -A M=\\(\\[\"\\\\\\\$\\(touch $W/FORGED_3\\)\"\\]=\"v\" \\)$" "forged_assoc_key_kept_as_text" "$out"
# keys that are not as bash writes an index (010, -1) are left out, 0 kept
ag_like "$out" 'declare -a ARR=\(\[0\]="0"\)' "forged_index_keys_only_as_bash_prints" "$out"
ag_like "$out" "not kept for the next lines: " "forged_file_said" "$out"

# ---- the benign twin: arrays as bash makes them hold for the next lines ---------------
out=$(printf '%s\n' 'a=(x "y z" "$(echo q)"); a[12]=twelve; declare -A m=([k]=v ['"'"'$(x)'"'"']=w ["a]=b"]=c)' \
    'kx='"'"'$(x)'"'"'; kb="a]=b"; echo "${a[1]}|${a[2]}|${a[12]}|${#a[@]}|${m[k]}|${m[$kx]}|${m[$kb]}"' | ag_ssh 2>&1)
ag_is "$out" 'y z|q|twelve|4|v|w|c' "benign_arrays_kept" "$out"
ag_unlike "$out" "not kept" "benign_arrays_no_note" "$out"

ag_done
