/*
 * rollout.c - which refusals a profile in rollout (enforce: audit, on the
 * profile or on one rule) lets run, to be recorded as would_deny.
 *
 * What is relaxed is the typed line's judgement only: the line still runs
 * under the session's kernel sandbox, which holds whatever it holds.  What
 * protects the gateway itself is never relaxed: a line that does not
 * parse (nothing knows what it would run), a protected path (files the
 * account's shells, ssh or git later run), a variable that changes how
 * bash, the loader or a program reads what follows, and the gateway's own
 * conditions (the audit, the sandbox, targets).
 */
#include "agconfig.h"

#include <string.h>

#include "policy/policy.h"

static const char *const never[] = {
	"parse", "path:protect", "env:", "audit:", "internal", "sandbox", "targets",
	"target:", "revoked", "session_ended", NULL
};

static int
guards_gateway(const char *rule, size_t n)
{
	size_t i, k;

	for (i = 0; never[i] != NULL; i++) {
		k = strlen(never[i]);
		if (n >= k && strncmp(rule, never[i], k) == 0 &&
		    (never[i][k - 1] == ':' || n == k || rule[k] == ':'))
			return 1;
	}
	return 0;
}

/* One rule id of a refusal: relaxed by the profile's rollout, or by the
 * rule's own. */
static int
relaxed(const struct ag_profile *p, const char *rule, size_t n)
{
	const struct ag_rule *r;

	if (n == 0 || guards_gateway(rule, n))
		return 0;
	if (p->enforce == AG_ENFORCE_AUDIT)
		return 1;
	return (r = ag_profile_rule(p, rule, n)) != NULL && r->enforce == AG_ENFORCE_AUDIT;
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
ag_policy_rollout(const struct ag_profile *p, const struct ag_decision *d)
{
	size_t i;

	if (p == NULL || d->verdict != AG_DENY || d->parse_error || d->incomplete ||
	    !all_relaxed(p, d->rule))
		return 0;
	for (i = 0; i < d->ncmds; i++)
		if (d->cmds[i].verdict == AG_DENY && !all_relaxed(p, d->cmds[i].rule))
			return 0;
	return 1;
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
