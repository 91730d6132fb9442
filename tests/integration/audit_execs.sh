#!/bin/bash
# audit_execs.sh - a command's record lists the programs that actually ran
# (red team 24, H1, M1, M2): the exec supervisor keeps the distinct files it
# let run, by path and never their argv, and the `command` record carries
# them as `execs`, so no masking of the line's text can hide code that ran.
# The red team's lines typed and through the REPL; and the benign twins: a
# line of builtins lists none, an argument is never recorded there.
# Through the real sshd with the shipped developer profile.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_shipped_world developer
ag_setgid_gateway
install -d -o "$AG_USER" -g "$AG_USER" "$W/a"

# ag_execs NAME LINE: LINE run; prints the basenames of its `command`
# record's execs, sorted, joined by spaces (or what is wrong)
ag_execs() {
	ag_ssh "$2" >/dev/null 2>&1
	"$AG_PYTHON" - "$AG_AUDIT" "$2" "$1" <<'PY'
import hashlib, json, os, sys
line, name = sys.argv[2], sys.argv[3]
r = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
h = hashlib.sha256(line.encode()).hexdigest()
mine = lambda x: x.get("command_sha256", hashlib.sha256(x.get("command", "").encode()).
                        hexdigest()) == h
c = [x for x in r if x.get("event") == "command" and mine(x)]
if len(c) != 1 or "execs" not in c[0]:
    print("%s: no one command record with execs (%d)" % (name, len(c)))
else:
    print(" ".join(sorted(set(os.path.basename(p) for p in c[0]["execs"]))))
PY
}

# execs_has NAME LINE PROG...: each PROG among the execs of LINE's record
execs_has() {
	local name=$1 line=$2 got p
	shift 2
	got=" $(ag_execs "$name" "$line") "
	for p in "$@"; do
		ag_like "$got" " $p " "audit_execs_${name}_lists_$p"
	done
}

# typed NAME LINE: LINE's command record is the line as typed, nothing
# masked (a value that may be code is not token-shaped, or its name is
# expanded as code in the line: red team 24, H1, M2)
typed() {
	ag_is "$(AG_L=$2 ag_audit_query "any(x.get('command') == __import__('os').environ['AG_L'] for x in r if x.get('event') == 'command')")" \
	    yes "audit_execs_$1_recorded_as_typed"
}

# H1: values bash evaluates later (declare's re-parsed array, a subscript,
# $((..)), test -v, eval, sh -c "$VAR"): the program they ran is listed
execs_has h1a "cd ~/work/a; declare -a TOKEN='([0]=\$(touch HIDDEN_A))'; echo a" touch
typed h1a "cd ~/work/a; declare -a TOKEN='([0]=\$(touch HIDDEN_A))'; echo a"
ag_ok "audit_execs_h1a_ran" test -e "$W/a/HIDDEN_A"
execs_has h1d "cd ~/work/a; f() { local -a API_KEY='([1]=\$(touch HIDDEN_D))'; }; f; echo d" touch
typed h1d "cd ~/work/a; f() { local -a API_KEY='([1]=\$(touch HIDDEN_D))'; }; f; echo d"
execs_has h1s "cd ~/work/a; TOKEN=(['\$(touch HIDDEN_S1)']=1); echo s" touch
typed h1s "cd ~/work/a; TOKEN=(['\$(touch HIDDEN_S1)']=1); echo s"
execs_has h1t1 "cd ~/work/a; TOKEN='a[\$(touch HIDDEN_T1)]'; echo \$((TOKEN))" touch
typed h1t1 "cd ~/work/a; TOKEN='a[\$(touch HIDDEN_T1)]'; echo \$((TOKEN))"
ag_ok "audit_execs_h1t1_ran" test -e "$W/a/HIDDEN_T1"
execs_has h1t2 "cd ~/work/a; API_KEY='touch HIDDEN_T2'; eval \"\$API_KEY\"" touch
typed h1t2 "cd ~/work/a; API_KEY='touch HIDDEN_T2'; eval \"\$API_KEY\""
execs_has h1t3 "cd ~/work/a; export PASSWORD='touch HIDDEN_T3'; sh -c \"\$PASSWORD\"" sh touch
typed h1t3 "cd ~/work/a; export PASSWORD='touch HIDDEN_T3'; sh -c \"\$PASSWORD\""
execs_has h1t4 "cd ~/work/a; SECRET='a[\$(touch HIDDEN_T4)]'; test -v \"\$SECRET\"" touch
typed h1t4 "cd ~/work/a; SECRET='a[\$(touch HIDDEN_T4)]'; test -v \"\$SECRET\""
ag_ok "audit_execs_h1t4_ran" test -e "$W/a/HIDDEN_T4"

# M2: export made a function by eval; perl's text through sh -c
execs_has m2e "cd ~/work/a; eval 'export() { eval \"\${1#*=}\"; }'; export TOKEN='touch HIDDEN_E'" touch
typed m2e "cd ~/work/a; eval 'export() { eval \"\${1#*=}\"; }'; export TOKEN='touch HIDDEN_E'"
ag_ok "audit_execs_m2e_ran" test -e "$W/a/HIDDEN_E"
execs_has m2g "cd ~/work/a; sh -c \"perl -e @TOKEN=system+q!/usr/bin/touch!,q!HIDDEN_G!\"" sh perl touch
typed m2g "cd ~/work/a; sh -c \"perl -e @TOKEN=system+q!/usr/bin/touch!,q!HIDDEN_G!\""
ag_ok "audit_execs_m2g_ran" test -e "$W/a/HIDDEN_G"

# M1: a private key's lines given to a function named cat that runs sh;
# and a script the key lines name, run through a fifo
P=$W/a/runmerunmerunmerunmerunmerunmerunmerunme
printf '#!/bin/sh\ntouch "$HOME/work/a/HIDDEN_K"\n' > "$P"
chown "$AG_USER" "$P"; chmod 755 "$P"
line="cd ~/work/a; eval 'cat() { sh; }'; cat <<E
-----BEGIN PRIVATE KEY-----
$P
-----END PRIVATE KEY-----
E"
execs_has m1 "$line" sh runmerunmerunmerunmerunmerunmerunmerunme touch
ag_ok "audit_execs_m1_ran" test -e "$W/a/HIDDEN_K"
typed m1 "$line"

# the REPL: a value kept from an earlier line, evaluated by a later one
printf '%s\n' 'cd ~/work/a' "API_KEY='touch HIDDEN_R1'" 'eval "$API_KEY"' \
    'cat() { sh; }' "cat <<E" "$P" 'E' | ag_ssh >/dev/null 2>&1
ag_ok "audit_execs_repl_ran" test -e "$W/a/HIDDEN_R1"
typed repl_value "API_KEY='touch HIDDEN_R1'"
got=$(ag_audit_query "' '.join(sorted(set(__import__('os').path.basename(p) for x in r if x.get('event') == 'command' and (x.get('command') or '').startswith('eval \"\$API_KEY\"') for p in x.get('execs', []))))")
ag_is "$got" "touch" "audit_execs_repl_eval_lists_touch"
got=$(ag_audit_query "' '.join(sorted(set(__import__('os').path.basename(p) for x in r if x.get('event') == 'command' and (x.get('command') or '').startswith('cat <<E') for p in x.get('execs', []))))")
ag_like " $got " " sh " "audit_execs_repl_kept_function_lists_sh"

# benign twins: builtins only list nothing; a program's argv is never
# recorded there (a secret passed to it stays out of the audit)
ag_is "$(ag_execs b1 "cd ~/work/a; echo hi; x=1")" "" "audit_execs_builtins_list_nothing"
execs_has b2 "cd ~/work/a; TOKEN=zq8Kv3token; /bin/echo \"\$TOKEN\" > out" echo
ag_is "$(cat "$W/a/out" 2>/dev/null)" "zq8Kv3token" "audit_execs_benign_ran"
ag_unlike "$(cat "$AG_AUDIT")" "zq8Kv3token" "audit_execs_argv_not_recorded"
# a token-shaped value the line runs as code is not masked (H1, M2), and
# one passed on as data still is
L="cd ~/work/a; export PASSWORD=/usr/bin/true; sh -c \"\$PASSWORD\""
execs_has t1 "$L" sh true
typed t1 "$L"
L="cd ~/work/a; eval 'export() { eval \"\${1#*=}\"; }'; export TOKEN=/usr/bin/true"
execs_has t2 "$L" true
typed t2 "$L"
L="cd ~/work/a; export API_TOKEN=zq8Kv3other; /bin/echo \"Bearer \$API_TOKEN\" > out2"
execs_has t3 "$L" echo
ag_unlike "$(cat "$AG_AUDIT")" "zq8Kv3other" "audit_execs_benign_token_masked"

ag_done
