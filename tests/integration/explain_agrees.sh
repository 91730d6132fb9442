#!/usr/bin/env bash
# explain_agrees.sh - `agentgate explain --user` and the live gateway decide
# the same way: every command line of the agent corpus
# (contrib/bench/corpus.txt, 1,000 lines of the kind coding agents send) is
# sent through the real sshd to the gateway under the shipped policy's two
# profiles, each line in a session of its own (one multiplexed connection),
# and the decision and rule in its audit record must be what `agentgate
# explain --user ACCOUNT` printed for it.  Both are built from the same
# session context (src/core/core.h); this is the proof that they stay so.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup

ag_need_sandbox_lib
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "/home/$AG_USER/work"

CORPUS=${top_srcdir:-$(dirname "$0")/../..}/contrib/bench/corpus.txt

# Lines whose verdict depends on the session's context (home, environment,
# working directory), which the corpus, written relative to a project,
# seldom exercises.
{ cat "$CORPUS"; printf '%%%%\n'; cat <<'CONTEXT'
echo x > ~/work/notes.txt
%%
echo x > $HOME/work/notes.txt
%%
echo x > "${HOME}/work/n2.txt"
%%
cd ~/work && echo x > here.txt
%%
cd && echo x > work/there.txt
%%
echo x > ~/.profile
%%
echo x > $HOME/.bashrc
%%
cat > ~/work/a.txt <<'X'
a
X
%%
ls ~ ~/work
%%
echo $USER $LOGNAME > ~/work/who
%%
cd /tmp && echo x > t.txt
%%
cd .. && echo x > up.txt
%%
echo x > ../outside.txt
%%
echo x > work/rel.txt
%%
git -C ~/work status
%%
mkdir -p ~/work/d && cd ~/work/d && touch f
%%
rm -f ~/work/notes.txt
%%
cp ~/.bashrc ~/work/
%%
echo x > /home/$USER/work/abs.txt
CONTEXT
} > "$AG_DIR/corpus.txt"
CORPUS=$AG_DIR/corpus.txt

# A backup account's exact argument rules (argv, named rules): the restore
# it exists for and the ways around it, judged alike (the rule ids too).
B=/home/$AG_USER/work/backup
install -d -o "$AG_USER" -g "$AG_USER" -m 0755 "$B"
for line in "tar -x -C $B -f -" "tar -x -C $B -f - --to-command=sh" "tar -xC$B -f -" \
    "tar -x -C $B -f - --" "env tar -x -C $B -f -" "nice tar -x -C / -f -" \
    "tar -x -C $B -f \$f" "TAR_OPTIONS=--to-command=sh tar -x -C $B -f -" "date" "date -u" \
    "ls /" "ls //" "cd / && ls ." "ls / /tmp" "xargs tar -x -C $B -f -"; do
	printf '%s\n%%%%\n' "$line"
done > "$AG_DIR/argv-corpus.txt"

for profile in readonly developer backup; do
	if [ "$profile" = backup ]; then
		ag_argv_policy "$B"
		CORPUS=$AG_DIR/argv-corpus.txt
	else
		ag_shipped_policy "$profile"
	fi
	out=$("$AG_PYTHON" - "$CORPUS" "$AGENTGATE" "$AG_DIR/policy.yaml" "$AG_USER" "$AG_AUDIT" \
	    "$AG_DIR/mux" "${AG_SSH[@]}" <<'EOF' 2>&1
import json, subprocess, sys

corpus, agentgate, policy, user, audit, mux = sys.argv[1:7]
ssh = sys.argv[7:]
# one connection, a session per line: -S/ControlMaster before the host
ssh = ssh[:-1] + ["-o", "ControlMaster=auto", "-o", "ControlPath=" + mux,
                  "-o", "ControlPersist=600", "-n", ssh[-1]]
with open(corpus, encoding="utf-8") as f:
    records = [r.strip("\n") for r in f.read().split("\n%%\n")]
records = [r for r in records if r.strip() and r.strip() != "%%"]

def explain(line):
    p = subprocess.run([agentgate, "explain", "--config", policy, "--user", user,
                        "--cwd", "/home/" + user, "--json", "-"],
                       input=line.encode(), capture_output=True)
    d = json.loads(p.stdout)
    verdict, rule = d["decision"], d["rule"] or None
    if verdict == "ask":	# the shipped profiles say unknown: deny or allow; no validator answers here
        verdict, rule = "deny", rule or "unknown:ask"
    return verdict, rule, d["commands"]

def count():
    try:
        with open(audit, encoding="utf-8") as f:
            return len(f.read().splitlines())
    except FileNotFoundError:
        return 0

seen = count()
def new_records():
    global seen
    with open(audit, encoding="utf-8") as f:
        lines = f.read().splitlines()
    fresh, seen = lines[seen:], len(lines)
    return [json.loads(x) for x in fresh]

agree = differ = 0
for line in records:
    want, want_rule, cmds = explain(line)
    p = subprocess.run(ssh + [line], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=600)
    got = [r for r in new_records() if r.get("event") == "command"]
    if not got and not cmds:
        agree += 1		# only a comment: no command, on both sides
        continue
    if len(got) != 1:
        differ += 1
        print("DIFF %r: %d audit records, explain says %s; ssh: %s" % (line[:80], len(got),
              want, p.stderr.decode(errors="replace").strip()[-200:]))
        continue
    have = (got[0].get("decision"), got[0].get("rule") or None)
    if have == (want, want_rule):
        agree += 1
    else:
        differ += 1
        print("DIFF %r: gateway %s [%s], explain %s [%s]; gateway's reason: %s" % (
            line[:80], have[0], have[1], want, want_rule, got[0].get("reason")))
subprocess.run(ssh[:-2] + ["-O", "exit", ssh[-1]], capture_output=True)
print("agree=%d differ=%d" % (agree, differ))
EOF
)
	printf '%s\n' "$out" | grep '^DIFF' | head -n 20 | sed 's/^/# /'
	ag_like "$(printf '%s\n' "$out" | tail -n 1)" "^agree=[0-9]{$([ "$profile" = backup ] && echo 2 || echo 3),} differ=0$" \
	    "explain_agrees_with_the_gateway_${profile}"
done

ag_done
