/*
 * progfiles.c - the registry's programs as files (see prog.h,
 * ag_prog_files_match): which (device, inode) is git, npm, the loader.
 *
 * Why: the exec judge names a program by the file the kernel runs, not by
 * the name the exec used (a link named g, /dev/fd/3, /proc/self/fd/3 of an
 * open /usr/bin/git).  The table is every registry name found in the
 * system's bin directories and on the session's PATH, and the files a
 * descriptor lists (git's helper directory, whose git-NAME are links or
 * hard links of its own git; the loader; npm's entry point), each stat()ed
 * once: about a thousand stats the first time, then a binary search per
 * exec.  Built again only when PATH changes.
 */
#include "agconfig.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/misc.h"
#include "policy/prog.h"

struct file_ent {
	dev_t	 dev;
	ino_t	 ino;
	char	*path;
};

static struct {
	pthread_mutex_t	 mu;
	char		*pathvar;	/* what the table was built for */
	struct file_ent	*v;
	size_t		 n, cap;
} tab = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* the system's own, whatever the session's PATH says */
static const char *const sys_dirs[] = {
	"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", NULL
};

static int
cmp_ent(const void *a, const void *b)
{
	const struct file_ent *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

static void
add_file(const char *path)
{
	struct stat st;
	struct file_ent *nv;
	size_t i;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	for (i = 0; i < tab.n; i++)
		if (tab.v[i].dev == st.st_dev && tab.v[i].ino == st.st_ino &&
		    strcmp(ag_base_name(tab.v[i].path), ag_base_name(path)) == 0)
			return;		/* /bin/git and /usr/bin/git: one is enough */
	if (tab.n == tab.cap) {
		size_t cap = tab.cap ? tab.cap * 2 : 128;

		if ((nv = realloc(tab.v, cap * sizeof(*nv))) == NULL)
			return;
		tab.v = nv;
		tab.cap = cap;
	}
	if ((tab.v[tab.n].path = strdup(path)) == NULL)
		return;
	tab.v[tab.n].dev = st.st_dev;
	tab.v[tab.n].ino = st.st_ino;
	tab.n++;
}

static void
add_dir(const char *dir, size_t dlen)
{
	char p[AG_PROG_PATH];
	size_t i, k;

	if (dlen == 0 || dir[0] != '/')
		return;		/* a relative PATH entry is no fixed place */
	for (i = 0; ag_progs[i] != NULL; i++)
		for (k = 0; ag_progs[i]->names[k] != NULL; k++) {
			const char *nm = ag_progs[i]->names[k];
			int len = snprintf(p, sizeof(p), "%.*s/%s", (int)dlen, dir, nm);

			if (nm[strlen(nm) - 1] != '*' && len > 0 && (size_t)len < sizeof(p))
				add_file(p);
		}
}

static void
build(const char *pathvar)
{
	const char *s, *e;
	size_t i, k;

	for (i = 0; i < tab.n; i++)
		free(tab.v[i].path);
	tab.n = 0;
	for (i = 0; sys_dirs[i] != NULL; i++)
		add_dir(sys_dirs[i], strlen(sys_dirs[i]));
	for (s = pathvar; s != NULL && *s != '\0'; s = *e ? e + 1 : e) {
		if ((e = strchr(s, ':')) == NULL)
			e = s + strlen(s);
		add_dir(s, (size_t)(e - s));
	}
	for (i = 0; ag_progs[i] != NULL; i++)
		for (k = 0; ag_progs[i]->files != NULL && ag_progs[i]->files[k] != NULL; k++)
			add_file(ag_progs[i]->files[k]);
	qsort(tab.v, tab.n, sizeof(*tab.v), cmp_ent);
}

size_t
ag_prog_files_match(const char *pathvar, dev_t dev, ino_t ino, char (*out)[AG_PROG_PATH],
    size_t max)
{
	struct file_ent key = { dev, ino, NULL }, *e;
	size_t n = 0, i, k;

	if (pathvar == NULL)
		pathvar = "";
	pthread_mutex_lock(&tab.mu);
	if (tab.pathvar == NULL || strcmp(tab.pathvar, pathvar) != 0) {
		free(tab.pathvar);
		tab.pathvar = strdup(pathvar);
		build(pathvar);
	}
	if ((e = bsearch(&key, tab.v, tab.n, sizeof(*tab.v), cmp_ent)) != NULL) {
		/* the first of the run of equal keys, then each name once */
		for (i = (size_t)(e - tab.v); i > 0 && cmp_ent(&tab.v[i - 1], &key) == 0; i--)
			;
		for (; i < tab.n && n < max && cmp_ent(&tab.v[i], &key) == 0; i++) {
			for (k = 0; k < n; k++)
				if (strcmp(ag_base_name(out[k]), ag_base_name(tab.v[i].path)) == 0)
					break;
			if (k == n)
				snprintf(out[n++], AG_PROG_PATH, "%s", tab.v[i].path);
		}
	}
	pthread_mutex_unlock(&tab.mu);
	return n;
}
