/*
 * grantable.c - profile paths the sandbox cannot grant (grantable.h).
 */
#include "agconfig.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/grantable.h"
#include "policy/pathutil.h"

/*
 * Each entry of l as an absolute path, to fn with its place and the account
 * whose home "~" was (NULL for an absolute entry); fn returns 1 to count the
 * entry, which then goes to no other account.  Patterns are skipped: the
 * sandbox does not grant them either.  The count.
 */
static size_t
each_entry(const struct ag_config *cfg, const struct ag_profile *p,
    const struct ag_strlist *l,
    int (*fn)(const struct ag_strlist *, size_t, const char *, const char *, void *),
    void *arg)
{
	char abs[PATH_MAX];
	size_t i, u, n = 0;

	for (i = 0; i < l->n; i++) {
		const char *s = l->v[i];

		if (ag_path_has_glob(s))
			continue;
		if (s[0] == '/') {
			if (ag_path_absolute(s, "/", NULL, abs, sizeof(abs)) == 0)
				n += (size_t)fn(l, i, NULL, abs, arg);
			continue;
		}
		/* "~": the home of each account users: gives this profile */
		for (u = 0; u < cfg->nusers; u++) {
			const struct ag_usermap *m = &cfg->users[u];
			struct passwd *pw;

			if (m->is_group || m->profile != p || (pw = getpwnam(m->name)) == NULL ||
			    pw->pw_dir == NULL || pw->pw_dir[0] != '/')
				continue;
			if (ag_path_absolute(s, "/", pw->pw_dir, abs, sizeof(abs)) == 0 &&
			    fn(l, i, m->name, abs, arg)) {
				n++;
				break;
			}
		}
	}
	return n;
}

struct say {
	const char	*key;
	dev_t		 dev;
	void		(*fn)(const struct ag_pos *, const char *, void *);
	void		*arg;
};

/* Says of entry (its i-th place in l) that abs is missing; 1 when it is. */
static int
missing(const struct ag_strlist *l, size_t i, const char *account, const char *abs,
    void *arg)
{
	const struct say *w = arg;
	char why[2 * PATH_MAX + 256], whose[PATH_MAX + 64] = "";
	struct stat st;

	if (lstat(abs, &st) == 0 || errno != ENOENT)
		return 0;
	if (account != NULL)
		snprintf(whose, sizeof(whose), " for account %s (%s)", account, abs);
	snprintf(why, sizeof(why), "%s: '%s' does not exist%s; the sandbox can grant only "
	    "what exists: create it, or name its directory", w->key, l->v[i], whose);
	w->fn(i < l->npos ? &l->pos[i] : NULL, why, w->arg);
	return 1;
}

static size_t
list_missing(const struct ag_config *cfg, const struct ag_profile *p,
    const struct ag_strlist *l, const char *key,
    void (*fn)(const struct ag_pos *, const char *, void *), void *arg)
{
	struct say w = { key, 0, fn, arg };

	return each_entry(cfg, p, l, missing, &w);
}

/* Says of entry i of paths.write that abs lies on w->dev; 1 when it does. */
static int
on_dev(const struct ag_strlist *l, size_t i, const char *account, const char *abs,
    void *arg)
{
	const struct say *w = arg;
	char why[2 * PATH_MAX + 256], whose[PATH_MAX + 64] = "";
	struct stat st;

	if (stat(abs, &st) < 0 || st.st_dev != w->dev)
		return 0;
	if (account != NULL)
		snprintf(whose, sizeof(whose), " (for account %s, %s)", account, abs);
	snprintf(why, sizeof(why), "paths.write '%s'%s", l->v[i], whose);
	w->fn(i < l->npos ? &l->pos[i] : NULL, why, w->arg);
	return 1;
}

size_t
ag_paths_write_on(const struct ag_config *cfg, const struct ag_profile *p, dev_t dev,
    void (*fn)(const struct ag_pos *pos, const char *what, void *), void *arg)
{
	struct say w = { "paths.write", dev, fn, arg };

	if (cfg->gw.sandbox == AG_SANDBOX_OFF || p->is_target)
		return 0;
	return each_entry(cfg, p, &p->paths_write, on_dev, &w);
}

size_t
ag_paths_missing(const struct ag_config *cfg, const struct ag_profile *p,
    void (*fn)(const struct ag_pos *pos, const char *why, void *), void *arg)
{
	if (cfg->gw.sandbox == AG_SANDBOX_OFF || p->is_target)
		return 0;
	return list_missing(cfg, p, &p->paths_read, "paths.read", fn, arg) +
	    list_missing(cfg, p, &p->paths_write, "paths.write", fn, arg) +
	    list_missing(cfg, p, &p->paths_exec, "paths.exec", fn, arg);
}
