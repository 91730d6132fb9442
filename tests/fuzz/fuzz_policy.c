/*
 * fuzz_policy.c - libFuzzer target for parse + decide: any input must end
 * in a decision without a crash, a leak or a hang; input the parser refuses
 * is never allowed; every refusal carries a reason and a rule; and a
 * decision is the worst of its commands' verdicts.
 */
#include "agconfig.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char yaml[] =
    "version: 1\n"
    "profiles:\n"
    "  p:\n"
    "    allow: [ls, cat, grep, sed, tee, cp, find, xargs, read, let, declare,\n"
    "            { command: git, subcommands: [status, log, diff], allow_options: [\"-C\"] }]\n"
    "    deny: [{ command: cat, args: [\"/etc/shadow*\"] }]\n"
    "    features: { functions: allow, background: allow }\n"
    "    paths: { read: [\"/\"], write: [\"/tmp/agentgate-fuzz\"] }\n"
    "    unknown: deny\n";

static struct ag_config *cfg;

static int
sev(enum ag_verdict v)
{
	return v == AG_DENY ? 2 : v == AG_ASK ? 1 : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char pathenv[] = "PATH=/usr/bin:/bin", intenv[] = "N=3";
	static char *env[] = { pathenv, intenv, NULL };
	struct ag_policy_ctx ctx;
	struct ag_decision d;
	struct ag_err err;
	size_t i;
	int worst = 0;

	if (cfg == NULL && (cfg = ag_config_parse(yaml, sizeof(yaml) - 1, "fuzz.yaml",
	    &err)) == NULL)
		abort();
	memset(&ctx, 0, sizeof(ctx));
	ctx.profile = ag_config_profile(cfg, "p");
	ctx.cwd = "/tmp";
	ctx.home = "/tmp/agentgate-fuzz";
	ctx.env = env;
	if (ag_policy_check(&ctx, (const char *)data, size, &d) < 0 && d.verdict != AG_DENY)
		abort();
	if (d.parse_error && d.verdict != AG_DENY)
		abort();
	if (d.verdict != AG_ALLOW && (d.reason[0] == '\0' || d.rule[0] == '\0'))
		abort();
	for (i = 0; i < d.ncmds; i++) {
		if (d.cmds[i].reason == NULL || d.cmds[i].rule == NULL)
			abort();
		if (sev(d.cmds[i].verdict) > worst)
			worst = sev(d.cmds[i].verdict);
	}
	if (!d.parse_error && sev(d.verdict) != worst && d.rule[0] != 'i')
		abort();
	ag_decision_free(&d);
	return 0;
}
