/*
 * rollout.c - which refusals a profile in rollout (enforce: audit, on the
 * profile or on one rule) lets run, to be recorded as would_deny.
 *
 * What is relaxed is what the admin's rules decided, and only that: a
 * program no allow rule names (the profile's unknown), a subcommand or
 * argument an allow rule does not cover, a deny rule.  The gateway's own
 * checks are never relaxed, whatever rule a line meets first: a line that
 * does not parse, a word it cannot see (a file named by a variable may be
 * a protected path, a name by `declare -n` may be LD_PRELOAD), protected
 * paths, writes outside paths.write, dangerous variables, builtins and
 * wrappers it cannot follow, the audit, the sandbox, targets.  The line
 * still runs under the session's kernel sandbox, which holds what it
 * holds.
 */
#include "agconfig.h"

#include <string.h>

#include "policy/policy.h"

/* One rule id of a refusal: one of p's own rules (or its unknown), in
 * rollout on the profile or on the rule itself. */
static int
relaxed(const struct ag_profile *p, const char *rule, size_t n)
{
	const struct ag_rule *r;
	size_t pl = strlen(p->name);

	if (n == strlen("unknown") && strncmp(rule, "unknown", n) == 0)
		return p->enforce == AG_ENFORCE_AUDIT;
	if (n < 9 + pl + 1 || strncmp(rule, "profiles.", 9) != 0 ||
	    strncmp(rule + 9, p->name, pl) != 0 || rule[9 + pl] != '.')
		return 0;
	if ((r = ag_profile_rule(p, rule, n)) != NULL)
		return p->enforce == AG_ENFORCE_AUDIT || r->enforce == AG_ENFORCE_AUDIT;
	return p->enforce == AG_ENFORCE_AUDIT && n == 9 + pl + strlen(".unknown") &&
	    strncmp(rule + 9 + pl, ".unknown", 8) == 0;
}

/* rules: ids joined by ','; every one relaxed. */
static int
all_relaxed(const struct ag_profile *p, const char *rules)
{
	const char *s = rules, *e;

	if (rules == NULL || *rules == '\0')
		return 0;
	for (;;) {
		e = strchr(s, ',');
		if (!relaxed(p, s, e != NULL ? (size_t)(e - s) : strlen(s)))
			return 0;
		if (e == NULL)
			return 1;
		s = e + 1;
	}
}

int
ag_policy_rollout_rules(const struct ag_profile *p, const char *rules)
{
	return p != NULL && all_relaxed(p, rules);
}

int
ag_profile_in_rollout(const struct ag_profile *p)
{
	size_t i;

	if (p == NULL)
		return 0;
	if (p->enforce == AG_ENFORCE_AUDIT)
		return 1;
	for (i = 0; i < p->nallow; i++)
		if (p->allow[i].enforce == AG_ENFORCE_AUDIT)
			return 1;
	for (i = 0; i < p->ndeny; i++)
		if (p->deny[i].enforce == AG_ENFORCE_AUDIT)
			return 1;
	return 0;
}
