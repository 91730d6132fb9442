/*
 * test_suggest.c - policy suggest's aggregation (policy/suggest.h) on a
 * small synthetic audit: the selection, subcommands from the walker,
 * written directories, hosts, risks, and a result that loads as a profile
 * which allows what ran and refuses what did not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/config.h"
#include "policy/policy.h"
#include "policy/suggest.h"

static char home[64];

/* One record per line of text; %H is the home. */
static const char *const records[] = {
	"{\"ts\":\"2026-11-28T10:00:00Z\",\"event\":\"command\",\"user\":\"agent\","
	"\"identity\":\"ci\",\"profile\":\"p\",\"command\":\"git status\",\"cwd\":\"%H\","
	"\"decision\":\"allow\",\"exit\":0}",
	"{\"ts\":\"2026-11-28T10:01:00Z\",\"event\":\"command\",\"user\":\"agent\","
	"\"identity\":\"ci\",\"profile\":\"p\",\"command\":\"git status\",\"cwd\":\"%H\","
	"\"decision\":\"allow\",\"exit\":0}",
	"{\"ts\":\"2026-11-28T10:02:00Z\",\"event\":\"command\",\"user\":\"agent\","
	"\"identity\":\"ci\",\"profile\":\"p\",\"command\":\"git log -n 1 | grep x\","
	"\"cwd\":\"%H\",\"decision\":\"allow\",\"exit\":1}",
	"{\"ts\":\"2026-11-28T10:03:00Z\",\"event\":\"command\",\"user\":\"agent\","
	"\"identity\":\"ci\",\"profile\":\"p\",\"command\":\"echo hi > %H/work/out.txt\","
	"\"cwd\":\"%H\",\"decision\":\"allow\",\"exit\":0}",
	"{\"ts\":\"2026-11-28T10:04:00Z\",\"event\":\"command\",\"user\":\"agent\","
	"\"identity\":\"ci\",\"profile\":\"p\",\"command\":\"bash -c 'ls'\","
	"\"cwd\":\"%H\",\"decision\":\"allow\",\"exit\":0}",
	"{\"ts\":\"2026-11-28T10:05:00Z\",\"event\":\"command\",\"user\":\"agent\","
	"\"identity\":\"ci\",\"profile\":\"p\",\"command\":\"rm -rf x\","
	"\"cwd\":\"%H\",\"decision\":\"deny\",\"reason\":\"no\"}",
	"{\"ts\":\"2026-11-28T10:06:00Z\",\"event\":\"net\",\"user\":\"agent\","
	"\"identity\":\"ci\",\"profile\":\"p\",\"dest\":{\"host\":\"example.org\",\"port\":443},"
	"\"decision\":\"allow\"}",
	/* another identity's, and one outside the time range */
	"{\"ts\":\"2026-11-28T10:07:00Z\",\"event\":\"command\",\"user\":\"agent\","
	"\"identity\":\"other\",\"profile\":\"p\",\"command\":\"docker ps\","
	"\"cwd\":\"%H\",\"decision\":\"allow\",\"exit\":0}",
	"{\"ts\":\"2026-11-29T10:00:00Z\",\"event\":\"command\",\"user\":\"agent\","
	"\"identity\":\"ci\",\"profile\":\"p\",\"command\":\"cat /etc/hostname\","
	"\"cwd\":\"%H\",\"decision\":\"allow\",\"exit\":0}",
};

static char *
run(long long until)
{
	struct ag_suggest_opts o;
	struct ag_suggest *s;
	char why[256], *y;
	size_t i;

	memset(&o, 0, sizeof(o));
	o.identity = "ci";
	o.since = -1;
	o.until = until;
	o.name = "job";
	o.home = home;
	s = ag_suggest_new(&o);
	assert_non_null(s);
	for (i = 0; i < sizeof(records) / sizeof(records[0]); i++) {
		char line[1024], *p;
		const char *r = records[i];
		json_object *jo;

		for (p = line; *r != '\0'; r++) {
			if (r[0] == '%' && r[1] == 'H') {
				p += sprintf(p, "%s", home);
				r++;
			} else
				*p++ = *r;
		}
		*p = '\0';
		jo = json_tokener_parse(line);
		assert_non_null(jo);
		assert_int_equal(ag_suggest_record(s, jo), 0);
		json_object_put(jo);
	}
	y = ag_suggest_yaml(s, why, sizeof(why));
	if (y == NULL)
		fail_msg("%s", why);
	assert_int_equal(ag_suggest_matched(s), until < 0 ? 8 : 7);
	ag_suggest_free(s);
	return y;
}

static enum ag_verdict
decide(const struct ag_profile *prof, const char *line)
{
	struct ag_policy_ctx ctx;
	struct ag_decision d;
	enum ag_verdict v;

	memset(&ctx, 0, sizeof(ctx));
	ctx.profile = prof;
	ctx.cwd = home;
	ctx.home = home;
	assert_int_equal(ag_policy_check(&ctx, line, strlen(line), &d), 0);
	v = d.verdict;
	ag_decision_free(&d);
	return v;
}

static void
aggregates_the_selection(void **state)
{
	/* 2026-11-29: the last record is out */
	char *y = run(1795910400000LL), *text;
	struct ag_config *cfg;
	const struct ag_profile *prof;
	struct ag_err err;
	size_t n;

	(void)state;
	assert_non_null(strstr(y, "{ command: git, subcommands: [log, status] }"));
	assert_non_null(strstr(y, "# git: 3 uses, first 2026-11-28T10:00:00Z, last "
	    "2026-11-28T10:02:00Z"));
	assert_non_null(strstr(y, "# RISK: bash runs whatever code"));
	assert_non_null(strstr(y, "- \"~/work\""));
	assert_non_null(strstr(y, "- \"example.org:443\""));
	assert_non_null(strstr(y, "refused at the time, not added (1): rm -rf x"));
	assert_null(strstr(y, "docker"));
	assert_null(strstr(y, "- cat"));

	n = strlen(y) + 16;
	text = malloc(n);
	assert_non_null(text);
	snprintf(text, n, "version: 1\n%s", y);
	cfg = ag_config_parse(text, strlen(text), "suggestion", &err);
	if (cfg == NULL)
		fail_msg("%s\n%s", err.msg, y);
	prof = ag_config_profile(cfg, "job");
	assert_non_null(prof);
	assert_int_equal(decide(prof, "git status"), AG_ALLOW);
	assert_int_equal(decide(prof, "git log -n 1 | grep x"), AG_ALLOW);
	assert_int_equal(decide(prof, "bash -c 'ls'"), AG_ALLOW);
	assert_int_equal(decide(prof, "git push"), AG_DENY);
	assert_int_equal(decide(prof, "rm -rf x"), AG_DENY);
	ag_config_free(cfg);
	free(text);
	free(y);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(home, sizeof(home), "/tmp/test_suggest.%ld", (long)getpid());
	if (mkdir(home, 0700) < 0)
		return -1;
	snprintf(home + strlen(home), sizeof(home) - strlen(home), "/work");
	if (mkdir(home, 0700) < 0)
		return -1;
	home[strlen(home) - 5] = '\0';
	return 0;
}

static int
teardown(void **state)
{
	char w[80];

	(void)state;
	snprintf(w, sizeof(w), "%s/work", home);
	rmdir(w);
	rmdir(home);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(aggregates_the_selection),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
