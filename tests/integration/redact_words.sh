#!/bin/bash
# redact_words.sh - the audit's masking of secret-named variables' values
# stays inside the parser's words (red team 20, M1; issue 33, 3): $'..'
# quoting, a here-document line or a comment holding `TOKEN='` once masked
# up to the next quote, and the record hid the commands between while they
# ran.  Every program and every argument outside a masked span stays in the
# `command_start` and `command` records, with the exact line's digest.
# Through the real sshd with the shipped developer profile.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_shipped_world developer
ag_setgid_gateway
install -d -o "$AG_USER" -g "$AG_USER" "$W/a"

# ag_recorded NAME LINE: LINE run; prints its `command` record's text, and
# checks that command_start says the same and that the digest is the line's
ag_recorded() {
	ag_ssh "$2" >/dev/null 2>&1
	"$AG_PYTHON" - "$AG_AUDIT" "$2" "$1" <<'PY'
import hashlib, json, sys
line, name = sys.argv[2], sys.argv[3]
r = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
# the line's records: its digest when the record differs from it, else
# the record is the line
mine = lambda x: x.get("command_sha256", hashlib.sha256(x.get("command", "").encode()).
                        hexdigest()) == hashlib.sha256(line.encode()).hexdigest()
c = [x for x in r if x.get("event") == "command" and mine(x)]
s = [x for x in r if x.get("event") == "command_start" and mine(x)]
if len(c) != 1 or len(s) != 1 or s[0]["command"] != c[0]["command"]:
    print("%s: no one pair of records with the line's digest (%d, %d) %s" %
          (name, len(c), len(s), [(x.get("decision"), x.get("reason")) for x in c]))
else:
    print(c[0]["command"])
PY
}

# a: $'..' quoting
rec=$(ag_recorded a "cd ~/work/a; TOKEN=\$'a\\'b' ; python3 -c 'open(\"HIDDEN_A\",\"w\").write(\"x\")' ; echo 'z'")
# (a value bash expands is no token: shown whole, red team 24)
ag_is "$rec" "cd ~/work/a; TOKEN=\$'a\\'b' ; python3 -c 'open(\"HIDDEN_A\",\"w\").write(\"x\")' ; echo 'z'" \
    "redact_words_ansi_quote_shown"
ag_ok "redact_words_ansi_quote_command_ran" test -e "$W/a/HIDDEN_A"

# b: a here-document line opening a quote
line="cd ~/work/a; cat > f <<'E'
TOKEN='
API_KEY=abc def
E
python3 -c 'open(\"HIDDEN_B\",\"w\").write(\"x\")'
echo \"'\""
rec=$(ag_recorded b "$line")
ag_is "$rec" "cd ~/work/a; cat > f <<'E'
TOKEN='
API_KEY=*** def
E
python3 -c 'open(\"HIDDEN_B\",\"w\").write(\"x\")'
echo \"'\"" "redact_words_heredoc_line_masks_only_its_value"
ag_ok "redact_words_heredoc_command_ran" test -e "$W/a/HIDDEN_B"
ag_is "$(cat "$W/a/f")" "TOKEN='
API_KEY=abc def" "redact_words_heredoc_body_written_whole"

# c: a comment holding TOKEN=': a comment is no word, nothing masked
line="cd ~/work/a; echo hi # TOKEN='
touch HIDDEN_C
echo \"'\""
rec=$(ag_recorded c "$line")
ag_is "$rec" "$line" "redact_words_comment_masks_nothing"
ag_ok "redact_words_comment_command_ran" test -e "$W/a/HIDDEN_C"

# d: a command substitution in the value stays; its own assignment masked
rec=$(ag_recorded d "cd ~/work/a; API_TOKEN=x\$(SECRET=s3; touch HIDDEN_D)y true")
ag_is "$rec" "cd ~/work/a; API_TOKEN=x\$(SECRET=***; touch HIDDEN_D)y true" \
    "redact_words_substitution_in_value_shown"
ag_ok "redact_words_substitution_ran" test -e "$W/a/HIDDEN_D"

# e: issue 33's case: a line shaped like a PEM block hides only key lines
line="cd ~/work/a; echo '-----BEGIN RSA PRIVATE KEY-----'
touch HIDDEN_E
echo '-----END RSA PRIVATE KEY-----'"
rec=$(ag_recorded e "$line")
ag_is "$rec" "$line" "redact_words_pem_shaped_line_shown"
ag_ok "redact_words_pem_shaped_line_ran" test -e "$W/a/HIDDEN_E"

# e2: a shell's here-document between a key's markers (red team 23, M3):
# its body and delimiter stay in the record, typed and in the REPL
# (a line of base64's letters only, longer than 40: a program's path)
P=$W/a/payloadpayloadpayload
for n in E2 E3; do
	printf '#!/bin/sh\ntouch "$HOME/work/a/HIDDEN_%s"\n' $n > "$P$n"
	chown "$AG_USER" "$P$n"; chmod 755 "$P$n"
done
line="cd ~/work/a; echo -----BEGIN PRIVATE KEY-----; sh <<E
${P}E2
E
echo -----END PRIVATE KEY-----"
rec=$(ag_recorded e2 "$line")
ag_is "$rec" "$line" "redact_words_pem_shell_heredoc_shown"
ag_ok "redact_words_pem_shell_heredoc_ran" test -e "$W/a/HIDDEN_E2"
printf '%s\n' 'cd ~/work/a' 'echo -----BEGIN PRIVATE KEY-----; sh <<E' "${P}E3" 'E' \
    'echo -----END PRIVATE KEY-----' | ag_ssh >/dev/null 2>&1
ag_ok "redact_words_pem_repl_heredoc_ran" test -e "$W/a/HIDDEN_E3"
rec=$(ag_audit_query "'|'.join(x.get('command') for x in r if x.get('event') == 'command' and 'sh <<E' in (x.get('command') or ''))")
ag_like "$rec" "sh <<E
${P}E3
E\$" "redact_words_pem_repl_heredoc_shown"
# a key written to a file is recorded as typed (red team 24, M1: no shape
# tells a key's lines from what a shell runs; the audit is root's and the
# gateway group's), and the line runs
key=MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun
line="cd ~/work/a; cat > k <<'EOF'
-----BEGIN RSA PRIVATE KEY-----
$key
$key
-----END RSA PRIVATE KEY-----
EOF"
rec=$(ag_recorded e4 "$line")
ag_is "$rec" "$line" "redact_words_pem_key_in_file_recorded"
ag_is "$(sed -n 2p "$W/a/k" 2>/dev/null)" "$key" "redact_words_pem_key_written"

# g: an argument that BEGINS with NAME= is another program's text, not an
# assignment (red team 23, M1): a value that is no whole token is shown
line="cd ~/work/a; python3 -c TOKEN='0
import os
os.system(\"touch HIDDEN_G\")'"
rec=$(ag_recorded g "$line")
ag_is "$rec" "$line" "redact_words_argument_starting_with_name_shows_code"
ag_ok "redact_words_argument_starting_with_name_ran" test -e "$W/a/HIDDEN_G"
rec=$(ag_recorded g2 "cd ~/work/a; awk TOKEN='=1;BEGIN{system(\"touch HIDDEN_G2\")}' /dev/null")
ag_is "$rec" "cd ~/work/a; awk TOKEN='=1;BEGIN{system(\"touch HIDDEN_G2\")}' /dev/null" \
    "redact_words_awk_program_shown"
ag_ok "redact_words_awk_program_ran" test -e "$W/a/HIDDEN_G2"
# the same typed in the REPL: each line's record shows its code
printf '%s\n' 'cd ~/work/a' "node -e API_KEY=\"1;require('fs').writeFileSync('HIDDEN_R','x')\"" \
    'export API_TOKEN="repl-s3cr3t"; echo "$API_TOKEN" > rt' | ag_ssh >/dev/null 2>&1
ag_ok "redact_words_repl_node_ran" test -e "$W/a/HIDDEN_R"
rec=$(ag_audit_query "'|'.join(x.get('command') for x in r if x.get('event') == 'command' and 'HIDDEN_R' in (x.get('command') or ''))")
ag_is "$rec" "node -e API_KEY=\"1;require('fs').writeFileSync('HIDDEN_R','x')\"" \
    "redact_words_repl_node_code_shown"
# its benign twin: a declaration's token value is bash's, masked whole
ag_is "$(cat "$W/a/rt" 2>/dev/null)" "repl-s3cr3t" "redact_words_repl_export_ran"
ag_unlike "$(cat "$AG_AUDIT")" "s3cr3t" "redact_words_repl_export_masked"

# l: declaration words quoted and with += (red team 23, L1): their token
# values masked as bash assigns them, and the lines run
rec=$(ag_recorded l1 "cd ~/work/a; export 'TOKEN=s3cr3t-one'; export \"PASSWORD=s3cr3t-two\"; declare DB_TOKEN+=s3cr3t-three; export API_KEY+=s3cr3t-four; echo \"\$TOKEN \$PASSWORD \$DB_TOKEN \$API_KEY\" > l1")
ag_is "$rec" "cd ~/work/a; export 'TOKEN=***'; export \"PASSWORD=***\"; declare DB_TOKEN+=***; export API_KEY+=***; echo \"\$TOKEN \$PASSWORD \$DB_TOKEN \$API_KEY\" > l1" \
    "redact_words_declaration_values_masked"
ag_is "$(cat "$W/a/l1" 2>/dev/null)" "s3cr3t-one s3cr3t-two s3cr3t-three s3cr3t-four" \
    "redact_words_declarations_ran"
ag_unlike "$(cat "$AG_AUDIT")" "s3cr3t" "redact_words_declaration_secrets_not_in_the_audit"
# an array or a subscript, which bash parses and expands again, is never
# masked (red team 24, H1): recorded as typed, and its code is listed
line="cd ~/work/a; declare -a 'TOKEN=(\$(touch HIDDEN_L) x)'; echo \${#TOKEN[@]}"
rec=$(ag_recorded l2 "$line")
ag_is "$rec" "$line" "redact_words_reparsed_array_code_shown"
ag_ok "redact_words_reparsed_array_code_ran" test -e "$W/a/HIDDEN_L"
line="cd ~/work/a; declare -A 'B_TOKEN=([k]=plain-one)'; C_TOKEN[1]=plain-two"
rec=$(ag_recorded l3 "$line")
ag_is "$rec" "$line" "redact_words_arrays_shown"

# the benign twin: secrets a line sets are masked, the line runs
rec=$(ag_recorded f "cd ~/work/a; APP_TOKEN=hunter2-not-a-shape; DB_PASSWORD='p-w' env | grep -c '^DB_PASSWORD=p-w\$' > n; tool_api_key=abc; echo done")
ag_is "$rec" "cd ~/work/a; APP_TOKEN=***; DB_PASSWORD='***' env | grep -c '^DB_PASSWORD=p-w\$' > n; tool_api_key=***; echo done" \
    "redact_words_benign_secrets_masked"
ag_is "$(cat "$W/a/n" 2>/dev/null)" 1 "redact_words_benign_line_ran"
ag_unlike "$(cat "$AG_AUDIT")" "hunter2-not-a-shape" "redact_words_benign_secret_not_in_the_audit"

ag_done
