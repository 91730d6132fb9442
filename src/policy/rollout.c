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
 *
 * Approvals (decision: approve on a rule, unknown: approve) relax the
 * same way, for one line a person approved (record/approvals.h): the
 * same gateway checks hold whatever was approved.
 */
#include "agconfig.h"

#include <stddef.h>
#include <string.h>

#include "policy/policy.h"

enum relax { RELAX_ROLLOUT, RELAX_APPROVE };

/* One rule id of a refusal: one of p's own rules (or its unknown), in
 * rollout on the profile or on the rule itself; or that waits for
 * approval. */
static int
relaxed(const struct ag_profile *p, const char *rule, size_t n, enum relax how)
{
	const struct ag_rule *r;
	size_t pl = strlen(p->name);
	int unknown = how == RELAX_ROLLOUT ? p->enforce == AG_ENFORCE_AUDIT :
	    p->unknown == AG_UNKNOWN_APPROVE;

	if (n == strlen("unknown") && strncmp(rule, "unknown", n) == 0)
		return unknown;
	if (n < 9 + pl + 1 || strncmp(rule, "profiles.", 9) != 0 ||
	    strncmp(rule + 9, p->name, pl) != 0 || rule[9 + pl] != '.')
		return 0;
	if ((r = ag_profile_rule(p, rule, n)) != NULL)
		return how == RELAX_ROLLOUT ?
		    p->enforce == AG_ENFORCE_AUDIT || r->enforce == AG_ENFORCE_AUDIT :
		    r->approve;
	return unknown && n == 9 + pl + strlen(".unknown") &&
	    strncmp(rule + 9 + pl, ".unknown", 8) == 0;
}

/* rules: ids joined by ','; every one relaxed. */
static int
all_relaxed(const struct ag_profile *p, const char *rules, enum relax how)
{
	const char *s = rules, *e;

	if (rules == NULL || *rules == '\0')
		return 0;
	for (;;) {
		e = strchr(s, ',');
		if (!relaxed(p, s, e != NULL ? (size_t)(e - s) : strlen(s), how))
			return 0;
		if (e == NULL)
			return 1;
		s = e + 1;
	}
}

int
ag_policy_rollout_rules(const struct ag_profile *p, const char *rules)
{
	return p != NULL && all_relaxed(p, rules, RELAX_ROLLOUT);
}

int
ag_policy_approve_rules(const struct ag_profile *p, const char *rules)
{
	return p != NULL && all_relaxed(p, rules, RELAX_APPROVE);
}

/* 1 when the id rule (n bytes) is one of list's. */
static int
listed(const char *list, const char *rule, size_t n)
{
	const char *s = list, *e;

	for (; s != NULL && *s != '\0'; s = e != NULL ? e + 1 : NULL) {
		e = strchr(s, ',');
		if ((size_t)(e != NULL ? e - s : (ptrdiff_t)strlen(s)) == n &&
		    strncmp(s, rule, n) == 0)
			return 1;
	}
	return 0;
}

int
ag_policy_rules_within(const char *rules, const char *set)
{
	const char *s = rules, *e;

	if (rules == NULL || set == NULL)
		return rules == NULL || *rules == '\0';
	for (; *s != '\0'; s = e + 1) {
		e = strchr(s, ',');
		if (!listed(set, s, e != NULL ? (size_t)(e - s) : strlen(s)))
			return 0;
		if (e == NULL)
			break;
	}
	return 1;
}

int
ag_policy_rules_add(char *list, size_t listsz, const char *rules)
{
	const char *s = rules, *e;
	size_t len = strlen(list), n;

	for (; s != NULL && *s != '\0'; s = e != NULL ? e + 1 : NULL) {
		e = strchr(s, ',');
		n = e != NULL ? (size_t)(e - s) : strlen(s);
		if (n == 0 || listed(list, s, n))
			continue;
		if (len + (len > 0) + n + 1 > listsz)
			return -1;
		if (len > 0)
			list[len++] = ',';
		memcpy(list + len, s, n);
		len += n;
		list[len] = '\0';
	}
	return 0;
}

int
ag_profile_has_approvals(const struct ag_profile *p)
{
	size_t i;

	if (p == NULL)
		return 0;
	if (p->unknown == AG_UNKNOWN_APPROVE)
		return 1;
	for (i = 0; i < p->nallow; i++)
		if (p->allow[i].approve)
			return 1;
	for (i = 0; i < p->ndeny; i++)
		if (p->deny[i].approve)
			return 1;
	return 0;
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
