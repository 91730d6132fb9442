/*
 * dirstack.c - the builtins the gateway runs itself, on the session's
 * tracked state alone: cd, pushd, popd and dirs, with bash's options,
 * messages and exit statuses.
 */
#include "agconfig.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/session.h"
#include "exec/session_int.h"

/* Change to dir (already expanded) the way `cd -L`/`cd -P` do; on failure
 * print bash's message under the builtin's name and return 1. */
static int
change_dir(struct ag_session *s, const char *bname, const char *dir, int physical,
    FILE *errf)
{
	char *target = NULL, *old;
	int e;

	if (dir[0] == '\0')
		return 0;		/* bash 5: cd "" is a no-op */
	if (physical) {
		char *joined = ag_session_canon_path(s->cwd, dir);
		char rp[PATH_MAX];

		if (joined == NULL)
			goto nomem;
		/* -P: resolve against the real directory, not the logical one */
		if (dir[0] != '/') {
			char *raw;
			size_t n = strlen(s->cwd) + strlen(dir) + 2;

			free(joined);
			if ((raw = malloc(n)) == NULL)
				goto nomem;
			snprintf(raw, n, "%s/%s", s->cwd, dir);
			joined = raw;
		}
		if ((e = ag_session_dir_usable(joined)) != 0 || realpath(joined, rp) == NULL) {
			if (e == 0)
				e = errno;
			free(joined);
			fprintf(errf, "bash: %s: %s: %s\n", bname, dir, strerror(e));
			return 1;
		}
		free(joined);
		if ((target = strdup(rp)) == NULL)
			goto nomem;
	} else {
		if ((target = ag_session_canon_path(s->cwd, dir)) == NULL)
			goto nomem;
		if ((e = ag_session_dir_usable(target)) != 0) {
			/* bash falls back to the path as the kernel resolves it */
			char rp[PATH_MAX], *raw;
			size_t n = strlen(s->cwd) + strlen(dir) + 2;

			if ((raw = malloc(n)) == NULL)
				goto nomem;
			if (dir[0] == '/')
				snprintf(raw, n, "%s", dir);
			else
				snprintf(raw, n, "%s/%s", s->cwd, dir);
			if (ag_session_dir_usable(raw) != 0 || realpath(raw, rp) == NULL) {
				free(raw);
				free(target);
				fprintf(errf, "bash: %s: %s: %s\n", bname, dir, strerror(e));
				return 1;
			}
			free(raw);
			free(target);
			if ((target = strdup(rp)) == NULL)
				goto nomem;
		}
	}
	old = s->cwd;
	s->cwd = target;
	if (ag_session_setenv(s, "OLDPWD", old) < 0 ||
	    ag_session_setenv(s, "PWD", s->cwd) < 0) {
		free(old);
		goto nomem;
	}
	free(old);
	return 0;
nomem:
	fprintf(errf, "bash: %s: out of memory\n", bname);
	return 1;
}

int
ag_dirstack_cd(struct ag_session *s, size_t argc, char **argv, FILE *out, FILE *errf)
{
	size_t i = 1;
	int physical = 0, st;
	const char *dir;

	for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
		const char *o;

		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		for (o = argv[i] + 1; *o != '\0'; o++) {
			if (*o == 'P')
				physical = 1;
			else if (*o == 'L')
				physical = 0;
			else if (*o != 'e' && *o != '@') {
				fprintf(errf, "bash: cd: -%c: invalid option\n"
				    "cd: usage: cd [-L|[-P [-e]] [-@]] [dir]\n", *o);
				return 2;
			}
		}
	}
	if (argc - i > 1) {
		fprintf(errf, "bash: cd: too many arguments\n");
		return 1;
	}
	if (argc - i == 0) {
		if ((dir = ag_session_getenv(s, "HOME")) == NULL) {
			fprintf(errf, "bash: cd: HOME not set\n");
			return 1;
		}
		return change_dir(s, "cd", dir, physical, errf);
	}
	if (strcmp(argv[i], "-") == 0) {
		char *copy;

		if ((dir = ag_session_getenv(s, "OLDPWD")) == NULL) {
			fprintf(errf, "bash: cd: OLDPWD not set\n");
			return 1;
		}
		if ((copy = strdup(dir)) == NULL)
			return 1;
		st = change_dir(s, "cd", copy, physical, errf);
		free(copy);
		if (st == 0)
			fprintf(out, "%s\n", s->cwd);
		return st;
	}
	return change_dir(s, "cd", argv[i], physical, errf);
}

/* The whole stack, top first: [cwd, dirs...]. */
static const char *
stack_at(const struct ag_session *s, size_t i)
{
	return i == 0 ? s->cwd : s->dirs[i - 1];
}

static void
print_dirs(const struct ag_session *s, FILE *out, int longfmt, int perline, int verbose)
{
	size_t i, m = s->ndirs + 1;
	char buf[PATH_MAX + 2];

	for (i = 0; i < m; i++) {
		const char *d = longfmt ? stack_at(s, i) : ag_session_tilde(s, stack_at(s, i),
		    buf, sizeof(buf));

		if (verbose)
			fprintf(out, "%2zu  %s\n", i, d);
		else if (perline)
			fprintf(out, "%s\n", d);
		else
			fprintf(out, "%s%s", i ? " " : "", d);
	}
	if (!verbose && !perline)
		fputc('\n', out);
}

/* "+N"/"-N" → index into the whole stack; -1 when not that form, -2 out of range. */
static long
stack_index(const struct ag_session *s, const char *a)
{
	char *end;
	long n;
	size_t m = s->ndirs + 1;

	if ((a[0] != '+' && a[0] != '-') || !isdigit((unsigned char)a[1]))
		return -1;
	errno = 0;
	n = strtol(a + 1, &end, 10);
	if (*end != '\0' || errno != 0)
		return -1;
	if ((size_t)n >= m)
		return -2;
	return a[0] == '+' ? n : (long)(m - 1 - (size_t)n);
}

/* Replace the stack by rotating it so that index k is on top, cd'ing there. */
static int
rotate_to(struct ag_session *s, size_t k, const char *bname, FILE *errf)
{
	size_t m = s->ndirs + 1, i;
	char **all;
	int st;

	if (k == 0)
		return 0;
	if ((all = calloc(m, sizeof(*all))) == NULL)
		return 1;
	/* copies: the stack entries change under us when cwd does */
	for (i = 0; i < m; i++)
		if ((all[i] = strdup(stack_at(s, (k + i) % m))) == NULL)
			goto fail;
	/* cd first: on failure leave everything as it was */
	if ((st = change_dir(s, bname, all[0], 0, errf)) != 0) {
		for (i = 0; i < m; i++)
			free(all[i]);
		free(all);
		return st;
	}
	for (i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	for (i = 1; i < m; i++)
		s->dirs[i - 1] = all[i];
	free(all[0]);
	free(all);
	return 0;
fail:
	for (i = 0; i < m; i++)
		free(all[i]);
	free(all);
	return 1;
}

static int
push_dir(struct ag_session *s, const char *d)
{
	char **nd, *c;

	if (s->ndirs >= AG_SESSION_MAX_DIRS)
		return -1;
	if ((c = strdup(d)) == NULL)
		return -1;
	if ((nd = realloc(s->dirs, (s->ndirs + 1) * sizeof(*nd))) == NULL) {
		free(c);
		return -1;
	}
	memmove(nd + 1, nd, s->ndirs * sizeof(*nd));
	nd[0] = c;
	s->dirs = nd;
	s->ndirs++;
	return 0;
}

static void
remove_dir(struct ag_session *s, size_t i)	/* i indexes s->dirs */
{
	free(s->dirs[i]);
	memmove(&s->dirs[i], &s->dirs[i + 1], (s->ndirs - i - 1) * sizeof(char *));
	s->ndirs--;
}

int
ag_dirstack_pushd(struct ag_session *s, size_t argc, char **argv, FILE *out, FILE *errf)
{
	size_t i = 1;
	int noch = 0, st;
	const char *arg = NULL;

	for (; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0)
			noch = 1;
		else if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0' &&
		    !isdigit((unsigned char)argv[i][1])) {
			fprintf(errf, "bash: pushd: %s: invalid option\n"
			    "pushd: usage: pushd [-n] [+N | -N | dir]\n", argv[i]);
			return 2;
		} else
			break;
	}
	if (argc - i > 1) {
		fprintf(errf, "bash: pushd: too many arguments\n");
		return 1;
	}
	if (i < argc)
		arg = argv[i];
	if (arg == NULL) {
		if (s->ndirs == 0) {
			fprintf(errf, "bash: pushd: no other directory\n");
			return 1;
		}
		if (noch) {
			print_dirs(s, out, 0, 0, 0);
			return 0;
		}
		/* swap the top two */
		{
			char *top = strdup(s->cwd);

			if (top == NULL)
				return 1;
			if ((st = change_dir(s, "pushd", s->dirs[0], 0, errf)) != 0) {
				free(top);
				return st;
			}
			free(s->dirs[0]);
			s->dirs[0] = top;
		}
		print_dirs(s, out, 0, 0, 0);
		return 0;
	}
	{
		long k = stack_index(s, arg);

		if (k == -2) {
			fprintf(errf, "bash: pushd: %s: directory stack index out of range\n", arg);
			return 1;
		}
		if (k >= 0) {
			if (!noch && (st = rotate_to(s, (size_t)k, "pushd", errf)) != 0)
				return st;
			print_dirs(s, out, 0, 0, 0);
			return 0;
		}
	}
	if (s->ndirs >= AG_SESSION_MAX_DIRS) {
		fprintf(errf, "bash: pushd: directory stack full\n");
		return 1;
	}
	if (noch) {
		char *c = ag_session_canon_path(s->cwd, arg);

		if (c == NULL || push_dir(s, c) < 0) {
			free(c);
			return 1;
		}
		free(c);
	} else {
		char *old = strdup(s->cwd);

		if (old == NULL)
			return 1;
		if ((st = change_dir(s, "pushd", arg, 0, errf)) != 0) {
			free(old);
			return st;
		}
		if (push_dir(s, old) < 0) {
			free(old);
			return 1;
		}
		free(old);
	}
	print_dirs(s, out, 0, 0, 0);
	return 0;
}

int
ag_dirstack_popd(struct ag_session *s, size_t argc, char **argv, FILE *out, FILE *errf)
{
	size_t i = 1;
	int noch = 0, st;
	long k = 0;

	for (; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0)
			noch = 1;
		else if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if ((k = stack_index(s, argv[i])) == -1) {
			if (argv[i][0] == '-')
				fprintf(errf, "bash: popd: %s: invalid option\n", argv[i]);
			else
				fprintf(errf, "bash: popd: %s: invalid argument\n", argv[i]);
			fprintf(errf, "popd: usage: popd [-n] [+N | -N]\n");
			return 2;
		} else if (k == -2) {
			if (s->ndirs == 0)
				fprintf(errf, "bash: popd: directory stack empty\n");
			else
				fprintf(errf, "bash: popd: %s: directory stack index out of range\n",
				    argv[i]);
			return 1;
		} else
			break;
	}
	if (i < argc && argc - i > 1) {
		fprintf(errf, "bash: popd: too many arguments\n");
		return 1;
	}
	if (s->ndirs == 0) {
		fprintf(errf, "bash: popd: directory stack empty\n");
		return 1;
	}
	if (k > 0) {
		remove_dir(s, (size_t)k - 1);
	} else if (noch) {
		remove_dir(s, 0);
	} else {
		char *next = strdup(s->dirs[0]);

		if (next == NULL)
			return 1;
		st = change_dir(s, "popd", next, 0, errf);
		free(next);
		if (st != 0)
			return st;
		remove_dir(s, 0);
	}
	print_dirs(s, out, 0, 0, 0);
	return 0;
}

int
ag_dirstack_dirs(struct ag_session *s, size_t argc, char **argv, FILE *out, FILE *errf)
{
	size_t i;
	int lf = 0, pl = 0, vb = 0, clear = 0;
	long k = -1;

	for (i = 1; i < argc; i++) {
		const char *o;
		long idx = stack_index(s, argv[i]);

		if (idx == -2) {
			fprintf(errf, "bash: dirs: %s: directory stack index out of range\n", argv[i]);
			return 1;
		}
		if (idx >= 0) {
			k = idx;
			continue;
		}
		if (argv[i][0] != '-' || argv[i][1] == '\0')
			goto usage;
		for (o = argv[i] + 1; *o != '\0'; o++) {
			switch (*o) {
			case 'c':
				clear = 1;
				while (s->ndirs > 0)
					remove_dir(s, s->ndirs - 1);
				break;
			case 'l': lf = 1; break;
			case 'p': pl = 1; break;
			case 'v': vb = 1; break;
			default:
				goto usage;
			}
		}
	}
	if (k >= 0) {
		char buf[PATH_MAX + 2];
		const char *d = stack_at(s, (size_t)k);

		fprintf(out, "%s\n", lf ? d : ag_session_tilde(s, d, buf, sizeof(buf)));
		return 0;
	}
	if (clear && !(pl || vb || lf))
		return 0;	/* dirs -c alone prints nothing */
	print_dirs(s, out, lf, pl, vb);
	return 0;
usage:
	fprintf(errf, "bash: dirs: %s: invalid option\n"
	    "dirs: usage: dirs [-clpv] [+N] [-N]\n", argv[i]);
	return 2;
}

