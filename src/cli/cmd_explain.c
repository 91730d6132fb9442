/*
 * cmd_explain.c - `agentgate explain`: show how the gateway would judge a
 * command line under a profile, without running anything.  Admins use it
 * to write policies; the test suite uses it for decision tests.
 *
 * Exit status: 0 allow, 1 deny, 2 ask, 3 the line does not parse (or is
 * incomplete), 4 usage or configuration error.  With --ask, an ask ends
 * in the validator's verdict (0 or 1).
 */
#include "agconfig.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli/commands.h"
#include "common/misc.h"
#include "common/utf8.h"
#include "common/config.h"
#include "common/err.h"
#include "policy/setid.h"
#include "policy/policy.h"
#include "record/approvals.h"
#include "policy/prog.h"
#include "parse/shparse.h"
#include "common/strbuf.h"
#include "core/approval.h"
#include "core/core.h"
#include "policy/netrules.h"
#include "policy/decision_json.h"
#include "validate/validator.h"

#define EX_ALLOW	0
#define EX_DENY		1
#define EX_ASK		2
#define EX_PARSE	3
#define EX_USAGE	4

static void
explain_usage(FILE *fp)
{
	fprintf(fp,
	    "Usage: agentgate explain [--config FILE] [--profile NAME] [--user NAME]\n"
	    "                         [--json] [--cwd DIR] [--ask] -- COMMAND...|-\n"
	    "       agentgate explain [--config FILE] [--profile NAME] [--user NAME]\n"
	    "                         [--json] --host HOST[:PORT]\n"
	    "\n"
	    "Show how the gateway would judge COMMAND under a profile, without\n"
	    "running it: one line per simple command with the program it resolves\n"
	    "to and its verdict, then the decision.  '-' reads the command line\n"
	    "(several lines allowed) from standard input.\n"
	    "\n"
	    "  -f, --config FILE   policy file (default %s)\n"
	    "  -p, --profile NAME  profile to use (default: the one the gateway would\n"
	    "                      give the user: users:, then gateway.default_profile)\n"
	    "  -u, --user NAME     decide as this account's session would (its home,\n"
	    "                      environment and profile; default: the caller, with\n"
	    "                      $HOME as ~)\n"
	    "  -j, --json          print one JSON object instead of text\n"
	    "  -C, --cwd DIR       working directory to decide in (default: current)\n"
	    "  -a, --ask           when the decision is ask, ask the profile's validator\n"
	    "  -H, --host HOST[:PORT]  instead of a command: may the profile's commands\n"
	    "                      reach HOST (port 443 unless given) through the\n"
	    "                      gateway's egress proxy, and by which rule\n"
	    "                      now and show its answer (exit 0 allow, 1 deny)\n"
	    "  -h, --help          show this help and exit\n"
	    "\n"
	    "Exit status: 0 allow, 1 deny, 2 ask, 3 parse error, 4 usage or\n"
	    "configuration error.\n", AG_DEFAULT_CONFIG);
}

/* Read all of stdin up to the parser's input limit. */
static char *
read_stdin(size_t *lenp)
{
	struct ag_strbuf sb;
	char buf[8192];
	size_t n;

	ag_strbuf_init(&sb, AG_SH_MAX_INPUT);
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
		if (ag_strbuf_append(&sb, buf, n) < 0) {
			ag_strbuf_free(&sb);
			fprintf(stderr, "agentgate: explain: standard input is longer than %d bytes\n",
			    AG_SH_MAX_INPUT);
			return NULL;
		}
	}
	if (ferror(stdin)) {
		ag_strbuf_free(&sb);
		fprintf(stderr, "agentgate: explain: cannot read standard input: %s\n",
		    strerror(errno));
		return NULL;
	}
	if (sb.data == NULL && ag_strbuf_addstr(&sb, "") < 0)
		return NULL;
	return ag_strbuf_detach(&sb, lenp);
}

/* What the program registry knows of the program: what it runs besides
 * itself, and the actions a deny rule may name. */
static void
print_known(const char *name)
{
	const struct ag_prog *p = name != NULL ? ag_prog_lookup(ag_base_name(name)) : NULL;
	const struct ag_action *a;

	if (p == NULL)
		return;
	if (p->runs != NULL)
		printf("      runs: %s\n", p->runs);
	for (a = p->actions; a != NULL && a->name != NULL; a++)
		printf("%s%s (%s)", a == p->actions ? "      deny rules may name: " : ", ",
		    a->name, a->what);
	if (p->actions != NULL && p->actions->name != NULL)
		printf("\n");
}

/* The same, for --json. */
static void
known_json(json_object *jc, const char *name)
{
	const struct ag_prog *p = name != NULL ? ag_prog_lookup(ag_base_name(name)) : NULL;
	const struct ag_action *a;
	json_object *acts;

	if (p == NULL)
		return;
	if (p->runs != NULL)
		json_object_object_add(jc, "runs", json_object_new_string(p->runs));
	if (p->actions == NULL || p->actions->name == NULL ||
	    (acts = json_object_new_object()) == NULL)
		return;
	for (a = p->actions; a->name != NULL; a++)
		json_object_object_add(acts, a->name, json_object_new_string(a->what));
	json_object_object_add(jc, "actions", acts);
}

/* o as one line; what json-c leaves raw (DEL, C1, bidi controls) escaped. */
static int
put_json(json_object *o, int flags)
{
	const char *js = json_object_to_json_string_ext(o, flags);
	size_t n;
	char *safe;

	if (js == NULL || (safe = ag_utf8_json_safe(js, strlen(js), &n)) == NULL)
		return -1;
	puts(safe);
	free(safe);
	return 0;
}

static int
print_json(const struct ag_config *cfg, const struct ag_decision *d, const struct ag_validator *v,
    const struct ag_ask_result *answer)
{
	json_object *o = ag_decision_json(d, cfg), *cmds;
	char why[PATH_MAX + 512];
	size_t i;
	int r;

	if (o == NULL || !json_object_object_get_ex(o, "commands", &cmds)) {
		json_object_put(o);
		return -1;
	}
	/* what explain knows beyond the decision: the registry's word on
	 * each program, and a set-id program the sandbox disarms */
	for (i = 0; i < d->ncmds; i++) {
		const struct ag_policy_cmd *c = &d->cmds[i];
		json_object *jc = json_object_array_get_idx(cmds, i);

		if (c->verdict != AG_DENY && ag_setid_disarmed(cfg, c->name, c->path, why,
		    sizeof(why)))
			json_object_object_add(jc, "note", json_object_new_string(why));
		known_json(jc, c->name);
	}
	if (d->verdict == AG_ASK && v != NULL)
		json_object_object_add(o, "validator", ag_ask_json(v, NULL, answer));
	r = put_json(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(o);
	return r;
}

/* One line of source text, what may not reach a terminal made visible. */
static void
print_text_field(const char *s, size_t max)
{
	char buf[1024];

	fputs(ag_utf8_visible(s, s != NULL ? strlen(s) : 0, max, buf, sizeof(buf)), stdout);
}

/*
 * Text the agent may have chosen (a path, a reason quoting a word of the
 * command, a validator's answer), made visible: one of S_NBUF buffers, so
 * that a printf may show several.
 */
#define S_NBUF	4
static const char *
S(const char *s)
{
	static char buf[S_NBUF][4 * PATH_MAX + 8];
	static int next;

	next = (next + 1) % S_NBUF;
	return ag_utf8_shown(s, buf[next], sizeof(buf[next]));
}

/*
 * --host: the egress proxy's verdict on a tunnel to HOST[:PORT], before
 * any name is resolved (the proxy resolves; what it resolves to is judged
 * again when a connection is made: see agentgate.yaml(5)).
 */
static int
explain_host(const struct ag_config *cfg, const struct ag_profile *prof, const char *arg,
    int json)
{
	struct ag_net_verdict v;
	char host[300], allowed[2048];
	const char *why, *mapped = NULL;
	int port;
	size_t i;

	if (ag_net_split_hostport(arg, host, sizeof(host), &port, &why) < 0) {
		fprintf(stderr, "agentgate: explain: --host %s: %s\n", S(arg), why);
		return EX_USAGE;
	}
	if (port == 0)
		port = 443;
	ag_net_judge(prof, host, port, NULL, NULL, &v);
	for (i = 0; i < cfg->gw.egress.nresolve; i++) {
		const struct ag_egress_map *m = &cfg->gw.egress.resolve[i];

		if (strcasecmp(m->host, host) == 0 && (m->port == 0 || m->port == port))
			mapped = m->addr;
	}
	ag_net_allowed_text(prof, allowed, sizeof(allowed));
	if (json) {
		json_object *o = json_object_new_object();

		if (o == NULL)
			return EX_USAGE;
		json_object_object_add(o, "profile", json_object_new_string(prof->name));
		json_object_object_add(o, "host", json_object_new_string(host));
		json_object_object_add(o, "port", json_object_new_int(port));
		json_object_object_add(o, "decision", json_object_new_string(v.allow ? "allow" :
		    "deny"));
		json_object_object_add(o, "reason", json_object_new_string(v.reason));
		if (v.rule != NULL)
			json_object_object_add(o, "rule", json_object_new_string(v.rule->text));
		if (mapped != NULL)
			json_object_object_add(o, "resolve", json_object_new_string(mapped));
		(void)put_json(o, JSON_C_TO_STRING_PLAIN);
		json_object_put(o);
	} else {
		printf("profile: %s\nhost: ", prof->name);
		print_text_field(host, 255);
		printf(":%d\ndecision: %s\nreason: ", port, v.allow ? "allow" : "deny");
		print_text_field(v.reason, 400);
		printf("\nrule: %s\n", S(v.rule != NULL ? v.rule->text : ""));
		if (mapped != NULL)
			printf("resolved by: gateway.egress.resolve, to %s\n", S(mapped));
		else if (v.allow)
			printf("resolved by: the proxy, at connect time; an address inside this host "
			    "(loopback, link-local, the metadata service, its own) is refused unless "
			    "a rule names it\n");
		printf("allowed here: %s\n", S(allowed));
		if (!ag_net_has_egress(prof) || cfg->gw.sandbox == AG_SANDBOX_OFF)
			printf("note: %s\n", cfg->gw.sandbox == AG_SANDBOX_OFF ?
			    "gateway.sandbox is off: nothing confines the network, there is no proxy" :
			    "the profile has no network: its commands reach no host at all");
	}
	return v.allow ? EX_ALLOW : EX_DENY;
}

/* A rule as a person reads it: each profile rule with its program. */
static const char *
rule_shown(const struct ag_config *cfg, const char *rule, char *buf, size_t len)
{
	if (rule == NULL)
		return "";
	return ag_config_rule_labels(cfg, rule, buf, len) ? buf : rule;
}

static void
print_text(const struct ag_config *cfg, const struct ag_decision *d, const struct ag_profile *prof,
    const struct ag_validator *v, const struct ag_ask_result *r)
{
	const char *profile = prof->name != NULL ? prof->name : "?";
	char why[PATH_MAX + 512], label[1024];
	size_t i;

	printf("profile: %s\n", S(profile));
	for (i = 0; i < d->ncmds; i++) {
		const struct ag_policy_cmd *c = &d->cmds[i];

		printf("%-5s @%-4zu ", ag_verdict_name(c->verdict), c->off);
		print_text_field(c->text && *c->text ? c->text : (c->name ? c->name : ""), 60);
		printf("\n      program: %s\n", c->path ? S(c->path) : "(not found)");
		printf("      %s [%s]\n", S(c->reason), S(rule_shown(cfg, c->rule,
		    label, sizeof(label))));
		if (c->verdict != AG_DENY && ag_setid_disarmed(cfg, c->name, c->path, why,
		    sizeof(why)))
			printf("      note: %s\n", S(why));
		print_known(c->name);
	}
	printf("decision: %s\n", ag_verdict_name(d->verdict));
	printf("reason: %s\n", S(d->reason));
	printf("rule: %s\n", S(rule_shown(cfg, d->rule, label, sizeof(label))));
	if (d->would_run)
		printf("rollout: enforce: audit lets it run: a session runs this line under "
		    "its sandbox and records it as would_deny\n");
	else if (d->verdict == AG_DENY && ag_profile_in_rollout(prof))
		printf("rollout: refused even so (what it meets guards the gateway itself)\n");
	if (d->approve) {
		char who[512];

		if (ag_core_webhook_approves(prof))
			printf("approval: the line waits for a person's answer through validator "
			    "'%s' (rule %s; up to %ld s, then refused)\n", prof->validator->name,
			    d->approve_rule, prof->validator->approval_timeout);
		else {
			ag_approval_approvers_text(ag_profile_approvers(cfg, prof), who,
			    sizeof(who));
			printf("approval: the line waits for approval by %s (rule %s; up to %ld s, "
			    "then refused)\n", who, d->approve_rule, ag_approvals_timeout(cfg));
		}
	} else if (d->verdict == AG_DENY && ag_profile_has_approvals(prof))
		printf("approval: refused even so (no approval lets it run)\n");
	if (d->verdict != AG_ASK)
		return;
	if (v == NULL) {
		printf("validator: none (the gateway refuses it)\n");
		return;
	}
	printf("would ask validator '%s' (%s, %s)\n", v->name, ag_validator_kind_name(v->kind),
	    v->url);
	if (r == NULL)
		return;
	if (r->error_class != NULL)
		printf("validator: deny, no usable answer (%s: %s)\n", r->error_class,
		    S(r->error));
	else
		printf("validator: %s: %s\n", r->allow ? "allow" : "deny",
		    r->reason[0] ? S(r->reason) : "(no reason given)");
	if (r->has_confidence)
		printf("confidence: %.2f\n", r->confidence);
	if (r->approver[0] != '\0')
		printf("approver: %s\n", S(r->approver));
	printf("latency: %ld ms\n", r->latency_ms);
}

/* What the command line asked for. */
struct explain_args {
	const char	*path, *pname, *cwdopt, *uname, *host;
	int		 json, ask;
	char		*line;		/* the command to judge (not with --host) */
	size_t		 len;
};

/* The command's words joined with spaces, as ssh joins them; or stdin for
 * a lone "-".  0, or -1 (said why). */
static int
explain_line_of(int argc, char **argv, struct explain_args *a)
{
	struct ag_strbuf sb;
	int i;

	if (optind == argc - 1 && strcmp(argv[optind], "-") == 0)
		return (a->line = read_stdin(&a->len)) != NULL ? 0 : -1;
	ag_strbuf_init(&sb, AG_SH_MAX_INPUT);
	for (i = optind; i < argc; i++)
		if ((i > optind && ag_strbuf_addch(&sb, ' ') < 0) ||
		    ag_strbuf_addstr(&sb, argv[i]) < 0) {
			ag_strbuf_free(&sb);
			fprintf(stderr, "agentgate: explain: command too long\n");
			return -1;
		}
	return (a->line = ag_strbuf_detach(&sb, &a->len)) != NULL ? 0 : -1;
}

/* 0, 1 for --help (printed), or -1 for a usage error (said why). */
static int
explain_args(int argc, char **argv, struct explain_args *a)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "profile", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "cwd", required_argument, NULL, 'C' },
		{ "user", required_argument, NULL, 'u' },
		{ "ask", no_argument, NULL, 'a' },
		{ "host", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	memset(a, 0, sizeof(*a));
	a->path = AG_DEFAULT_CONFIG;
	optind = 1;
	opterr = 0;
	/* '+': stop at the command, whose words may look like options */
	while ((ch = getopt_long(argc, argv, "+:f:p:jC:u:aH:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			a->path = optarg;
			break;
		case 'p':
			a->pname = optarg;
			break;
		case 'j':
			a->json = 1;
			break;
		case 'C':
			a->cwdopt = optarg;
			break;
		case 'u':
			a->uname = optarg;
			break;
		case 'a':
			a->ask = 1;
			break;
		case 'H':
			a->host = optarg;
			break;
		case 'h':
			explain_usage(stdout);
			return 1;
		case ':':
			fprintf(stderr, "agentgate: explain: option '%s' needs an argument\n"
			    "Try 'agentgate explain --help'.\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "agentgate: explain: unknown option '%s'\n"
			    "Try 'agentgate explain --help'.\n", argv[optind - 1]);
			return -1;
		}
	}
	if (a->host != NULL && optind < argc) {
		fprintf(stderr, "agentgate: explain: --host takes no command\n");
		return -1;
	}
	if (a->host == NULL && optind >= argc) {
		fprintf(stderr, "agentgate: explain: no command given (use -- COMMAND, or - for stdin)\n");
		return -1;
	}
	return a->host != NULL ? 0 : explain_line_of(argc, argv, a);
}

/*
 * The account (--user, else the caller, whose ~ is $HOME where that is
 * absolute) into pwd, and the profile it is judged by.  NULL: said why.
 */
static const struct ag_profile *
explain_who(const struct ag_config *cfg, const struct explain_args *a, struct passwd *pwd)
{
	const struct ag_profile *prof;
	struct ag_err err;
	struct passwd *pw;

	errno = 0;
	if ((pw = a->uname != NULL ? getpwnam(a->uname) : getpwuid(getuid())) == NULL) {
		if (a->uname != NULL)
			fprintf(stderr, "agentgate: explain: --user %s: no such account\n", a->uname);
		else
			fprintf(stderr, "agentgate: explain: cannot look up uid %ld\n", (long)getuid());
		return NULL;
	}
	*pwd = *pw;
	if (a->uname == NULL) {
		const char *home = getenv("HOME");

		if (home != NULL && home[0] == '/')
			pwd->pw_dir = (char *)(uintptr_t)home;
	}
	if (a->pname != NULL) {
		if ((prof = ag_config_profile(cfg, a->pname)) == NULL)
			fprintf(stderr, "agentgate: explain: no profile '%s' in %s\n", a->pname,
			    a->path);
	} else if (a->uname != NULL) {
		/* as the gateway would resolve it, PAM identities aside */
		if ((prof = ag_core_profile(cfg, NULL, NULL, NULL, pwd, &err)) == NULL)
			fprintf(stderr, "agentgate: explain: %s; use --profile NAME\n", S(err.msg));
	} else if ((prof = cfg->gw.default_profile) == NULL)
		fprintf(stderr, "agentgate: explain: %s has no gateway.default_profile; use --profile NAME\n",
		    a->path);
	return prof;
}

/* The line decided (and asked, with --ask) in the context a session of
 * pwd under prof would decide it in (core.h), and printed: the exit code. */
static int
explain_decide(struct ag_config *cfg, const struct ag_profile *prof, struct passwd *pwd,
    const struct explain_args *a)
{
	struct ag_core_params cp;
	struct ag_core core;
	struct ag_decision d;
	struct ag_err err;
	struct ag_ask_result ans, *answer = NULL;
	const struct ag_validator *v;
	char cwd[PATH_MAX];
	int rc = EX_USAGE;

	if (a->cwdopt != NULL) {
		if (realpath(a->cwdopt, cwd) == NULL) {
			fprintf(stderr, "agentgate: explain: --cwd %s: %s\n", a->cwdopt,
			    strerror(errno));
			return EX_USAGE;
		}
	} else if (getcwd(cwd, sizeof(cwd)) == NULL) {
		fprintf(stderr, "agentgate: explain: cannot get the working directory: %s\n",
		    strerror(errno));
		return EX_USAGE;
	}
	memset(&cp, 0, sizeof(cp));
	cp.cfg = cfg;
	cp.profile = prof;
	cp.pw = pwd;
	cp.origin.cwd = cwd;
	cp.decide_only = 1;
	cp.ask = a->ask;
	cp.config_from_caller = 1;	/* explain holds no privilege anyway */
	if (ag_core_begin(&core, &cp, &err) < 0) {
		fprintf(stderr, "agentgate: explain: %s\n", S(err.msg));
		return EX_USAGE;
	}
	if (ag_core_decide(&core, a->line, a->len, &d) < 0 && d.reason[0] == '\0') {
		fprintf(stderr, "agentgate: explain: internal error while deciding\n");
		goto out;
	}
	v = prof->unknown == AG_UNKNOWN_ASK ? prof->validator : NULL;
	if (a->ask && d.verdict == AG_ASK && !d.parse_error && ag_core_ask(&core, a->line,
	    a->len, &d, &ans) == 0)
		answer = &ans;
	if (a->json) {
		if (print_json(cfg, &d, v, answer) < 0) {
			fprintf(stderr, "agentgate: explain: out of memory\n");
			goto out;
		}
	} else
		print_text(cfg, &d, prof, v, answer);
	rc = d.parse_error ? EX_PARSE : d.verdict == AG_ALLOW ? EX_ALLOW :
	    d.verdict == AG_ASK ? EX_ASK : EX_DENY;
	if (answer != NULL)
		rc = answer->allow ? EX_ALLOW : EX_DENY;
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "agentgate: explain: cannot write to standard output\n");
		rc = EX_USAGE;
	}
out:
	ag_decision_free(&d);
	ag_core_end(&core);
	return rc;
}

int
ag_cmd_explain(int argc, char **argv)
{
	struct explain_args a;
	const struct ag_profile *prof;
	struct ag_config *cfg;
	struct ag_err err;
	struct passwd pwd;
	int rc = EX_USAGE;

	switch (explain_args(argc, argv, &a)) {
	case 1:
		return 0;
	case -1:
		free(a.line);
		return EX_USAGE;
	}
	if ((cfg = ag_config_load(a.path, 0, &err)) == NULL)
		ag_err_print(stderr, &err);
	else if ((prof = explain_who(cfg, &a, &pwd)) == NULL)
		;
	else if (a.host != NULL)
		rc = explain_host(cfg, prof, a.host, a.json);
	else
		rc = explain_decide(cfg, prof, &pwd, &a);
	free(a.line);
	ag_config_free(cfg);
	return rc;
}
