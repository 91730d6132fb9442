#!/bin/bash
# readonly_profile.sh - the shipped `readonly` profile (etc/agentgate.yaml)
# through the real sshd, issue 36 item 4: it writes nothing anywhere, and
# the everyday inspection a headless agent does runs as printed.
#   - README's own example (git log --oneline | head -3) and each
#     inspection tool the profile lists run and print what they should;
#   - every redirection form, into the account's own ~/work, the host's
#     /tmp and the home, is refused at the typed line, and no file appears;
#   - what an allowed program writes by itself, which the typed line cannot
#     see (xxd -r, file -C), is held by the kernel: the files do not appear.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
# a checkout the account owns: DAC would let it write everything here
ag_shipped_world readonly
git init -q "$W/repo" || exit 99
printf 'one\ntwo\nthree\n' > "$W/repo/notes.txt"
git -C "$W/repo" add notes.txt
for m in first second third fourth; do
	echo "$m" >> "$W/repo/notes.txt"
	git -C "$W/repo" -c user.name=t -c user.email=t@localhost commit -qam "$m commit" || exit 99
done
chown -R "$AG_USER:$AG_USER" "$W"
# a directory anyone may write (DAC says yes; only the policy says no)
PUB=$AG_DIR/pub
install -d -m 1777 "$PUB"

x() { ag_run x "$@"; }

# ---- what the profile is for ------------------------------------------------
x 'cd ~/work/repo && git log --oneline | head -3'
ag_like "$x_out" '^[0-9a-f]+ fourth commit' "README's example runs as printed" "$x_err"
ag_is "$(printf '%s\n' "$x_out" | wc -l)" 3 "and prints three lines" "$x_out"
x 'wc -l ~/work/repo/notes.txt'
ag_like "$x_out" '^7 ' "wc -l" "$x_err"
x 'cd ~/work/repo && git status --short && git diff HEAD~1 --stat && git show --stat HEAD | head -1'
ag_is "$x_rc" 0 "git status, diff and show" "$x_err"
x 'cd ~/work/repo && git blame notes.txt | tail -1 && git ls-files && git shortlog -s | wc -l'
ag_like "$x_out" 'fourth' "git blame, ls-files, shortlog" "$x_err"
x 'cd ~/work/repo && sort notes.txt | uniq -c | sort -rn | head -2 && cut -c1-2 notes.txt | tr a-z A-Z | tail -1'
ag_like "$x_out" 'FO' "sort, uniq, cut, tr" "$x_err"
x 'stat -c %s ~/work/repo/notes.txt; file ~/work/repo/notes.txt; sha256sum ~/work/repo/notes.txt | cut -c1-8'
ag_like "$x_out" 'ASCII text' "stat, file, sha256sum" "$x_err"
x 'du -s ~/work >/dev/null && df / >/dev/null && ps -o pid= -p $$ >/dev/null && nproc && uname -s && id -un && printenv LANG'
ag_like "$x_out" 'Linux' "du, df, ps, nproc, uname, id, printenv (and >/dev/null)" "$x_err"
x 'echo "{\"a\": [1, 2]}" | jq -c .a'
ag_is "$x_out" '[1,2]' "jq" "$x_err"
x 'sed -n 2p ~/work/repo/notes.txt; grep -c o ~/work/repo/notes.txt; find ~/work/repo -name notes.txt'
ag_like "$x_out" 'two' "sed -n, grep -c, find" "$x_err"
x 'cat <<EOF | wc -l
a
b
EOF'
ag_is "$x_out" 2 "a here-document is input, not a write" "$x_err"

# ---- every redirection form writes nothing ------------------------------------
n=0
while IFS= read -r line; do
	[ -z "$line" ] && continue
	n=$((n + 1))
	for dir in "~/work" "$PUB" /tmp "~"; do
		cmd=${line//DIR/$dir}
		x "$cmd" </dev/null
		ag_is "$x_rc" 126 "refused: $cmd" "$x_out" "$x_err"
	done
done <<'FORMS'
echo x > DIR/agtw1
echo x >> DIR/agtw2
echo x >| DIR/agtw3
echo x &> DIR/agtw4
echo x &>> DIR/agtw5
ls 2> DIR/agtw6
ls 3> DIR/agtw7
cat 4<> DIR/agtw8
exec 5> DIR/agtw9
{ echo x; } > DIR/agtw10
( echo x ) > DIR/agtw11
for i in 1; do echo $i; done > DIR/agtw12
echo "$(echo x > DIR/agtw13)"
cat <(echo x > DIR/agtw14)
cat > DIR/agtw15 <<< x
sort -o DIR/agtw16 ~/work/repo/notes.txt
sed -i s/one/ONE/ DIR/agtw17
sed -n 'w DIR/agtw18' ~/work/repo/notes.txt
git -C ~/work/repo log --output=DIR/agtw19
find ~/work/repo -fprint DIR/agtw20
ls | tee DIR/agtw21
FORMS
ag_is "$n" 21 "all the forms were tried"
for dir in "~/work" /tmp; do
	x "cat <<EOF > $dir/agtw22
x
EOF"
	ag_is "$x_rc" 126 "refused: a here-document into $dir" "$x_out" "$x_err"
done
left=$(find "$W" "$PUB" "$H" /tmp -name 'agtw[0-9]*' 2>/dev/null)
ag_is "$left" "" "no file was written" "$left"
ag_is "$(git -c safe.directory='*' -C "$W/repo" status --porcelain 2>&1)" "" "the checkout is unchanged"

# ---- what the typed line cannot see, the kernel holds -----------------------
x 'echo 00000000: 41 | xxd -r - ~/work/repo/by-xxd'
ag_ok "xxd -r could not write into ~/work" test ! -e "$W/repo/by-xxd"
ag_unlike "$x_rc" '^0$' "and failed" "$x_out" "$x_err"
x "echo 00000000: 41 | xxd -r - $PUB/by-xxd"
ag_ok "nor into a world-writable directory" test ! -e "$PUB/by-xxd"
x 'cd ~/work/repo && echo "0 string AGT agt" > /dev/null; file -C -m notes.txt'
ag_ok "file -C could not compile a magic file beside the notes" test ! -e "$W/repo/notes.txt.mgc"
x 'cd ~/work/repo && git status >/dev/null; ls .git/index.lock 2>/dev/null; echo done'
ag_is "$x_out" done "git status leaves no lock behind" "$x_err"

ag_done
