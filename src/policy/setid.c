/*
 * setid.c - allowed programs the sandbox disarms (setid.h).
 */
#include "agconfig.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/prog.h"
#include "common/envv.h"
#include "policy/setid.h"

/* name in the session's default PATH, as the runner finds it */
static int
lookup(const char *name, char *path, size_t len)
{
	const char *p = AG_DEFAULT_PATH, *colon;

	for (; *p != '\0'; p = *colon ? colon + 1 : colon) {
		colon = p + strcspn(p, ":");
		if (snprintf(path, len, "%.*s/%s", (int)(colon - p), p, name) < (int)len &&
		    access(path, X_OK) == 0)
			return 0;
	}
	return -1;
}

int
ag_setid_disarmed(const struct ag_config *cfg, const char *name, const char *path,
    char *why, size_t whylen)
{
	char found[PATH_MAX];
	struct stat st;

	if (cfg->gw.sandbox == AG_SANDBOX_OFF || name == NULL || *name == '\0' ||
	    strcmp(name, "*") == 0)
		return 0;
	if (path == NULL || *path != '/') {
		if (strchr(name, '/') != NULL)
			path = name;
		else if (lookup(name, found, sizeof(found)) == 0)
			path = found;
		else
			return 0;
	}
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & (S_ISUID | S_ISGID)) == 0)
		return 0;
	snprintf(why, whylen, "%s is set-%s-ID, and under the sandbox (gateway.sandbox: %s) "
	    "no command gains privileges (no_new_privs): it runs without them and fails; "
	    "give the privileged step to root instead (agentgate(8), DEPLOYING WITH "
	    "PRIVILEGES)", path, st.st_mode & S_ISUID ? "user" : "group",
	    cfg->gw.sandbox == AG_SANDBOX_REQUIRED ? "required" : "best_effort");
	return 1;
}

int
ag_setid_refused_wrapper(const char *name, char *why, size_t whylen)
{
	const struct ag_prog *prog;
	const char *base;

	if (name == NULL || *name == '\0' || strcmp(name, "*") == 0)
		return 0;
	base = strrchr(name, '/') != NULL ? strrchr(name, '/') + 1 : name;
	if ((prog = ag_prog_lookup(base)) == NULL || !(prog->flags & AG_PROG_WRAPPER_RISKY))
		return 0;
	snprintf(why, whylen, "'%s' runs other programs with other rights or outside the "
	    "gateway's view, so the gateway refuses it in every profile (rule wrapper:%s): "
	    "this rule never matches; allow the programs it would run instead, or give a "
	    "privileged step to root (agentgate(8), DEPLOYING WITH PRIVILEGES)", base, base);
	return 1;
}

size_t
ag_setid_rules(const struct ag_config *cfg, const struct ag_profile *p,
    void (*fn)(const struct ag_rule *, const char *why, void *), void *arg)
{
	char why[PATH_MAX + 512];
	size_t i, n = 0;

	for (i = 0; i < p->nallow; i++)
		if (ag_setid_refused_wrapper(p->allow[i].command, why, sizeof(why)) ||
		    ag_setid_disarmed(cfg, p->allow[i].command, NULL, why, sizeof(why))) {
			fn(&p->allow[i], why, arg);
			n++;
		}
	return n;
}
