/*
 * proctitle.c - the process title, see proctitle.h.
 */
#include "agconfig.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proctitle.h"

extern char **environ;

static char	*title;		/* the original argv[0]; NULL = no title */
static size_t	 title_len;	/* bytes of original strings it may use */
/* the copies live as long as the process, as the originals would have:
 * kept here (volatile, so the stores stay) for leak checkers to see */
static char	**volatile copy_argv, **volatile copy_env;

char **
ag_proctitle_init(int argc, char **argv)
{
	char **nargv, **nenv, *end;
	size_t n = 0, i;

	if (argc <= 0 || argv == NULL || argv[0] == NULL)
		return argv;
	while (environ != NULL && environ[n] != NULL)
		n++;
	if ((nargv = calloc((size_t)argc + 1, sizeof(*nargv))) == NULL)
		return argv;
	if ((nenv = calloc(n + 1, sizeof(*nenv))) == NULL) {
		free(nargv);
		return argv;
	}
	/* the strings the kernel laid out one after the other */
	end = argv[0];
	for (i = 0; i < (size_t)argc; i++) {
		if (argv[i] == end)
			end = argv[i] + strlen(argv[i]) + 1;
		if ((nargv[i] = strdup(argv[i])) == NULL)
			goto oom;
	}
	for (i = 0; i < n; i++) {
		if (environ[i] == end)
			end = environ[i] + strlen(environ[i]) + 1;
		if ((nenv[i] = strdup(environ[i])) == NULL)
			goto oom;
	}
	environ = copy_env = nenv;
	copy_argv = nargv;
	title = argv[0];
	title_len = (size_t)(end - argv[0]);
	return nargv;
oom:
	for (i = 0; i < (size_t)argc && nargv[i] != NULL; i++)
		free(nargv[i]);
	for (i = 0; i < n && nenv[i] != NULL; i++)
		free(nenv[i]);
	free(nargv);
	free(nenv);
	return argv;
}

void
ag_proctitle_set(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (title == NULL || title_len < 2)
		return;
	va_start(ap, fmt);
	n = vsnprintf(title, title_len, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n < title_len)
		memset(title + n, '\0', title_len - (size_t)n);
}
