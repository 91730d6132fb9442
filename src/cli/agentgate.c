/*
 * agentgate - an SSH gateway that runs each command only after validating
 * it against the caller's policy profile.
 *
 * main() only picks the subcommand; the gateway proper (ForceCommand,
 * login shell, REPL) is ag_cmd_session().
 */
#include "agconfig.h"
#include "common/compat.h"

#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/err.h"
#include "common/privsep.h"

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "Usage: agentgate [--config FILE] [--profile NAME] [--log-stderr] [-c COMMAND]\n"
	    "       agentgate mcp | json\n"
	    "       agentgate check [--config FILE] [-q]\n"
	    "       agentgate explain [--config FILE] [--profile NAME] [--json] -- COMMAND|-\n"
	    "       agentgate doctor [--config FILE] [--user USER] [--sshd PATH] [--sshd-config FILE]\n"
	    "                        [--pam-file FILE]\n"
	    "       agentgate setup --user NAME | --group NAME [--config FILE] [--sshd PATH]\n"
	    "                       [--sshd-config FILE] [--sshd-config-dir DIR] [--pam-file FILE]\n"
	    "                       [--shells FILE] [--token-keys PATTERN] [--dry-run] [--reload]\n"
	    "       agentgate serve [--config FILE] [--listen ADDR:PORT ...] [--foreground] [-e]\n"
	    "       agentgate serve --generate-host-key FILE\n"
	    "       agentgate audit verify [--config FILE] [--from-start] [FILE...]\n"
	    "       agentgate audit show [--config FILE] [--identity NAME] [--user ACCOUNT]\n"
	    "                            [--session ID-PREFIX] [--since WHEN] [--until WHEN]\n"
	    "                            [--decision allow|deny|ask-allow|ask-deny|would_deny]\n"
	    "                            [--event NAME] [--json] [FILE...]\n"
	    "       agentgate policy suggest [--config FILE] [--identity NAME] [--account USER]\n"
	    "                                [--profile NAME] [--since WHEN] [--until WHEN]\n"
	    "                                [--name NAME] [--log FILE]...\n"
	    "       agentgate replay [--config FILE] [--speed N] [--idle-limit SECONDS]\n"
	    "                        [--transcript] FILE | SESSION\n"
	    "       agentgate replay --list [--config FILE]\n"
	    "       agentgate authorized-keys [--config FILE] USER\n"
	    "       agentgate edit [--config FILE]\n"
	    "       agentgate token new NAME\n"
	    "       agentgate sessions\n"
	    "       agentgate approvals\n"
	    "       agentgate approve ID [--once | --session | --for DURATION]\n"
	    "       agentgate refuse ID --reason TEXT\n"
	    "       agentgate terminate [--config FILE] [--wait SECONDS] [--reason TEXT]\n"
	    "                           SESSION | --identity NAME | --user ACCOUNT\n"
	    "       agentgate join [--config FILE] --observe | --moderate SESSION\n"
	    "       agentgate lock [--config FILE] [--reason TEXT] IDENTITY | --user ACCOUNT\n"
	    "       agentgate lock --list\n"
	    "       agentgate unlock IDENTITY | --user ACCOUNT\n"
	    "\n"
	    "Without a subcommand agentgate is the gateway: sshd runs it as the\n"
	    "ForceCommand (or login shell) of an agent account; it validates each\n"
	    "command against the caller's policy profile before running it.\n"
	    "\n"
	    "  -c COMMAND        run one command (login-shell convention)\n"
	    "  mcp, json         the session in the MCP or JSON Lines protocol (what\n"
	    "                    sshd runs for `ssh -s HOST mcp|agentgate-json`)\n"
	    "  --config FILE     policy file (default %s)\n"
	    "  --profile NAME    use this profile whatever identity PAM establishes\n"
	    "                    (for the ForceCommand line of single-purpose accounts)\n"
	    "  --log-stderr      log to stderr instead of syslog\n"
	    "  -h, --help        show this help and exit\n"
	    "  -V, --version     show the version and exit\n"
	    "\n"
	    "See agentgate(8) and agentgate.yaml(5).\n"
	    "Report bugs to: %s\n", AG_SYSCONFDIR "/agentgate/agentgate.yaml",
	    PACKAGE_BUGREPORT);
}

#if AG_ASAN
/*
 * Sanitizer builds only: LeakSanitizer stops the world with ptrace, which
 * the kernel refuses a set-group-ID process (its gids differ), and would
 * turn every exit into a fatal error.  No leak check when set-ID.
 */
const char *__asan_default_options(void);

const char *
__asan_default_options(void)
{
	return getauxval(AT_SECURE) ? "detect_leaks=0" : "";
}
#endif

/* The subcommands that work with no privilege give up the group at once. */
static int
unprivileged(int (*cmd)(int, char **), int argc, char **argv)
{
	struct ag_err err;

	if (ag_privsep_drop(&err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	return cmd(argc, argv);
}

/*
 * The subcommands.  Most work with no privilege and give up the group at
 * once; those that keep it say why.  Root's (edit, setup, sessions...)
 * each check the caller themselves.
 */
static const struct subcommand {
	const char	*name;
	int		(*fn)(int, char **);
	int		 keeps_group;
} subcommands[] = {
	{ "check", ag_cmd_check, 0 },
	{ "explain", ag_cmd_explain, 0 },
	{ "doctor", ag_cmd_doctor, 0 },
	{ "audit", ag_cmd_audit, 0 },
	{ "replay", ag_cmd_replay, 0 },
	{ "policy", ag_cmd_policy, 0 },
	{ "token", ag_cmd_token, 0 },
	{ "edit", ag_cmd_edit, 0 },
	{ "setup", ag_cmd_setup, 0 },
	{ "sessions", ag_cmd_sessions, 0 },
	{ "unlock", ag_cmd_unlock, 0 },
	/* reads the policy for sshd's callers */
	{ "authorized-keys", ag_cmd_authkeys, 1 },
	/* writes the audit record of what it did */
	{ "terminate", ag_cmd_terminate, 1 },
	{ "lock", ag_cmd_lock, 1 },
	/* an observer reads the session's recording and registry, and writes
	 * its audit records */
	{ "join", ag_cmd_join, 1 },
	/* an answer is a file in the approvals directory, owned by the
	 * caller's real uid (record/approvals.h) */
	{ "approvals", ag_cmd_approvals, 1 },
	{ "approve", ag_cmd_approve, 1 },
	{ "refuse", ag_cmd_refuse, 1 },
	{ NULL, NULL, 0 }
};

int
main(int argc, char **argv)
{
	struct ag_err err;

	ag_err_clear(&err);
	if (ag_privsep_entry(&err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	if (argc >= 2) {
		const char *a = argv[1];
		const struct subcommand *sc;

		for (sc = subcommands; sc->name != NULL; sc++)
			if (strcmp(a, sc->name) == 0)
				return sc->keeps_group ? sc->fn(argc - 1, argv + 1) :
				    unprivileged(sc->fn, argc - 1, argv + 1);
		/* root's, for its session processes (front/server_auth.c) */
		if (strcmp(a, "serve") == 0) {
			if (getuid() != 0 && ag_privsep_drop(&err) < 0) {
				ag_err_print(stderr, &err);
				return 1;
			}
			return ag_cmd_serve(argc - 1, argv + 1);
		}
		/*
		 * The programs' protocols, as sshd runs them for a `Subsystem mcp
		 * agentgate mcp` line where no ForceCommand applies: the gateway
		 * session that a ForceCommand would give, with that request.
		 */
		if (argc == 2 && (strcmp(a, "mcp") == 0 || strcmp(a, "json") == 0)) {
			static char opt_c[] = "-c", mcp[] = "agentgate mcp",
			    json[] = "agentgate json";
			char *sargv[] = { argv[0], opt_c, strcmp(a, "mcp") == 0 ? mcp : json, NULL };

			return ag_cmd_session(3, sargv);
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
			printf("agentgate %s\n", PACKAGE_VERSION);
			return 0;
		}
	}
	return ag_cmd_session(argc, argv);
}
