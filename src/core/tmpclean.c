/*
 * tmpclean.c - the clean-up lines that run while the persistent /tmp is
 * past limits.tmp_disk (see tmpclean.h).
 */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/strbuf.h"
#include "core/tmpclean.h"
#include "parse/shparse.h"

/* Builtins a clean-up line may run. */
static const char *const builtins[] = { ":", "[", "cd", "echo", "false", "pwd", "test", "true",
	NULL };

/* Programs it may run: the system's own files of these names. */
static const char *const programs[] = { "[", "chmod", "du", "echo", "false", "ls", "pwd", "rm",
	"rmdir", "test", "true", "unlink", NULL };

static const char *const sysdirs[] = { "/usr/bin/", "/bin/", NULL };

int
ag_tmpclean_file(dev_t dev, ino_t ino)
{
	char p[64];
	struct stat st;
	size_t i, k;

	/* looked up each time: a package upgrade replaces the files */
	for (i = 0; programs[i] != NULL; i++)
		for (k = 0; sysdirs[k] != NULL; k++) {
			snprintf(p, sizeof(p), "%s%s", sysdirs[k], programs[i]);
			if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == dev &&
			    st.st_ino == ino)
				return 1;
		}
	return 0;
}

/* No '>' in the text but one to /dev/null or to another fd (>&2, 2>&1):
 * no redirection writes a file without one, quoted or not. */
static int
writes_nothing(const char *p, size_t n)
{
	static const char devnull[] = "/dev/null";
	const char *end = p + n, *q;

	for (q = memchr(p, '>', n); q != NULL; q = memchr(q, '>', (size_t)(end - q))) {
		q++;
		if (q < end && (*q == '>' || *q == '|'))
			q++;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (q + 1 < end && *q == '&' && ((q[1] >= '0' && q[1] <= '9') || q[1] == '-'))
			continue;
		if ((size_t)(end - q) >= sizeof(devnull) - 1 &&
		    memcmp(q, devnull, sizeof(devnull) - 1) == 0 &&
		    (q + sizeof(devnull) - 1 == end ||
		    strchr(" \t\n;&|)", q[sizeof(devnull) - 1]) != NULL))
			continue;
		return 0;
	}
	return 1;
}

/* One command of the line: a listed builtin, or the system's file of a
 * listed program, as the decision resolved it (a function has the path
 * "function", a program elsewhere its own). */
static int
cleans(const struct ag_policy_cmd *c)
{
	struct stat st;
	size_t k;

	if (c->name == NULL || c->path == NULL)
		return 0;
	if (strcmp(c->path, "builtin") == 0) {
		for (k = 0; builtins[k] != NULL && strcmp(builtins[k], c->name) != 0; k++)
			;
		return builtins[k] != NULL;
	}
	return c->path[0] == '/' && stat(c->path, &st) == 0 && ag_tmpclean_file(st.st_dev, st.st_ino);
}

int
ag_tmpclean_line(const struct ag_decision *d, const char *line, size_t len)
{
	size_t i;

	if (line == NULL || !writes_nothing(line, len))
		return 0;
	for (i = 0; i < d->ncmds; i++)
		if (!cleans(&d->cmds[i]))
			return 0;
	return d->ncmds > 0;
}

char *
ag_tmpclean_state(const char *state)
{
	struct ag_sh_node *t = NULL;
	struct ag_strbuf sb;
	struct ag_err err;
	size_t i;
	int ok = 1;

	if (ag_sh_parse(state, strlen(state), &t, &err) != AG_SH_OK)
		return NULL;
	ag_strbuf_init(&sb, 0);
	/* the kept state is definitions, one a line (command.c's state_judge):
	 * all but the functions' */
	for (i = 0; ok && t != NULL && i < t->nkids; i++) {
		const struct ag_sh_node *k = t->kids[i], *def = k;

		while (def != NULL && def->type == AG_SH_PIPELINE && def->nkids == 1)
			def = def->kids[0];
		if (def == NULL || def->type == AG_SH_FUNCDEF)
			continue;
		ok = ag_strbuf_append(&sb, state + k->off, k->end - k->off) == 0 &&
		    ag_strbuf_addch(&sb, '\n') == 0;
	}
	ok = ok && ag_strbuf_append(&sb, "", 0) == 0;
	ag_sh_free(t);
	if (!ok) {
		ag_strbuf_free(&sb);
		return NULL;
	}
	return ag_strbuf_detach(&sb, NULL);
}
