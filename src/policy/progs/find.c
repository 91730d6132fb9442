/*
 * find.c - find: -delete removes what it finds below its start paths,
 * -fprint/-fprint0/-fprintf/-fls write a file, and -exec/-execdir/-ok/-okdir
 * run a command, checked as a command of its own (the words holding {} are
 * file names find fills in).  Any word the gateway cannot see could be
 * such an action, except as the value of a test that takes one.
 */
#include "agconfig.h"

#include <stdlib.h>
#include <string.h>

#include "policy/prog.h"
#include "policy/walker.h"

/* Tests whose value may be a word the gateway cannot see. */
static const char *const find_valopts[] = {
	"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename",
	"-regex", "-iregex", "-lname", "-ilname", "-type", "-xtype", "-newer",
	"-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size",
	"-user", "-group", "-perm", "-maxdepth", "-mindepth", "-samefile",
	"-inum", "-links", "-uid", "-gid", "-printf", "-used", NULL
};

static void
check_find(struct ag_walker *w, const struct ag_progcall *c)
{
	struct ag_arg *a = c->a;
	size_t i, j, na = c->na;
	int flags = c->flags;
	char ex[80];

	if (flags & AG_CF_UNKNOWN_TAIL) {
		ag_walk_refuse(w, AG_DENY, "program:find",
		    "find would get arguments from xargs that the gateway cannot check");
		return;
	}
	if (ag_prog_nonlit_option(a, na, c->prog->valopts, &j)) {
		ag_walk_refuse(w, AG_DENY, "program:find",
		    "'%s' could be a find action that deletes, writes or runs something; write it literally",
		    ag_walk_excerpt(a[j].w->raw, ex, sizeof(ex)));
		return;
	}
	/* -delete removes what the search finds below the start paths */
	for (i = 1; i < na; i++)
		if (a[i].lit && strcmp(a[i].lit, "-delete") == 0)
			break;
	if (i < na) {
		size_t nstart = 0;

		/* find's own options come before the start paths */
		for (j = 1; j < na && a[j].lit; j++) {
			if (strcmp(a[j].lit, "-D") == 0)
				j++;
			else if (strcmp(a[j].lit, "-H") != 0 && strcmp(a[j].lit, "-L") != 0 &&
			    strcmp(a[j].lit, "-P") != 0 && strncmp(a[j].lit, "-O", 2) != 0)
				break;
		}
		for (; j < na; j++) {
			const char *s = a[j].lit;

			if (s == NULL) {
				ag_walk_refuse(w, AG_DENY, "path:literal",
				    "'find -delete' needs literal start paths");
				return;
			}
			if (s[0] == '-' || s[0] == '(' || s[0] == '!')
				break;
			ag_walk_check_path(w, s, AG_ACC_WRITE, NULL);
			nstart++;
		}
		if (nstart == 0)
			ag_walk_check_path(w, ".", AG_ACC_WRITE, NULL);
	}
	for (i = 1; i < na; i++) {
		const char *s = a[i].lit;

		if (s == NULL)
			continue;
		if (strcmp(s, "-exec") == 0 || strcmp(s, "-execdir") == 0 ||
		    strcmp(s, "-ok") == 0 || strcmp(s, "-okdir") == 0) {
			struct ag_arg *inner;
			size_t ni = 0;

			for (j = i + 1; j < na; j++)
				if (a[j].lit && (strcmp(a[j].lit, ";") == 0 ||
				    strcmp(a[j].lit, "+") == 0))
					break;
			if (j == i + 1) {
				ag_walk_refuse(w, AG_DENY, "program:find", "'find %s' without a command", s);
				return;
			}
			inner = calloc(j - i - 1, sizeof(*inner));
			if (inner == NULL) {
				w->oom = 1;
				return;
			}
			for (ni = 0; ni < j - i - 1; ni++) {
				inner[ni] = a[i + 1 + ni];
				if (inner[ni].lit && strstr(inner[ni].lit, "{}") != NULL)
					inner[ni].lit = NULL;	/* a file name find fills in */
			}
			if (inner[0].lit == NULL)
				ag_walk_refuse(w, AG_DENY, "literal",
				    "the command of 'find %s' must be a literal word", s);
			else if (strcmp(s, "-execdir") == 0 || strcmp(s, "-okdir") == 0) {
				/* runs in each file's directory: relative names cannot be
				 * checked */
				if (strchr(inner[0].lit, '/') != NULL && inner[0].lit[0] != '/')
					ag_walk_refuse(w, AG_DENY, "program:find",
					    "'find %s' with a relative program path", s);
				else
					ag_walk_nested(w, inner, ni, flags | AG_CF_PROG_ONLY);
			} else
				ag_walk_nested(w, inner, ni, flags | AG_CF_PROG_ONLY);
			free(inner);
			i = j;
			continue;
		}
		if ((strcmp(s, "-fprint") == 0 || strcmp(s, "-fprint0") == 0 ||
		    strcmp(s, "-fls") == 0 || strcmp(s, "-fprintf") == 0)) {
			if (i + 1 >= na || a[i + 1].lit == NULL) {
				ag_walk_refuse(w, AG_DENY, "path:literal",
				    "the file of 'find %s' must be literal", ag_walk_excerpt(s, ex, sizeof(ex)));
				return;
			}
			ag_walk_check_path(w, a[i + 1].lit, AG_ACC_WRITE, NULL);
		}
	}
}

static const char *const find_names[] = { "find", NULL };
const struct ag_prog ag_prog_find = {
	.names = find_names, .valopts = find_valopts, .check = check_find,
	.runs = "with -exec, -execdir, -ok or -okdir the command it is given, once per file",
};
