/*
 * envsan.h - the dangerous-variable filter.  One list, used twice: the
 * policy refuses assignments and exports of these names, and the session
 * strips them from every environment captured back from a runner.
 */
#ifndef AG_ENVSAN_H
#define AG_ENVSAN_H

#include "common/config.h"

/*
 * 1 when name may not be set by a command: the built-in set (LD_*, BASH_ENV,
 * ENV, BASH_FUNC_*, SHELLOPTS, PROMPT_COMMAND, IFS, PATH, GIT_*, PAGER, ...)
 * or the profile's env.deny globs — unless the profile's env.allow names it.
 * profile may be NULL (built-in set only).
 */
/* 1 for the names no profile lets through (IFS, LD_*, BASH_ENV, PATH ...):
 * never the gateway's own settings for a command either. */
int	ag_envsan_is_hard(const char *name);
int	ag_envsan_is_dangerous(const char *name, const struct ag_profile *profile);
/*
 * Filter a NULL-terminated "KEY=VALUE" vector in place: dangerous entries
 * are freed and removed (logged at LOG_DEBUG).  Returns how many were removed.
 */
size_t	ag_envsan_filter(char **env, const struct ag_profile *profile);

/*
 * "NAME=VALUE" entries, NULL-terminated: TMPDIR and where each common
 * toolchain keeps its cache (npm, pip, cargo, go, gradle, maven, ccache,
 * yarn), all beneath /tmp.  For a developer-tier session whose /tmp is its
 * own (core.c): the home is root's, and the identity's /tmp persists.
 */
const char *const *ag_envsan_tmp_env(void);

#endif
