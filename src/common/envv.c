/*
 * envv.c - environment vectors (see envv.h).
 */
#include "agconfig.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/envv.h"

/* Index of the entry named like the first len bytes of name, or -1. */
static long
find(char *const *env, const char *name, size_t len)
{
	long i;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return i;
	return -1;
}

const char *
ag_envv_get(char *const *env, const char *name)
{
	size_t len = strlen(name);
	long i = find(env, name, len);

	return i >= 0 ? env[i] + len + 1 : NULL;
}

size_t
ag_envv_count(char *const *env)
{
	size_t n = 0;

	while (env != NULL && env[n] != NULL)
		n++;
	return n;
}

int
ag_envv_put(char ***envp, char *entry)
{
	long i = find(*envp, entry, strcspn(entry, "="));
	size_t n;
	char **nv;

	if (i >= 0) {
		free((*envp)[i]);
		(*envp)[i] = entry;
		return 0;
	}
	n = ag_envv_count(*envp);
	if ((nv = realloc(*envp, (n + 2) * sizeof(*nv))) == NULL)
		return -1;
	nv[n] = entry;
	nv[n + 1] = NULL;
	*envp = nv;
	return 0;
}

int
ag_envv_set(char ***envp, const char *name, const char *value)
{
	size_t nlen = strlen(name), vlen = strlen(value);
	char *e = malloc(nlen + vlen + 2);

	if (e == NULL)
		return -1;
	memcpy(e, name, nlen);
	e[nlen] = '=';
	memcpy(e + nlen + 1, value, vlen + 1);
	if (ag_envv_put(envp, e) < 0) {
		free(e);
		return -1;
	}
	return 0;
}

int
ag_envv_putf(char ***envp, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -1;
	if (ag_envv_put(envp, s) < 0) {
		free(s);
		return -1;
	}
	return 0;
}

void
ag_envv_unset(char **env, const char *name)
{
	long i = find(env, name, strlen(name));

	if (i < 0)
		return;
	free(env[i]);
	memmove(&env[i], &env[i + 1], (ag_envv_count(env + i + 1) + 1) * sizeof(*env));
}

void
ag_envv_free(char **env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}
