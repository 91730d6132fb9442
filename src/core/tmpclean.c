/*
 * tmpclean.c - the clean-up lines that run while the persistent /tmp is
 * past limits.tmp_disk (see tmpclean.h).
 */
#include "agconfig.h"

#include <ctype.h>
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

/* ---- what the line holds beyond its commands (red team 24, H2) --------- */

static const char *node_shape(const struct ag_sh_node *n, int depth);

static const char *
word_shape(const struct ag_sh_word *w, int depth)
{
	const char *why;
	size_t i;

	if (w == NULL)
		return NULL;
	for (i = 0; i < w->nparts; i++) {
		const struct ag_sh_part *p = &w->parts[i];

		/* ${X=v} and ${X:=v} assign */
		if (p->type == AG_SH_P_PARAM && p->op != NULL &&
		    (strcmp(p->op, "=") == 0 || strcmp(p->op, ":=") == 0))
			return "an assignment (${NAME=...})";
		if ((why = node_shape(p->body, depth + 1)) != NULL ||
		    (why = word_shape(p->subscript, depth + 1)) != NULL ||
		    (why = word_shape(p->operand, depth + 1)) != NULL ||
		    (why = word_shape(p->operand2, depth + 1)) != NULL)
			return why;
	}
	return NULL;
}

static const char *
node_shape(const struct ag_sh_node *n, int depth)
{
	const char *why;
	size_t i, j;

	if (n == NULL)
		return NULL;
	if (depth > 64)
		return "nesting that deep";
	/* an assignment, alone or before a command (LD_LIBRARY_PATH=~/lib ls:
	 * the system's ls loads what the line names) */
	if (n->nassigns > 0)
		return "an assignment or an environment prefix (NAME=...)";
	if (n->type == AG_SH_FUNCDEF || n->type == AG_SH_COPROC)
		return n->type == AG_SH_FUNCDEF ? "a function definition" : "a coprocess";
	for (i = 0; i < n->nwords; i++)
		if ((why = word_shape(n->words[i], depth)) != NULL)
			return why;
	for (i = 0; i < n->nredirs; i++)
		if ((why = word_shape(n->redirs[i].target, depth)) != NULL)
			return why;
	for (i = 0; i < n->nkids; i++)
		if ((why = node_shape(n->kids[i], depth + 1)) != NULL)
			return why;
	for (i = 0; i < n->nitems; i++) {
		for (j = 0; j < n->items[i].npatterns; j++)
			if ((why = word_shape(n->items[i].patterns[j], depth)) != NULL)
				return why;
		if ((why = node_shape(n->items[i].body, depth + 1)) != NULL)
			return why;
	}
	return NULL;
}

const char *
ag_tmpclean_shape(const struct ag_sh_node *tree)
{
	return node_shape(tree, 0);
}

/* The loader's and libc's names that make a program load other code. */
static int
loader_name(const char *kv)
{
	static const char *const names[] = { "GCONV_PATH=", "GLIBC_TUNABLES=", "LOCPATH=",
		"NLSPATH=", "HOSTALIASES=", "RESOLV_HOST_CONF=", NULL };
	size_t i;

	if (strncmp(kv, "LD_", 3) == 0 || strncmp(kv, "MALLOC_", 7) == 0)
		return 1;
	for (i = 0; names[i] != NULL; i++)
		if (strncmp(kv, names[i], strlen(names[i])) == 0)
			return 1;
	return 0;
}

char **
ag_tmpclean_env(char *const *env)
{
	size_t n = 0, i, j;
	char **out;

	while (env != NULL && env[n] != NULL)
		n++;
	if ((out = calloc(n + 1, sizeof(*out))) == NULL)
		return NULL;
	for (i = j = 0; i < n; i++)
		if (!loader_name(env[i]))
			out[j++] = env[i];
	return out;
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

/*
 * A value bash reads as nothing but text wherever it lands: no
 * substitution ($, backquote), no subscript ([ ]) that arithmetic or
 * test -v would evaluate, no quote or backslash, no control character.
 */
static int
plain(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f || strchr("$`[]\\'\"", p[i]) != NULL)
			return 0;
	return 1;
}

/* 'TEXT' with a plain TEXT at p: past it, or NULL (a value with a quote
 * in it is written 'a'\''b': not plain either). */
static const char *
plain_quoted(const char *p, const char *end)
{
	const char *q;

	if (p >= end || *p != '\'' || (q = memchr(p + 1, '\'', (size_t)(end - p - 1))) == NULL ||
	    !plain(p + 1, (size_t)(q - p - 1)) || (q + 1 < end && q[1] == '\\'))
		return NULL;
	return q + 1;
}

/*
 * One kept definition as session.c writes it, every key and value plain:
 * NAME='V', NAME=([N]='V' ...), declare -A NAME=(['K']='V' ...).
 */
static int
plain_definition(const char *p, const char *end)
{
	int assoc = 0;

	while (end > p && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	if ((size_t)(end - p) > 11 && memcmp(p, "declare -A ", 11) == 0) {
		assoc = 1;
		p += 11;
	}
	if (p >= end || !(isalpha((unsigned char)*p) || *p == '_'))
		return 0;
	while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
		p++;
	if (p >= end || *p++ != '=')
		return 0;
	if (p < end && *p != '(')
		return !assoc && plain_quoted(p, end) == end;
	for (p++; p < end && *p != ')';) {
		if (*p == ' ') {
			p++;
			continue;
		}
		if (*p++ != '[')
			return 0;
		if (assoc) {
			if ((p = plain_quoted(p, end)) == NULL)
				return 0;
		} else
			while (p < end && isdigit((unsigned char)*p))
				p++;
		if (end - p < 2 || p[0] != ']' || p[1] != '=' ||
		    (p = plain_quoted(p + 2, end)) == NULL)
			return 0;
	}
	return p + 1 == end;
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
	 * the variables whose every key and value is plain, not the functions
	 * (a kept X='a[$(..)]' would run in `rm -f /tmp/x$((X))`) */
	for (i = 0; ok && t != NULL && i < t->nkids; i++) {
		const struct ag_sh_node *k = t->kids[i], *def = k;

		while (def != NULL && def->type == AG_SH_PIPELINE && def->nkids == 1)
			def = def->kids[0];
		if (def == NULL || def->type == AG_SH_FUNCDEF ||
		    !plain_definition(state + k->off, state + k->end))
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
