/*
 * cmd_policy.c - agentgate policy suggest: a profile drawn from what an
 * identity, account or profile really ran (policy/suggest.h), printed for
 * an administrator to review and apply with `agentgate edit`.  It reads
 * the audit files as `audit show` does and edits nothing.
 */
#include "agconfig.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/auditfile.h"
#include "cli/commands.h"
#include "common/config.h"
#include "common/utf8.h"
#include "policy/suggest.h"

static void
usage(FILE *fp)
{
	fprintf(fp, "Usage: agentgate policy suggest [--config FILE] [--identity NAME]\n"
	    "                               [--account USER] [--profile NAME]\n"
	    "                               [--since WHEN] [--until WHEN] [--name NAME]\n"
	    "                               [--log FILE]...\n"
	    "\n"
	    "Print a profile drawn from the audit records of what ran: the programs\n"
	    "and, where the gateway knows them, their subcommands; the directories\n"
	    "the lines wrote; the hosts reached; each with counts and first and last\n"
	    "use, and RISK: comments on shells, interpreters, programs that run\n"
	    "others and writes outside the home.  Nothing is edited: review it and\n"
	    "add it with `agentgate edit`.  Without --log, the policy's\n"
	    "gateway.audit.file and the files logrotate made of it.\n"
	    "\n"
	    "  -f, --config FILE      the policy (default %s)\n"
	    "  -i, --identity NAME    records of this identity\n"
	    "  -u, --account USER     records of this account\n"
	    "  -p, --profile NAME     records judged under this profile\n"
	    "  -s, --since WHEN       records at WHEN or later\n"
	    "  -U, --until WHEN       records before WHEN\n"
	    "  -n, --name NAME        the suggested profile's name (default suggested)\n"
	    "  -l, --log FILE         read FILE (.gz too, - standard input); repeatable\n"
	    "  -h, --help             show this help and exit\n"
	    "\n"
	    "WHEN is a UTC date or time (2026-11-28, 2026-11-28T10:00) or a time\n"
	    "before now (30m, 1h, 2d, 1w).\n"
	    "Exit 0; 1 when no record matched; 2 on a usage or read error.\n",
	    AG_DEFAULT_CONFIG);
}

static int
bad_value(const char *opt, const char *v, const char *want)
{
	char buf[4 * 64 + 8];

	fprintf(stderr, "agentgate: policy suggest: %s '%s': %s\n", opt,
	    ag_utf8_visible(v, strlen(v), 64, buf, sizeof(buf)), want);
	return 2;
}

static int
one_record(void *arg, struct json_object *o, const char *line, size_t len)
{
	(void)line;
	(void)len;
	if (ag_suggest_record(arg, o) < 0) {
		fprintf(stderr, "agentgate: policy suggest: %s\n", strerror(ENOMEM));
		return 2;
	}
	return 0;
}

/* A profile name as agentgate.yaml(5) has them. */
static int
name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_-.") == n;
}

static int
suggest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "identity", required_argument, NULL, 'i' },
		{ "account", required_argument, NULL, 'u' },
		{ "user", required_argument, NULL, 'u' },
		{ "profile", required_argument, NULL, 'p' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'U' },
		{ "name", required_argument, NULL, 'n' },
		{ "log", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *config = AG_DEFAULT_CONFIG;
	struct ag_suggest_opts o;
	struct ag_suggest *s;
	char **logs = NULL, **owned = NULL, **names, why[512], src[600], *yaml;
	int ch, rc, n, nlogs = 0;

	memset(&o, 0, sizeof(o));
	o.since = o.until = -1;
	o.name = "suggested";
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:i:u:p:s:U:n:l:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			config = optarg;
			break;
		case 'i':
			o.identity = optarg;
			break;
		case 'u':
			o.account = optarg;
			break;
		case 'p':
			o.profile = optarg;
			break;
		case 's':
		case 'U':
			if ((*(ch == 's' ? &o.since : &o.until) = ag_auditfile_when(optarg)) < 0) {
				free(logs);
				return bad_value(ch == 's' ? "--since" : "--until", optarg,
				    "not a time: give 2026-11-28, 2026-11-28T10:00, "
				    "2026-11-28T10:00:00Z (UTC), or 30m, 1h, 2d before now");
			}
			break;
		case 'n':
			if (!name_ok(optarg)) {
				free(logs);
				return bad_value("--name", optarg, "a profile name: letters, digits, "
				    "_ - and ., at most 64");
			}
			o.name = optarg;
			break;
		case 'l': {
			char **nl = realloc(logs, ((size_t)nlogs + 1) * sizeof(*nl));

			if (nl == NULL) {
				free(logs);
				fprintf(stderr, "agentgate: policy suggest: %s\n", strerror(ENOMEM));
				return 2;
			}
			logs = nl;
			logs[nlogs++] = optarg;
			break;
		}
		case 'h':
			free(logs);
			usage(stdout);
			return 0;
		case ':':
			free(logs);
			fprintf(stderr, "agentgate: policy suggest: option '%s' needs an argument\n",
			    argv[optind - 1]);
			return 2;
		default:
			free(logs);
			fprintf(stderr, "agentgate: policy suggest: unknown option '%s'\n"
			    "Try 'agentgate policy suggest --help'.\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		free(logs);
		fprintf(stderr, "agentgate: policy suggest: unexpected argument '%s' (name the "
		    "audit files with --log)\n", argv[optind]);
		return 2;
	}
	if (ag_auditfile_args(nlogs, logs, config, "policy suggest", 1, &names, &n, &owned) < 0) {
		free(logs);
		return 2;
	}
	snprintf(src, sizeof(src), "%s%s", n > 0 ? names[n - 1] : "?",
	    n > 1 ? " and the files rotated before it" : "");
	o.source = src;
	if ((s = ag_suggest_new(&o)) == NULL) {
		fprintf(stderr, "agentgate: policy suggest: %s\n", strerror(ENOMEM));
		rc = 2;
		goto out;
	}
	rc = ag_auditfile_each(names, n, "policy suggest", one_record, s);
	if (rc == 2)
		goto out;
	if (ag_suggest_matched(s) == 0) {
		fprintf(stderr, "agentgate: policy suggest: no record matched%s%s%s%s%s%s%s in %s\n",
		    o.identity ? " identity " : "", o.identity ? o.identity : "",
		    o.account ? " account " : "", o.account ? o.account : "",
		    o.profile ? " profile " : "", o.profile ? o.profile : "",
		    o.since >= 0 || o.until >= 0 ? " in the time range" : "", src);
		rc = 1;
		goto out;
	}
	if ((yaml = ag_suggest_yaml(s, why, sizeof(why))) == NULL) {
		fprintf(stderr, "agentgate: policy suggest: %s\n", why);
		rc = 2;
		goto out;
	}
	fputs(yaml, stdout);
	free(yaml);
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "agentgate: policy suggest: standard output: %s\n", strerror(errno));
		rc = 2;
		goto out;
	}
	/* a line that was no record is said on stderr; the suggestion stands */
	rc = 0;
out:
	ag_suggest_free(s);
	ag_auditfile_free(owned);
	free(logs);
	return rc;
}

int
ag_cmd_policy(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "suggest") == 0)
		return suggest(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "agentgate: policy: %s\nTry 'agentgate policy suggest --help'.\n",
	    argc < 2 ? "name what to do: suggest" : "unknown subcommand (there is: suggest)");
	return 2;
}
