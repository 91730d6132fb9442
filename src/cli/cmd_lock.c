/*
 * cmd_lock.c - `agentgate lock` and `agentgate unlock`: keep an identity
 * (or every session of an account) out, now and until unlocked, as
 * Teleport's locks do.  The lock refuses new sessions at login and ends
 * the live ones: those lock finds here, and any that slipped in while it
 * ran at their next command (core/standing.h).  Root only.
 */
#include "agconfig.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/err.h"
#include "common/utf8.h"
#include "core/standing.h"
#include "record/live.h"

#define LOCK_USAGE	"usage: agentgate lock [--config FILE] [--reason TEXT] IDENTITY | " \
	"--user ACCOUNT\n       agentgate lock --list\n"
#define UNLOCK_USAGE	"usage: agentgate unlock [--] IDENTITY | --user ACCOUNT\n"

struct locked {
	int		 account;	/* name is an account's, not an identity's */
	const char	*name;
	const char	*reason;
};

static int
lock_match(const struct ag_live_entry *e, void *arg, char *why, size_t whylen)
{
	const struct locked *l = arg;

	if (strcmp(l->account ? e->user : e->identity, l->name) != 0)
		return 0;
	snprintf(why, whylen, "%s %s is locked: %s", l->account ? "account" : "identity",
	    l->name, l->reason);
	return 1;
}

static void
print_lock(const char *what, const char *name, const char *reason, void *arg)
{
	char n[4 * 256 + 8], r[4 * 1024 + 8];

	/* the files are root's, but a name or reason may quote an agent's text */
	(void)arg;
	printf("%-8s  %-24s  %s\n", what, ag_utf8_shown(name, n, sizeof(n)),
	    ag_utf8_shown(reason, r, sizeof(r)));
}

int
ag_cmd_lock(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "reason", required_argument, NULL, 'r' },
		{ "list", no_argument, NULL, 'l' },
		{ "user", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *config = AG_DEFAULT_CONFIG;
	struct locked l = { 0, NULL, "locked by the administrator" };
	struct ag_err err;
	int ch, list = 0, found, failed = 0;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:r:lu:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			config = optarg;
			break;
		case 'r':
			l.reason = optarg;
			break;
		case 'l':
			list = 1;
			break;
		case 'u':
			l.account = 1;
			l.name = optarg;
			break;
		case 'h':
			printf("Usage: agentgate lock [--config FILE] [--reason TEXT] IDENTITY | "
			    "--user ACCOUNT\n       agentgate lock --list\n\nRefuse every new session of "
			    "the identity (or of the account) and end the\nlive ones, until "
			    "agentgate unlock.  Locks are files in %s.\nRoot only.\n", AG_LOCKDIR);
			return 0;
		default:
			fputs(LOCK_USAGE, stderr);
			return 2;
		}
	}
	if (optind != argc - (list || l.account ? 0 : 1) || (list && l.account) ||
	    strchr(l.reason, '\n') != NULL) {
		fputs(LOCK_USAGE, stderr);
		return 2;
	}
	if (ag_cli_root_only("lock") < 0)
		return 1;
	ag_err_clear(&err);
	if (list) {
		int n = ag_lock_list(print_lock, NULL, &err);

		if (n < 0) {
			ag_err_print(stderr, &err);
			return 1;
		}
		if (n == 0)
			printf("no locks\n");
		return 0;
	}
	if (!l.account)
		l.name = argv[optind];
	if (ag_lock_set(l.account, l.name, l.reason, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	printf("%s %s locked: new sessions are refused\n", l.account ? "account" : "identity",
	    l.name);
	found = ag_sessions_end(lock_match, &l, config, "agentgate lock", 10, &failed);
	if (found == 0)
		printf("no live session of %s\n", l.name);
	return failed == 0 ? 0 : 1;
}

int
ag_cmd_unlock(int argc, char **argv)
{
	struct ag_err err;
	int account = argc == 3 && strcmp(argv[1], "--user") == 0;
	/* `--` before a name that starts with '-' */
	int dashdash = argc == 3 && strcmp(argv[1], "--") == 0;
	const char *name = account || dashdash ? argv[2] : argv[1];

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: agentgate unlock IDENTITY | --user ACCOUNT\n\nLift a lock made "
		    "with agentgate lock.  Root only.\n");
		return 0;
	}
	if (!(argc == 2 && argv[1][0] != '-') && !account && !dashdash) {
		fputs(UNLOCK_USAGE, stderr);
		return 2;
	}
	if (ag_cli_root_only("unlock") < 0)
		return 1;
	ag_err_clear(&err);
	if (ag_lock_clear(account, name, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	printf("%s %s unlocked\n", account ? "account" : "identity", name);
	return 0;
}
