/*
 * envv.h - environment vectors: NULL-terminated arrays of malloc'd
 * "NAME=VALUE" strings, as execve(2) takes them.  The session's tracked
 * environment and the runner's defused one are both built with these.
 */
#ifndef AG_ENVV_H
#define AG_ENVV_H

#include <stddef.h>

#include "common/err.h"

/* PATH where nothing sets it: the session's start, an upstream's, the
 * set-ID check's (login(1)'s default, without sbin) */
#define AG_DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"

/* NAME's value in env, or NULL. */
const char *ag_envv_get(char *const *env, const char *name);

/* Entries in env (0 for NULL). */
size_t	ag_envv_count(char *const *env);

/*
 * Replace the entry with entry's name, or append it.  entry is taken over
 * on success, left to the caller on failure.  *envp may be NULL.  0, or -1
 * when out of memory.
 */
int	ag_envv_put(char ***envp, char *entry);

/* ag_envv_put of a copy of "name=value" / of the formatted entry. */
int	ag_envv_set(char ***envp, const char *name, const char *value);
int	ag_envv_putf(char ***envp, const char *fmt, ...) AG_PRINTF(2, 3);

/* Remove NAME's entry, if any. */
void	ag_envv_unset(char **env, const char *name);

void	ag_envv_free(char **env);

#endif
