/*
 * tmpclean.h - what runs while the persistent /tmp is past limits.tmp_disk.
 *
 * Then only a line that looks at and removes files runs (red teams 20, 22,
 * 23 and 24): each of its commands one of a few builtins (cd, echo, pwd,
 * test, true, false, :) or the system's own file of a few programs (rm,
 * rmdir, unlink, ls, du, chmod, and echo, test, true, false, pwd), known
 * by the file, not by a name (`~/work/rm` is not rm); no '>' but to
 * /dev/null or a descriptor; no assignment, no environment prefix, and
 * nothing bash evaluates unseen (a subscript, arithmetic on a value not
 * known to be a number, test -v of a subscript: what the strict tier
 * refuses).  It runs with no LD_* or other loader variable, and without
 * the shell functions kept from earlier lines (a function named rm would
 * run in rm's place; their plain variables stay: `rm -rf "$D"/` must not
 * lose its $D),
 * and where an exec supervisor judges every exec, it lets only those
 * files run.
 */
#ifndef AG_CORE_TMPCLEAN_H
#define AG_CORE_TMPCLEAN_H

#include <stddef.h>
#include <sys/types.h>

#include "parse/shparse.h"
#include "policy/policy.h"

/* 1 when the decided line (its text line[0..len)) is such a line. */
int	ag_tmpclean_line(const struct ag_decision *d, const char *line, size_t len);

/* 1 when the file (dev, ino) is one of the system's clean-up programs. */
int	ag_tmpclean_file(dev_t dev, ino_t ino);

/* What the line (its parse) holds that a clean-up line may not, as the
 * refusal says it (an assignment or environment prefix, a function
 * definition, a coprocess), or NULL.  The rest of what bash would run
 * unseen (a subscript or arithmetic it evaluates, test -v of a subscript)
 * the policy refuses when asked with ag_policy_ctx.cleanup. */
const char *ag_tmpclean_shape(const struct ag_sh_node *tree);

/* The kept shell state (bash definitions, exec/session.h) for a clean-up
 * line: its variables whose every key and value is plain text (no $,
 * backquote, [ ], quote, backslash or control character), no functions.
 * malloc'd, NULL when it does not parse or memory ran out (then the line
 * is refused). */
char	*ag_tmpclean_state(const char *state);

/* env less the names that make the loader or libc load other code (LD_*,
 * GCONV_PATH, GLIBC_TUNABLES, ...): a malloc'd vector of env's strings
 * (free the vector only), NULL when memory ran out. */
char	**ag_tmpclean_env(char *const *env);

/* What a refusal says the lines may hold. */
#define AG_TMPCLEAN_SAID	"lines of only rm, rmdir, unlink, ls, du, chmod and cd, " \
	"the system's own (not a file of that name elsewhere), with no redirection"

#endif
