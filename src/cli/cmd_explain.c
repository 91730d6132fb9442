/*
 * cmd_explain.c - `agentgate explain`: show how the gateway would judge a
 * command line under a profile, without running anything.  Admins use it
 * to write policies; the test suite uses it for decision tests.
 *
 * Exit status: 0 allow, 1 deny, 2 ask, 3 the line does not parse (or is
 * incomplete), 4 usage or configuration error.
 */
#include "agconfig.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/err.h"
#include "policy/policy.h"
#include "parse/shparse.h"
#include "common/strbuf.h"

#define EX_ALLOW	0
#define EX_DENY		1
#define EX_ASK		2
#define EX_PARSE	3
#define EX_USAGE	4

#define EXPLAIN_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

static void
explain_usage(FILE *fp)
{
	fprintf(fp,
	    "Usage: agentgate explain [--config FILE] [--profile NAME] [--json]\n"
	    "                         [--cwd DIR] -- COMMAND...|-\n"
	    "\n"
	    "Show how the gateway would judge COMMAND under a profile, without\n"
	    "running it: one line per simple command with the program it resolves\n"
	    "to and its verdict, then the decision.  '-' reads the command line\n"
	    "(several lines allowed) from standard input.\n"
	    "\n"
	    "  -f, --config FILE   policy file (default %s)\n"
	    "  -p, --profile NAME  profile to use (default: gateway.default_profile)\n"
	    "  -j, --json          print one JSON object instead of text\n"
	    "  -C, --cwd DIR       working directory to decide in (default: current)\n"
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

/* The environment the session would give the command: the profile's env.set. */
static char **
build_env(const struct ag_profile *p)
{
	char **env;
	size_t i, n = 0;
	int have_path = 0;

	env = calloc(p->env_set_keys.n + 2, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (i = 0; i < p->env_set_keys.n && i < p->env_set_vals.n; i++) {
		size_t len = strlen(p->env_set_keys.v[i]) + strlen(p->env_set_vals.v[i]) + 2;

		env[n] = malloc(len);
		if (env[n] == NULL)
			goto fail;
		snprintf(env[n], len, "%s=%s", p->env_set_keys.v[i], p->env_set_vals.v[i]);
		if (strcmp(p->env_set_keys.v[i], "PATH") == 0)
			have_path = 1;
		n++;
	}
	if (!have_path && (env[n++] = strdup("PATH=" EXPLAIN_DEFAULT_PATH)) == NULL)
		goto fail;
	return env;
fail:
	for (i = 0; env[i]; i++)
		free(env[i]);
	free(env);
	return NULL;
}

static void
free_env(char **env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}

static int
print_json(const struct ag_decision *d)
{
	json_object *o = json_object_new_object(), *cmds = json_object_new_array();
	size_t i;
	int r = 0;

	if (o == NULL || cmds == NULL) {
		json_object_put(o);
		json_object_put(cmds);
		return -1;
	}
	json_object_object_add(o, "decision", json_object_new_string(ag_verdict_name(d->verdict)));
	json_object_object_add(o, "reason", json_object_new_string(d->reason));
	json_object_object_add(o, "rule", json_object_new_string(d->rule));
	json_object_object_add(o, "parse_error", json_object_new_boolean(d->parse_error));
	json_object_object_add(o, "incomplete", json_object_new_boolean(d->incomplete));
	for (i = 0; i < d->ncmds; i++) {
		const struct ag_policy_cmd *c = &d->cmds[i];
		json_object *jc = json_object_new_object();

		if (jc == NULL) {
			r = -1;
			break;
		}
		json_object_object_add(jc, "name", c->name ? json_object_new_string(c->name) : NULL);
		json_object_object_add(jc, "path", c->path ? json_object_new_string(c->path) : NULL);
		json_object_object_add(jc, "text", c->text ? json_object_new_string(c->text) : NULL);
		json_object_object_add(jc, "verdict", json_object_new_string(ag_verdict_name(c->verdict)));
		json_object_object_add(jc, "reason", json_object_new_string(c->reason ? c->reason : ""));
		json_object_object_add(jc, "rule", json_object_new_string(c->rule ? c->rule : ""));
		json_object_object_add(jc, "offset", json_object_new_int64((int64_t)c->off));
		json_object_array_add(cmds, jc);
	}
	json_object_object_add(o, "commands", cmds);
	if (r == 0)
		printf("%s\n", json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return r;
}

/* One line of source text, control characters made visible. */
static void
print_text_field(const char *s, size_t max)
{
	size_t i;

	for (i = 0; s && s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			fputs("\\n", stdout);
		else if (c < 0x20 || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	if (s && strlen(s) > max)
		fputs("...", stdout);
}

static void
print_text(const struct ag_decision *d, const char *profile)
{
	size_t i;

	printf("profile: %s\n", profile);
	for (i = 0; i < d->ncmds; i++) {
		const struct ag_policy_cmd *c = &d->cmds[i];

		printf("%-5s @%-4zu ", ag_verdict_name(c->verdict), c->off);
		print_text_field(c->text && *c->text ? c->text : (c->name ? c->name : ""), 60);
		printf("\n      program: %s\n", c->path ? c->path : "(not found)");
		printf("      %s [%s]\n", c->reason ? c->reason : "", c->rule ? c->rule : "");
	}
	printf("decision: %s\n", ag_verdict_name(d->verdict));
	printf("reason: %s\n", d->reason);
	printf("rule: %s\n", d->rule);
}

int
ag_cmd_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "profile", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "cwd", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *path = AG_DEFAULT_CONFIG, *pname = NULL, *cwdopt = NULL;
	const struct ag_profile *prof;
	struct ag_policy_ctx ctx;
	struct ag_decision d;
	struct ag_config *cfg = NULL;
	struct ag_err err;
	struct passwd *pw;
	char cwd[PATH_MAX], **env = NULL;
	char *line = NULL;
	size_t len = 0;
	int ch, json = 0, rc = EX_USAGE;

	optind = 1;
	opterr = 0;
	/* '+': stop at the command, whose words may look like options */
	while ((ch = getopt_long(argc, argv, "+:f:p:jC:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			path = optarg;
			break;
		case 'p':
			pname = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'C':
			cwdopt = optarg;
			break;
		case 'h':
			explain_usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "agentgate: explain: option '%s' needs an argument\n"
			    "Try 'agentgate explain --help'.\n", argv[optind - 1]);
			return EX_USAGE;
		default:
			fprintf(stderr, "agentgate: explain: unknown option '%s'\n"
			    "Try 'agentgate explain --help'.\n", argv[optind - 1]);
			return EX_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "agentgate: explain: no command given (use -- COMMAND, or - for stdin)\n");
		return EX_USAGE;
	}
	if (optind == argc - 1 && strcmp(argv[optind], "-") == 0) {
		line = read_stdin(&len);
		if (line == NULL)
			return EX_USAGE;
	} else {
		/* several words are joined with spaces, as ssh joins them */
		struct ag_strbuf sb;
		int i;

		ag_strbuf_init(&sb, AG_SH_MAX_INPUT);
		for (i = optind; i < argc; i++)
			if ((i > optind && ag_strbuf_addch(&sb, ' ') < 0) ||
			    ag_strbuf_addstr(&sb, argv[i]) < 0) {
				ag_strbuf_free(&sb);
				fprintf(stderr, "agentgate: explain: command too long\n");
				return EX_USAGE;
			}
		line = ag_strbuf_detach(&sb, &len);
		if (line == NULL)
			return EX_USAGE;
	}

	cfg = ag_config_load(path, 0, &err);
	if (cfg == NULL) {
		ag_err_print(stderr, &err);
		goto out;
	}
	if (pname != NULL) {
		prof = ag_config_profile(cfg, pname);
		if (prof == NULL) {
			fprintf(stderr, "agentgate: explain: no profile '%s' in %s\n", pname, path);
			goto out;
		}
	} else {
		prof = cfg->gw.default_profile;
		if (prof == NULL) {
			fprintf(stderr, "agentgate: explain: %s has no gateway.default_profile; use --profile NAME\n",
			    path);
			goto out;
		}
	}
	if (cwdopt != NULL) {
		if (realpath(cwdopt, cwd) == NULL) {
			fprintf(stderr, "agentgate: explain: --cwd %s: %s\n", cwdopt, strerror(errno));
			goto out;
		}
	} else if (getcwd(cwd, sizeof(cwd)) == NULL) {
		fprintf(stderr, "agentgate: explain: cannot get the working directory: %s\n",
		    strerror(errno));
		goto out;
	}
	env = build_env(prof);
	if (env == NULL) {
		fprintf(stderr, "agentgate: explain: out of memory\n");
		goto out;
	}
	pw = getpwuid(getuid());
	memset(&ctx, 0, sizeof(ctx));
	ctx.profile = prof;
	ctx.cwd = cwd;
	ctx.home = getenv("HOME");
	if (ctx.home == NULL || ctx.home[0] != '/')
		ctx.home = pw ? pw->pw_dir : "/";
	ctx.user = pw ? pw->pw_name : "unknown";
	ctx.env = env;

	if (ag_policy_check(&ctx, line, len, &d) < 0 && d.reason[0] == '\0') {
		fprintf(stderr, "agentgate: explain: internal error while deciding\n");
		ag_decision_free(&d);
		goto out;
	}
	if (json) {
		if (print_json(&d) < 0) {
			fprintf(stderr, "agentgate: explain: out of memory\n");
			ag_decision_free(&d);
			goto out;
		}
	} else
		print_text(&d, prof->name ? prof->name : "?");
	rc = d.parse_error ? EX_PARSE : d.verdict == AG_ALLOW ? EX_ALLOW :
	    d.verdict == AG_ASK ? EX_ASK : EX_DENY;
	ag_decision_free(&d);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "agentgate: explain: cannot write to standard output\n");
		rc = EX_USAGE;
	}
out:
	free_env(env);
	free(line);
	ag_config_free(cfg);
	return rc;
}
