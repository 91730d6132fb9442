/*
 * config_profile.c - a profile's keys: allow and deny rules (argv, options,
 * names), features, paths, file_transfer, output, env, limits, the
 * validator, targets and selectable_by; the network keys are
 * config_net.c's.  What the rules mean when a line is judged is policy/.
 */
#include "agconfig.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/config_int.h"
#include "common/misc.h"

/* ------------------------------------------------------------------ */
/* profiles                                                            */

static const char *const feature_names[] = { "allow", "deny", NULL };
static const char *const wredir_names[] = { "allow", "rules", "deny", NULL };
static const char *const unknown_names[] = { "deny", "ask", "allow", "approve", NULL };
static const char *const tier_names[] = { "strict", "developer", NULL };
static const char *const enforce_names[] = { "enforce", "audit", NULL };
static const char *const transfer_names[] = { "off", "read", "write", NULL };
/* in the order of enum ag_validator_kind */
static const char *const kind_names[] = { "openai", "anthropic", "opa", "webhook", NULL };

const char *
ag_validator_kind_name(enum ag_validator_kind k)
{
	return (size_t)k < sizeof(kind_names) / sizeof(kind_names[0]) - 1 ? kind_names[k] : "?";
}

struct pctx {
	struct ag_profile	*p;
	int			 is_deny;	/* for rules */
	struct ag_rule		*rule;
	const struct ynode	*argv_key;	/* the rule's 'argv', for messages */
	const struct ynode	*name_val;	/* the rule's 'name' */
	char			 what[200];	/* "in profile 'x'" */
};

static int
check_command(struct ctx *c, const struct ynode *v)
{
	size_t i;

	if (v->len == 0)
		return cf_err_node(c, v, "empty command name");
	for (i = 0; i < v->len; i++)
		if (isspace((unsigned char)v->s[i]))
			return cf_err_node(c, v, "command '%s' contains white space: "
			    "name one program per rule and put arguments in "
			    "'args'", cf_quote(c, v->s));
	if (strchr(v->s, '/') != NULL && v->s[0] != '/')
		return cf_err_node(c, v, "command '%s' must be a bare name or an "
		    "absolute path", cf_quote(c, v->s));
	/* a rule that looks like a pattern would match only a program of
	 * that literal name, that is, nothing */
	if (strpbrk(v->s, "*?[") != NULL)
		return cf_err_node(c, v, "command '%s' is not a pattern: name each "
		    "program (patterns go in 'args')", cf_quote(c, v->s));
	return 0;
}

static int
rule_command(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	(void)k;
	if (cf_want_scalar(c, v, key, "a program name") == -1 || check_command(c, v) == -1)
		return -1;
	return cf_dupstr(c, v, &pc->rule->command);
}

/* deny_args and allow_options narrow an allow rule; a deny rule has args */
static int
in_deny_rule(struct ctx *c, const char *key, const struct ynode *k, const struct pctx *pc)
{
	if (!pc->is_deny)
		return 0;
	return cf_err_node(c, k, "'%s' has no meaning in a deny rule (%s): "
	    "use 'args' to name the arguments that are refused", key, pc->rule->id);
}

static int
rule_deny_args(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	if (in_deny_rule(c, key, k, pc) == -1)
		return -1;
	return cf_get_strlist(c, v, key, &pc->rule->deny_args, NULL, 0);
}

static int
rule_allow_options(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	if (in_deny_rule(c, key, k, pc) == -1)
		return -1;
	return cf_get_strlist(c, v, key, &pc->rule->allow_options, cf_check_option, 0);
}

/* argv: [] is a rule of its own (no arguments at all), so it is kept apart
 * from "not given" */
static int
rule_argv(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	pc->argv_key = k;
	pc->rule->has_argv = 1;
	return cf_get_strlist(c, v, key, &pc->rule->argv, NULL, 1);
}

static int
rule_name(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	(void)k;
	if (cf_want_scalar(c, v, key, "a name") == -1)
		return -1;
	if (!cf_name_ok(v->s, ""))
		return cf_err_node(c, v, "rule name '%s' may contain only letters, digits, "
		    "'_', '-' and '.' (at most %d)", cf_quote(c, v->s), MAX_NAME);
	pc->name_val = v;
	return cf_dupstr(c, v, &pc->rule->name);
}

/* decision: the rule's own (allow or deny, as its list says) or approve */
static int
rule_decision(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;
	const char *own = pc->is_deny ? "deny" : "allow";

	(void)k;
	if (cf_want_scalar(c, v, key, "a decision") == -1)
		return -1;
	if (strcmp(v->s, "approve") == 0)
		pc->rule->approve = 1;
	else if (strcmp(v->s, own) != 0)
		return cf_err_node(c, v, "invalid decision '%s' for a rule in '%s': write "
		    "'approve' (a line it meets waits for a person) or '%s'",
		    cf_quote(c, v->s), own, own);
	return 0;
}

const struct cf_field cf_rule_fields[] = {
	CF_READ("command", rule_command),
	CF_READ("name", rule_name),
	CF_READ("argv", rule_argv),
	CF_LIST("subcommands", struct ag_rule, subcommands, cf_check_word, 0),
	CF_LIST("args", struct ag_rule, args, NULL, 0),
	CF_READ("deny_args", rule_deny_args),
	CF_READ("allow_options", rule_allow_options),
	CF_ENUM_OF("enforce", struct ag_rule, enforce, enforce_names),
	CF_READ("decision", rule_decision),
	CF_END
};

/*
 * argv is the whole argument vector: a list of arguments beside it would
 * either say nothing or contradict it, and which one wins would be a guess.
 */
static int
argv_conflict(struct ctx *c, const struct pctx *pc, const struct ag_rule *r)
{
	const char *other = r->args.n ? "args" : r->subcommands.n ? "subcommands" :
	    r->allow_options.n ? "allow_options" : NULL;

	if (other == NULL)
		return 0;
	return cf_err_node(c, pc->argv_key, "rule %s has both 'argv' and '%s': 'argv' "
	    "is the exact argument list, so write the arguments there (or use '%s' "
	    "without 'argv')", r->id, other, other);
}

static int
same_name(const struct ag_rule *r, size_t n, const struct ag_rule *self, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (&r[i] != self && r[i].name != NULL && strcmp(r[i].name, name) == 0)
			return 1;
	return 0;
}

/* A named rule's id is its name, so that a reference to it (the audit's
 * "rule", a dashboard) outlives an edit that moves it. */
static int
name_rule(struct ctx *c, struct pctx *pc, const char *key, struct ag_rule *r)
{
	struct ag_profile *p = pc->p;
	char id[2 * MAX_NAME + 40];

	if (same_name(p->allow, p->nallow, r, r->name) ||
	    same_name(p->deny, p->ndeny, r, r->name))
		return cf_err_node(c, pc->name_val, "rule name '%s' is used twice in "
		    "profile '%s': each rule's name is its own", r->name, p->name);
	snprintf(id, sizeof(id), "profiles.%s.%s.%s", p->name, key, r->name);
	free(r->id);
	if ((r->id = strdup(id)) == NULL)
		return cf_oom(c, pc->name_val);
	return 0;
}

static int
load_rules(struct ctx *c, struct pctx *pc, const struct ynode *v, const char *key,
    struct ag_rule **out, size_t *nout)
{
	size_t i;

	if (v->type != Y_SEQ)
		return cf_err_node(c, v, "expected a list of rules for '%s', got %s",
		    key, cf_kind_of(v));
	if (v->n == 0) {
		if (!pc->is_deny)
			return cf_err_node(c, v, "'allow' is an empty list, so profile "
			    "'%s' could run nothing: name the programs it may run",
			    pc->p->name);
		return 0;
	}
	if ((*out = calloc(v->n, sizeof(**out))) == NULL)
		return cf_oom(c, v);
	for (i = 0; i < v->n; i++) {
		const struct ynode *it = v->kid[i];
		struct ag_rule *r = &(*out)[i];
		char id[MAX_NAME + 40], what[MAX_NAME + 60];

		*nout = i + 1;
		cf_pos(c, &r->pos, it);
		snprintf(id, sizeof(id), "profiles.%s.%s[%zu]", pc->p->name, key, i);
		if ((r->id = strdup(id)) == NULL)
			return cf_oom(c, it);
		if (it->type == Y_SCALAR && !cf_is_null(it)) {
			if (cf_scalar_has_nul(it))
				return cf_err_node(c, it, "command contains a NUL "
				    "character");
			if (check_command(c, it) == -1)
				return -1;
			if (cf_dupstr(c, it, &r->command) == -1)
				return -1;
			continue;
		}
		if (it->type != Y_MAP)
			return cf_err_node(c, it, "expected a program name or a rule "
			    "mapping in '%s', got %s", key, cf_kind_of(it));
		snprintf(what, sizeof(what), "in rule %s", id);
		pc->rule = r;
		pc->argv_key = pc->name_val = NULL;
		if (cf_walk_fields(c, it, key, what, cf_rule_fields, r, pc) == -1)
			return -1;
		if (r->command == NULL)
			return cf_err_node(c, it, "rule %s has no 'command'", id);
		if (r->has_argv && argv_conflict(c, pc, r) == -1)
			return -1;
		if (r->name != NULL && name_rule(c, pc, key, r) == -1)
			return -1;
	}
	for (i = 0; i < *nout; i++) {
		struct ag_rule *r = &(*out)[i];
		char label[MAX_NAME * 2 + PATH_MAX];

		/* every decision compares it with each rule's; taken once here */
		r->base = ag_base_name(r->command);
		snprintf(label, sizeof(label), "%s (%s)", r->id, r->command);
		if ((r->label = strdup(label)) == NULL)
			return cf_oom(c, v);
	}
	return 0;
}

const struct cf_field cf_feature_fields[] = {
	CF_ENUM_OF("command_substitution", struct ag_features, command_substitution,
	    feature_names),
	CF_ENUM_OF("process_substitution", struct ag_features, process_substitution,
	    feature_names),
	CF_ENUM_OF("functions", struct ag_features, functions, feature_names),
	CF_ENUM_OF("background", struct ag_features, background, feature_names),
	CF_ENUM_OF("coproc", struct ag_features, coproc, feature_names),
	CF_ENUM_OF("subshell", struct ag_features, subshell, feature_names),
	CF_ENUM_OF("write_redirections", struct ag_features, write_redirections,
	    wredir_names),
	CF_END
};

static int
paths_tmp(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	static const char *const names[] = { "persistent", "session", NULL };
	struct ag_profile *p = arg;
	int e;

	(void)k;
	if (cf_get_enum(c, v, key, names, &e) == -1)
		return -1;
	p->paths_tmp = e == 0 ? AG_TMP_PERSISTENT : AG_TMP_SESSION;
	return 0;
}

const struct cf_field cf_paths_fields[] = {
	CF_LIST("read", struct ag_profile, paths_read, cf_check_policy_path, 1),
	CF_LIST("write", struct ag_profile, paths_write, cf_check_policy_path, 1),
	CF_LIST("protect", struct ag_profile, paths_protect, cf_check_policy_path, 1),
	CF_LIST("exec", struct ag_profile, paths_exec, cf_check_policy_path, 1),
	CF_READ("tmp", paths_tmp),
	CF_END
};

const struct cf_field cf_transfer_fields[] = {
	CF_ENUM_OF("sftp", struct ag_profile, sftp, transfer_names),
	CF_FIELD("scp", CF_BOOL, struct ag_profile, scp_legacy),
	CF_FIELD("rsync", CF_BOOL, struct ag_profile, rsync),
	CF_END
};

static int
check_regex(struct ctx *c, const struct ynode *it, const char *key)
{
	regex_t re;
	char msg[160];
	int rc;

	if ((rc = regcomp(&re, it->s, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &re, msg, sizeof(msg));
		return cf_err_node(c, it, "'%s' in '%s' is not a POSIX extended regular "
		    "expression: %s", cf_quote(c, it->s), key, msg);
	}
	regfree(&re);
	return 0;
}

const struct cf_field cf_output_fields[] = {
	CF_FIELD("redact", CF_BOOL, struct ag_profile, redact),
	CF_LIST("redact_patterns", struct ag_profile, redact_patterns, check_regex, 0),
	CF_END
};

static int
envset_key(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = arg;
	size_t n = p->env_set_keys.n;

	if (!cf_env_name_ok(key))
		return cf_err_node(c, k, "'%s' in 'env.set' is not a valid "
		    "environment variable name", cf_quote(c, key));
	if (v->type != Y_SCALAR)
		return cf_err_node(c, v, "expected a string for 'env.set.%s', got %s",
		    cf_quote(c, key), cf_kind_of(v));
	if (cf_scalar_has_nul(v))
		return cf_err_node(c, v, "'env.set.%s' contains a NUL character",
		    cf_quote(c, key));
	/* An empty value is a value: "FOO: ''" sets FOO to the empty string. */
	if ((p->env_set_keys.v[n] = strdup(key)) == NULL)
		return cf_oom(c, k);
	p->env_set_keys.n++;
	if ((p->env_set_vals.v[n] = strdup(cf_is_null(v) ? "" : v->s)) == NULL)
		return cf_oom(c, v);
	p->env_set_vals.n++;
	return 0;
}

static int
env_set(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = arg;
	char what[260];

	(void)k;
	if (v->type == Y_MAP) {
		if ((p->env_set_keys.v = calloc(v->n / 2 + 1, sizeof(char *))) == NULL ||
		    (p->env_set_vals.v = calloc(v->n / 2 + 1, sizeof(char *))) == NULL)
			return cf_oom(c, v);
	}
	snprintf(what, sizeof(what), "in profiles.%s.env.set", p->name);
	return cf_walk_map(c, v, key, what, "variable", NULL, envset_key, p);
}

const struct cf_field cf_env_fields[] = {
	CF_LIST("deny", struct ag_profile, env_deny, cf_check_env_glob, 1),
	CF_LIST("allow", struct ag_profile, env_allow, cf_check_env_name, 1),
	CF_READ("set", env_set),
	CF_END
};

static int
limits_memory(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_limits *l = arg;

	(void)k;
	/* "unlimited" has to be said: leaving the key out means the default */
	if (v->type == Y_SCALAR && v->s != NULL && strcmp(v->s, "unlimited") == 0) {
		l->memory = -1;
		return 0;
	}
	return cf_get_size(c, v, key, &l->memory);
}

const struct cf_field cf_limits_fields[] = {
	CF_FIELD("timeout", CF_DURATION, struct ag_limits, timeout),
	CF_FIELD("max_output", CF_SIZE, struct ag_limits, max_output),
	CF_FIELD("idle_timeout", CF_DURATION, struct ag_limits, idle_timeout),
	CF_COUNT_OF("processes", struct ag_limits, processes, INT_MAX),
	CF_COUNT_OF("open_files", struct ag_limits, open_files, INT_MAX),
	CF_FIELD("file_size", CF_SIZE, struct ag_limits, file_size),
	CF_FIELD("cpu", CF_DURATION, struct ag_limits, cpu),
	CF_FIELD("address_space", CF_SIZE, struct ag_limits, address_space),
	CF_READ("memory", limits_memory),
	CF_FIELD("tmp_size", CF_SIZE, struct ag_limits, tmp_size),
	CF_FIELD("tmp_age", CF_DURATION, struct ag_limits, tmp_age),
	CF_FIELD("tmp_disk", CF_SIZE, struct ag_limits, tmp_disk),
	CF_END
};

static int
validator_kind(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_validator *val = arg;
	int e;

	(void)k;
	if (cf_get_enum(c, v, key, kind_names, &e) == -1)
		return -1;
	val->kind = (enum ag_validator_kind)e;
	return 0;
}

/* Older policies say `on_error: deny`; nothing else was ever safe. */
static int
validator_on_error(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	(void)k;
	(void)arg;
	if (cf_want_scalar(c, v, key, "deny") == -1)
		return -1;
	if (strcmp(v->s, "deny") != 0)
		return cf_err_node(c, v, "'%s: %s' is not possible: a validator that cannot "
		    "answer always refuses (there is no fail-open mode); remove the key",
		    key, cf_quote(c, v->s));
	return 0;
}

/* A fraction from 0 to 1, as a plain decimal ("0.8"). */
static int
validator_min_confidence(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_validator *val = arg;
	char *end;
	double d;

	(void)k;
	if (cf_want_scalar(c, v, key, "a number from 0 to 1") == -1)
		return -1;
	errno = 0;
	d = strtod(v->s, &end);
	if (v->s[0] == '\0' || *end != '\0' || errno != 0 || !(d >= 0.0 && d <= 1.0) ||
	    strspn(v->s, "0123456789.") != strlen(v->s))
		return cf_err_node(c, v, "'%s' must be a number from 0 to 1, got '%s'", key,
		    cf_quote(c, v->s));
	val->min_confidence = d;
	val->has_min_confidence = 1;
	return 0;
}

const struct cf_field cf_validator_fields[] = {
	CF_FIELD("name", CF_STRING, struct ag_validator, name),
	CF_FIELD("url", CF_URL, struct ag_validator, url),
	CF_READ("kind", validator_kind),
	CF_FIELD("model", CF_STRING, struct ag_validator, model),
	CF_FIELD("api_key_file", CF_ABS_PATH, struct ag_validator, api_key_file),
	CF_FIELD("prompt_file", CF_ABS_PATH, struct ag_validator, prompt_file),
	CF_COUNT_OF("timeout_ms", struct ag_validator, timeout_ms, 600000),
	CF_COUNT_OF("max_command_bytes", struct ag_validator, max_command_bytes, 1048576),
	CF_COUNT_OF("max_answer_bytes", struct ag_validator, max_answer_bytes, 16777216),
	CF_COUNT_OF("max_per_minute", struct ag_validator, max_per_minute, 100000),
	CF_COUNT_OF("max_tokens", struct ag_validator, max_tokens, 100000),
	CF_READ("min_confidence", validator_min_confidence),
	CF_FIELD("approval_timeout", CF_DURATION, struct ag_validator, approval_timeout),
	CF_READ("on_error", validator_on_error),
	CF_END
};

static int
check_target_name(struct ctx *c, const struct ynode *it, const char *key)
{
	if (!cf_name_ok(it->s, ""))
		return cf_err_node(c, it, "'%s' in '%s' is not an upstream name (letters, "
		    "digits, '_', '-' and '.')", cf_quote(c, it->s), key);
	return 0;
}

static int
check_selector(struct ctx *c, const struct ynode *it, const char *key)
{
	return cf_check_who(c, it, key, "an identity, account");
}

/* "in profiles.NAME.KEY", for the messages of a section of a profile */
static const char *
section_what(char *buf, size_t len, const struct ag_profile *p, const char *key)
{
	snprintf(buf, len, "in profiles.%s.%s", p->name, key);
	return buf;
}

static int
profile_allow(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	(void)k;
	pc->is_deny = 0;
	return load_rules(c, pc, v, key, &pc->p->allow, &pc->p->nallow);
}

static int
profile_deny(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct pctx *pc = arg;

	(void)k;
	pc->is_deny = 1;
	return load_rules(c, pc, v, key, &pc->p->deny, &pc->p->ndeny);
}

static int
profile_features(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	return cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    cf_feature_fields, &p->features, p);
}

static int
profile_paths(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	return cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    cf_paths_fields, p, p);
}

static int
profile_network(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	p->has_network = 1;
	if (cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    cf_network_fields, p, p) == -1)
		return -1;
	return cf_network_finish(c, p, v);
}

static int
profile_transfer(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	return cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    cf_transfer_fields, p, p);
}

static int
profile_output(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	if (cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    cf_output_fields, p, p) == -1)
		return -1;
	/* patterns of one's own mean redaction on */
	if (p->redact_patterns.n > 0)
		p->redact = 1;
	return 0;
}

static int
profile_env(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	return cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    cf_env_fields, p, p);
}

static int
profile_limits(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	return cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    cf_limits_fields, &p->limits, &p->limits);
}

static int
profile_validator(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_profile *p = ((struct pctx *)arg)->p;
	char what[MAX_NAME + 60];

	(void)k;
	if ((p->validator = calloc(1, sizeof(*p->validator))) == NULL)
		return cf_oom(c, v);
	p->validator->timeout_ms = 4000;
	p->validator->max_command_bytes = 8192;
	p->validator->max_answer_bytes = 65536;
	p->validator->max_per_minute = 30;
	p->validator->max_tokens = 512;
	cf_pos(c, &p->validator->pos, v);
	if (cf_walk_fields(c, v, key, section_what(what, sizeof(what), p, key),
	    cf_validator_fields, p->validator, p->validator) == -1)
		return -1;
	if (p->validator->url == NULL)
		return cf_err_node(c, v, "profiles.%s.validator has no 'url'", p->name);
	if (p->validator->name != NULL && !cf_name_ok(p->validator->name, ""))
		return cf_err_node(c, cf_map_get(v, "name"), "profiles.%s.validator.name may "
		    "contain only letters, digits, '_', '-' and '.' (at most %d)", p->name,
		    MAX_NAME);
	if ((p->validator->kind == AG_VK_OPENAI || p->validator->kind == AG_VK_ANTHROPIC) &&
	    p->validator->model == NULL)
		return cf_err_node(c, v, "profiles.%s.validator of kind '%s' needs "
		    "a 'model'", p->name, ag_validator_kind_name(p->validator->kind));
	if (p->validator->prompt_file != NULL && (p->validator->kind == AG_VK_OPA ||
	    p->validator->kind == AG_VK_WEBHOOK))
		return cf_err_node(c, cf_map_get(v, "prompt_file"), "profiles.%s.validator: "
		    "'prompt_file' is for the LLM kinds (openai, anthropic), not '%s'", p->name,
		    ag_validator_kind_name(p->validator->kind));
	if (p->validator->approval_timeout > 0 && p->validator->kind != AG_VK_WEBHOOK)
		return cf_err_node(c, cf_map_get(v, "approval_timeout"), "profiles.%s.validator: "
		    "'approval_timeout' is for a webhook, which can hand a command to a person; "
		    "not '%s'", p->name, ag_validator_kind_name(p->validator->kind));
	if (p->validator->name == NULL &&
	    (p->validator->name = strdup(ag_validator_kind_name(p->validator->kind))) == NULL)
		return cf_oom(c, v);
	return 0;
}

const struct cf_field cf_profile_fields[] = {
	CF_READ("allow", profile_allow),
	CF_READ("deny", profile_deny),
	CF_READ("features", profile_features),
	CF_READ("paths", profile_paths),
	CF_READ("network", profile_network),
	CF_READ("file_transfer", profile_transfer),
	CF_READ("env", profile_env),
	CF_READ("output", profile_output),
	CF_READ("limits", profile_limits),
	CF_ENUM_OF("unknown", struct ag_profile, unknown, unknown_names),
	CF_READ("validator", profile_validator),
	CF_ENUM_OF("tier", struct ag_profile, tier, tier_names),
	CF_ENUM_OF("enforce", struct ag_profile, enforce, enforce_names),
	CF_LIST("targets", struct ag_profile, targets, check_target_name, 0),
	CF_LIST("selectable_by", struct ag_profile, selectable_by, check_selector, 0),
	CF_LIST("approvers", struct ag_profile, approvers, cf_check_approver, 0),
	CF_END
};

/*
 * With 'unknown: allow' the kernel sandbox holds whatever the line runs,
 * so the constructs the strict model refuses by default (functions, jobs
 * in the background, coproc) are allowed unless features: says deny.
 */
static void
unknown_allow_features(struct ag_profile *p, const struct ynode *f)
{
	if (f == NULL || cf_map_get(f, "functions") == NULL)
		p->features.functions = AG_FEATURE_ALLOW;
	if (f == NULL || cf_map_get(f, "background") == NULL)
		p->features.background = AG_FEATURE_ALLOW;
	if (f == NULL || cf_map_get(f, "coproc") == NULL)
		p->features.coproc = AG_FEATURE_ALLOW;
}

static int
profile_entry(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg)
{
	struct ag_config *cfg = c->cfg;
	struct ag_profile *p = &cfg->profiles[cfg->nprofiles];
	struct pctx pc;
	const struct ynode *u;

	(void)arg;
	if (!cf_name_ok(key, ""))
		return cf_err_node(c, k, "profile name '%s' may contain only letters, "
		    "digits, '_', '-' and '.' (at most %d)", cf_quote(c, key), MAX_NAME);
	cfg->nprofiles++;
	cf_pos(c, &p->pos, k);
	p->features.functions = AG_FEATURE_DENY;
	p->features.background = AG_FEATURE_DENY;
	p->features.coproc = AG_FEATURE_DENY;
	if ((p->name = strdup(key)) == NULL)
		return cf_oom(c, k);
	memset(&pc, 0, sizeof(pc));
	pc.p = p;
	snprintf(pc.what, sizeof(pc.what), "in profile '%s'", key);
	if (cf_walk_fields(c, v, key, pc.what, cf_profile_fields, p, &pc) == -1)
		return -1;
	if (p->nallow == 0 && p->unknown == AG_UNKNOWN_DENY)
		return cf_err_node(c, k, "profile '%s' has no 'allow' list: name the "
		    "programs it may run (or set 'unknown: ask' with a validator)",
		    key);
	if (p->unknown == AG_UNKNOWN_ALLOW && p->tier != AG_TIER_DEVELOPER) {
		u = cf_map_get(v, "unknown");
		return cf_err_node(c, u ? u : k, "profile '%s' has 'unknown: allow' but "
		    "is not 'tier: developer': only the developer tier's kernel sandbox "
		    "holds a program no rule names (use 'unknown: deny' or 'ask')", key);
	}
	if (p->unknown == AG_UNKNOWN_ALLOW)
		unknown_allow_features(p, cf_map_get(v, "features"));
	if (p->paths_exec.n > 0 && p->tier != AG_TIER_DEVELOPER) {
		u = cf_map_get(v, "paths");
		u = u ? cf_map_get(u, "exec") : NULL;
		return cf_err_node(c, u ? u : k, "profile '%s' has 'paths.exec' but is "
		    "not 'tier: developer': only the developer tier runs built files",
		    key);
	}
	if (p->unknown == AG_UNKNOWN_ASK && p->validator == NULL) {
		u = cf_map_get(v, "unknown");
		return cf_err_node(c, u ? u : k, "profile '%s' has 'unknown: ask' "
		    "but no 'validator' to ask", key);
	}
	return 0;
}

int
cf_load_profiles(struct ctx *c, const struct ynode *v)
{
	size_t base = c->cfg->nprofiles;
	struct ag_profile *p;

	if (v->type == Y_MAP) {
		if ((p = cf_grow(c, c->cfg->profiles, base, v->n / 2, sizeof(*p), v)) == NULL)
			return -1;
		c->cfg->profiles = p;
	}
	if (cf_walk_map(c, v, "profiles", "in profiles", "profile", NULL,
	    profile_entry, NULL) == -1)
		return -1;
	if (c->cfg->nprofiles == base)
		return cf_err_node(c, v, "'profiles' is empty: define at least one "
		    "profile");
	return 0;
}

