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

/* Says of entry (its i-th place in l) that abs is missing; 1 when it is. */
static int
missing(const struct ag_strlist *l, size_t i, const char *key, const char *account,
    const char *abs, void (*fn)(const struct ag_pos *, const char *, void *), void *arg)
{
	char why[2 * PATH_MAX + 256], whose[PATH_MAX + 64] = "";
	struct stat st;

	if (lstat(abs, &st) == 0 || errno != ENOENT)
		return 0;
	if (account != NULL)
		snprintf(whose, sizeof(whose), " for account %s (%s)", account, abs);
	snprintf(why, sizeof(why), "%s: '%s' does not exist%s; the sandbox can grant only "
	    "what exists: create it, or name its directory", key, l->v[i], whose);
	fn(i < l->npos ? &l->pos[i] : NULL, why, arg);
	return 1;
}

static size_t
list_missing(const struct ag_config *cfg, const struct ag_profile *p,
    const struct ag_strlist *l, const char *key,
    void (*fn)(const struct ag_pos *, const char *, void *), void *arg)
{
	char abs[PATH_MAX];
	size_t i, u, n = 0;

	for (i = 0; i < l->n; i++) {
		const char *s = l->v[i];

		if (ag_path_has_glob(s))
			continue;
		if (s[0] == '/') {
			if (ag_path_absolute(s, "/", NULL, abs, sizeof(abs)) == 0)
				n += missing(l, i, key, NULL, abs, fn, arg);
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
			    missing(l, i, key, m->name, abs, fn, arg)) {
				n++;
				break;	/* once an entry: the first account that lacks it */
			}
		}
	}
	return n;
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
