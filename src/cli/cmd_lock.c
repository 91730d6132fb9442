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
#include "core/standing.h"
#include "record/live.h"

#define LOCK_USAGE	"usage: agentgate lock [--config FILE] [--reason TEXT] IDENTITY | " \
	"@ACCOUNT\n       agentgate lock --list\n"

static int
root_only(const char *what)
{
	if (getuid() == 0 && geteuid() == 0)
		return 0;
	fprintf(stderr, "agentgate: %s: root only\n", what);
	return -1;
}

struct locked {
	const char	*name;		/* identity, or "@account" */
	const char	*reason;
};

static int
lock_match(const struct ag_live_entry *e, void *arg, char *why, size_t whylen)
{
	const struct locked *l = arg;

	if (l->name[0] == '@' ? strcmp(e->user, l->name + 1) != 0 :
	    strcmp(e->identity, l->name) != 0)
		return 0;
	snprintf(why, whylen, "%s %s is locked: %s", l->name[0] == '@' ? "account" :
	    "identity", l->name[0] == '@' ? l->name + 1 : l->name, l->reason);
	return 1;
}

static void
print_lock(const char *name, const char *reason, void *arg)
{
	(void)arg;
	printf("%-24s  %s\n", name, reason);
}

int
ag_cmd_lock(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "reason", required_argument, NULL, 'r' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *config = AG_DEFAULT_CONFIG;
	struct locked l = { NULL, "locked by the administrator" };
	struct ag_err err;
	int ch, list = 0, found, failed = 0;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:r:lh", opts, NULL)) != -1) {
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
		case 'h':
			printf("Usage: agentgate lock [--config FILE] [--reason TEXT] IDENTITY | "
			    "@ACCOUNT\n       agentgate lock --list\n\nRefuse every new session of "
			    "the identity (or of the account) and end the\nlive ones, until "
			    "agentgate unlock.  Locks are files in %s.\nRoot only.\n", AG_LOCKDIR);
			return 0;
		default:
			fputs(LOCK_USAGE, stderr);
			return 2;
		}
	}
	if (optind != argc - (list ? 0 : 1) || strchr(l.reason, '\n') != NULL) {
		fputs(LOCK_USAGE, stderr);
		return 2;
	}
	if (root_only("lock") < 0)
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
	l.name = argv[optind];
	if (ag_lock_set(l.name, l.reason, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	printf("%s locked: new sessions are refused\n", l.name);
	found = ag_sessions_end(lock_match, &l, config, "agentgate lock", 10, &failed);
	if (found == 0)
		printf("no live session of %s\n", l.name);
	return failed == 0 ? 0 : 1;
}

int
ag_cmd_unlock(int argc, char **argv)
{
	struct ag_err err;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: agentgate unlock IDENTITY | @ACCOUNT\n\nLift a lock made with "
		    "agentgate lock.  Root only.\n");
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: agentgate unlock IDENTITY | @ACCOUNT\n");
		return 2;
	}
	if (root_only("unlock") < 0)
		return 1;
	ag_err_clear(&err);
	if (ag_lock_clear(argv[1], &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	printf("%s unlocked\n", argv[1]);
	return 0;
}
