#!/bin/bash
# meta_outside.sh - chmod, chgrp and utime on the account's own files
# outside its home and write roots (red team 20, L2: a mail spool, as
# useradd makes it): Landlock does not mediate metadata, so every mount
# outside the write roots is read-only in the session's namespace, "/"
# included, with the write roots read-write again beneath it.  Through the
# real sshd with the shipped developer profile, from the shell, python3
# and a Makefile recipe; the benign side: metadata in ~/work and /tmp, a
# git commit, writes where the profile writes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
trap 'rm -f "/var/mail/$AG_USER"; ag_cleanup' EXIT
ag_shipped_world developer
ag_setgid_gateway
M=/var/mail/$AG_USER
install -d /var/mail
install -o "$AG_USER" -g mail -m 0660 /dev/null "$M"
echo "mail" > "$M"
touch -d '2020-01-01 00:00:00' "$M"
state() { stat -c '%a %g %Y' "$M"; }
before=$(state)

out=$(ag_ssh "chmod 0666 $M; chgrp \$(id -g) $M; touch -d 2000-01-01 $M; echo done" 2>&1)
ag_is "$(state)" "$before" "meta_outside_shell_changes_nothing" "$out"
out=$(ag_ssh "python3 -c 'import os; os.chmod(\"$M\", 0o666)' 2>&1 | tail -1; python3 -c 'import os; os.utime(\"$M\", (0, 0))' 2>&1 | tail -1" 2>&1)
ag_like "$out" "Read-only file system" "meta_outside_python3_refused_by_the_kernel" "$out"
ag_is "$(state)" "$before" "meta_outside_python3_changes_nothing"
printf 'all:\n\t-chmod 666 %s\n\t-touch -c -d 2000-01-01 %s\n' "$M" "$M" > "$W/meta.mk"
chown "$AG_USER" "$W/meta.mk"
out=$(ag_ssh "cd ~/work && make -f meta.mk" 2>&1)
ag_is "$(state)" "$before" "meta_outside_make_recipe_changes_nothing" "$out"
ag_is "$(cat "$M")" "mail" "meta_outside_spool_intact"

# the benign side
out=$(ag_ssh 'cd ~/work && echo "echo ran" > s.sh && chmod +x s.sh && ./s.sh && touch -d 2001-01-01 s.sh && stat -c %Y s.sh' 2>&1)
ag_is "$out" "ran
978307200" "meta_outside_metadata_in_the_write_root_works" "$out"
out=$(ag_ssh 'echo t > /tmp/m && chmod 600 /tmp/m && touch -d 2001-01-01 /tmp/m && stat -c "%a %Y" /tmp/m' 2>&1)
ag_is "$out" "600 978307200" "meta_outside_metadata_in_tmp_works" "$out"
out=$(ag_ssh 'cd ~/work && git init -q r && cd r && echo a > a && git add a && GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@x git commit -qm one && git log --format=%s' 2>&1)
ag_is "$out" "one" "meta_outside_git_commit_works" "$out"
out=$(ag_ssh 'cat /var/mail/$(id -un); ls / >/dev/null && echo listed' 2>&1)
ag_is "$out" "mail
listed" "meta_outside_reads_still_work" "$out"

ag_done
