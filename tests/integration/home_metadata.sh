#!/bin/bash
# Metadata outside the write roots (issue 33): Landlock mediates writing a
# file, not chmod, chown or utime, so the home is read-only in the session
# but for the write roots beneath it.  Tried through python3, a freshly
# built C program and a Makefile recipe; the benign side (chmod in ~/work)
# still works.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
ag_setup
ag_need_sandbox_lib

HOME_DIR=$(getent passwd "$AG_USER" | cut -d: -f6)
install -d -o "$AG_USER" "$HOME_DIR/work"
# a dotfile the account owns (what doctor would have root own), and an
# ordinary file beside it
for f in .bashrc notes; do
	echo "# $f" > "$HOME_DIR/$f"
	chown "$AG_USER" "$HOME_DIR/$f"
	chmod 0644 "$HOME_DIR/$f"
	touch -d '2020-01-01 00:00:00' "$HOME_DIR/$f"
done
ag_sandboxed_policy dev <<POLICY
  dev:
    tier: developer
    allow: [python3, cc, make, chmod, sh, cat, echo, ls, stat]
    paths: { read: ["/"], write: ["~/work"], exec: ["~/work"] }
POLICY

state() { stat -c '%a %Y' "$HOME_DIR/.bashrc" "$HOME_DIR/notes" | tr '\n' ' '; }
before=$(state)

# python3
out=$(ag_ssh "python3 -c 'import os; os.chmod(\"$HOME_DIR/.bashrc\", 0o666)'; python3 -c 'import os; os.utime(\"$HOME_DIR/notes\", None)'" 2>&1)
ag_is "$(state)" "$before" "python3_cannot_chmod_or_utime_in_home" "$out"

# a C program built in the session
cat > "$AG_DIR/meta.c" <<'C'
#include <stdio.h>
#include <sys/stat.h>
#include <utime.h>
int main(int argc, char **argv) {
	int a = chmod(argv[1], 0666), b = utime(argv[2], NULL), c = chown(argv[1], -1, -1);
	printf("chmod=%d utime=%d\n", a, b);
	return (a == 0 || b == 0) ? 0 : 1;
}
C
chmod 0644 "$AG_DIR/meta.c"
out=$(ag_ssh "cd ~/work && cc -o meta $AG_DIR/meta.c 2>&1 && ./meta $HOME_DIR/.bashrc $HOME_DIR/notes" 2>&1)
ag_like "$out" "chmod=-1 utime=-1" "built_program_is_refused_both" "$out"
ag_is "$(state)" "$before" "built_program_changed_nothing"

# a Makefile recipe
printf 'all:\n\tchmod 666 %s/.bashrc; touch -c %s/notes; true\n' "$HOME_DIR" "$HOME_DIR" > "$AG_DIR/meta.mk"
chmod 0644 "$AG_DIR/meta.mk"
out=$(ag_ssh "make -f $AG_DIR/meta.mk" 2>&1)
ag_is "$(state)" "$before" "make_recipe_cannot_chmod_or_touch_in_home" "$out"

# the benign side: the write root beneath the home is writable, metadata too
out=$(ag_ssh "cd ~/work && echo 'echo ran' > s.sh && chmod +x s.sh && ls -l s.sh" 2>&1)
ag_like "$out" "^-rwx" "chmod_in_the_write_root_works" "$out"
out=$(ag_ssh "cat ~/notes" 2>&1)
ag_is "$out" "# notes" "home_is_still_readable"
ag_done
