/* account.c - see account.h */
#include "agconfig.h"

#include <grp.h>
#include <pwd.h>
#include <string.h>

#include "common/account.h"

#define MAX_GROUPS	1024

int
ag_account_in_group(const char *user, gid_t primary, const char *group)
{
	gid_t groups[MAX_GROUPS];
	int n = MAX_GROUPS, i;
	struct group *gr;

	if (user == NULL || group == NULL || (gr = getgrnam(group)) == NULL)
		return 0;
	if (getgrouplist(user, primary, groups, &n) < 0) {
		groups[0] = primary;
		n = 1;
	}
	for (i = 0; i < n; i++)
		if (groups[i] == gr->gr_gid)
			return 1;
	return 0;
}

int
ag_account_listed(const struct ag_strlist *l, const char *user)
{
	/* getpwnam_r: the caller may hold getpwnam's static entry */
	struct passwd pwbuf, *pw = NULL;
	char buf[4096];
	int looked = 0;
	size_t i;

	if (user == NULL || *user == '\0')
		return 0;
	for (i = 0; i < l->n; i++) {
		const char *w = l->v[i];

		if (w[0] != '%') {
			if (strcmp(w, user) == 0)
				return 1;
			continue;
		}
		if (!looked) {
			if (getpwnam_r(user, &pwbuf, buf, sizeof(buf), &pw) != 0)
				pw = NULL;
			looked = 1;
		}
		if (pw != NULL && ag_account_in_group(user, pw->pw_gid, w + 1))
			return 1;
	}
	return 0;
}

int
ag_identity_allows_account(const struct ag_identity *id, const char *user)
{
	if (id->accounts.n == 0)
		return 1;
	return ag_account_listed(&id->accounts, user);
}

/* One more account named: 1 once two differ (or a group is named). */
static int
another(const char **first, const char *name, int is_group)
{
	if (is_group || name[0] == '%')
		return 1;
	if (*first == NULL)
		*first = name;
	return strcmp(*first, name) != 0;
}

size_t
ag_account_principals(const struct ag_config *cfg, const char *user)
{
	struct passwd *pw = getpwnam(user);
	size_t i, n = 0;
	int mapped = cfg->gw.default_profile != NULL;

	for (i = 0; i < cfg->nidentities; i++)
		n += !cfg->identities[i].disabled &&
		    ag_identity_allows_account(&cfg->identities[i], user);
	for (i = 0; i < cfg->nusers && !mapped; i++)
		mapped = cfg->users[i].is_group ? pw != NULL &&
		    ag_account_in_group(user, pw->pw_gid, cfg->users[i].name) :
		    strcmp(cfg->users[i].name, user) == 0;
	return n + (size_t)mapped;
}

int
ag_policy_shared(const struct ag_config *cfg, const char *const *more, size_t nmore)
{
	const char *first = NULL;
	size_t i, j;

	for (i = 0; i < nmore; i++)
		if (another(&first, more[i], 0))
			return 1;
	for (i = 0; i < cfg->nusers; i++)
		if (another(&first, cfg->users[i].name, cfg->users[i].is_group))
			return 1;
	for (i = 0; i < cfg->nidentities; i++)
		for (j = 0; j < cfg->identities[i].accounts.n; j++)
			if (another(&first, cfg->identities[i].accounts.v[j], 0))
				return 1;
	return 0;
}
