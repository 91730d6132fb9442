/*
 * test_approvals.c - the scopes and durations `agentgate approve` takes
 * (record/approvals.h), and the policy keys of approvals (decision:
 * approve, approvers, approvals.timeout) as check reads them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/config.h"
#include "policy/policy.h"
#include "record/approvals.h"

static void
durations(void **state)
{
	static const struct { const char *s; long secs; } ok[] = {
		{ "90", 90 }, { "90s", 90 }, { "30m", 1800 }, { "2h", 7200 }, { "1d", 86400 },
		{ "30d", 30L * 86400 },
	};
	static const char *const bad[] = {
		"", "0", "0m", "m", "-5m", "5x", "5mm", "31d", "99999999999999999999", " 5m",
		"5 m", "1.5h",
	};
	size_t i;
	long s;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		s = -1;
		assert_int_equal(ag_approval_parse_duration(ok[i].s, &s), 0);
		assert_int_equal(s, ok[i].secs);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ag_approval_parse_duration(bad[i], &s), -1);
	assert_int_equal(ag_approval_parse_duration(NULL, &s), -1);
}

static void
scopes(void **state)
{
	enum ag_approval_scope sc;
	struct ag_err err;
	long secs;

	(void)state;
	assert_int_equal(ag_approval_parse_scope("--once", NULL, &sc, &secs, &err), 0);
	assert_int_equal(sc, AG_SCOPE_ONCE);
	assert_int_equal(ag_approval_parse_scope("--session", NULL, &sc, &secs, &err), 0);
	assert_int_equal(sc, AG_SCOPE_SESSION);
	assert_int_equal(ag_approval_parse_scope("--for", "30m", &sc, &secs, &err), 0);
	assert_int_equal(sc, AG_SCOPE_FOR);
	assert_int_equal(secs, 1800);
	assert_int_equal(ag_approval_parse_scope("--for", NULL, &sc, &secs, &err), -1);
	assert_int_equal(ag_approval_parse_scope("--for", "soon", &sc, &secs, &err), -1);
	assert_int_equal(ag_approval_parse_scope("--always", NULL, &sc, &secs, &err), -1);
	assert_string_equal(ag_approval_scope_name(AG_SCOPE_ONCE), "once");
	assert_string_equal(ag_approval_scope_name(AG_SCOPE_SESSION), "session");
	assert_string_equal(ag_approval_scope_name(AG_SCOPE_FOR), "for");
}

static struct ag_config *
load(const char *yaml, struct ag_err *err)
{
	return ag_config_parse(yaml, strlen(yaml), "t.yaml", err);
}

static void
policy_keys(void **state)
{
	struct ag_config *cfg;
	struct ag_err err;

	(void)state;
	cfg = load("version: 1\napprovals: { approvers: [alice, \"%ops\"], timeout: 2m }\n"
	    "profiles:\n  p:\n    allow:\n      - echo\n"
	    "      - { command: git, subcommands: [push], decision: approve }\n"
	    "    deny:\n      - { command: echo, args: [boom], decision: approve }\n"
	    "    unknown: approve\n", &err);
	assert_non_null(cfg);
	assert_int_equal(cfg->approvals.timeout, 120);
	assert_int_equal(ag_approvals_timeout(cfg), 120);
	assert_int_equal(ag_profile_approvers(cfg, &cfg->profiles[0])->n, 2);
	assert_int_equal(cfg->profiles[0].unknown, AG_UNKNOWN_APPROVE);
	assert_true(cfg->profiles[0].allow[1].approve);
	assert_true(cfg->profiles[0].deny[0].approve);
	assert_true(ag_profile_has_approvals(&cfg->profiles[0]));
	assert_true(ag_policy_approve_rules(&cfg->profiles[0], "profiles.p.deny[0]"));
	assert_true(ag_policy_approve_rules(&cfg->profiles[0], "unknown"));
	assert_false(ag_policy_approve_rules(&cfg->profiles[0], "profiles.p.allow[0]"));
	ag_config_free(cfg);

	/* an approve rule with nobody to approve it: an error at the rule */
	cfg = load("version: 1\nprofiles:\n  p:\n    allow:\n      - echo\n"
	    "      - { command: git, decision: approve }\n", &err);
	assert_null(cfg);
	assert_non_null(strstr(err.msg, "nobody may approve"));
	assert_int_equal(err.line, 6);
	assert_true(err.col > 0);
	cfg = load("version: 1\nprofiles:\n  p:\n    allow: [echo]\n    unknown: approve\n", &err);
	assert_null(cfg);
	assert_non_null(strstr(err.msg, "unknown: approve"));
	/* a decision that is neither the rule's own nor approve */
	cfg = load("version: 1\napprovals: { approvers: [root] }\nprofiles:\n  p:\n"
	    "    allow:\n      - { command: git, decision: deny }\n", &err);
	assert_null(cfg);
	assert_non_null(strstr(err.msg, "invalid decision"));
	/* a timeout is a positive duration */
	cfg = load("version: 1\napprovals: { approvers: [root], timeout: soon }\nprofiles:\n"
	    "  p:\n    allow: [echo]\n", &err);
	assert_null(cfg);
	/* the profile's own approvers win */
	cfg = load("version: 1\napprovals: { approvers: [alice] }\nprofiles:\n  p:\n"
	    "    allow: [echo]\n    approvers: [bob, carol]\n", &err);
	assert_non_null(cfg);
	assert_int_equal(ag_profile_approvers(cfg, &cfg->profiles[0])->n, 2);
	assert_int_equal(ag_approvals_timeout(cfg), AG_APPROVALS_TIMEOUT_DEFAULT);
	ag_config_free(cfg);
}

static void
approvers(void **state)
{
	char *v[] = { (char *)"nosuchuser-xyz", (char *)"%nosuchgroup-xyz" };
	struct ag_strlist l = { .v = v, .n = 2 };
	char buf[64];

	(void)state;
	assert_true(ag_approval_is_approver(&l, 0));	/* root always */
	assert_false(ag_approval_is_approver(&l, 65534));
	ag_approval_approvers_text(&l, buf, sizeof(buf));
	assert_string_equal(buf, "nosuchuser-xyz, %nosuchgroup-xyz");
	l.n = 0;
	ag_approval_approvers_text(&l, buf, sizeof(buf));
	assert_string_equal(buf, "root");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations),
		cmocka_unit_test(scopes),
		cmocka_unit_test(policy_keys),
		cmocka_unit_test(approvers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
